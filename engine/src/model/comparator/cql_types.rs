//! The scalar types CQL3 adds (`int`, `smallint`, `tinyint`, `boolean`, `float`, `double`,
//! `timestamp`, `date`, `time`, `uuid`, `inet`, `varint`) and `ReversedType`, as comparators:
//! each validates Cassandra's serialized bytes (an `int` 2 is `00000002`), orders them as
//! Cassandra's `AbstractType.compare` does, renders them as its `getString` and maps them to an
//! order-preserving sort key. This file must not know about CQL statements; `cql/` maps CQL
//! type names onto these.
//!
//! | type | bytes | sort key |
//! |---|---|---|
//! | Int32Type, ShortType, ByteType, TimeType | 4, 2, 1, 8 bytes big-endian signed | sign bit flipped |
//! | TimestampType | 8 bytes, signed ms since 1970 | sign bit flipped |
//! | SimpleDateType | 4 bytes unsigned, day 2^31 = 1970-01-01 | the bytes |
//! | BooleanType | 1 byte, 0 or 1 | the byte |
//! | FloatType, DoubleType | IEEE 754 big-endian | sign set: all bits flipped, else the sign bit |
//! | UUIDType | 16 bytes | version nibble, then (version 1) the TimeUUID key, else the bytes |
//! | InetAddressType | 4 or 16 bytes | the bytes |
//! | IntegerType | minimal two's complement | sign byte, length (inverted when negative), bytes |
//! | DecimalType (`decimal.rs`) | scale, unscaled two's complement | sign byte, first digit's power and digits, scale |
//! | ReversedType(T) | T's | empty stays empty, else T's key escaped, terminated, complemented |
//!
//! Long because it holds the CQL value types, each a short implementation of the same trait.

use std::net::IpAddr;
use std::sync::Arc;

use uuid::Uuid;

pub use super::reversed::ReversedType;
pub use super::varint::IntegerType;

use super::builtin::{to_hex, TimeUuidType};
use super::{Comparator, MarshalError};

/// The CQL scalar comparators, for the registry.
pub fn cql_types() -> Vec<Arc<dyn Comparator>> {
    vec![
        Arc::new(Int32Type),
        Arc::new(ShortType),
        Arc::new(ByteType),
        Arc::new(BooleanType),
        Arc::new(FloatType),
        Arc::new(DoubleType),
        Arc::new(TimestampType),
        Arc::new(SimpleDateType),
        Arc::new(TimeType),
        Arc::new(UuidType),
        Arc::new(InetAddressType),
        Arc::new(IntegerType),
        Arc::new(super::DecimalType),
    ]
}

fn exact<const N: usize>(name: &[u8], what: &str) -> Result<[u8; N], MarshalError> {
    <[u8; N]>::try_from(name)
        .map_err(|_| MarshalError::new(format!("{what} is exactly {N} bytes, not {}", name.len())))
}

/// Flips the first bit of a fixed-width big-endian signed value (encode and decode alike).
fn flip_sign(name: &[u8], out: &mut Vec<u8>) {
    if let Some((first, rest)) = name.split_first() {
        out.push(first ^ 0x80);
        out.extend_from_slice(rest);
    }
}

fn decode_flipped<const N: usize>(
    key: &[u8],
    what: &str,
    out: &mut Vec<u8>,
) -> Result<(), MarshalError> {
    if !key.is_empty() {
        flip_sign(&exact::<N>(key, what)?, out);
    }
    Ok(())
}

fn bad(text: &str, what: &str) -> MarshalError {
    MarshalError::new(format!("'{text}' is not {what}"))
}

/// A fixed-width signed integer type: its width, its names and how to read its value.
macro_rules! signed_int {
    ($ty:ident, $name:literal, $int:ty, $what:literal) => {
        #[doc = concat!("`", $what, "`: ", stringify!($int), " big-endian, ordered numerically.")]
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $ty;

        impl Comparator for $ty {
            fn name(&self) -> String {
                $name.into()
            }
            fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
                exact::<{ std::mem::size_of::<$int>() }>(name, $what).map(|_| ())
            }
            fn value_length_if_fixed(&self) -> Option<usize> {
                Some(std::mem::size_of::<$int>())
            }
            fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
                flip_sign(name, out)
            }
            fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
                decode_flipped::<{ std::mem::size_of::<$int>() }>(key, $what, out)
            }
            fn to_text(&self, name: &[u8]) -> String {
                match <[u8; std::mem::size_of::<$int>()]>::try_from(name) {
                    Ok(b) => <$int>::from_be_bytes(b).to_string(),
                    Err(_) => to_hex(name),
                }
            }
            fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
                text.trim()
                    .parse::<$int>()
                    .map(|v| v.to_be_bytes().to_vec())
                    .map_err(|_| bad(text, concat!("a valid ", $what)))
            }
        }
    };
}

signed_int!(Int32Type, "Int32Type", i32, "int");
signed_int!(ShortType, "ShortType", i16, "smallint");
signed_int!(ByteType, "ByteType", i8, "tinyint");

/// `boolean`: one byte, 0 (false) or 1 (true).
#[derive(Debug, Clone, Copy, Default)]
pub struct BooleanType;

impl Comparator for BooleanType {
    sort_key_is_the_name!();

    fn value_length_if_fixed(&self) -> Option<usize> {
        Some(1)
    }
    fn name(&self) -> String {
        "BooleanType".into()
    }
    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        match name {
            [0] | [1] => Ok(()),
            _ => Err(MarshalError::new(
                "a boolean is one byte, 00 (false) or 01 (true)",
            )),
        }
    }
    fn to_text(&self, name: &[u8]) -> String {
        match name {
            [0] => "false".into(),
            [1] => "true".into(),
            _ => to_hex(name),
        }
    }
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(vec![1]),
            "false" => Ok(vec![0]),
            _ => Err(bad(text, "true or false")),
        }
    }
}

/// IEEE 754 bits to a key whose unsigned order is the numeric order (`-0` before `0`, NaN last).
fn float_key(bits: u64, sign: u64) -> u64 {
    if bits & sign != 0 {
        !bits
    } else {
        bits | sign
    }
}

fn float_unkey(key: u64, sign: u64) -> u64 {
    if key & sign != 0 {
        key & !sign
    } else {
        !key
    }
}

macro_rules! float_type {
    ($ty:ident, $name:literal, $f:ty, $bits:ty, $what:literal) => {
        #[doc = concat!("`", $what, "`: IEEE 754 ", stringify!($f), " big-endian.")]
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $ty;

        impl $ty {
            const N: usize = std::mem::size_of::<$f>();
            const SIGN: u64 = 1 << (8 * Self::N - 1);
        }

        impl Comparator for $ty {
            fn name(&self) -> String {
                $name.into()
            }
            fn value_length_if_fixed(&self) -> Option<usize> {
                Some(Self::N)
            }
            fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
                let b = exact::<{ std::mem::size_of::<$f>() }>(name, $what)?;
                // One NaN: Cassandra orders every NaN as one value, above every number.
                let v = <$f>::from_be_bytes(b);
                if v.is_nan() && v.to_bits() != <$f>::NAN.to_bits() {
                    return Err(MarshalError::new(concat!(
                        "a ",
                        $what,
                        " NaN must be the canonical quiet NaN"
                    )));
                }
                Ok(())
            }
            fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
                match <[u8; Self::N]>::try_from(name) {
                    Ok(b) => {
                        let k = float_key(u64::from(<$bits>::from_be_bytes(b)), Self::SIGN);
                        out.extend_from_slice(&k.to_be_bytes()[8 - Self::N..]);
                    }
                    Err(_) => out.extend_from_slice(name),
                }
            }
            fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
                if key.is_empty() {
                    return Ok(());
                }
                let b = exact::<{ std::mem::size_of::<$f>() }>(key, $what)?;
                let v = float_unkey(u64::from(<$bits>::from_be_bytes(b)), Self::SIGN);
                out.extend_from_slice(&v.to_be_bytes()[8 - Self::N..]);
                Ok(())
            }
            fn to_text(&self, name: &[u8]) -> String {
                match <[u8; Self::N]>::try_from(name) {
                    Ok(b) => <$f>::from_be_bytes(b).to_string(),
                    Err(_) => to_hex(name),
                }
            }
            fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
                text.trim()
                    .parse::<$f>()
                    .map(|v| if v.is_nan() { <$f>::NAN } else { v })
                    .map(|v| v.to_be_bytes().to_vec())
                    .map_err(|_| bad(text, concat!("a ", $what)))
            }
        }
    };
}

float_type!(FloatType, "FloatType", f32, u32, "float");
float_type!(DoubleType, "DoubleType", f64, u64, "double");

const MS_PER_DAY: i64 = 86_400_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `yyyy-mm-dd` to days since 1970-01-01.
fn parse_date(text: &str) -> Option<i64> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let mut it = body.splitn(3, '-');
    let y: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    let d: i64 = it.next()?.parse().ok()?;
    let y = if neg { -y } else { y };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days_in = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let ok = (1..=12).contains(&m)
        && d >= 1
        && d <= *days_in.get(usize::try_from(m - 1).ok()?)?
        && y.abs() <= 5_000_000;
    ok.then(|| days_from_civil(y, m, d))
}

/// `hh:mm[:ss[.fraction]]` to nanoseconds since midnight.
fn parse_time_of_day(text: &str) -> Option<i64> {
    let (hms, frac) = match text.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (text, None),
    };
    let mut it = hms.split(':');
    let h: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    let s: i64 = match it.next() {
        Some(s) => s.parse().ok()?,
        None => 0,
    };
    if it.next().is_some()
        || !(0..24).contains(&h)
        || !(0..60).contains(&m)
        || !(0..60).contains(&s)
    {
        return None;
    }
    let mut nanos = 0i64;
    if let Some(f) = frac {
        if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        nanos = f.parse::<i64>().ok()? * 10i64.pow(9 - f.len() as u32);
    }
    Some(((h * 60 + m) * 60 + s) * 1_000_000_000 + nanos)
}

/// `yyyy-mm-dd[( |T)hh:mm[:ss[.fff]]][Z|±hh[:]mm]` or a plain integer of milliseconds.
fn parse_timestamp(text: &str) -> Option<i64> {
    let t = text.trim();
    if let Ok(ms) = t.parse::<i64>() {
        return Some(ms);
    }
    // The zone first, from the end: `Z`, `+hhmm`, `-hh:mm` (after a date alone, too).
    let (rest, offset_min) = split_zone(t)?;
    let (date, clock) = match rest.find([' ', 'T']) {
        Some(i) => (&rest[..i], rest[i + 1..].trim()),
        None => (rest, ""),
    };
    let days = parse_date(date)?;
    // Milliseconds at most, as Cassandra's formats: a finer fraction is refused, not cut
    // (zeros past the millisecond, as cqlsh prints timestamps, lose nothing).
    if clock
        .rsplit_once('.')
        .is_some_and(|(_, f)| f.is_empty() || f.bytes().skip(3).any(|d| d != b'0'))
    {
        return None;
    }
    let nanos = if clock.is_empty() {
        0
    } else {
        parse_time_of_day(clock)?
    };
    Some(days * MS_PER_DAY + nanos / 1_000_000 - offset_min * 60_000)
}

/// A timestamp's text without its zone, and the zone's offset in minutes (0 without one).
fn split_zone(t: &str) -> Option<(&str, i64)> {
    if let Some(rest) = t.strip_suffix('Z') {
        return Some((rest.trim_end(), 0));
    }
    let b = t.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    let zone = match b.len() {
        n if n >= 16 && matches!(b[n - 6], b'+' | b'-') && b[n - 3] == b':' => {
            digits(&b[n - 5..n - 3]) && digits(&b[n - 2..])
        }
        _ => false,
    };
    let (at, hhmm) = if zone {
        let n = b.len();
        (n - 6, format!("{}{}", &t[n - 5..n - 3], &t[n - 2..]))
    } else {
        match b.len() {
            n if n >= 15 && matches!(b[n - 5], b'+' | b'-') && digits(&b[n - 4..]) => {
                (n - 5, t[n - 4..].to_string())
            }
            _ => return Some((t, 0)),
        }
    };
    let (h, m) = (
        hhmm[..2].parse::<i64>().ok()?,
        hhmm[2..].parse::<i64>().ok()?,
    );
    if m >= 60 {
        return None;
    }
    let sign = if b[at] == b'-' { -1 } else { 1 };
    Some((t[..at].trim_end(), sign * (h * 60 + m)))
}

/// `timestamp`: 8 bytes, signed milliseconds since 1970-01-01 UTC.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimestampType;

impl TimestampType {
    /// cqlsh's form: `2013-07-23 02:32:34.299000+0000`.
    pub fn format_ms(ms: i64) -> String {
        let (days, in_day) = (ms.div_euclid(MS_PER_DAY), ms.rem_euclid(MS_PER_DAY));
        let (y, mo, d) = civil_from_days(days);
        let s = in_day / 1000;
        format!(
            "{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02}.{:03}000+0000",
            s / 3600,
            s / 60 % 60,
            s % 60,
            in_day % 1000
        )
    }
}

impl Comparator for TimestampType {
    fn value_length_if_fixed(&self) -> Option<usize> {
        Some(8)
    }
    fn name(&self) -> String {
        "TimestampType".into()
    }
    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        exact::<8>(name, "a timestamp").map(|_| ())
    }
    fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
        flip_sign(name, out)
    }
    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        decode_flipped::<8>(key, "a timestamp", out)
    }
    fn to_text(&self, name: &[u8]) -> String {
        match <[u8; 8]>::try_from(name) {
            Ok(b) => Self::format_ms(i64::from_be_bytes(b)),
            Err(_) => to_hex(name),
        }
    }
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        parse_timestamp(text)
            .map(|ms| ms.to_be_bytes().to_vec())
            .ok_or_else(|| bad(text, "a timestamp (milliseconds or yyyy-mm-dd hh:mm:ss)"))
    }
}

const DATE_EPOCH: i64 = 1 << 31;

/// `date`: 4 bytes unsigned, days with 2^31 at 1970-01-01.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimpleDateType;

impl Comparator for SimpleDateType {
    sort_key_is_the_name!();

    fn value_length_if_fixed(&self) -> Option<usize> {
        Some(4)
    }
    fn name(&self) -> String {
        "SimpleDateType".into()
    }
    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        exact::<4>(name, "a date").map(|_| ())
    }
    fn to_text(&self, name: &[u8]) -> String {
        match <[u8; 4]>::try_from(name) {
            Ok(b) => {
                let (y, m, d) = civil_from_days(i64::from(u32::from_be_bytes(b)) - DATE_EPOCH);
                format!("{y:04}-{m:02}-{d:02}")
            }
            Err(_) => to_hex(name),
        }
    }
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        parse_date(text.trim())
            .and_then(|d| u32::try_from(d + DATE_EPOCH).ok())
            .map(|v| v.to_be_bytes().to_vec())
            .ok_or_else(|| bad(text, "a date (yyyy-mm-dd)"))
    }
}

const NANOS_PER_DAY: i64 = 86_400 * 1_000_000_000;

/// `time`: 8 bytes, signed nanoseconds since midnight, in `0..86400·10^9`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeType;

impl Comparator for TimeType {
    fn value_length_if_fixed(&self) -> Option<usize> {
        Some(8)
    }
    fn name(&self) -> String {
        "TimeType".into()
    }
    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        let v = i64::from_be_bytes(exact::<8>(name, "a time")?);
        if (0..NANOS_PER_DAY).contains(&v) {
            Ok(())
        } else {
            Err(MarshalError::new(format!(
                "a time is 0 to 86399999999999 nanoseconds, not {v}"
            )))
        }
    }
    fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
        flip_sign(name, out)
    }
    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        decode_flipped::<8>(key, "a time", out)
    }
    fn to_text(&self, name: &[u8]) -> String {
        match <[u8; 8]>::try_from(name) {
            Ok(b) => {
                let n = i64::from_be_bytes(b);
                let s = n / 1_000_000_000;
                format!(
                    "{:02}:{:02}:{:02}.{:09}",
                    s / 3600,
                    s / 60 % 60,
                    s % 60,
                    n % 1_000_000_000
                )
            }
            Err(_) => to_hex(name),
        }
    }
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        parse_time_of_day(text.trim())
            .map(|n| n.to_be_bytes().to_vec())
            .ok_or_else(|| bad(text, "a time (hh:mm:ss[.fffffffff])"))
    }
}

/// `uuid`: any 16-byte UUID; ordered by version, then version-1 UUIDs by time (as TimeUUIDType)
/// and others by their bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct UuidType;

impl Comparator for UuidType {
    fn value_length_if_fixed(&self) -> Option<usize> {
        Some(16)
    }
    fn name(&self) -> String {
        "UUIDType".into()
    }
    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        exact::<16>(name, "a UUID").map(|_| ())
    }
    fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
        let Ok(b) = <[u8; 16]>::try_from(name) else {
            out.extend_from_slice(name);
            return;
        };
        let version = b[6] >> 4;
        out.push(version);
        if version == 1 {
            TimeUuidType.encode_sort_key(name, out);
        } else {
            out.extend_from_slice(name);
        }
    }
    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        let Some((&version, rest)) = key.split_first() else {
            return Ok(());
        };
        let b = exact::<16>(rest, "a UUID sort key")?;
        let start = out.len();
        if version == 1 {
            TimeUuidType.decode_sort_key(&b, out)?;
        } else {
            out.extend_from_slice(&b);
        }
        if out.get(start + 6).map(|v| v >> 4) != Some(version) {
            return Err(MarshalError::new("UUID sort key's version does not match"));
        }
        Ok(())
    }
    fn to_text(&self, name: &[u8]) -> String {
        match <[u8; 16]>::try_from(name) {
            Ok(b) => Uuid::from_bytes(b).hyphenated().to_string(),
            Err(_) => to_hex(name),
        }
    }
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        Uuid::parse_str(text.trim())
            .map(|u| u.as_bytes().to_vec())
            .map_err(|_| bad(text, "a UUID"))
    }
}

/// `inet`: 4 (IPv4) or 16 (IPv6) address bytes, ordered as bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct InetAddressType;

impl Comparator for InetAddressType {
    sort_key_is_the_name!();

    fn name(&self) -> String {
        "InetAddressType".into()
    }
    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        match name.len() {
            4 | 16 => Ok(()),
            n => Err(MarshalError::new(format!(
                "an inet is 4 or 16 bytes, not {n}"
            ))),
        }
    }
    fn to_text(&self, name: &[u8]) -> String {
        if let Ok(b) = <[u8; 4]>::try_from(name) {
            IpAddr::from(b).to_string()
        } else if let Ok(b) = <[u8; 16]>::try_from(name) {
            IpAddr::from(b).to_string()
        } else {
            to_hex(name)
        }
    }
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        match text.trim().parse::<IpAddr>() {
            Ok(IpAddr::V4(a)) => Ok(a.octets().to_vec()),
            Ok(IpAddr::V6(a)) => Ok(a.octets().to_vec()),
            Err(_) => Err(bad(text, "an IP address")),
        }
    }
}

#[cfg(test)]
#[path = "cql_types_tests.rs"]
mod tests;
