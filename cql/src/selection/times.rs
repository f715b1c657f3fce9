//! `writetime`, `maxwritetime`, `minwritetime` and `ttl` of what is more than a column of one
//! cell, as Cassandra 5 selects them: of a non-frozen collection or user type (each cell's),
//! of an element `s[x]` or a slice `m[a..b]` of a set or map, of a field `u.f`, and of such a
//! part of a frozen value (its one cell's time, when the part is there). The times are
//! computed by `functions::cell_time`; rows record them (`assemble::Row`). Must not touch:
//! other selectors (`selection.rs`).

use super::super::assemble::Resolved;
use super::super::ast::Selector;
use super::super::error::CqlError;
use super::super::functions::cell_time::{CellTime, Pick, Which};
use super::super::functions::Native;
use super::super::types::{CqlType, Literal};
use super::{selection_function, Builder, Expr};

impl Builder<'_> {
    /// `f(path)`: `f` a time function as Cassandra names it, `path` a column or a part of one.
    pub(super) fn time_of(
        &mut self,
        path: &Selector,
        f: &'static str,
    ) -> Result<(Expr, CqlType), CqlError> {
        let (column, steps) = column_and_steps(path, f)?;
        let (i, d) = self.t.column(column)?;
        selection_function(d, if f == "writetime" { "writeTime" } else { f })?;
        let which = Which::of(f);
        // The part's value, typed and refused as selecting it would be (an element of a
        // list, a field of what is no user type): kept only where the times need it.
        let inputs = self.s.inputs.len();
        let part = match steps.is_empty() {
            true => None,
            false => Some(self.expr(path, false)?.0),
        };
        let (ty, multi) = (d.ty.clone(), d.ty.is_multi_cell());
        if !multi {
            let time = match which {
                Which::Ttl => Resolved::Ttl(i),
                _ => Resolved::WriteTime(i),
            };
            let time = self.input(time);
            let args = std::iter::once(time).chain(part).collect();
            return Ok(call(Pick::Whole, which, args));
        }
        let pick = match steps.first() {
            None => match &ty {
                CqlType::Udt(u) => Pick::Fields(u.fields.len()),
                _ => Pick::All,
            },
            Some(first) => match pick_of(&ty, first)? {
                Some(pick) => pick,
                // A null key names no cell.
                None => return Ok((Expr::Const(None), call(Pick::Whole, which, vec![]).1)),
            },
        };
        if matches!(pick, Pick::Range(..)) && steps.len() > 1 {
            return Err(CqlError::invalid(format!(
                "{f} of a part of a slice ({}) is not supported",
                path.text()
            )));
        }
        // One step reads only the cells; more need the part below the cell to be there.
        let part = match steps.len() > 1 {
            true => part,
            false => {
                self.s.inputs.truncate(inputs);
                None
            }
        };
        let cells = self.input(Resolved::CellTimes(self.t.columns.len() + i));
        let args = std::iter::once(cells).chain(part).collect();
        Ok(call(pick, which, args))
    }
}

/// The column `path` selects a part of, and the steps from it down to the part, in order.
fn column_and_steps<'s>(
    path: &'s Selector,
    f: &str,
) -> Result<(&'s str, Vec<&'s Selector>), CqlError> {
    let mut steps = Vec::new();
    let mut at = path;
    loop {
        match at {
            Selector::Column(c) => {
                steps.reverse();
                return Ok((c, steps));
            }
            Selector::Element(x, _) | Selector::Slice(x, ..) | Selector::Field(x, _) => {
                steps.push(at);
                at = x;
            }
            other => {
                return Err(CqlError::invalid(format!(
                    "{f} takes a column or a part of one, not {}",
                    other.text()
                )))
            }
        }
    }
}

/// The cells of a multi-cell column of type `ty` that its first step `step` names; `None`
/// when it names none (a null key).
fn pick_of(ty: &CqlType, step: &Selector) -> Result<Option<Pick>, CqlError> {
    let key_type = match ty {
        CqlType::Set(k) | CqlType::Map(k, _) => Some(k.as_ref()),
        _ => None,
    };
    let text = step.text();
    let encode = |k: &CqlType, l: &Literal| k.encode(l, &text);
    Ok(match (ty, key_type, step) {
        (_, Some(k), Selector::Element(_, l)) => encode(k, l)?.map(|key| Pick::Key(k.clone(), key)),
        (_, Some(k), Selector::Slice(_, a, b)) => {
            let end = |l: &Option<Literal>| l.as_ref().map(|l| encode(k, l)).transpose();
            Some(Pick::Range(k.clone(), end(a)?.flatten(), end(b)?.flatten()))
        }
        (CqlType::Udt(u), _, Selector::Field(_, name)) => {
            let (n, _) = u
                .field(name)
                .ok_or_else(|| CqlError::invalid(format!("{ty} has no field {name}")))?;
            let n = i16::try_from(n).map_err(|_| CqlError::invalid("a field past 32767"))?;
            Some(Pick::Key(CqlType::Smallint, n.to_be_bytes().to_vec()))
        }
        _ => {
            return Err(CqlError::invalid(format!(
                "{text} does not select cells of a column of type {ty}"
            )))
        }
    })
}

/// The call computing a time selector, and its type.
fn call(pick: Pick, which: Which, args: Vec<Expr>) -> (Expr, CqlType) {
    let ct = CellTime { pick, which };
    let ty = ct.returns();
    (Expr::Call(Native::CellTime(Box::new(ct)), args), ty)
}
