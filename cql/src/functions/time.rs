//! The time functions' arithmetic: a timeuuid's moment, a timestamp's day, the bounds
//! `minTimeuuid`/`maxTimeuuid` give, the casts between the time types, and a row key's token.
//! Encodings are Cassandra's: a timestamp is milliseconds since the Unix epoch (8 bytes), a
//! date days since it offset by 2³¹ (4 bytes), a time nanoseconds since midnight (8 bytes).

use super::super::error::CqlError;
use super::super::types::CqlType;
use supercolumn::model::comparator::TimeUuidType;
use supercolumn::model::partitioner::Partitioner;

/// 100 ns intervals from the Gregorian epoch (1582-10-15) to the Unix epoch.
const GREGORIAN_TO_UNIX_TICKS: i64 = 0x01B2_1DD2_1381_4000;
const MILLIS_PER_DAY: i64 = 86_400_000;
const DATE_EPOCH: i64 = 1 << 31;

/// Milliseconds of a moment in microseconds (toward negative infinity).
pub(super) fn millis(micros: i64) -> i64 {
    micros.div_euclid(1000)
}

/// The `date` bytes of the day a millisecond moment falls in (Cassandra truncates whole
/// seconds to days toward zero).
pub(super) fn date_of_millis(ms: i64) -> Vec<u8> {
    let days = ms.div_euclid(1000) / 86_400;
    ((days + DATE_EPOCH) as u32).to_be_bytes().to_vec()
}

/// The `time` bytes of a moment's time of day.
pub(super) fn time_of_day(micros: i64) -> Vec<u8> {
    let nanos = micros.rem_euclid(MILLIS_PER_DAY * 1000) * 1000;
    nanos.to_be_bytes().to_vec()
}

fn eight(v: &[u8], what: &str) -> Result<i64, CqlError> {
    <[u8; 8]>::try_from(v)
        .map(i64::from_be_bytes)
        .map_err(|_| CqlError::invalid(format!("a {what} is 8 bytes, not {}", v.len())))
}

/// The millisecond moment of a timeuuid, a timestamp or a date.
fn moment(from: &CqlType, v: &[u8]) -> Result<i64, CqlError> {
    match from {
        CqlType::Timeuuid => {
            let b =
                <[u8; 16]>::try_from(v).map_err(|_| CqlError::invalid("a timeuuid is 16 bytes"))?;
            let ticks = TimeUuidType::timestamp(&b) as i64;
            Ok((ticks - GREGORIAN_TO_UNIX_TICKS).div_euclid(10_000))
        }
        CqlType::Timestamp => eight(v, "timestamp"),
        CqlType::Date => {
            let b = <[u8; 4]>::try_from(v).map_err(|_| CqlError::invalid("a date is 4 bytes"))?;
            Ok((i64::from(u32::from_be_bytes(b)) - DATE_EPOCH) * MILLIS_PER_DAY)
        }
        other => Err(CqlError::invalid(format!("{other} is not a time type"))),
    }
}

/// `v` (a timeuuid, timestamp or date) as a date, a timestamp or milliseconds (bigint).
pub(super) fn convert(from: &CqlType, to: &CqlType, v: &[u8]) -> Result<Vec<u8>, CqlError> {
    let ms = moment(from, v)?;
    Ok(match to {
        CqlType::Date => date_of_millis(ms),
        _ => ms.to_be_bytes().to_vec(),
    })
}

/// The smallest (or, `max`, the largest) timeuuid of a timestamp's millisecond, as
/// Cassandra's `minTimeuuid`/`maxTimeuuid` build them.
pub(super) fn bound_timeuuid(v: &[u8], max: bool) -> Result<Vec<u8>, CqlError> {
    let ms = eight(v, "timestamp")?;
    let ticks = GREGORIAN_TO_UNIX_TICKS
        .wrapping_add(ms.wrapping_add(i64::from(max)).wrapping_mul(10_000))
        .wrapping_sub(i64::from(max)) as u64;
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&(ticks as u32).to_be_bytes());
    b[4..6].copy_from_slice(&((ticks >> 32) as u16).to_be_bytes());
    b[6..8].copy_from_slice(&((((ticks >> 48) & 0x0fff) as u16) | 0x1000).to_be_bytes());
    b[8..].fill(if max { 0x7f } else { 0x80 });
    Ok(b.to_vec())
}

/// Whether `CAST` takes a `from` to a `to` here: between the time types.
pub(super) fn castable(from: &CqlType, to: &CqlType) -> bool {
    use CqlType::{Date, Timestamp, Timeuuid};
    matches!(
        (from, to),
        (Timestamp, Date) | (Date, Timestamp) | (Timeuuid, Date) | (Timeuuid, Timestamp)
    )
}

/// `CAST(v AS to)` between the time types.
pub(super) fn cast(from: &CqlType, to: &CqlType, v: &[u8]) -> Result<Vec<u8>, CqlError> {
    convert(from, to, v)
}

/// The token of a row key, as `token()` returns it: a bigint (Murmur3), a varint (Random), or
/// the key's bytes.
pub(super) fn token_bytes(p: Partitioner, key: &[u8]) -> Vec<u8> {
    use supercolumn::model::partitioner::Token;
    match p.token(key) {
        Token::Murmur3(t) => t.to_be_bytes().to_vec(),
        Token::Random(t) => num_bigint::BigInt::from(t).to_signed_bytes_be(),
        Token::Key(k) => k,
        _ => key.to_vec(),
    }
}
