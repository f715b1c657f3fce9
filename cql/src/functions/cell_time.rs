//! The write times and TTLs of the cells under a selector, as Cassandra 5 selects them:
//! `writetime(s)` of a non-frozen collection (one per element, in its order) or user type (one
//! per field, null where unset), of one element (`writetime(m['k'])`), of a slice
//! (`ttl(s[1..3])`), of a field (`writetime(u.f)`), their greatest or least
//! (`maxwritetime`, `minwritetime`); and of a part of a frozen value (its one cell's, when the
//! part is there). Assembling a row records each cell of such a column here ([`record`]);
//! this file reads the records back and reads nothing else.
//!
//! A column's records are one buffer, never seen outside this process: per cell, its key's
//! length (`u32`) and bytes, its timestamp (`i64`) and its expiry (`i64`, [`NONE`] for none;
//! once [`remaining`] has run, the seconds it has left).

use super::super::error::CqlError;
use super::super::types::CqlType;

/// An expiry (or TTL) that is not there.
const NONE: i64 = i64::MIN;

/// Which time a selector returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in super::super) enum Which {
    WriteTime,
    MaxWriteTime,
    MinWriteTime,
    Ttl,
}

impl Which {
    /// The selector for the function Cassandra names `word`.
    pub(in super::super) fn of(word: &str) -> Which {
        match word {
            "maxwritetime" => Which::MaxWriteTime,
            "minwritetime" => Which::MinWriteTime,
            "ttl" => Which::Ttl,
            _ => Which::WriteTime,
        }
    }
}

/// Which cells of a column a selector reads.
#[derive(Debug, Clone, PartialEq)]
pub(in super::super) enum Pick {
    /// A column of one cell: its time (the first argument), when the part selected of its
    /// value (the second) is there.
    Whole,
    /// Every cell of a non-frozen collection, in its order.
    All,
    /// Each field of a non-frozen user type of this many fields.
    Fields(usize),
    /// The cell whose key equals this one, by the key type's order (a field's position is a
    /// `smallint` key).
    Key(CqlType, Vec<u8>),
    /// The cells whose keys lie in the inclusive range, either end open.
    Range(CqlType, Option<Vec<u8>>, Option<Vec<u8>>),
}

/// A write-time or TTL selector over the cells of one column.
#[derive(Debug, Clone, PartialEq)]
pub(in super::super) struct CellTime {
    pub pick: Pick,
    pub which: Which,
}

impl CellTime {
    /// The result's type: one time, or a list of them.
    pub(in super::super) fn returns(&self) -> CqlType {
        let one = if self.which == Which::Ttl {
            CqlType::Int
        } else {
            CqlType::Bigint
        };
        match (&self.pick, self.which) {
            (Pick::All | Pick::Fields(_) | Pick::Range(..), Which::WriteTime | Which::Ttl) => {
                CqlType::List(Box::new(one))
            }
            _ => one,
        }
    }
}

/// Appends a cell's key, timestamp and expiry (seconds) to a column's records; with `first`,
/// before those already there (a reversed read meets a collection's cells last first).
pub(in super::super) fn record(
    out: &mut Vec<u8>,
    key: &[u8],
    timestamp: i64,
    expires: Option<i64>,
    first: bool,
) {
    let len = u32::try_from(key.len()).unwrap_or(u32::MAX);
    let mut one = Vec::with_capacity(20 + key.len());
    one.extend_from_slice(&len.to_be_bytes());
    one.extend_from_slice(&key[..len as usize]);
    one.extend_from_slice(&timestamp.to_be_bytes());
    one.extend_from_slice(&expires.unwrap_or(NONE).to_be_bytes());
    if first {
        out.splice(0..0, one);
    } else {
        out.extend_from_slice(&one);
    }
}

/// A column's records with each expiry turned into the seconds left at `now_seconds` (at
/// least 0), as `TTL()` counts.
pub(in super::super) fn remaining(records: &[u8], now_seconds: i64) -> Vec<u8> {
    let mut out = records.to_vec();
    let mut at = 0;
    while let Some(len) = out.get(at..at + 4) {
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let e = at + 4 + len + 8;
        let Some(expiry) = out.get(e..e + 8) else {
            break;
        };
        let expiry = i64::from_be_bytes(expiry.try_into().unwrap_or([0; 8]));
        if expiry != NONE {
            let left = (expiry - now_seconds).clamp(0, i64::from(i32::MAX));
            out[e..e + 8].copy_from_slice(&left.to_be_bytes());
        }
        at = e + 8;
    }
    out
}

/// One cell's record: its key, timestamp and TTL left.
type Record<'a> = (&'a [u8], i64, Option<i64>);

fn records(bytes: &[u8]) -> Result<Vec<Record<'_>>, CqlError> {
    let cut = || CqlError::invalid("a cell's time record cut short (a fault of this server)");
    let mut out = Vec::new();
    let mut r = bytes;
    while !r.is_empty() {
        let (len, rest) = r.split_first_chunk::<4>().ok_or_else(cut)?;
        let len = u32::from_be_bytes(*len) as usize;
        let key = rest.get(..len).ok_or_else(cut)?;
        let rest = &rest[len..];
        let (ts, rest) = rest.split_first_chunk::<8>().ok_or_else(cut)?;
        let (ttl, rest) = rest.split_first_chunk::<8>().ok_or_else(cut)?;
        let ttl = i64::from_be_bytes(*ttl);
        out.push((key, i64::from_be_bytes(*ts), (ttl != NONE).then_some(ttl)));
        r = rest;
    }
    Ok(out)
}

/// The selector's value from its arguments: the column's records (or, for [`Pick::Whole`], its
/// one cell's time), then, where the selector goes below the cells it reads, the value of the
/// part selected (null: the part is not there, nor its time).
pub(super) fn value(ct: &CellTime, args: &[Option<Vec<u8>>]) -> Result<Option<Vec<u8>>, CqlError> {
    let (Some(Some(cells)), false) = (args.first(), matches!(args.get(1), Some(None))) else {
        return Ok(None);
    };
    let all = match &ct.pick {
        Pick::Whole => return Ok(Some(cells.to_vec())),
        _ => records(cells)?,
    };
    // Each cell picked, in order; a field not set is `None`.
    let picked: Vec<Option<&Record<'_>>> = match &ct.pick {
        Pick::Whole => Vec::new(),
        Pick::All => all.iter().map(Some).collect(),
        Pick::Fields(n) => (0..*n)
            .map(|i| {
                let key = i16::try_from(i).unwrap_or(i16::MAX).to_be_bytes();
                all.iter().find(|r| r.0 == key)
            })
            .collect(),
        Pick::Key(ty, key) => {
            let cmp = ty.comparator();
            let same = |a: &[u8]| {
                cmp.as_ref()
                    .map_or(a == &key[..], |c| c.compare(a, key).is_eq())
            };
            let found = all.iter().find(|r| same(r.0));
            return Ok(found
                .and_then(|r| time(ct.which, r))
                .map(|t| encode(ct.which, t)));
        }
        Pick::Range(ty, from, to) => {
            let cmp = ty.comparator();
            let order = |a: &[u8], b: &[u8]| cmp.as_ref().map_or(a.cmp(b), |c| c.compare(a, b));
            all.iter()
                .filter(|r| {
                    from.as_deref().is_none_or(|f| order(r.0, f).is_ge())
                        && to.as_deref().is_none_or(|t| order(r.0, t).is_le())
                })
                .map(Some)
                .collect()
        }
    };
    // No cell (an empty collection, a slice of none, a user type with no field set): null.
    if picked.iter().all(Option::is_none) {
        return Ok(None);
    }
    let times: Vec<Option<i64>> = picked
        .iter()
        .map(|r| r.and_then(|r| time(ct.which, r)))
        .collect();
    Ok(match ct.which {
        Which::MaxWriteTime => times.iter().flatten().max().map(|&t| encode(ct.which, t)),
        Which::MinWriteTime => times.iter().flatten().min().map(|&t| encode(ct.which, t)),
        Which::WriteTime | Which::Ttl => Some(list(ct.which, &times)),
    })
}

/// A record's timestamp, or the TTL it has left (none without an expiry).
fn time(which: Which, r: &Record<'_>) -> Option<i64> {
    match which {
        Which::Ttl => r.2,
        _ => Some(r.1),
    }
}

/// One time as its type's bytes: a `bigint` timestamp, an `int` TTL.
fn encode(which: Which, t: i64) -> Vec<u8> {
    match which {
        Which::Ttl => (i32::try_from(t).unwrap_or(i32::MAX))
            .to_be_bytes()
            .to_vec(),
        _ => t.to_be_bytes().to_vec(),
    }
}

/// A list of times in its serialized form, a missing one a null element (as Cassandra's
/// `ttl()` of elements written without one).
fn list(which: Which, times: &[Option<i64>]) -> Vec<u8> {
    let n = i32::try_from(times.len()).unwrap_or(i32::MAX);
    let mut out = n.to_be_bytes().to_vec();
    for t in times {
        match t {
            Some(t) => {
                let b = encode(which, *t);
                out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                out.extend_from_slice(&b);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells() -> Vec<u8> {
        let mut out = Vec::new();
        record(&mut out, &2i32.to_be_bytes(), 20, Some(1_100), false);
        record(&mut out, &1i32.to_be_bytes(), 10, None, true);
        remaining(&out, 1_000)
    }

    fn ct(pick: Pick, which: Which) -> CellTime {
        CellTime { pick, which }
    }

    #[test]
    fn each_cell_in_order_its_greatest_and_least_and_a_key_or_range_of_them() {
        let c = cells();
        let all = |w| {
            value(&ct(Pick::All, w), &[Some(c.clone())])
                .unwrap()
                .unwrap()
        };
        let bigints = |ts: &[i64]| {
            let mut out = (ts.len() as i32).to_be_bytes().to_vec();
            for t in ts {
                out.extend_from_slice(&8i32.to_be_bytes());
                out.extend_from_slice(&t.to_be_bytes());
            }
            out
        };
        assert_eq!(all(Which::WriteTime), bigints(&[10, 20]));
        assert_eq!(all(Which::MaxWriteTime), 20i64.to_be_bytes());
        assert_eq!(all(Which::MinWriteTime), 10i64.to_be_bytes());
        // The first element has no TTL: a null element; the second 100 seconds left.
        let mut ttls = 2i32.to_be_bytes().to_vec();
        ttls.extend_from_slice(&(-1i32).to_be_bytes());
        ttls.extend_from_slice(&4i32.to_be_bytes());
        ttls.extend_from_slice(&100i32.to_be_bytes());
        assert_eq!(all(Which::Ttl), ttls);
        let key = |k: i32, w| {
            let pick = Pick::Key(CqlType::Int, k.to_be_bytes().to_vec());
            value(&ct(pick, w), &[Some(c.clone())]).unwrap()
        };
        assert_eq!(key(2, Which::WriteTime), Some(20i64.to_be_bytes().to_vec()));
        assert_eq!(key(3, Which::WriteTime), None);
        assert_eq!(key(1, Which::Ttl), None);
        let range = |a: i32, b: i32| {
            let r = Pick::Range(
                CqlType::Int,
                Some(a.to_be_bytes().to_vec()),
                Some(b.to_be_bytes().to_vec()),
            );
            value(&ct(r, Which::WriteTime), &[Some(c.clone())]).unwrap()
        };
        assert_eq!(range(2, 5), Some(bigints(&[20])));
        assert_eq!(range(3, 5), None);
        // A part below the cells that is not there: null.
        let whole = ct(Pick::Whole, Which::WriteTime);
        let t = Some(b"t".to_vec());
        assert_eq!(value(&whole, &[t.clone(), None]).unwrap(), None);
        let x = Some(b"x".to_vec());
        assert_eq!(value(&whole, &[t.clone(), x]).unwrap(), t);
    }

    #[test]
    fn a_user_type_has_a_time_per_field_and_none_without_a_field_set() {
        let mut c = Vec::new();
        record(&mut c, &1i16.to_be_bytes(), 7, None, false);
        let v = value(&ct(Pick::Fields(3), Which::WriteTime), &[Some(c)]).unwrap();
        let mut want = 3i32.to_be_bytes().to_vec();
        want.extend_from_slice(&(-1i32).to_be_bytes());
        want.extend_from_slice(&8i32.to_be_bytes());
        want.extend_from_slice(&7i64.to_be_bytes());
        want.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(v, Some(want));
        assert_eq!(
            value(&ct(Pick::Fields(3), Which::WriteTime), &[Some(Vec::new())]).unwrap(),
            None
        );
    }
}
