//! Numbers as CQL's functions compute with them: a value of each numeric type read into one
//! of three kinds (a machine integer, a big integer, a float) or a decimal, the arithmetic
//! operators with Cassandra's result types (the wider of the two; a float with an integer is
//! a float of the integer's width), Java's wrapping of integer overflow, and `CAST` between
//! numeric types and to text.

use num_bigint::BigInt;

use super::super::error::CqlError;
use super::super::types::CqlType;
use super::decimal;

/// `+ - * / %`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in super::super) enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl ArithOp {
    /// How the statement writes it.
    pub(in super::super) fn symbol(self) -> &'static str {
        match self {
            ArithOp::Add => "+",
            ArithOp::Sub => "-",
            ArithOp::Mul => "*",
            ArithOp::Div => "/",
            ArithOp::Rem => "%",
        }
    }
}

/// A number read from its bytes.
#[derive(Debug, Clone, PartialEq)]
pub(in super::super) enum Num {
    /// tinyint, smallint, int, bigint
    Int(i64),
    /// varint
    Big(BigInt),
    /// float, double
    Float(f64),
    /// decimal: unscaled value and scale
    Decimal(BigInt, i32),
}

/// The largest decimal scale (either sign) functions and aggregates compute with.
const MAX_SCALE: u32 = 100_000;

/// Whether `ty` is a numeric type.
pub(super) fn is_number(ty: &CqlType) -> bool {
    width(ty).is_some()
}

/// Cassandra's size of a numeric type (a varint's and a decimal's unbounded), and whether it
/// is a floating-point type.
fn width(ty: &CqlType) -> Option<(u32, bool)> {
    Some(match ty {
        CqlType::Tinyint => (1, false),
        CqlType::Smallint => (2, false),
        CqlType::Int => (4, false),
        CqlType::Bigint | CqlType::Counter => (8, false),
        CqlType::Varint => (u32::MAX, false),
        CqlType::Float => (4, true),
        CqlType::Double => (8, true),
        CqlType::Decimal => (u32::MAX, true),
        _ => return None,
    })
}

/// The type `l op r` computes in: the wider of the two, a floating-point one if either is.
pub(super) fn result_type(l: &CqlType, r: &CqlType) -> Option<CqlType> {
    let (wl, fl) = width(l)?;
    let (wr, fr) = width(r)?;
    let size = wl.max(wr);
    Some(match (fl || fr, size) {
        (false, 1) => CqlType::Tinyint,
        (false, 2) => CqlType::Smallint,
        (false, 4) => CqlType::Int,
        (false, 8) => CqlType::Bigint,
        (false, _) => CqlType::Varint,
        (true, 1..=4) => CqlType::Float,
        (true, 8) => CqlType::Double,
        (true, _) => CqlType::Decimal,
    })
}

/// Reads a number of type `ty`.
pub(in super::super) fn read(ty: &CqlType, v: &[u8]) -> Result<Num, CqlError> {
    let bad = || CqlError::invalid(format!("{} bytes are not a {ty}", v.len()));
    Ok(match ty {
        CqlType::Tinyint => Num::Int(i64::from(i8::from_be_bytes(
            v.try_into().map_err(|_| bad())?,
        ))),
        CqlType::Smallint => Num::Int(i64::from(i16::from_be_bytes(
            v.try_into().map_err(|_| bad())?,
        ))),
        CqlType::Int => Num::Int(i64::from(i32::from_be_bytes(
            v.try_into().map_err(|_| bad())?,
        ))),
        CqlType::Bigint | CqlType::Counter => {
            Num::Int(i64::from_be_bytes(v.try_into().map_err(|_| bad())?))
        }
        CqlType::Varint if !v.is_empty() => Num::Big(BigInt::from_signed_bytes_be(v)),
        CqlType::Float => Num::Float(f64::from(f32::from_be_bytes(
            v.try_into().map_err(|_| bad())?,
        ))),
        CqlType::Double => Num::Float(f64::from_be_bytes(v.try_into().map_err(|_| bad())?)),
        CqlType::Decimal => {
            let (scale, unscaled) = v.split_first_chunk::<4>().ok_or_else(bad)?;
            if unscaled.is_empty() {
                return Err(bad());
            }
            let scale = i32::from_be_bytes(*scale);
            // A client chooses a decimal's scale: shifting by 2³¹ digits would take the
            // process's memory, so a scale past this is refused, not computed.
            if scale.unsigned_abs() > MAX_SCALE {
                return Err(CqlError::invalid(format!(
                    "a decimal of scale {scale} is beyond the ±{MAX_SCALE} computed here"
                )));
            }
            Num::Decimal(BigInt::from_signed_bytes_be(unscaled), scale)
        }
        _ => return Err(bad()),
    })
}

/// A number's bytes as a `ty`, converting as Java's primitive conversions do (integers wrap,
/// floats saturate into integers).
pub(in super::super) fn write(ty: &CqlType, n: Num) -> Result<Vec<u8>, CqlError> {
    Ok(match ty {
        // Java narrows a double through int: it saturates there, then wraps.
        CqlType::Tinyint => (narrow(&n) as i8).to_be_bytes().to_vec(),
        CqlType::Smallint => (narrow(&n) as i16).to_be_bytes().to_vec(),
        CqlType::Int => (narrow(&n) as i32).to_be_bytes().to_vec(),
        CqlType::Bigint | CqlType::Counter => as_i64(&n).to_be_bytes().to_vec(),
        CqlType::Varint => as_big(n).to_signed_bytes_be(),
        CqlType::Float => (as_f64(&n) as f32).to_be_bytes().to_vec(),
        CqlType::Double => as_f64(&n).to_be_bytes().to_vec(),
        _ => {
            let (unscaled, scale) = as_decimal(n).map_err(CqlError::invalid)?;
            let mut out = scale.to_be_bytes().to_vec();
            out.extend(unscaled.to_signed_bytes_be());
            out
        }
    })
}

/// An integer's low 64 bits, a float saturated to an `int` first.
fn narrow(n: &Num) -> i64 {
    match n {
        Num::Float(f) => i64::from(*f as i32),
        n => as_i64(n),
    }
}

/// The low 64 bits of an integer (Java's `longValue()`); a float saturates; a decimal drops
/// its fraction first.
fn as_i64(n: &Num) -> i64 {
    match n {
        Num::Int(i) => *i,
        Num::Float(f) => *f as i64,
        Num::Big(b) => low_bits(b),
        Num::Decimal(u, s) => low_bits(&truncate(u, *s)),
    }
}

fn low_bits(b: &BigInt) -> i64 {
    let bytes = b.to_signed_bytes_le();
    let fill = if b.sign() == num_bigint::Sign::Minus {
        0xff
    } else {
        0
    };
    let mut eight = [fill; 8];
    for (d, s) in eight.iter_mut().zip(&bytes) {
        *d = *s;
    }
    i64::from_le_bytes(eight)
}

/// A decimal's integer part (toward zero).
fn truncate(unscaled: &BigInt, scale: i32) -> BigInt {
    if scale <= 0 {
        unscaled * BigInt::from(10).pow(scale.unsigned_abs())
    } else {
        unscaled / BigInt::from(10).pow(scale.unsigned_abs())
    }
}

fn as_big(n: Num) -> BigInt {
    match n {
        Num::Int(i) => BigInt::from(i),
        Num::Big(b) => b,
        Num::Float(f) => BigInt::from(f as i64),
        Num::Decimal(u, s) => truncate(&u, s),
    }
}

fn as_f64(n: &Num) -> f64 {
    match n {
        Num::Int(i) => *i as f64,
        Num::Float(f) => *f,
        Num::Big(b) => b.to_string().parse().unwrap_or(f64::NAN),
        Num::Decimal(u, s) => format!("{u}e{}", -i64::from(*s))
            .parse()
            .unwrap_or(f64::NAN),
    }
}

/// A number as a decimal; a NaN or an infinity has none (Cassandra's words).
fn as_decimal(n: Num) -> Result<(BigInt, i32), &'static str> {
    Ok(match n {
        Num::Int(i) => (BigInt::from(i), 0),
        Num::Big(b) => (b, 0),
        Num::Decimal(u, s) => (u, s),
        Num::Float(f) if f.is_nan() => return Err("A NaN cannot be converted into a decimal"),
        Num::Float(f) if f.is_infinite() => {
            return Err("An infinite number cannot be converted into a decimal")
        }
        // Java's BigDecimal.valueOf(double): the decimal of Double.toString's text.
        Num::Float(f) => decimal_of_text(&java_double_text(f)).unwrap_or((BigInt::from(0), 0)),
    })
}

/// Java's `Double.toString`: the shortest digits that read back, plain with at least one
/// fractional digit from 10⁻³ to 10⁷ (`4.0`, `0.001`), else `d.dddE±n` (`1.0E7`, `1.0E-4`).
/// Its scale matters where a double becomes a decimal (`4.0` has scale 1).
pub(super) fn java_double_text(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    let abs = f.abs();
    if (1e-3..1e7).contains(&abs) {
        let point = exp + 1;
        let text = if point <= 0 {
            format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
        } else {
            let p = point as usize;
            let padded = format!("{digits:0<p$}");
            let (int, frac) = padded.split_at(p);
            format!("{int}.{}", if frac.is_empty() { "0" } else { frac })
        };
        return format!("{sign}{text}");
    }
    let (first, rest) = digits.split_at(1);
    let rest = if rest.is_empty() { "0" } else { rest };
    format!("{sign}{first}.{rest}E{exp}")
}

/// The type Cassandra prefers for a number literal where nothing else types it: `int`, else
/// `bigint`, else `varint` for an integer; `double` where the double is exactly the literal's
/// value (NaN and the infinities too), else `decimal`.
pub(in super::super) fn preferred_type(text: &str) -> CqlType {
    let unsigned = text.trim_start_matches(['-', '+']);
    if unsigned.eq_ignore_ascii_case("nan") || unsigned.eq_ignore_ascii_case("infinity") {
        return CqlType::Double;
    }
    if unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return match text.parse::<i64>() {
            Ok(v) if i32::try_from(v).is_ok() => CqlType::Int,
            Ok(_) => CqlType::Bigint,
            Err(_) => CqlType::Varint,
        };
    }
    let exact = text
        .parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .and_then(|f| {
            let (a, b) = (
                decimal_of_text(text)?,
                decimal_of_text(&java_double_text(f))?,
            );
            Some(decimal::compare(a, b).is_eq())
        });
    if exact == Some(true) {
        CqlType::Double
    } else {
        CqlType::Decimal
    }
}

/// A double as the decimal Java's `BigDecimal.valueOf(double)` makes of it.
pub(super) fn decimal_of_double(f: f64) -> Result<(BigInt, i32), CqlError> {
    as_decimal(Num::Float(f)).map_err(CqlError::invalid)
}

/// A decimal's nearest double.
pub(super) fn double_of_decimal(unscaled: BigInt, scale: i32) -> f64 {
    as_f64(&Num::Decimal(unscaled, scale))
}

fn decimal_of_text(t: &str) -> Option<(BigInt, i32)> {
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (int_part, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let unscaled: BigInt = format!("{int_part}{frac}").parse().ok()?;
    Some((unscaled, i32::try_from(frac.len()).ok()?.checked_sub(exp)?))
}

/// `a op b` for numbers of types `l` and `r`, in their result type.
pub(super) fn arith(
    op: ArithOp,
    l: &CqlType,
    a: &[u8],
    r: &CqlType,
    b: &[u8],
) -> Result<Vec<u8>, CqlError> {
    let ty = result_type(l, r).ok_or_else(|| CqlError::invalid("not numbers"))?;
    let failed = |why: &str| {
        CqlError::invalid(format!(
            "the operation '{l} {} {r}' failed: {why}",
            op.symbol()
        ))
    };
    let (x, y) = (read(l, a)?, read(r, b)?);
    let n = match &ty {
        CqlType::Tinyint | CqlType::Smallint | CqlType::Int | CqlType::Bigint => {
            let (x, y) = (as_i64(&x), as_i64(&y));
            if matches!(op, ArithOp::Div | ArithOp::Rem) && y == 0 {
                return Err(failed("/ by zero"));
            }
            Num::Int(match op {
                ArithOp::Add => x.wrapping_add(y),
                ArithOp::Sub => x.wrapping_sub(y),
                ArithOp::Mul => x.wrapping_mul(y),
                ArithOp::Div => x.wrapping_div(y),
                ArithOp::Rem => x.wrapping_rem(y),
            })
        }
        CqlType::Varint => {
            let (x, y) = (as_big(x), as_big(y));
            if matches!(op, ArithOp::Div | ArithOp::Rem) && y == BigInt::from(0) {
                return Err(failed("BigInteger divide by zero"));
            }
            Num::Big(match op {
                ArithOp::Add => x + y,
                ArithOp::Sub => x - y,
                ArithOp::Mul => x * y,
                ArithOp::Div => x / y,
                ArithOp::Rem => x % y,
            })
        }
        CqlType::Float | CqlType::Double => {
            let (x, y) = (as_f64(&x), as_f64(&y));
            Num::Float(match op {
                ArithOp::Add => x + y,
                ArithOp::Sub => x - y,
                ArithOp::Mul => x * y,
                ArithOp::Div => x / y,
                ArithOp::Rem => x % y,
            })
        }
        _ => {
            // An integer becomes a decimal through a double, as Cassandra's operators make
            // it (`1` is 1.0, scale 1); a varint exactly.
            let via_double = |n: Num| match n {
                Num::Int(i) => as_decimal(Num::Float(i as f64)),
                other => as_decimal(other),
            };
            let x = via_double(x).map_err(failed)?;
            let y = via_double(y).map_err(failed)?;
            let (u, s) = match op {
                ArithOp::Add => decimal::add(x, y),
                ArithOp::Sub => decimal::sub(x, y),
                ArithOp::Mul => decimal::mul(x, y),
                ArithOp::Div => decimal::div(x, y),
                ArithOp::Rem => decimal::rem(x, y),
            }
            .map_err(failed)?;
            if s.unsigned_abs() > MAX_SCALE {
                return Err(failed("the result's scale is too large"));
            }
            Num::Decimal(u, s)
        }
    };
    // A float computed in double rounds once to float: exact for + - * / %.
    write(&ty, n)
}

/// `-v` for a number of type `ty` (an integer's minimum stays itself, as in Java).
pub(super) fn negate(ty: &CqlType, v: &[u8]) -> Result<Vec<u8>, CqlError> {
    write(
        ty,
        match read(ty, v)? {
            Num::Int(i) => Num::Int(i.wrapping_neg()),
            Num::Big(b) => Num::Big(-b),
            Num::Float(f) => Num::Float(-f),
            Num::Decimal(u, s) => Num::Decimal(-u, s),
        },
    )
}

/// Whether `CAST` takes a `from` to a `to` here: between numeric types, and to text from the
/// types whose text form Cassandra's matches this crate's.
pub(super) fn castable(from: &CqlType, to: &CqlType) -> bool {
    let texty = matches!(to, CqlType::Text | CqlType::Ascii);
    (is_number(from) && is_number(to))
        || (texty
            && matches!(
                from,
                CqlType::Tinyint
                    | CqlType::Smallint
                    | CqlType::Int
                    | CqlType::Bigint
                    | CqlType::Varint
                    | CqlType::Text
                    | CqlType::Ascii
                    | CqlType::Uuid
                    | CqlType::Timeuuid
                    | CqlType::Boolean
            ))
}

/// `CAST(v AS to)`.
pub(super) fn cast(from: &CqlType, to: &CqlType, v: &[u8]) -> Result<Vec<u8>, CqlError> {
    if matches!(to, CqlType::Text | CqlType::Ascii) {
        let text = match from {
            CqlType::Boolean => (v.first().is_some_and(|b| *b != 0)).to_string(),
            _ => from.display(v),
        };
        return Ok(text.into_bytes());
    }
    write(to, read(from, v)?)
}

#[cfg(test)]
pub(super) fn decimal(t: &str) -> Vec<u8> {
    write(&CqlType::Decimal, {
        let (u, s) = decimal_of_text(t).unwrap_or_default();
        Num::Decimal(u, s)
    })
    .unwrap_or_default()
}
