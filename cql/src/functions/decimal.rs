//! Decimal arithmetic as Cassandra 4 and 5 compute it (since CASSANDRA-15232): Java's
//! `BigDecimal` with sums, differences and products exact up to 10,000 significant digits
//! (rounded half up past them), a quotient rounded half up at a scale chosen for at least 32
//! significant digits (between 32 and 1,000) and stripped of trailing zeros, and an exact
//! remainder. A decimal is `(unscaled, scale)`, worth unscaled × 10^-scale; the scale is part
//! of the answer (a driver shows `1.50`, not `1.5`), so each operation chooses it as
//! `BigDecimal` does. Must not touch: bytes and CQL types (`number.rs` reads and writes those).

use std::cmp::Ordering;

use num_bigint::{BigInt, Sign};

/// A decimal: unscaled value and scale.
pub(super) type Dec = (BigInt, i32);

/// The significant digits a sum, difference or product keeps.
const PRECISION: u64 = 10_000;
/// The fewest significant digits (and the smallest scale) a quotient is computed to.
const QUOTIENT_DIGITS: i64 = 32;
/// The largest scale a quotient is computed to.
const QUOTIENT_MAX_SCALE: i64 = 1_000;

/// Why an operation has no result, in Java's words.
pub(super) type Failure = &'static str;

/// `x + y`.
pub(super) fn add(x: Dec, y: Dec) -> Result<Dec, Failure> {
    let zero = BigInt::from(0);
    if x.0 == zero || y.0 == zero {
        return add_to_zero(x, y);
    }
    let (a, b, scale) = aligned(x, y);
    scaled(round((a + b, i64::from(scale))))
}

/// `x - y`.
pub(super) fn sub(x: Dec, y: Dec) -> Result<Dec, Failure> {
    add(x, (-y.0, y.1))
}

/// `x * y`.
pub(super) fn mul(x: Dec, y: Dec) -> Result<Dec, Failure> {
    let scale = i64::from(x.1) + i64::from(y.1);
    scaled(round((x.0 * y.0, scale)))
}

/// `x / y`: at a scale that gives the quotient at least 32 significant digits by the
/// operands' magnitudes (never below either operand's scale nor 32, never above 1,000),
/// rounded half up, then stripped of trailing zeros.
pub(super) fn div(x: Dec, y: Dec) -> Result<Dec, Failure> {
    if y.0 == BigInt::from(0) {
        // Java divides in a machine word only where the dividend raised to the quotient's
        // scale fits one, which at a scale of 32 or more no dividend that fits a word does:
        // it always fails in big integers.
        return Err("BigInteger divide by zero");
    }
    let magnitude = |d: &Dec| digits(&d.0) as i64 - i64::from(d.1);
    let first_digit = magnitude(&x) - magnitude(&y);
    let scale = (QUOTIENT_DIGITS - first_digit)
        .max(i64::from(x.1))
        .max(i64::from(y.1))
        .clamp(QUOTIENT_DIGITS, QUOTIENT_MAX_SCALE);
    // unscaled quotient = ux · 10^(scale - sx + sy) / uy
    let shift = scale - i64::from(x.1) + i64::from(y.1);
    let (n, d) = if shift >= 0 {
        (x.0 * pow10(shift.unsigned_abs()), y.0)
    } else {
        (x.0, y.0 * pow10(shift.unsigned_abs()))
    };
    let q = divide_half_up(&n, &d);
    scaled(strip_all_zeros((q, scale)))
}

/// `x % y`: what is left of `x` after the largest whole multiple of `y` not past it (its sign
/// is `x`'s), exactly, at `x`'s scale, or (a divisor of larger scale) at the integral
/// quotient's scale plus the divisor's, as `BigDecimal.remainder` writes it.
pub(super) fn rem(x: Dec, y: Dec) -> Result<Dec, Failure> {
    let zero = BigInt::from(0);
    match (x.0 == zero, y.0 == zero) {
        (true, true) => return Err("Division undefined"),
        (false, true) => return Err("Division by zero"),
        _ => {}
    }
    let (a, b, common) = aligned(x.clone(), y.clone());
    let whole = &a / &b;
    let left = a - &whole * b;
    let scale = if x.1 >= y.1 || whole == zero {
        x.1
    } else {
        // The integral quotient keeps its trailing zeros down to the preferred scale
        // (sx - sy); its product with y then has scale sy less the zeros it dropped.
        let cap = (i64::from(y.1) - i64::from(x.1)).unsigned_abs();
        y.1 - i32::try_from(trailing_zeros(&whole, cap)).unwrap_or(0)
    };
    // `left` is at the common scale, the larger: write it at `scale`, which is at most that.
    let drop = (i64::from(common) - i64::from(scale)).unsigned_abs();
    Ok((left / pow10(drop), scale))
}

/// A sum where an operand is zero: the other, rounded, at the larger scale where its digits
/// allow (BigDecimal pads no further than its precision, nor strips a digit that is not zero).
fn add_to_zero(x: Dec, y: Dec) -> Result<Dec, Failure> {
    let preferred = i64::from(x.1.max(y.1));
    let other = if x.0 == BigInt::from(0) { y } else { x };
    if other.0 == BigInt::from(0) {
        return scaled((other.0, preferred));
    }
    let r = round((other.0, i64::from(other.1)));
    let result = match r.1.cmp(&preferred) {
        Ordering::Equal => r,
        Ordering::Greater => strip_zeros(r, preferred),
        Ordering::Less => {
            let room = PRECISION.saturating_sub(digits(&r.0));
            let wanted = (preferred - r.1).unsigned_abs();
            let to = r.1 + i64::try_from(room.min(wanted)).unwrap_or(0);
            (raise(r.0, r.1, to), to)
        }
    };
    scaled(result)
}

/// `x` cut to 10,000 digits, half up.
fn round(x: (BigInt, i64)) -> (BigInt, i64) {
    let (mut u, mut scale) = x;
    // A second pass only when rounding carried into one digit more.
    while digits(&u) > PRECISION {
        let drop = digits(&u) - PRECISION;
        u = divide_half_up(&u, &pow10(drop));
        scale -= drop as i64;
    }
    (u, scale)
}

/// `n / d` rounded to the nearest integer, a tie away from zero.
fn divide_half_up(n: &BigInt, d: &BigInt) -> BigInt {
    let q = n / d;
    let r = n - &q * d;
    if r.magnitude() * 2u32 < *d.magnitude() {
        return q;
    }
    let negative = (n.sign() == Sign::Minus) != (d.sign() == Sign::Minus);
    if negative {
        q - 1
    } else {
        q + 1
    }
}

/// Drops trailing zeros while the scale is above `preferred` (a value under ten keeps its
/// digit, as BigDecimal's does).
fn strip_zeros(x: (BigInt, i64), preferred: i64) -> (BigInt, i64) {
    let (mut u, mut scale) = x;
    let ten = BigInt::from(10);
    while scale > preferred && u.magnitude() >= ten.magnitude() && (&u % 10u32) == BigInt::from(0) {
        u /= 10;
        scale -= 1;
    }
    (u, scale)
}

/// Drops every trailing zero (zero itself becomes `0` at scale 0), `stripTrailingZeros`.
fn strip_all_zeros(x: (BigInt, i64)) -> (BigInt, i64) {
    if x.0 == BigInt::from(0) {
        return (x.0, 0);
    }
    strip_zeros(x, i64::MIN)
}

/// How many of `u`'s last digits are zeros, counting no further than `cap`.
fn trailing_zeros(u: &BigInt, cap: u64) -> u64 {
    let mut u = u.clone();
    let mut n = 0;
    while n < cap && u != BigInt::from(0) && (&u % 10u32) == BigInt::from(0) {
        u /= 10;
        n += 1;
    }
    n
}

/// `u` at scale `from` written at the larger scale `to`.
fn raise(u: BigInt, from: i64, to: i64) -> BigInt {
    u * pow10(to.saturating_sub(from).unsigned_abs())
}

/// Two decimals at the larger of their scales.
fn aligned(a: Dec, b: Dec) -> (BigInt, BigInt, i32) {
    let scale = a.1.max(b.1);
    let s = i64::from(scale);
    (
        raise(a.0, i64::from(a.1), s),
        raise(b.0, i64::from(b.1), s),
        scale,
    )
}

/// Compares two decimals' values (scale aside: 1.0 equals 1).
pub(super) fn compare(x: Dec, y: Dec) -> Ordering {
    let (a, b, _) = aligned(x, y);
    a.cmp(&b)
}

/// The number of decimal digits of `|u|` (one for zero), BigDecimal's precision.
fn digits(u: &BigInt) -> u64 {
    let bits = u.bits();
    if bits == 0 {
        return 1;
    }
    // 2^(bits-1) ≤ |u| < 2^bits: the estimate is exact or one short.
    let estimate = ((bits - 1) as f64 * std::f64::consts::LOG10_2).floor() as u64 + 1;
    let mut d = estimate.max(1);
    while u.magnitude() >= pow10(d).magnitude() {
        d += 1;
    }
    while d > 1 && u.magnitude() < pow10(d - 1).magnitude() {
        d -= 1;
    }
    d
}

fn pow10(n: u64) -> BigInt {
    BigInt::from(10).pow(u32::try_from(n).unwrap_or(u32::MAX))
}

/// A computed scale as a decimal's `i32` scale.
fn scaled(x: (BigInt, i64)) -> Result<Dec, Failure> {
    let scale = i32::try_from(x.1).map_err(|_| "Overflow")?;
    Ok((x.0, scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(t: &str) -> Dec {
        let (int, frac) = t.split_once('.').unwrap_or((t, ""));
        let u: BigInt = format!("{int}{frac}").parse().expect("a decimal");
        (u, i32::try_from(frac.len()).expect("a scale"))
    }

    /// BigDecimal's `toPlainString` of a non-negative scale; `u E -scale` otherwise.
    fn text(x: Dec) -> String {
        let (u, s) = x;
        if s <= 0 {
            return format!("{u}E{}", -s);
        }
        let neg = u.sign() == Sign::Minus;
        let digits = u.magnitude().to_string();
        let s = s as usize;
        let padded = format!("{digits:0>width$}", width = s + 1);
        let (i, f) = padded.split_at(padded.len() - s);
        format!("{}{i}.{f}", if neg { "-" } else { "" })
    }

    // Each expectation is what java.math.BigDecimal gives for Cassandra's operations.
    #[test]
    fn quotients_have_32_digits_or_are_exact_and_stripped() {
        assert_eq!(text(div(dec("1.00"), dec("2")).unwrap()), "0.5");
        assert_eq!(text(div(dec("1"), dec("4")).unwrap()), "0.25");
        assert_eq!(text(div(dec("10"), dec("5")).unwrap()), "2E0");
        assert_eq!(text(div(dec("100"), dec("0.5")).unwrap()), "2E2");
        assert_eq!(text(div(dec("0.00"), dec("3")).unwrap()), "0E0");
        assert_eq!(
            text(div(dec("1"), dec("3")).unwrap()),
            "0.33333333333333333333333333333333"
        );
        assert_eq!(
            text(div(dec("2"), dec("3")).unwrap()),
            "0.66666666666666666666666666666667"
        );
        assert_eq!(
            text(div(dec("-2"), dec("3")).unwrap()),
            "-0.66666666666666666666666666666667"
        );
        // A small quotient keeps 32 significant digits: the scale follows its first digit.
        assert_eq!(
            text(div(dec("1"), dec("30000")).unwrap()),
            "0.000033333333333333333333333333333333"
        );
        // 2^-46 has 46 decimals, the last a 5: a tie, rounded away from zero.
        assert_eq!(
            text(div(dec("1"), dec("70368744177664")).unwrap()),
            "0.000000000000014210854715202003717422485351563"
        );
        assert_eq!(div(dec("1"), dec("0")), Err("BigInteger divide by zero"));
        assert_eq!(div(dec("0"), dec("0.0")), Err("BigInteger divide by zero"));
    }

    #[test]
    fn remainders_take_the_sign_and_scale_java_gives() {
        assert_eq!(text(rem(dec("7.50"), dec("2")).unwrap()), "1.50");
        assert_eq!(text(rem(dec("-7"), dec("2")).unwrap()), "-1E0");
        assert_eq!(text(rem(dec("700"), dec("0.3")).unwrap()), "0.1");
        assert_eq!(text(rem(dec("1.5"), dec("4")).unwrap()), "1.5");
        assert_eq!(text(rem(dec("10"), dec("0.5")).unwrap()), "0E0");
        assert_eq!(text(rem(dec("10"), dec("0.05")).unwrap()), "0E0");
        assert_eq!(text(rem(dec("10.1"), dec("0.05")).unwrap()), "0.00");
        assert_eq!(
            text(rem(dec("1000000000000000000000000000000000000.1"), dec("0.3")).unwrap()),
            "0.2"
        );
        assert_eq!(rem(dec("1"), dec("0")), Err("Division by zero"));
        assert_eq!(rem(dec("0"), dec("0")), Err("Division undefined"));
    }

    #[test]
    fn sums_and_products_are_exact_to_10000_digits() {
        assert_eq!(text(add(dec("1.5"), dec("2.25")).unwrap()), "3.75");
        assert_eq!(text(add(dec("0.000"), dec("1")).unwrap()), "1.000");
        assert_eq!(text(sub(dec("1"), dec("1.00")).unwrap()), "0.00");
        assert_eq!(
            text(mul(dec("1.1111111111111111111"), dec("1.1111111111111111111")).unwrap()),
            "1.23456790123456790120987654320987654321"
        );
        let long = format!("{}5", "1".repeat(10_000));
        let (u, s) = add(dec(&long), dec("0")).unwrap();
        // 10,001 digits: the last, a 5, rounds the 10,000th up.
        assert!(u.to_string() == format!("{}2", "1".repeat(9_999)) && s == -1);
    }
}
