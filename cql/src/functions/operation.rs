//! CQL's operators as Cassandra chooses what they compute: `+ - * / %` and unary `-` are
//! native functions (`_add`, `_substract`, …, `_negate`) with an overload per pair of numeric
//! types, `+`/`-` of a timestamp or a date with a duration, and `+` of two strings (their
//! concatenation, Cassandra 4.1's). An overload is chosen by how
//! each operand fits its parameter (exactly: a value of that very type, a literal of its
//! preferred type; weakly: any type it can be read as, a bind marker, null) and, where the
//! operation stands for a column's value, by whether its result may be assigned to that
//! column: an exact fit wins, else the only fit, else (no marker among the operands) the
//! overload taking two values of the column's type, else the call is ambiguous, in
//! Cassandra's words. Must not touch: what an operand is (a selector, a term): callers
//! describe each as an [`Operand`].

use super::super::error::CqlError;
use super::super::types::{operator_symbol, CqlType, Literal, NEGATION, OPERATORS};
use super::number::{preferred_type, result_type};
use super::{chosen, ArithOp, Chosen, Native};

/// What is known of an operand when an operator is chosen.
pub(in super::super) enum Operand<'a> {
    /// A value of a known type (a column, a selector's result), as the statement writes it.
    Typed(CqlType, String),
    /// A term's literal: a value, a call, a marker, a type hint, another operation.
    Literal(&'a Literal),
}

impl Operand<'_> {
    fn text(&self) -> String {
        match self {
            Operand::Typed(_, text) => text.clone(),
            Operand::Literal(l) => l.text(),
        }
    }
}

/// How an operand meets a parameter's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    No,
    Weak,
    Exact,
}

/// The operator a function name (`_add`, …) is, if it is one; `None` inside for `_negate`.
pub(in super::super) fn operator(name: &str) -> Option<Option<ArithOp>> {
    if name == NEGATION {
        return Some(None);
    }
    let ops = [
        ArithOp::Add,
        ArithOp::Sub,
        ArithOp::Mul,
        ArithOp::Div,
        ArithOp::Rem,
    ];
    OPERATORS
        .iter()
        .zip(ops)
        .find(|((n, _), _)| *n == name)
        .map(|(_, op)| Some(op))
}

/// The types numbers' operators are defined for, counters included.
const NUMBERS: [CqlType; 9] = [
    CqlType::Tinyint,
    CqlType::Smallint,
    CqlType::Int,
    CqlType::Bigint,
    CqlType::Counter,
    CqlType::Float,
    CqlType::Double,
    CqlType::Varint,
    CqlType::Decimal,
];

/// Every overload of an operator (`None`: the negation).
fn overloads(op: Option<ArithOp>) -> Vec<Chosen> {
    let Some(op) = op else {
        return NUMBERS
            .iter()
            .map(|t| Chosen {
                native: Native::Negate(t.clone()),
                params: vec![t.clone()],
                returns: if *t == CqlType::Counter {
                    CqlType::Bigint
                } else {
                    t.clone()
                },
            })
            .collect();
    };
    let mut all = Vec::with_capacity(NUMBERS.len() * NUMBERS.len() + 6);
    for l in &NUMBERS {
        for r in &NUMBERS {
            if let Some(returns) = result_type(l, r) {
                all.push(Chosen {
                    native: Native::Arith(op, l.clone(), r.clone()),
                    params: vec![l.clone(), r.clone()],
                    returns,
                });
            }
        }
    }
    if op == ArithOp::Add {
        // Strings' concatenation: ascii only of two ascii, else text.
        let (a, t) = (CqlType::Ascii, CqlType::Text);
        for (l, r, returns) in [(&t, &t, &t), (&a, &a, &a), (&a, &t, &t), (&t, &a, &t)] {
            all.push(Chosen {
                native: Native::Concat,
                params: vec![l.clone(), r.clone()],
                returns: returns.clone(),
            });
        }
    }
    if matches!(op, ArithOp::Add | ArithOp::Sub) {
        for t in [CqlType::Timestamp, CqlType::Date] {
            all.push(Chosen {
                native: Native::Temporal(op, t.clone()),
                params: vec![t.clone(), CqlType::Duration],
                returns: t,
            });
        }
    }
    all
}

/// Whether a value of type `got` may be given where a `want` is: the same type, or one whose
/// values are `want`'s too (Cassandra's value compatibility: a timeuuid is a uuid, ascii is
/// text, an int or a bigint is a varint, a bigint a timestamp and back, an int a date,
/// anything a blob).
pub(in super::super) fn assignable(want: &CqlType, got: &CqlType) -> bool {
    use CqlType as T;
    want == got
        || matches!(
            (want, got),
            (T::Text, T::Ascii)
                | (T::Uuid, T::Timeuuid)
                | (T::Varint, T::Int | T::Bigint | T::Timestamp)
                | (T::Bigint, T::Timestamp)
                | (T::Timestamp, T::Bigint)
                | (T::Date, T::Int)
                | (T::Blob, _)
        )
        || matches!(want, T::Frozen(inner) if **inner == *got)
}

/// What nested operations were found to return for a receiver type, by the operation's
/// address in the statement: an operand is tried against each of some eighty overloads, so
/// without it a chain of operations would be tried exponentially often.
type Memo = Vec<(usize, CqlType, Option<CqlType>)>;

/// The overload of `op` for these operands, where its result goes to a `receiver` if known.
pub(in super::super) fn resolve(
    op: Option<ArithOp>,
    operands: &[Operand<'_>],
    receiver: Option<&CqlType>,
) -> Result<Chosen, CqlError> {
    resolve_in(op, operands, receiver, &mut Memo::new())
}

fn resolve_in(
    op: Option<ArithOp>,
    operands: &[Operand<'_>],
    receiver: Option<&CqlType>,
    memo: &mut Memo,
) -> Result<Chosen, CqlError> {
    let symbol = op.map_or("-", ArithOp::symbol);
    let candidates: Vec<Chosen> = overloads(op)
        .into_iter()
        .filter(|c| c.params.len() == operands.len())
        .filter(|c| receiver.is_none_or(|r| assignable(r, &c.returns)))
        .collect();
    let texts: Vec<String> = operands.iter().map(Operand::text).collect();
    let unsupported = || match texts.as_slice() {
        [a, b] => CqlError::invalid(format!(
            "the '{symbol}' operation is not supported between {a} and {b}"
        )),
        _ => CqlError::invalid(format!(
            "the '-' operation is not supported on {}",
            texts.join(", ")
        )),
    };
    let mut compatible = Vec::new();
    for c in candidates {
        let fits: Vec<Fit> = operands
            .iter()
            .zip(&c.params)
            .map(|(o, p)| fit(o, p, memo))
            .collect();
        if fits.contains(&Fit::No) {
            continue;
        }
        if fits.iter().all(|f| *f == Fit::Exact) {
            return Ok(c);
        }
        compatible.push(c);
    }
    if compatible.len() > 1 {
        let markers = operands
            .iter()
            .any(|o| matches!(o, Operand::Literal(Literal::Marker(..))));
        if let (Some(r), false) = (receiver, markers) {
            if let Some(i) = compatible
                .iter()
                .position(|c| c.params.iter().all(|p| p == r))
            {
                return Ok(compatible.swap_remove(i));
            }
        }
        return Err(match texts.as_slice() {
            [a, b] => CqlError::invalid(format!(
                "Ambiguous '{symbol}' operation with args {a} and {b}: use type hint to disambiguate, example '(int) ?'"
            )),
            _ => CqlError::invalid("Ambiguous negation: use type casts to disambiguate"),
        });
    }
    compatible.pop().ok_or_else(unsupported)
}

/// How `o` fits a parameter of type `p`.
fn fit(o: &Operand<'_>, p: &CqlType, memo: &mut Memo) -> Fit {
    match o {
        Operand::Typed(t, _) => typed_fit(t, p),
        Operand::Literal(l) => literal_fit(l, p, memo),
    }
}

fn typed_fit(t: &CqlType, p: &CqlType) -> Fit {
    if t == p {
        Fit::Exact
    } else if assignable(p, t) {
        Fit::Weak
    } else {
        Fit::No
    }
}

/// A literal's fit: exact for its preferred type, weak for any it can be read as; a call is
/// chosen for the parameter as its receiver (one that cannot be chosen fits weakly, to be
/// refused in its own words when it is evaluated).
fn literal_fit(l: &Literal, p: &CqlType, memo: &mut Memo) -> Fit {
    let readable = || {
        if p.encode(l, "operand").is_ok() {
            Fit::Weak
        } else {
            Fit::No
        }
    };
    let preferred = |t: CqlType| if t == *p { Fit::Exact } else { readable() };
    match l {
        Literal::Null | Literal::Marker(..) => Fit::Weak,
        Literal::Number(n) => preferred(preferred_type(n)),
        Literal::Str(s) if s.is_ascii() => preferred(CqlType::Ascii),
        Literal::Str(_) => preferred(CqlType::Text),
        Literal::Hex(_) => preferred(CqlType::Blob),
        Literal::Bool(_) => preferred(CqlType::Boolean),
        Literal::Duration(_) => preferred(CqlType::Duration),
        Literal::Uuid(_) => preferred(CqlType::Uuid),
        // A parenthesized operand, `(2 + 2)`, is read as the tuple of one it is written as
        // only where a tuple goes.
        Literal::Tuple(items) if items.len() == 1 && !matches!(p, CqlType::Tuple(_)) => {
            literal_fit(&items[0], p, memo)
        }
        Literal::Hint(t, _) | Literal::Typed(t, _) => typed_fit(t, p),
        Literal::Call(name, args) => {
            let key = l as *const Literal as usize;
            let known = memo.iter().find(|(k, t, _)| *k == key && t == p);
            let returns = match known {
                Some((.., r)) => r.clone(),
                None => {
                    let r = match operator(name) {
                        Some(op) => {
                            let operands: Vec<Operand<'_>> =
                                args.iter().map(Operand::Literal).collect();
                            resolve_in(op, &operands, Some(p), memo)
                        }
                        None => chosen(name, args, Some(p)),
                    };
                    let r = r.ok().map(|c| c.returns);
                    memo.push((key, p.clone(), r.clone()));
                    r
                }
            };
            returns.map_or(Fit::Weak, |t| typed_fit(&t, p))
        }
        _ => readable(),
    }
}

/// The symbol of an operator's function, for messages.
pub(in super::super) fn symbol(name: &str) -> &'static str {
    operator_symbol(name).unwrap_or("?")
}
