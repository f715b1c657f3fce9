//! Function calls where a value stands (`INSERT … VALUES (now(), textAsBlob('x'))`, a call
//! inside a collection literal, `toTimestamp(now())`): each call is chosen by its arguments,
//! evaluated, and replaced by its typed result, which the column's type then takes or refuses
//! (Cassandra's rule: a function's result must be of the receiving type).

use super::super::error::CqlError;
use super::super::types::{CqlType, Literal};
use super::operation::{symbol, Operand};
use super::{
    assignable, call, choose, display_name, operator, resolve, unsnaked, Arg, Chosen, Context,
};

/// `lit` with every call in it replaced by its value, where `lit` stands for a `ty`.
pub(in super::super) fn fold(
    lit: &Literal,
    ty: &CqlType,
    cx: &Context<'_>,
) -> Result<Literal, CqlError> {
    if !lit.has_call() {
        return Ok(lit.clone());
    }
    let inner = match ty {
        CqlType::Frozen(t) => t.as_ref(),
        t => t,
    };
    let each = |items: &[Literal], t: &CqlType| -> Result<Vec<Literal>, CqlError> {
        items.iter().map(|i| fold(i, t, cx)).collect()
    };
    Ok(match (lit, inner) {
        // A marker's value, checked as a value of the parameter it is bound to.
        (Literal::Marker(i, _), _) => {
            let value = cx.binds.get(*i).cloned().flatten();
            if let Some(v) = &value {
                ty.check(v).map_err(|e| {
                    CqlError::invalid(format!("Invalid value bound to a function's argument: {e}"))
                })?;
            }
            Literal::Typed(ty.clone(), value)
        }
        // `fromJson('…')` reads its JSON as the type where it stands (Cassandra's rule: the
        // receiver decides).
        (Literal::Call(name, args), _) if unsnaked(&name.to_ascii_lowercase()) == "fromjson" => {
            let [Literal::Str(text)] = args.as_slice() else {
                return Err(CqlError::invalid(
                    "fromJson() takes one string argument here",
                ));
            };
            let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
                CqlError::invalid(format!("Could not decode JSON string '{text}': {e}"))
            })?;
            Literal::Typed(ty.clone(), ty.from_json(&value, "fromJson()")?)
        }
        (Literal::Call(name, args), _) => {
            let (chosen, value) = evaluate(name, args, ty, cx)?;
            if !assignable(ty, &chosen.returns) {
                let what = match operator(name) {
                    Some(_) => format!("operation {}", symbol(name)),
                    None => format!("function {}", display_name(&name.to_ascii_lowercase())),
                };
                return Err(CqlError::invalid(format!(
                    "Type error: cannot assign result of {what} (type {}) to a value of type {ty}",
                    chosen.returns
                )));
            }
            Literal::Typed(ty.clone(), value)
        }
        // `(type) value`: the value read as the hinted type, which must be the receiver's or
        // one whose values are the receiver's.
        (Literal::Hint(hinted, inner), _) => {
            if !assignable(ty, hinted) {
                return Err(CqlError::invalid(format!(
                    "Cannot assign value {} to a value of type {ty}",
                    lit.text()
                )));
            }
            let value = hinted.encode(&fold(inner, hinted, cx)?, &lit.text())?;
            Literal::Typed(ty.clone(), value)
        }
        // A parenthesized operand, `(2 + 2)`, where no tuple is wanted.
        (Literal::Tuple(items), t) if items.len() == 1 && !matches!(t, CqlType::Tuple(_)) => {
            fold(&items[0], ty, cx)?
        }
        (Literal::List(items), CqlType::List(e) | CqlType::Vector(e, _)) => {
            Literal::List(each(items, e)?)
        }
        (Literal::Set(items), CqlType::Set(e)) => Literal::Set(each(items, e)?),
        (Literal::Map(pairs), CqlType::Map(k, v)) => Literal::Map(
            pairs
                .iter()
                .map(|(a, b)| Ok((fold(a, k, cx)?, fold(b, v, cx)?)))
                .collect::<Result<_, CqlError>>()?,
        ),
        (Literal::Udt(fields), CqlType::Udt(u)) => Literal::Udt(
            fields
                .iter()
                .map(|(name, v)| match u.field(name) {
                    Some((_, t)) => Ok((name.clone(), fold(v, t, cx)?)),
                    None => Ok((name.clone(), v.clone())),
                })
                .collect::<Result<_, CqlError>>()?,
        ),
        (Literal::Tuple(items), CqlType::Tuple(ts)) if items.len() <= ts.len() => Literal::Tuple(
            items
                .iter()
                .zip(ts)
                .map(|(i, t)| fold(i, t, cx))
                .collect::<Result<_, _>>()?,
        ),
        _ => {
            return Err(CqlError::invalid(format!(
                "a function call cannot stand in this value of type {ty}"
            )))
        }
    })
}

/// Chooses `name(args…)` and evaluates it.
fn evaluate(
    name: &str,
    args: &[Literal],
    receiver: &CqlType,
    cx: &Context<'_>,
) -> Result<(Chosen, Option<Vec<u8>>), CqlError> {
    let chosen = chosen(name, args, Some(receiver))?;
    let mut values = Vec::with_capacity(args.len());
    for (a, p) in args.iter().zip(&chosen.params) {
        let folded = fold(a, p, cx)?;
        values.push(p.encode(&folded, &display_name(&name.to_ascii_lowercase()))?);
    }
    let value = call(&chosen.native, &values, cx)?;
    Ok((chosen, value))
}

/// The function `name(args…)` names, where its result goes to a `receiver` if known (an
/// operator's choice depends on it); a function's nested calls are typed by their own choices.
pub(in super::super) fn chosen(
    name: &str,
    args: &[Literal],
    receiver: Option<&CqlType>,
) -> Result<Chosen, CqlError> {
    if let Some(op) = operator(name) {
        let operands: Vec<Operand<'_>> = args.iter().map(Operand::Literal).collect();
        return resolve(op, &operands, receiver);
    }
    let mut known = Vec::with_capacity(args.len());
    for a in args {
        known.push(match a {
            Literal::Call(n, inner) => Arg::Typed(chosen(n, inner, None)?.returns),
            Literal::Hint(t, _) => Arg::Typed(t.clone()),
            other => Arg::Literal(other),
        });
    }
    choose(name, &known)
}
