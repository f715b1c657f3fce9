//! `varint` (Cassandra's `IntegerType`): an integer of any size as its minimal big-endian two's
//! complement bytes. Arithmetic on them is `num-bigint`'s; this file owns the sort key: a sign
//! byte (00 negative, 01 otherwise), the byte length as a u32 (inverted when negative, so a
//! longer negative sorts first), then the bytes, whose unsigned order is the numeric order
//! among integers of one sign and length.

use num_bigint::BigInt;

use super::builtin::to_hex;
use super::{Comparator, MarshalError};

/// `varint`: minimal big-endian two's complement, ordered numerically.
#[derive(Debug, Clone, Copy, Default)]
pub struct IntegerType;

/// Whether `b` is a two's complement integer in its shortest form (no redundant sign byte).
pub(super) fn is_minimal(b: &[u8]) -> bool {
    match b {
        [] => false,
        [_] => true,
        [0x00, next, ..] => next & 0x80 != 0,
        [0xff, next, ..] => next & 0x80 == 0,
        _ => true,
    }
}

impl Comparator for IntegerType {
    fn name(&self) -> String {
        "IntegerType".into()
    }
    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        if is_minimal(name) {
            Ok(())
        } else {
            Err(MarshalError::new(
                "a varint must be in its shortest two's complement form (no redundant sign bytes)",
            ))
        }
    }
    fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
        let Some(&first) = name.first() else {
            return;
        };
        let len = u32::try_from(name.len()).unwrap_or(u32::MAX);
        if first & 0x80 == 0 {
            out.push(1);
            out.extend_from_slice(&len.to_be_bytes());
        } else {
            out.push(0);
            out.extend_from_slice(&(!len).to_be_bytes());
        }
        out.extend_from_slice(name);
    }
    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        let Some((&sign, rest)) = key.split_first() else {
            return Ok(());
        };
        let malformed = || MarshalError::new("varint sort key is malformed");
        let (len, bytes) = rest.split_first_chunk::<4>().ok_or_else(malformed)?;
        let len = u32::from_be_bytes(*len);
        let len = if sign == 0 { !len } else { len };
        let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
        if sign > 1
            || usize::try_from(len).ok() != Some(bytes.len())
            || negative != (sign == 0)
            || !is_minimal(bytes)
        {
            return Err(malformed());
        }
        out.extend_from_slice(bytes);
        Ok(())
    }
    fn to_text(&self, name: &[u8]) -> String {
        if name.is_empty() {
            return String::new();
        }
        if name.len() > 4096 {
            return to_hex(name);
        }
        BigInt::from_signed_bytes_be(name).to_string()
    }
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        let t = text.trim();
        if t.len() > 10_000 {
            return Err(MarshalError::new(
                "varint literal longer than 10,000 digits",
            ));
        }
        t.parse::<BigInt>()
            .map(|v| v.to_signed_bytes_be())
            .map_err(|_| MarshalError::new(format!("'{text}' is not an integer")))
    }
}
