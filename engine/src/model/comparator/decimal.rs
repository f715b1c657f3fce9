//! `decimal` (Cassandra's `DecimalType`): a 4-byte big-endian scale, then the unscaled value's
//! minimal big-endian two's complement; worth unscaled × 10^-scale, and ordered by that value
//! as Cassandra orders decimals. The sort key: a sign byte (00 negative, 01 zero, 02
//! positive); for a value other than zero, the power of ten of its first digit (8 bytes, sign
//! bit flipped) and its significant digits (each as its value plus one) ending in a zero byte,
//! all complemented when the value is negative, so that a larger magnitude sorts first; then
//! the scale (4 bytes, sign bit flipped), which keeps apart the spellings of one value (`1.0`,
//! `1.00`) that Cassandra compares as equal. Must not touch: decimal arithmetic (the CQL
//! crate's).

use num_bigint::{BigInt, Sign};

use super::builtin::to_hex;
use super::varint::is_minimal;
use super::{Comparator, MarshalError};

/// `decimal`: scale, then unscaled two's complement, ordered by value.
#[derive(Debug, Clone, Copy, Default)]
pub struct DecimalType;

/// The most trailing zeros a sort key may restore: more than any 64 KiB name holds, so a
/// damaged key cannot ask for a huge number.
const MAX_ZEROS: i64 = 200_000;

/// A name's scale and unscaled value.
fn parts(name: &[u8]) -> Option<(i32, BigInt)> {
    let (scale, unscaled) = name.split_first_chunk::<4>()?;
    is_minimal(unscaled).then(|| {
        (
            i32::from_be_bytes(*scale),
            BigInt::from_signed_bytes_be(unscaled),
        )
    })
}

impl Comparator for DecimalType {
    fn name(&self) -> String {
        "DecimalType".into()
    }

    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        parts(name).map(|_| ()).ok_or_else(|| {
            MarshalError::new(
                "a decimal is a 4-byte scale and an unscaled value in its shortest two's complement form",
            )
        })
    }

    fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
        let Some((scale, unscaled)) = parts(name) else {
            return;
        };
        let sign = unscaled.sign();
        out.push(match sign {
            Sign::Minus => 0,
            Sign::NoSign => 1,
            Sign::Plus => 2,
        });
        if sign != Sign::NoSign {
            let text = unscaled.magnitude().to_string();
            let digits = text.trim_end_matches('0');
            let zeros = (text.len() - digits.len()) as i64;
            // value = d1.d2d3… × 10^exponent
            let exponent = digits.len() as i64 - 1 + zeros - i64::from(scale);
            let start = out.len();
            out.extend_from_slice(&((exponent as u64) ^ (1 << 63)).to_be_bytes());
            out.extend(digits.bytes().map(|d| d - b'0' + 1));
            out.push(0);
            if sign == Sign::Minus {
                out[start..].iter_mut().for_each(|b| *b = !*b);
            }
        }
        out.extend_from_slice(&((scale as u32) ^ (1 << 31)).to_be_bytes());
    }

    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        let malformed = || MarshalError::new("decimal sort key is malformed");
        let Some((&sign, rest)) = key.split_first() else {
            return Ok(());
        };
        let (body, scale) = rest.split_last_chunk::<4>().ok_or_else(malformed)?;
        let scale = (u32::from_be_bytes(*scale) ^ (1 << 31)) as i32;
        let unscaled = match sign {
            1 if body.is_empty() => BigInt::from(0),
            0 | 2 => {
                let negative = sign == 0;
                let plain: Vec<u8> = if negative {
                    body.iter().map(|b| !b).collect()
                } else {
                    body.to_vec()
                };
                let (exponent, digits) = plain.split_first_chunk::<8>().ok_or_else(malformed)?;
                let exponent = (u64::from_be_bytes(*exponent) ^ (1 << 63)) as i64;
                let (&end, digits) = digits.split_last().ok_or_else(malformed)?;
                let text: String = digits
                    .iter()
                    .map(|&d| (1..=10).contains(&d).then(|| char::from(b'0' + d - 1)))
                    .collect::<Option<_>>()
                    .ok_or_else(malformed)?;
                if end != 0 || text.is_empty() || text.starts_with('0') || text.ends_with('0') {
                    return Err(malformed());
                }
                let zeros = exponent - (text.len() as i64 - 1) + i64::from(scale);
                if !(0..=MAX_ZEROS).contains(&zeros) {
                    return Err(malformed());
                }
                let text = format!("{text}{}", "0".repeat(zeros as usize));
                let magnitude: BigInt = text.parse().map_err(|_| malformed())?;
                if negative {
                    -magnitude
                } else {
                    magnitude
                }
            }
            _ => return Err(malformed()),
        };
        out.extend_from_slice(&scale.to_be_bytes());
        out.extend(unscaled.to_signed_bytes_be());
        Ok(())
    }

    fn to_text(&self, name: &[u8]) -> String {
        if name.len() > 4096 {
            return to_hex(name);
        }
        match parts(name) {
            Some((scale, unscaled)) => decimal_text(scale, &unscaled),
            None => to_hex(name),
        }
    }

    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        let bad = || MarshalError::new(format!("'{text}' is not a decimal"));
        let t = text.trim();
        if t.len() > 10_000 {
            return Err(MarshalError::new(
                "decimal literal longer than 10,000 characters",
            ));
        }
        let (mantissa, exponent) = match t.find(['e', 'E']) {
            Some(i) => (&t[..i], t[i + 1..].parse::<i64>().map_err(|_| bad())?),
            None => (t, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let unscaled: BigInt = format!("{int}{frac}").parse().map_err(|_| bad())?;
        let scale = i32::try_from(frac.len() as i64 - exponent).map_err(|_| bad())?;
        let mut out = scale.to_be_bytes().to_vec();
        out.extend(unscaled.to_signed_bytes_be());
        Ok(out)
    }
}

/// Java's `BigDecimal.toString` (and Python's `Decimal`, which cqlsh prints with): plain where
/// the scale is not negative and the first digit is no further than six places after the
/// point, else `d.dddE±n` (`1E+3`, `1.5E-7`).
pub fn decimal_text(scale: i32, unscaled: &BigInt) -> String {
    let negative = unscaled.sign() == Sign::Minus;
    let digits = unscaled.magnitude().to_string();
    let sign = if negative { "-" } else { "" };
    let adjusted = digits.len() as i64 - 1 - i64::from(scale);
    if scale >= 0 && adjusted >= -6 {
        let scale = scale as usize;
        if scale == 0 {
            return format!("{sign}{digits}");
        }
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (i, f) = padded.split_at(padded.len() - scale);
        return format!("{sign}{i}.{f}");
    }
    let (first, rest) = digits.split_at(1);
    let point = if rest.is_empty() { "" } else { "." };
    let e = if adjusted >= 0 {
        format!("+{adjusted}")
    } else {
        adjusted.to_string()
    };
    format!("{sign}{first}{point}{rest}E{e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(text: &str) -> Vec<u8> {
        DecimalType.parse_text(text).expect("a decimal")
    }

    fn key(name: &[u8]) -> Vec<u8> {
        let mut k = Vec::new();
        DecimalType.encode_sort_key(name, &mut k);
        k
    }

    #[test]
    fn sort_keys_order_by_value_then_scale_and_decode_back() {
        let ordered = [
            "-1E+3", "-100", "-1.55", "-1.5", "-1.50", "-0.001", "0", "0.00", "1E-7", "0.5", "1",
            "1.0", "1.00", "1.05", "1.5", "9.99", "10", "1E+10",
        ];
        let names: Vec<Vec<u8>> = ordered.iter().map(|t| dec(t)).collect();
        for (a, b) in names.iter().zip(&names[1..]) {
            assert!(
                key(a) < key(b),
                "{} !< {}",
                DecimalType.to_text(a),
                DecimalType.to_text(b)
            );
        }
        for n in &names {
            let mut back = Vec::new();
            DecimalType
                .decode_sort_key(&key(n), &mut back)
                .expect("decodes");
            assert_eq!(&back, n, "{}", DecimalType.to_text(n));
        }
    }

    #[test]
    fn text_is_javas_and_bad_names_and_keys_are_refused() {
        for t in ["1.50", "-0.001", "0", "1E+3", "1E-7", "123.456"] {
            assert_eq!(DecimalType.to_text(&dec(t)), t);
        }
        assert!(DecimalType.validate(&[0, 0, 0, 1]).is_err());
        assert!(DecimalType.validate(&[0, 0, 0, 1, 0, 1]).is_err());
        let mut out = Vec::new();
        assert!(DecimalType.decode_sort_key(&[2, 0, 0], &mut out).is_err());
        let mut bad = key(&dec("1.5"));
        bad[9] = 11;
        assert!(DecimalType.decode_sort_key(&bad, &mut out).is_err());
    }
}
