//! Reconciliation (SPEC §3): which of two versions of the same column wins.
//!
//! The higher timestamp wins. On a tie a deletion (a tombstone, or a TTL cell already expired at
//! `now`) wins over a live value; between two live values the greater value (unsigned bytes)
//! wins; equal values are split by the later expiry (no TTL counts as never expiring); two
//! deletions are split by the later local deletion time. The order is total, so the result does
//! not depend on the order in which versions meet. Expiry depends on `now`, so, as in Cassandra,
//! a TTL cell that ties on timestamp with another version may win before it expires and lose
//! after; cells whose timestamps differ never see that.

use std::cmp::Ordering;

use super::cell::{Cell, CellValue, DeletionTime, Entry};

/// Orders two versions of one column: `Greater` means `a` wins.
pub fn compare_versions(a: &Cell, b: &Cell, now_seconds: i64) -> Ordering {
    a.timestamp.cmp(&b.timestamp).then_with(|| {
        let (da, db) = (a.is_deleted(now_seconds), b.is_deleted(now_seconds));
        match (da, db) {
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (true, true) => a
                .local_deletion_time()
                .cmp(&b.local_deletion_time())
                .then_with(|| is_tombstone(a).cmp(&is_tombstone(b))),
            (false, false) => match (&a.value, &b.value) {
                (
                    CellValue::Live { value: va, ttl: ta },
                    CellValue::Live { value: vb, ttl: tb },
                ) => va.cmp(vb).then_with(|| {
                    let ea = ta.map_or(i64::MAX, |t| t.local_expiration_time);
                    let eb = tb.map_or(i64::MAX, |t| t.local_expiration_time);
                    ea.cmp(&eb)
                }),
                _ => Ordering::Equal,
            },
        }
    })
}

fn is_tombstone(c: &Cell) -> bool {
    matches!(c.value, CellValue::Tombstone { .. })
}

/// Whether `incoming` should replace `existing`.
pub fn supersedes(incoming: &Cell, existing: &Cell, now_seconds: i64) -> bool {
    compare_versions(incoming, existing, now_seconds) == Ordering::Greater
}

/// Reconciles two entries stored under the same key. Entries of different kinds never share a
/// key in a well-formed row; if they do (a damaged file), the cell is kept.
pub fn reconcile_entries(a: Entry, b: Entry, now_seconds: i64) -> Entry {
    match (a, b) {
        (Entry::Cell(x), Entry::Cell(y)) => {
            if supersedes(&y, &x, now_seconds) {
                Entry::Cell(y)
            } else {
                Entry::Cell(x)
            }
        }
        (Entry::SuperColumnDeletion(x), Entry::SuperColumnDeletion(y)) => {
            Entry::SuperColumnDeletion(DeletionTime::merge(x, y))
        }
        (c @ Entry::Cell(_), _) | (_, c @ Entry::Cell(_)) => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cell::Ttl;

    fn live(ts: i64, v: &[u8]) -> Cell {
        Cell::live(ts, v.to_vec(), None)
    }

    #[test]
    fn higher_timestamp_wins_either_way() {
        let (old, new) = (live(1, b"zzz"), live(2, b"aaa"));
        assert!(supersedes(&new, &old, 0));
        assert!(!supersedes(&old, &new, 0));
        let tomb = Cell::tombstone(1, 100);
        assert!(supersedes(&new, &tomb, 0));
    }

    #[test]
    fn tombstone_wins_a_tie() {
        let (v, t) = (live(5, b"x"), Cell::tombstone(5, 100));
        assert!(supersedes(&t, &v, 0));
        assert!(!supersedes(&v, &t, 0));
    }

    #[test]
    fn greater_value_wins_a_live_tie_unsigned() {
        let (a, b) = (live(5, &[0x7f]), live(5, &[0x80]));
        assert!(supersedes(&b, &a, 0));
        assert!(!supersedes(&a, &b, 0));
    }

    #[test]
    fn expired_ttl_counts_as_deletion_on_a_tie() {
        let ttl = Some(Ttl {
            ttl: 10,
            local_expiration_time: 110,
        });
        let expiring = Cell::live(5, b"a".to_vec(), ttl);
        let other = live(5, b"b");
        assert!(supersedes(&other, &expiring, 109));
        assert!(supersedes(&expiring, &other, 110));
    }

    #[test]
    fn equal_tombstones_are_one() {
        let (a, b) = (Cell::tombstone(5, 100), Cell::tombstone(5, 100));
        assert_eq!(compare_versions(&a, &b, 0), Ordering::Equal);
    }
}
