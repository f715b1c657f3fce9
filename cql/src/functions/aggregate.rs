//! CQL's native aggregates: `count`, `min`, `max`, `sum` and `avg`, each a small state fed one
//! value per row and read once per group. Their result types and edge cases are Cassandra's:
//! `sum` and `avg` return their argument's type (an integer sum wraps as Java's does; `avg`
//! of integers adds without overflow and truncates), both give 0 over no rows where `min` and
//! `max` give null, floats add with Kahan's compensation, and nulls are skipped.

use std::cmp::Ordering;
use std::sync::Arc;

use num_bigint::BigInt;

use super::super::error::CqlError;
use super::super::types::CqlType;
use super::number::{decimal_of_double, double_of_decimal, read, write, Num};
use supercolumn::model::comparator::Comparator;

/// Which aggregate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in super::super) enum Kind {
    /// `count(*)`, `count(1)`: rows
    Rows,
    /// `count(x)`: rows where `x` is not null
    Count,
    Min,
    Max,
    Sum,
    Avg,
}

/// An aggregate chosen for an argument's type.
#[derive(Clone)]
pub(in super::super) struct Aggregate {
    pub kind: Kind,
    /// The argument's type (`count(*)`: bigint, unused).
    pub ty: CqlType,
    cmp: Option<Arc<dyn Comparator>>,
}

/// An aggregate's running state.
pub(in super::super) enum State {
    Count(i64),
    Extreme(Option<Vec<u8>>),
    /// The running sum (an integer's in 128 bits, wrapped at the end), and the values added.
    Int(i128, i64),
    Big(BigInt, i64),
    Float(Kahan, i64),
    /// The sum (for `avg`, the running mean), its scale, and the values added.
    Decimal(BigInt, i32, i64),
}

/// Kahan-compensated addition, as Java's `DoubleSummaryStatistics` (which Cassandra's float
/// aggregates follow) does it, with the plain sum kept to tell an infinity from a NaN.
#[derive(Default)]
pub(in super::super) struct Kahan {
    sum: f64,
    compensation: f64,
    simple: f64,
    /// `avg`'s exact sum from the value that made the double sum overflow on: Cassandra then
    /// adds decimals and divides half to even, so a mean of huge values stays finite.
    exact: Option<(BigInt, i32)>,
}

impl Kahan {
    fn add(&mut self, v: f64, avg: bool) -> Result<(), CqlError> {
        if let Some(sum) = self.exact.take() {
            self.exact = Some(add_decimals(sum, decimal_of_double(v)?));
            return Ok(());
        }
        self.simple += v;
        let before = self.sum;
        let tmp = v - self.compensation;
        let velvel = self.sum + tmp;
        self.compensation = (velvel - self.sum) - tmp;
        self.sum = velvel;
        if avg && self.sum.is_infinite() && !v.is_infinite() {
            let sum = add_decimals(decimal_of_double(before)?, decimal_of_double(v)?);
            self.exact = Some(sum);
        }
        Ok(())
    }

    fn total(&self) -> f64 {
        let t = self.sum + self.compensation;
        if t.is_nan() && self.simple.is_infinite() {
            self.simple
        } else {
            t
        }
    }

    /// The mean of `n` values added.
    fn mean(&self, n: i64) -> f64 {
        match &self.exact {
            Some((sum, scale)) => double_of_decimal(half_even(sum, &BigInt::from(n)), *scale),
            None => self.total() / n as f64,
        }
    }
}

/// Two decimals' exact sum, at the larger scale.
fn add_decimals(a: (BigInt, i32), b: (BigInt, i32)) -> (BigInt, i32) {
    let top = a.1.max(b.1);
    let up = |x: BigInt, s: i32| x * BigInt::from(10).pow(top.abs_diff(s));
    (up(a.0, a.1) + up(b.0, b.1), top)
}

/// The aggregate `name(x)` is for an `x` of type `ty` (`None`: `count(*)`); `Ok(None)` when
/// `name` is no aggregate.
pub(in super::super) fn choose(
    name: &str,
    ty: Option<&CqlType>,
) -> Result<Option<Aggregate>, CqlError> {
    let kind = match (name.to_ascii_lowercase().as_str(), ty) {
        ("count", None) => Kind::Rows,
        ("count", Some(_)) => Kind::Count,
        ("min", _) => Kind::Min,
        ("max", _) => Kind::Max,
        ("sum", _) => Kind::Sum,
        ("avg", _) => Kind::Avg,
        _ => return Ok(None),
    };
    // A counter aggregates as the bigint it holds.
    let ty = match ty {
        None | Some(CqlType::Counter) => CqlType::Bigint,
        Some(t) => t.clone(),
    };
    let numeric = matches!(
        ty,
        CqlType::Tinyint
            | CqlType::Smallint
            | CqlType::Int
            | CqlType::Bigint
            | CqlType::Varint
            | CqlType::Float
            | CqlType::Double
            | CqlType::Decimal
    );
    let refuse = || {
        CqlError::invalid(format!(
            "Invalid call to function system.{}, none of its type signatures match (known type signatures: system.{0} : ({ty}) does not exist)",
            name.to_ascii_lowercase()
        ))
    };
    let cmp = ty.comparator();
    match kind {
        Kind::Sum | Kind::Avg if !numeric => return Err(refuse()),
        Kind::Min | Kind::Max if cmp.is_none() && ty != CqlType::Decimal => return Err(refuse()),
        _ => {}
    }
    Ok(Some(Aggregate { kind, ty, cmp }))
}

impl Aggregate {
    /// The result's type.
    pub(in super::super) fn returns(&self) -> CqlType {
        match self.kind {
            Kind::Rows | Kind::Count => CqlType::Bigint,
            _ => self.ty.clone(),
        }
    }

    /// A state with no value added.
    pub(in super::super) fn start(&self) -> State {
        match (self.kind, &self.ty) {
            (Kind::Rows | Kind::Count, _) => State::Count(0),
            (Kind::Min | Kind::Max, _) => State::Extreme(None),
            (_, CqlType::Varint) => State::Big(BigInt::from(0), 0),
            (_, CqlType::Float | CqlType::Double) => State::Float(Kahan::default(), 0),
            (_, CqlType::Decimal) => State::Decimal(BigInt::from(0), 0, 0),
            _ => State::Int(0, 0),
        }
    }

    /// Adds one row's value (`None`: null, skipped; `count(*)` counts every row).
    pub(in super::super) fn add(&self, s: &mut State, v: Option<&[u8]>) -> Result<(), CqlError> {
        let Some(v) = v else {
            if let (Kind::Rows, State::Count(n)) = (self.kind, s) {
                *n += 1;
            }
            return Ok(());
        };
        match s {
            State::Count(n) => *n += 1,
            State::Extreme(best) => {
                let better = match best.as_deref() {
                    None => true,
                    Some(b) => {
                        let o = self.compare(v, b)?;
                        if self.kind == Kind::Min {
                            o.is_lt()
                        } else {
                            o.is_gt()
                        }
                    }
                };
                if better {
                    *best = Some(v.to_vec());
                }
            }
            State::Int(sum, n) => {
                if let Num::Int(i) = read(&self.ty, v)? {
                    *sum += i128::from(i);
                    *n += 1;
                }
            }
            State::Big(sum, n) => {
                if let Num::Big(b) = read(&self.ty, v)? {
                    *sum += b;
                    *n += 1;
                }
            }
            State::Float(k, n) => {
                if let Num::Float(f) = read(&self.ty, v)? {
                    k.add(f, self.kind == Kind::Avg)?;
                    *n += 1;
                }
            }
            State::Decimal(acc, scale, n) => {
                if let Num::Decimal(u, sc) = read(&self.ty, v)? {
                    *n += 1;
                    let current = (std::mem::take(acc), *scale);
                    (*acc, *scale) = if self.kind == Kind::Avg {
                        // Cassandra's running mean, avg += (v - avg) / n rounded half to
                        // even at the difference's scale: not the sum's quotient, and its
                        // answer differs from that one's in the last digit.
                        let minus = (-current.0.clone(), current.1);
                        let (diff, at) = add_decimals((u, sc), minus);
                        add_decimals(current, (half_even(&diff, &BigInt::from(*n)), at))
                    } else {
                        add_decimals(current, (u, sc))
                    };
                }
            }
        }
        Ok(())
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Result<Ordering, CqlError> {
        if let Some(c) = &self.cmp {
            return Ok(c.compare(a, b));
        }
        let (Num::Decimal(x, xs), Num::Decimal(y, ys)) = (read(&self.ty, a)?, read(&self.ty, b)?)
        else {
            return Ok(a.cmp(b));
        };
        let top = xs.max(ys);
        let up = |v: BigInt, s: i32| v * BigInt::from(10).pow(top.abs_diff(s));
        Ok(up(x, xs).cmp(&up(y, ys)))
    }

    /// The aggregate's value over what was added.
    pub(in super::super) fn result(&self, s: &State) -> Option<Vec<u8>> {
        let avg = self.kind == Kind::Avg;
        let n = match s {
            State::Count(c) => return Some(c.to_be_bytes().to_vec()),
            State::Extreme(v) => return v.clone(),
            State::Int(_, n) | State::Big(_, n) | State::Float(_, n) | State::Decimal(.., n) => *n,
        };
        let num = match s {
            State::Int(sum, _) => {
                let v = if avg && n > 0 {
                    sum / i128::from(n)
                } else {
                    *sum
                };
                Num::Int(v as i64)
            }
            State::Big(sum, _) if avg && n > 0 => Num::Big(sum / BigInt::from(n)),
            State::Big(sum, _) => Num::Big(sum.clone()),
            State::Float(k, _) if avg && n > 0 => Num::Float(k.mean(n)),
            State::Float(k, _) => Num::Float(k.total()),
            // A decimal's state is its sum, or for `avg` its running mean.
            State::Decimal(acc, scale, _) => Num::Decimal(acc.clone(), *scale),
            _ => return None,
        };
        // Only a float's NaN fails to write, and only as a decimal: never here.
        write(&self.ty, num).ok()
    }
}

/// `a / b` rounded half to even (BigDecimal's `divide(…, HALF_EVEN)` at the dividend's scale).
fn half_even(a: &BigInt, b: &BigInt) -> BigInt {
    let zero = BigInt::from(0);
    let q = a / b;
    let r = a - &q * b;
    if r == zero {
        return q;
    }
    let twice = (&r * 2i32).magnitude().clone();
    let away = match twice.cmp(b.magnitude()) {
        Ordering::Greater => true,
        Ordering::Less => false,
        Ordering::Equal => &q % 2i32 != zero,
    };
    if !away {
        return q;
    }
    let negative = (a < &zero) != (b < &zero);
    if negative {
        q - 1
    } else {
        q + 1
    }
}
