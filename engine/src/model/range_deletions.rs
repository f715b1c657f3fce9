//! The range deletions of one row (CQL's `DELETE … WHERE k = ? AND c >= ? AND c < ?`) as a read
//! or a compaction applies them: cut into disjoint fragments that each carry the newest
//! deletion covering them, so the deletion covering a name is one binary search away however
//! many ranges overlap (Cassandra's `RangeTombstoneList`, RocksDB's fragmented range
//! tombstones). Static names are never covered: a range deletion names rows. Where the ranges
//! are stored is `cell_key`'s; gathering them from a row's sources is the query layer's.

use std::collections::BTreeMap;

use super::cell::DeletionTime;
use super::cell_key::STATIC_SORT_KEY;

/// One range deletion: its inclusive bounds as sort keys (empty: open) and its deletion.
pub type Range = (Vec<u8>, Vec<u8>, DeletionTime);

/// A row's range deletions as disjoint fragments.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RangeDeletions {
    /// Where each fragment begins, ascending; fragment `i` runs up to `starts[i + 1]`.
    starts: Vec<Vec<u8>>,
    /// The newest deletion over each fragment (`None`: a gap between ranges).
    deletions: Vec<Option<DeletionTime>>,
}

impl RangeDeletions {
    /// The fragments of `ranges` (in any order, overlapping or not).
    pub fn new(ranges: Vec<Range>) -> RangeDeletions {
        // Each range opens at its start and closes at the first key after its inclusive
        // finish (the finish and a zero byte); an open finish never closes.
        let mut events: Vec<(Vec<u8>, bool, DeletionTime)> = Vec::with_capacity(ranges.len() * 2);
        for (start, finish, d) in ranges {
            if !finish.is_empty() && start > finish {
                // Crossed: it holds no key (a write of one is refused; this keeps a damaged
                // one from covering everything after its start).
                continue;
            }
            if !finish.is_empty() {
                let mut end = finish;
                end.push(0);
                events.push((end, false, d));
            }
            events.push((start, true, d));
        }
        events.sort_by(|a, b| a.0.cmp(&b.0));
        let mut open: BTreeMap<(i64, i64), usize> = BTreeMap::new();
        let mut out = RangeDeletions::default();
        let mut i = 0;
        while i < events.len() {
            let at = events[i].0.clone();
            while let Some((_, opens, d)) = events.get(i).filter(|e| e.0 == at) {
                let k = (d.marked_for_delete_at, d.local_deletion_time);
                if *opens {
                    *open.entry(k).or_default() += 1;
                } else if let Some(n) = open.get_mut(&k) {
                    *n -= 1;
                    if *n == 0 {
                        open.remove(&k);
                    }
                }
                i += 1;
            }
            let newest = open.last_key_value().map(|(&(ts, ldt), _)| DeletionTime {
                marked_for_delete_at: ts,
                local_deletion_time: ldt,
            });
            if out.deletions.last() != Some(&newest) {
                out.starts.push(at);
                out.deletions.push(newest);
            }
        }
        out
    }

    /// The newest range deletion covering the name stored under `key` (a column's key).
    #[inline]
    pub fn covering(&self, key: &[u8]) -> Option<DeletionTime> {
        if self.starts.is_empty() || key.starts_with(&STATIC_SORT_KEY) {
            return None;
        }
        let i = self.starts.partition_point(|s| s.as_slice() <= key);
        i.checked_sub(1).and_then(|i| self.deletions[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn del(ts: i64) -> DeletionTime {
        DeletionTime {
            marked_for_delete_at: ts,
            local_deletion_time: 100,
        }
    }

    #[test]
    fn the_newest_covering_range_wins_and_gaps_are_uncovered() {
        let list = RangeDeletions::new(vec![
            (b"b".to_vec(), b"f".to_vec(), del(10)),
            (b"d".to_vec(), b"h".to_vec(), del(20)),
            (b"m".to_vec(), Vec::new(), del(5)),
            (b"c".to_vec(), b"c".to_vec(), del(30)),
        ]);
        let at = |k: &[u8]| list.covering(k).map(|d| d.marked_for_delete_at);
        assert_eq!(at(b"a"), None);
        assert_eq!(at(b"b"), Some(10));
        assert_eq!(at(b"c"), Some(30), "an inclusive finish covers its bound");
        assert_eq!(at(b"c\0"), Some(10), "and nothing after it");
        assert_eq!(at(b"d"), Some(20));
        assert_eq!(
            at(b"f\x01"),
            Some(20),
            "past the older range, the newer one goes on"
        );
        assert_eq!(at(b"h"), Some(20));
        assert_eq!(at(b"h\0\0"), None);
        assert_eq!(at(b"zzz"), Some(5), "an open finish covers the rest");
        assert_eq!(
            at(&[0, 0, 0, 2, b's', 0, 2]),
            None,
            "static names are never covered"
        );
    }

    #[test]
    fn an_open_start_covers_from_the_first_name_and_equal_ranges_merge() {
        let list = RangeDeletions::new(vec![
            (Vec::new(), b"k".to_vec(), del(7)),
            (Vec::new(), b"k".to_vec(), del(9)),
        ]);
        assert_eq!(list.covering(b"\x01").unwrap().marked_for_delete_at, 9);
        assert_eq!(list.covering(b"l"), None);
        assert!(RangeDeletions::new(Vec::new()).covering(b"a").is_none());
    }

    proptest::proptest! {
        /// The fragments answer as a plain scan of every range does: the newest deletion
        /// among those holding the key (ties of timestamp broken by local time).
        #[test]
        fn fragments_answer_as_a_scan_of_every_range(
            ranges in proptest::collection::vec(
                (
                    proptest::collection::vec(1u8..4, 0..3),
                    proptest::collection::vec(1u8..4, 0..3),
                    0i64..6,
                    0i64..3,
                ),
                0..12,
            ),
            keys in proptest::collection::vec(proptest::collection::vec(0u8..5, 1..4), 1..20),
        ) {
            let ranges: Vec<Range> = ranges
                .into_iter()
                .map(|(s, f, ts, ldt)| {
                    let d = DeletionTime { marked_for_delete_at: ts, local_deletion_time: ldt };
                    (s, f, d)
                })
                .collect();
            let list = RangeDeletions::new(ranges.clone());
            for key in keys {
                let want = ranges
                    .iter()
                    .filter(|(s, f, _)| *s <= key && (f.is_empty() || key <= *f))
                    .fold(None, |acc, (_, _, d)| DeletionTime::merge_opt(acc, Some(*d)));
                let want = want.filter(|_| !key.starts_with(&STATIC_SORT_KEY));
                proptest::prop_assert_eq!(list.covering(&key), want, "{:?}", key);
            }
        }
    }
}
