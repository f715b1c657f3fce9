//! CQL's `duration`: months, days and nanoseconds, kept apart (a month has no fixed number of
//! days, nor a day of nanoseconds: daylight saving), so a duration has no order and is refused
//! where one is needed (keys, clustering, set elements, map keys), as in Cassandra. Here: its
//! literals (`1h30m`, `-2d`, `P1DT2H`, `P2W`), the bytes Cassandra stores (three zigzag
//! variable-length integers, `DurationSerializer`), their check, and their text (`1y2mo3d4h`).

use supercolumn::model::vint::{get_vint, put_vint};

/// Nanoseconds per unit of a duration literal's time part.
const NANOS: [(&str, i128); 6] = [
    ("h", 3_600_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

/// A duration's three parts, all of one sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Duration {
    /// Months (a year is 12).
    pub months: i32,
    /// Days (a week is 7).
    pub days: i32,
    /// Nanoseconds.
    pub nanos: i64,
}

/// The parts of a literal being added up, wide enough not to overflow on the way.
#[derive(Default)]
struct Sum {
    months: i128,
    days: i128,
    nanos: i128,
}

impl Sum {
    /// Adds `n` of `unit` (lower case).
    fn add(&mut self, n: i128, unit: &str) -> Option<()> {
        match unit {
            "y" => self.months += n.checked_mul(12)?,
            "mo" => self.months += n,
            "w" => self.days += n.checked_mul(7)?,
            "d" => self.days += n,
            "µs" => self.nanos += n.checked_mul(1_000)?,
            u => self.nanos += n.checked_mul(NANOS.iter().find(|(x, _)| *x == u)?.1)?,
        }
        Some(())
    }

    fn finish(self, negative: bool, text: &str) -> Result<Duration, String> {
        let sign = if negative { -1 } else { 1 };
        let too_big = |what: &str, max: i128| {
            format!("Invalid duration. The total number of {what} must be less or equal to {max}: {text}")
        };
        let months = i32::try_from(self.months * sign)
            .map_err(|_| too_big("months", i128::from(i32::MAX)))?;
        let days =
            i32::try_from(self.days * sign).map_err(|_| too_big("days", i128::from(i32::MAX)))?;
        let nanos = i64::try_from(self.nanos * sign)
            .map_err(|_| too_big("nanoseconds", i128::from(i64::MAX)))?;
        Ok(Duration {
            months,
            days,
            nanos,
        })
    }
}

/// The (quantity, unit) parts of the standard form, units lower-cased.
fn standard_parts(text: &str) -> Option<Vec<(i128, String)>> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n = quantity(&rest[..digits])?;
        rest = &rest[digits..];
        let letters = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = rest[..letters].to_lowercase();
        let known = ["y", "mo", "w", "d", "h", "m", "s", "ms", "us", "µs", "ns"];
        if !known.contains(&unit.as_str()) {
            return None;
        }
        out.push((n, unit));
        rest = &rest[letters..];
    }
    Some(out)
}

/// Parses a duration literal as Cassandra does: `[-]` then the standard form (`1h30m`,
/// `12d`), or ISO 8601 (`P1Y2M3DT4H5M6S`, `P2W`).
pub fn parse(text: &str) -> Result<Duration, String> {
    let bad = || format!("Unable to convert '{text}' to a duration");
    let (negative, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let mut sum = Sum::default();
    if let Some(iso) = body.strip_prefix(['P', 'p']) {
        iso_parts(iso, &mut sum).ok_or_else(bad)?;
    } else {
        for (n, unit) in standard_parts(body)
            .filter(|p| !p.is_empty())
            .ok_or_else(bad)?
        {
            sum.add(n, &unit).ok_or_else(bad)?;
        }
    }
    sum.finish(negative, text)
}

/// The ISO 8601 form after its `P`: `nW` alone, or `[nY][nM][nD][T[nH][nM][nS]]`.
fn iso_parts(iso: &str, sum: &mut Sum) -> Option<()> {
    let upper = iso.to_ascii_uppercase();
    if let Some(weeks) = upper.strip_suffix('W') {
        return sum.add(quantity(weeks)?, "w");
    }
    let (date, time) = match upper.split_once('T') {
        Some((_, "")) => return None,
        Some((d, t)) => (d, t),
        None => (upper.as_str(), ""),
    };
    let date_units = [('Y', "y"), ('M', "mo"), ('D', "d")];
    let time_units = [('H', "h"), ('M', "m"), ('S', "s")];
    let mut any = false;
    for (part, units) in [(date, date_units), (time, time_units)] {
        let mut rest = part;
        for (letter, unit) in units {
            if let Some((n, tail)) = rest.split_once(letter) {
                sum.add(quantity(n)?, unit)?;
                rest = tail;
                any = true;
            }
        }
        if !rest.is_empty() {
            return None;
        }
    }
    any.then_some(())
}

/// A quantity: one or more digits.
fn quantity(n: &str) -> Option<i128> {
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

impl Duration {
    /// A duration literal as Cassandra reads it: `[-]`, then the standard form or ISO 8601.
    pub fn parse(text: &str) -> Result<Duration, String> {
        parse(text)
    }

    /// Whether `word` (a bare word where a value goes) is an ISO 8601 duration (`P1DT2H`).
    pub fn is_iso(word: &str) -> bool {
        word.starts_with(['P', 'p']) && parse(word).is_ok()
    }

    /// The bytes Cassandra stores for it.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(12);
        put_vint(zigzag(i64::from(self.months)), &mut out);
        put_vint(zigzag(i64::from(self.days)), &mut out);
        put_vint(zigzag(self.nanos), &mut out);
        out
    }

    /// A duration from stored or bound bytes, checked: three integers of the right widths,
    /// nothing after them, all of one sign.
    pub fn decode(bytes: &[u8]) -> Result<Duration, String> {
        let bad = || "not a duration (three variable-length integers)".to_string();
        let mut rest = bytes;
        let mut next = || get_vint(&mut rest).map(unzigzag).ok_or_else(bad);
        let months = i32::try_from(next()?).map_err(|_| bad())?;
        let days = i32::try_from(next()?).map_err(|_| bad())?;
        let nanos = next()?;
        if !rest.is_empty() {
            return Err(bad());
        }
        let signs = [i64::from(months), i64::from(days), nanos];
        if signs.iter().any(|&v| v < 0) && signs.iter().any(|&v| v > 0) {
            return Err(
                "The duration months, days and nanoseconds must be all of the same sign".into(),
            );
        }
        Ok(Duration {
            months,
            days,
            nanos,
        })
    }

    /// Its text, as Cassandra writes it (`1y2mo`, `3d`, `4h5m6s7ms8us9ns`, `-1d`).
    pub fn text(&self) -> String {
        let mut s = String::new();
        if self.months < 0 || self.days < 0 || self.nanos < 0 {
            s.push('-');
        }
        let mut put = |value: u64, per: u64, unit: &str| -> u64 {
            if value == 0 || value < per {
                return value;
            }
            s.push_str(&format!("{}{unit}", value / per));
            value % per
        };
        let months = put(u64::from(self.months.unsigned_abs()), 12, "y");
        put(months, 1, "mo");
        put(u64::from(self.days.unsigned_abs()), 1, "d");
        let mut nanos = self.nanos.unsigned_abs();
        for (unit, per) in NANOS {
            nanos = put(nanos, per as u64, unit);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_parse_encode_and_print_as_cassandra_does() {
        for (text, months, days, nanos, shown) in [
            ("1h30m", 0, 0, 5_400_000_000_000, "1h30m"),
            ("-2d", 0, -2, 0, "-2d"),
            ("1y2mo3w4d", 14, 25, 0, "1y2mo25d"),
            ("P1DT2H", 0, 1, 7_200_000_000_000, "1d2h"),
            ("P1Y2M3DT4H5M6S", 14, 3, 14_706_000_000_000, "1y2mo3d4h5m6s"),
            ("P2W", 0, 14, 0, "14d"),
            ("12ms7us3ns", 0, 0, 12_007_003, "12ms7us3ns"),
        ] {
            let d = parse(text).unwrap();
            assert_eq!((d.months, d.days, d.nanos), (months, days, nanos), "{text}");
            assert_eq!(d.text(), shown, "{text}");
            assert_eq!(Duration::decode(&d.encode()).unwrap(), d, "{text}");
        }
        for bad in [
            "",
            "1",
            "h",
            "1x",
            "P",
            "PT",
            "1h-2m",
            "P1H",
            "P-1D",
            "99999999999y",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_bytes_are_cassandras_vints() {
        // months 1, days 2, nanos 3: zigzag 2, 4, 6, one byte each.
        let d = Duration {
            months: 1,
            days: 2,
            nanos: 3,
        };
        assert_eq!(d.encode(), [2, 4, 6]);
        // 1h: 3.6e12 ns, zigzag 7.2e12 (43 bits): a 7-byte vint, its first byte's six leading
        // 1 bits counting the six bytes after it.
        let h = parse("1h").unwrap().encode();
        assert_eq!(h, [0, 0, 0xfc, 0x06, 0x8c, 0x61, 0x71, 0x40, 0x00]);
        for bad in [
            &[][..],
            &[2, 4][..],
            &[2, 4, 6, 8][..],
            &[0xff][..],
            &[2, 3, 6][..],
        ] {
            assert!(Duration::decode(bad).is_err(), "{bad:?}");
        }
    }
}
