//! A timestamp or a date plus or minus a duration, as Cassandra computes it
//! (`Duration.addTo`): without months, the days and milliseconds are added to the moment;
//! with months, the calendar is moved in UTC by the months first (the day of the month kept,
//! or the month's last day where it has fewer), then the days, then the milliseconds. A
//! timestamp takes only whole milliseconds of the duration and a date only whole days
//! (Cassandra's words when not). Must not touch: how durations are written or read
//! (`types/duration.rs`).

use super::super::types::{CqlType, Duration};
use supercolumn::model::comparator::cql_types::{civil_from_days, days_from_civil};

const MILLIS_PER_DAY: i64 = 86_400_000;
const NANOS_PER_MILLI: i64 = 1_000_000;
const DATE_EPOCH: i64 = 1 << 31;
/// 1582-10-15, where Java's calendar (which Cassandra moves months with) turns from the Julian
/// calendar to the Gregorian one that this file computes in: a month added before it would
/// land on another day than Cassandra's, so it is refused.
const GREGORIAN_CUTOVER_MILLIS: i64 = -12_219_292_800_000;

/// `t + d` (or `t - d`, `subtract`) for `t` a `timestamp` or a `date` (`base`); `Err` is the
/// reason in Cassandra's words.
pub(super) fn add(base: &CqlType, t: &[u8], d: &[u8], subtract: bool) -> Result<Vec<u8>, String> {
    let d = Duration::decode(d)?;
    // The precision is the duration's as written, before a subtraction negates it.
    let finer = match base {
        CqlType::Timestamp if d.nanos % NANOS_PER_MILLI != 0 => Some("millisecond"),
        CqlType::Date if d.nanos != 0 => Some("day"),
        _ => None,
    };
    if let Some(unit) = finer {
        return Err(format!(
            "The duration must have a {unit} precision. Was: {}",
            d.text()
        ));
    }
    let d = if subtract {
        // All three parts share one sign, so negating each cannot overflow but at a minimum.
        let too_large = "the duration is too large";
        Duration {
            months: d.months.checked_neg().ok_or(too_large)?,
            days: d.days.checked_neg().ok_or(too_large)?,
            nanos: d.nanos.checked_neg().ok_or(too_large)?,
        }
    } else {
        d
    };
    match base {
        CqlType::Timestamp => {
            let ms = i64::from_be_bytes(t.try_into().map_err(|_| "a timestamp is 8 bytes")?);
            Ok(add_to_millis(ms, d)?.to_be_bytes().to_vec())
        }
        CqlType::Date => {
            let days = u32::from_be_bytes(t.try_into().map_err(|_| "a date is 4 bytes")?);
            let ms = (i64::from(days) - DATE_EPOCH) * MILLIS_PER_DAY;
            let day = add_to_millis(ms, d)?.div_euclid(MILLIS_PER_DAY) + DATE_EPOCH;
            let day = u32::try_from(day).map_err(|_| "the date is out of the range of dates")?;
            Ok(day.to_be_bytes().to_vec())
        }
        other => Err(format!("{other} takes no duration")),
    }
}

/// A moment in milliseconds moved by `d`.
fn add_to_millis(ms: i64, d: Duration) -> Result<i64, String> {
    let overflow = || "the result is out of the range of timestamps".to_string();
    if d.months == 0 {
        let span = i64::from(d.days) * MILLIS_PER_DAY + d.nanos / NANOS_PER_MILLI;
        return ms.checked_add(span).ok_or_else(overflow);
    }
    if ms < GREGORIAN_CUTOVER_MILLIS {
        return Err("months are not added to a moment before 1582-10-15 here".into());
    }
    let (day, time) = (ms.div_euclid(MILLIS_PER_DAY), ms.rem_euclid(MILLIS_PER_DAY));
    let (y, m, dd) = civil_from_days(day);
    let month = (y * 12 + m - 1)
        .checked_add(i64::from(d.months))
        .ok_or_else(overflow)?;
    let (y, m) = (month.div_euclid(12), month.rem_euclid(12) + 1);
    let moved = days_from_civil(y, m, dd.min(month_days(y, m)));
    // Java's calendar takes the milliseconds as an int: it keeps their low 32 bits.
    let millis = i64::from((d.nanos / NANOS_PER_MILLI) as i32);
    let out = moved
        .checked_add(i64::from(d.days))
        .and_then(|day| day.checked_mul(MILLIS_PER_DAY))
        .and_then(|v| v.checked_add(time))
        .and_then(|v| v.checked_add(millis))
        .ok_or_else(overflow)?;
    if out < GREGORIAN_CUTOVER_MILLIS {
        return Err("months are not added to reach a moment before 1582-10-15 here".into());
    }
    Ok(out)
}

/// The days of month `m` (1–12) of year `y`.
fn month_days(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(ms: i64) -> Vec<u8> {
        ms.to_be_bytes().to_vec()
    }

    fn dur(text: &str) -> Vec<u8> {
        Duration::parse(text).expect("a duration").encode()
    }

    fn at(bytes: Vec<u8>) -> i64 {
        i64::from_be_bytes(bytes.try_into().expect("8 bytes"))
    }

    #[test]
    fn months_keep_the_day_or_take_the_months_last() {
        // 2016-01-31 12:00 UTC + 1mo = 2016-02-29 12:00 (a leap year), then + 1d.
        let jan31 = days_from_civil(2016, 1, 31) * MILLIS_PER_DAY + 43_200_000;
        let feb29 = days_from_civil(2016, 2, 29) * MILLIS_PER_DAY + 43_200_000;
        let t = CqlType::Timestamp;
        assert_eq!(at(add(&t, &ts(jan31), &dur("1mo"), false).unwrap()), feb29);
        assert_eq!(
            at(add(&t, &ts(jan31), &dur("1mo1d"), false).unwrap()),
            feb29 + MILLIS_PER_DAY
        );
        assert_eq!(
            at(add(&t, &ts(feb29), &dur("1y"), true).unwrap()),
            days_from_civil(2015, 2, 28) * MILLIS_PER_DAY + 43_200_000
        );
        assert_eq!(at(add(&t, &ts(0), &dur("10m"), true).unwrap()), -600_000);
    }

    #[test]
    fn precision_below_the_type_is_refused_in_cassandras_words() {
        let e = add(&CqlType::Timestamp, &ts(0), &dur("10us"), true).unwrap_err();
        assert_eq!(
            e,
            "The duration must have a millisecond precision. Was: 10us"
        );
        let day = ((DATE_EPOCH + 3) as u32).to_be_bytes();
        let e = add(&CqlType::Date, &day, &dur("10m"), true).unwrap_err();
        assert_eq!(e, "The duration must have a day precision. Was: 10m");
        let back = add(&CqlType::Date, &day, &dur("5d"), true).unwrap();
        assert_eq!(back, ((DATE_EPOCH - 2) as u32).to_be_bytes());
    }
}
