//! The memtable alone, for the criterion suite (`bench/benches/memtable.rs`): rows of one column
//! family under the RandomPartitioner, with no commit log, schema or validation in front. It is
//! a window for measurement, hidden from the docs and not a stable API; it must not grow
//! behaviour of its own.

use std::borrow::Cow;
use std::ops::Bound;

use super::Memtable;
use crate::merge::RowSource;
use crate::model::cell::{CellRef, CellValueRef, EntryRef};
use crate::model::partitioner::Partitioner;
use crate::mutation::RowUpdate;

/// A memtable of a Standard column family with a byte-ordered comparator.
#[derive(Debug)]
pub struct StandaloneMemtable {
    mem: Memtable,
}

impl StandaloneMemtable {
    /// An empty memtable sized for about `rows` rows.
    pub fn new(rows: usize) -> Self {
        StandaloneMemtable {
            mem: Memtable::with_expected_rows(rows),
        }
    }

    /// The row sort key the memtable is keyed by (token, then key): what the write path
    /// computes once per row before it reaches the memtable.
    pub fn sort_key(key: &[u8]) -> Vec<u8> {
        Partitioner::Random.row_sort_key(key)
    }

    /// Writes one column of one row, as `insert` does after validation.
    pub fn insert(&self, sort_key: &[u8], column: &[u8], value: &[u8], timestamp: i64) {
        let update = RowUpdate {
            deletion: None,
            entries: vec![(
                Cow::Borrowed(column),
                EntryRef::Cell(CellRef {
                    timestamp,
                    value: CellValueRef::Live { value, ttl: None },
                }),
            )],
        };
        self.mem.apply(sort_key, &update, false);
    }

    /// Whether the row holds the column: the memtable's part of a point read.
    pub fn contains(&self, sort_key: &[u8], column: &[u8]) -> bool {
        self.mem.row(sort_key).is_some_and(|row| {
            let found = row
                .scan(Bound::Included(column), Bound::Included(column), false)
                .next();
            matches!(found, Some(Ok(_)))
        })
    }

    /// Reads every row and every entry in order, as a flush does; returns the entries read.
    pub fn iterate(&self) -> usize {
        self.mem
            .flush_rows(false)
            .map(|row| row.entries().count())
            .sum()
    }

    /// Arena bytes in use.
    pub fn bytes(&self) -> usize {
        self.mem.live_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_inserted_is_found_and_iterated() {
        let m = StandaloneMemtable::new(10);
        let keys: Vec<Vec<u8>> = (0..100u32)
            .map(|i| StandaloneMemtable::sort_key(&i.to_be_bytes()))
            .collect();
        for k in &keys {
            m.insert(k, b"c", b"value", 1);
        }
        assert!(keys.iter().all(|k| m.contains(k, b"c")));
        assert!(!m.contains(&keys[0], b"d"));
        assert!(!m.contains(&StandaloneMemtable::sort_key(b"absent"), b"c"));
        assert_eq!(m.iterate(), 100);
        assert!(m.bytes() > 100 * 5);
    }
}
