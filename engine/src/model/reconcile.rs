//! Reconciliation (SPEC §3): which of two versions of the same column wins.
//!
//! The higher timestamp wins. On a tie, as Cassandra 3.0+ resolves it (CASSANDRA-14592): a
//! tombstone wins over a live value, and a cell with a TTL over one without (it becomes a
//! deletion when it expires, so ranking it so from the start means no version's fate changes
//! when the clock moves); of two tombstones the later local deletion time wins; of two TTL cells
//! the later expiry, then the later write time (expiry − TTL); then the greater value (unsigned
//! bytes). The order is total and never consults the clock, so the result does not depend on
//! the order in which versions meet or on how they were split across memtables and SSTables.
//! Compaction keeps an expired TTL cell a TTL cell (with its value dropped) until it is purged,
//! so that its rank does not change either.

use std::cmp::Ordering;

use super::cell::{Cell, CellRef, CellValueRef, DeletionTime, Entry, Ttl};

/// The rank of a cell among versions with the same timestamp: tombstones above TTL cells above
/// plain cells.
fn rank(c: &CellRef<'_>) -> u8 {
    match &c.value {
        CellValueRef::Tombstone { .. } => 2,
        CellValueRef::Live { ttl: Some(_), .. } => 1,
        CellValueRef::Live { ttl: None, .. } => 0,
    }
}

/// Orders two versions of one column: `Greater` means `a` wins.
pub fn compare_versions(a: &Cell, b: &Cell) -> Ordering {
    compare_refs(&a.as_ref(), &b.as_ref())
}

/// [`compare_versions`] of borrowed cells.
pub fn compare_refs(a: &CellRef<'_>, b: &CellRef<'_>) -> Ordering {
    a.timestamp
        .cmp(&b.timestamp)
        .then_with(|| rank(a).cmp(&rank(b)))
        .then_with(|| match (&a.value, &b.value) {
            (
                CellValueRef::Tombstone {
                    local_deletion_time: x,
                },
                CellValueRef::Tombstone {
                    local_deletion_time: y,
                },
            ) => x.cmp(y),
            (
                CellValueRef::Live { value: va, ttl: ta },
                CellValueRef::Live { value: vb, ttl: tb },
            ) => {
                // Equal ranks: both have a TTL or neither has. The later expiry wins, then the
                // later write time.
                let expiry = |t: &Option<Ttl>| t.map(|t| t.local_expiration_time);
                let written =
                    |t: &Option<Ttl>| t.map(|t| t.local_expiration_time - i64::from(t.ttl));
                expiry(ta)
                    .cmp(&expiry(tb))
                    .then_with(|| written(ta).cmp(&written(tb)))
                    .then_with(|| va.cmp(vb))
            }
            _ => Ordering::Equal,
        })
}

/// Whether `incoming` should replace `existing`.
pub fn supersedes(incoming: &Cell, existing: &Cell) -> bool {
    compare_versions(incoming, existing) == Ordering::Greater
}

/// Reconciles two entries stored under the same key. Entries of different kinds never share a
/// key in a well-formed row; if they do (a damaged file), the cell is kept.
pub fn reconcile_entries(a: Entry, b: Entry) -> Entry {
    match (a, b) {
        (Entry::Cell(x), Entry::Cell(y)) => {
            if supersedes(&y, &x) {
                Entry::Cell(y)
            } else {
                Entry::Cell(x)
            }
        }
        (Entry::GroupDeletion(x), Entry::GroupDeletion(y)) => {
            Entry::GroupDeletion(DeletionTime::merge(x, y))
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

    fn expiring(ts: i64, v: &[u8], at: i64) -> Cell {
        Cell::live(
            ts,
            v.to_vec(),
            Some(Ttl {
                ttl: 10,
                local_expiration_time: at,
            }),
        )
    }

    #[test]
    fn higher_timestamp_wins_either_way() {
        let (old, new) = (live(1, b"zzz"), live(2, b"aaa"));
        assert!(supersedes(&new, &old));
        assert!(!supersedes(&old, &new));
        let tomb = Cell::tombstone(1, 100);
        assert!(supersedes(&new, &tomb));
    }

    #[test]
    fn tombstone_wins_a_tie() {
        let (v, t) = (live(5, b"x"), Cell::tombstone(5, 100));
        assert!(supersedes(&t, &v));
        assert!(!supersedes(&v, &t));
        assert!(supersedes(&t, &expiring(5, b"x", 200)));
    }

    #[test]
    fn greater_value_wins_a_live_tie_unsigned() {
        let (a, b) = (live(5, &[0x7f]), live(5, &[0x80]));
        assert!(supersedes(&b, &a));
        assert!(!supersedes(&a, &b));
    }

    #[test]
    fn ttl_cells_rank_between_tombstones_and_plain_cells_whatever_the_time() {
        let (ttl, plain) = (expiring(5, b"a", 110), live(5, b"z"));
        assert!(supersedes(&ttl, &plain));
        // SPEC §3 (Cassandra 3.0+): of two TTL cells the later expiry wins, whatever the values.
        let (soon, later) = (expiring(5, b"z", 110), expiring(5, b"a", 120));
        assert!(supersedes(&later, &soon), "the later expiry wins");
        assert!(!supersedes(&soon, &later));
        // Then the later write time (expiry − TTL): same expiry, the shorter TTL was written later.
        let short = Cell::live(
            5,
            b"a".to_vec(),
            Some(Ttl {
                ttl: 5,
                local_expiration_time: 120,
            }),
        );
        assert!(supersedes(&short, &later), "the later write wins");
    }

    #[test]
    fn equal_tombstones_are_one() {
        let (a, b) = (Cell::tombstone(5, 100), Cell::tombstone(5, 100));
        assert_eq!(compare_versions(&a, &b), Ordering::Equal);
    }
}
