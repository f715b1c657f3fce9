//! The in-memory write buffer of one column family: a `crossbeam-skiplist` of rows by row sort key, each row a sorted
//! map of entries behind its own lock.
//!
//! The skiplist lets writers add rows and readers walk them without a global lock. A row's lock
//! makes each row mutation visible all at once: a reader holding it sees a mutation wholly or not
//! at all. Versions are reconciled on the way in, and entries a deletion shadows are dropped at
//! once (they could never be read again), so a row holds at most one version per key. The
//! memtable never touches disk; flushing it is the store's business.

use std::ops::Bound;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_skiplist::map::Entry as MapEntry;
use crossbeam_skiplist::SkipMap;
use parking_lot::RwLock;

use crate::mutation::RowUpdate;

mod entries;
mod key_filter;
pub mod row;
pub mod row_key;

pub use row::{MemRow, RowData};
pub use row_key::RowKey;

use key_filter::KeyFilter;

/// Rough fixed cost of a row in memory, for accounting.
const ROW_OVERHEAD: usize = 96;

/// Rows a memtable's key filter is sized for when nothing better is known.
const DEFAULT_EXPECTED_ROWS: usize = 300_000;

/// A column family's memtable.
#[derive(Debug)]
pub struct Memtable {
    rows: SkipMap<RowKey, MemRow>,
    /// Every row key ever added, so lookups of absent rows skip the skiplist.
    filter: KeyFilter,
    bytes: AtomicUsize,
    operations: AtomicU64,
}

impl Default for Memtable {
    fn default() -> Self {
        Memtable::with_expected_rows(DEFAULT_EXPECTED_ROWS)
    }
}

impl Memtable {
    /// An empty memtable whose key filter is sized for about `rows` rows (it still works past
    /// that, with more false positives).
    pub fn with_expected_rows(rows: usize) -> Self {
        Memtable {
            rows: SkipMap::new(),
            filter: KeyFilter::new(rows),
            bytes: AtomicUsize::new(0),
            operations: AtomicU64::new(0),
        }
    }

    /// Applies one row's mutation atomically. `is_super` says how keys are laid out.
    pub fn apply(&self, sort_key: &[u8], key: &[u8], update: &RowUpdate, is_super: bool) {
        // One skiplist search whether the row is new or not; the owned key it needs is cheaper
        // than a second search.
        // In the filter before the row is in the list: a reader that finds the row can never
        // have been told it is absent.
        self.filter.insert(sort_key);
        let row = self
            .rows
            .get_or_insert_with(RowKey::with_client_key(sort_key, key), || {
                self.bytes
                    .fetch_add(ROW_OVERHEAD + sort_key.len(), Ordering::Relaxed);
                MemRow {
                    data: RwLock::new(RowData::default()),
                }
            });
        let delta = row.value().data.write().apply(update, is_super);
        if delta >= 0 {
            self.bytes.fetch_add(delta as usize, Ordering::Relaxed);
        } else {
            self.bytes
                .fetch_sub(delta.unsigned_abs(), Ordering::Relaxed);
        }
        self.operations
            .fetch_add(update.operation_count(), Ordering::Relaxed);
    }

    /// The row with this sort key.
    pub fn row(&self, sort_key: &[u8]) -> Option<MapEntry<'_, RowKey, MemRow>> {
        if !self.filter.may_contain(sort_key) {
            return None;
        }
        self.rows.get(&RowKey::new(sort_key))
    }

    /// Rows from `lo` upwards, in sort key order.
    pub fn rows_from(
        &self,
        lo: Bound<&[u8]>,
    ) -> impl Iterator<Item = MapEntry<'_, RowKey, MemRow>> + '_ {
        let lo = lo.map(RowKey::new);
        self.rows.range((lo, Bound::Unbounded))
    }

    /// Approximate bytes held.
    pub fn live_bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Column writes applied (inserts and deletions).
    pub fn operations(&self) -> u64 {
        self.operations.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cell::{Cell, Entry};

    fn update() -> RowUpdate {
        RowUpdate {
            deletion: None,
            entries: vec![(
                b"c".to_vec(),
                Entry::Cell(Cell::live(1, b"v".to_vec(), None)),
            )],
        }
    }

    #[test]
    fn rows_come_back_in_sort_key_order_from_any_start() {
        let m = Memtable::with_expected_rows(16);
        let keys: Vec<Vec<u8>> = vec![
            vec![],
            vec![0],
            vec![0, 5],
            vec![1],
            b"a".to_vec(),
            b"ab".to_vec(),
            b"b".to_vec(),
            vec![0xff],
            vec![0xff, 0xff],
        ];
        for k in keys.iter().rev() {
            m.apply(k, k, &update(), false);
        }
        let all: Vec<Vec<u8>> = m
            .rows_from(Bound::Unbounded)
            .map(|e| e.key().bytes().to_vec())
            .collect();
        assert_eq!(all, keys);
        let from_a: Vec<Vec<u8>> = m
            .rows_from(Bound::Excluded(b"a"))
            .map(|e| e.key().bytes().to_vec())
            .collect();
        assert_eq!(from_a, keys[5..]);
        let from_mid: Vec<Vec<u8>> = m
            .rows_from(Bound::Included(&[0, 1]))
            .map(|e| e.key().bytes().to_vec())
            .collect();
        assert_eq!(from_mid, keys[2..]);
        assert!(keys.iter().all(|k| m.row(k).is_some()));
        assert!(m.row(b"zz").is_none());
    }
}
