//! Pages of a `SELECT` as a client pages it: at most a page's rows are read, and the next
//! page resumes after the last row returned (its partition key and clustering prefix, as
//! Cassandra's paging state holds them), so a page costs the same whether it is the first or
//! the thousandth and a row deleted meanwhile does not shift the pages after it. This file owns
//! the position, its bytes, and how it narrows a partition's slices; `select.rs` reads.

use std::cmp::Ordering;

use super::bounds::Bounds;
use super::error::CqlError;
use super::table::Table;

/// The version byte of a position's bytes.
const VERSION: u8 = 1;

/// A page asked for.
#[derive(Debug, Clone, Default)]
pub struct PageRequest {
    /// Rows in the page (at least one).
    pub size: usize,
    /// Where the previous page ended (`None`: the first page).
    pub after: Option<Position>,
}

/// Where a page ended: the last row returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// Its partition's row key.
    pub key: Vec<u8>,
    /// Its clustering prefix as cell names hold it; `None` when the whole partition was
    /// returned (a `DISTINCT` row, a table without clustering columns, or a partition at its
    /// `PER PARTITION LIMIT`).
    pub clustering: Option<Vec<u8>>,
    /// Rows returned from that partition so far (for `PER PARTITION LIMIT`).
    pub in_partition: u64,
    /// Rows returned by every page so far (for `LIMIT`).
    pub returned: u64,
}

fn bad(what: &str) -> CqlError {
    CqlError::invalid(format!("invalid paging state: {what}"))
}

impl Position {
    /// Its bytes: version, returned, in-partition count, key, then the clustering prefix.
    pub fn to_bytes(&self) -> Vec<u8> {
        let c = self.clustering.as_deref();
        let mut b = Vec::with_capacity(26 + self.key.len() + c.map_or(0, <[u8]>::len));
        b.push(VERSION);
        b.extend_from_slice(&self.returned.to_be_bytes());
        b.extend_from_slice(&self.in_partition.to_be_bytes());
        b.extend_from_slice(&(self.key.len() as u32).to_be_bytes());
        b.extend_from_slice(&self.key);
        match c {
            Some(c) => {
                b.push(1);
                b.extend_from_slice(c);
            }
            None => b.push(0),
        }
        b
    }

    /// A position from [`to_bytes`](Self::to_bytes); anything else is refused.
    pub fn from_bytes(b: &[u8]) -> Result<Position, CqlError> {
        let (&version, rest) = b.split_first().ok_or_else(|| bad("empty"))?;
        if version != VERSION {
            return Err(bad("unknown version"));
        }
        let (returned, rest) = rest.split_first_chunk::<8>().ok_or_else(|| bad("short"))?;
        let (in_partition, rest) = rest.split_first_chunk::<8>().ok_or_else(|| bad("short"))?;
        let (len, rest) = rest.split_first_chunk::<4>().ok_or_else(|| bad("short"))?;
        let len = u32::from_be_bytes(*len) as usize;
        if rest.len() <= len {
            return Err(bad("key length"));
        }
        let (key, rest) = rest.split_at(len);
        let clustering = match rest.split_first() {
            Some((0, [])) => None,
            Some((1, c)) => Some(c.to_vec()),
            _ => return Err(bad("clustering")),
        };
        Ok(Position {
            key: key.to_vec(),
            clustering,
            in_partition: u64::from_be_bytes(*in_partition),
            returned: u64::from_be_bytes(*returned),
        })
    }
}

/// `slices` of the partition a page resumes in, narrowed to what follows `prefix` in read
/// order (the slices wholly before it dropped).
pub(super) fn resume_slices(
    t: &Table,
    slices: &[Bounds],
    prefix: &[u8],
    reversed: bool,
) -> Vec<Bounds> {
    let Some((_, head)) = prefix.split_last() else {
        return Vec::new(); // a row without clustering: the partition is done
    };
    let cmp = t.comparator();
    // Just past every name of the prefix's row, in read order (the end-of-component byte).
    let mut edge = head.to_vec();
    edge.push(if reversed { 0xff } else { 1 });
    let before = |a: &[u8], b: &[u8]| cmp.compare(a, b) == Ordering::Less;
    let mut out = Vec::new();
    for b in slices {
        if reversed {
            if !b.start.is_empty() && before(&edge, &b.start) {
                continue; // read already, in reverse
            }
            let finish = if b.finish.is_empty() || before(&edge, &b.finish) {
                edge.clone()
            } else {
                b.finish.clone()
            };
            out.push(Bounds {
                start: b.start.clone(),
                finish,
            });
        } else {
            if !b.finish.is_empty() && before(&b.finish, &edge) {
                continue;
            }
            let start = if b.start.is_empty() || before(&b.start, &edge) {
                edge.clone()
            } else {
                b.start.clone()
            };
            out.push(Bounds {
                start,
                finish: b.finish.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_round_trips_and_damage_is_refused() {
        for clustering in [None, Some(vec![0, 1, 7, 0]), Some(Vec::new())] {
            let p = Position {
                key: b"key".to_vec(),
                clustering,
                in_partition: 3,
                returned: 1 << 40,
            };
            assert_eq!(Position::from_bytes(&p.to_bytes()).unwrap(), p);
        }
        let good = Position {
            key: vec![1],
            clustering: None,
            in_partition: 0,
            returned: 0,
        }
        .to_bytes();
        for cut in 0..good.len() {
            assert!(Position::from_bytes(&good[..cut]).is_err());
        }
        let mut bad = good.clone();
        bad[0] = 9;
        assert!(Position::from_bytes(&bad).is_err());
    }
}
