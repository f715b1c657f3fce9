//! What a write puts into the secondary indexes of the column families it touches: for each
//! live cell of an indexed column, an entry in the index's hidden column family under the
//! cell's value, named for the row (see `schema/index.rs`), with the cell's timestamp and TTL.
//!
//! Nothing is removed from an index when a value is overwritten, deleted or expires: an entry
//! is only a pointer, and a read checks each entry it finds against the base row (as Cassandra
//! does), so a stale one is never answered; a compaction of the base deletes the entries of
//! the cells it discards (`index_cleanup.rs`), and a major compaction of the index drops the
//! stale ones left (`index_purge.rs`). Entries are derived from the base update alone,
//! so replaying the base's commit log record derives them again (`recovery.rs`): an index
//! entry is never without its row, nor a row without its entry.

use std::borrow::Cow;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::model::cell::{CellRef, CellValueRef, EntryRef, Ttl};
use crate::model::cell_key;
use crate::model::partitioner::Partitioner;
use crate::mutation::RowUpdate;
use crate::schema::index::{is_composite, MAX_INDEXED_VALUE};
use crate::store::{ColumnFamilyStore, IndexStore};

/// One index entry a write makes.
#[derive(Debug)]
pub(super) struct Derived {
    /// The index's store.
    pub(super) store: Arc<ColumnFamilyStore>,
    /// The indexed value: the entry's row key in the index.
    value: Vec<u8>,
    /// The entry's key (its name's sort key) in that row.
    entry_key: Vec<u8>,
    timestamp: i64,
    ttl: Option<Ttl>,
}

/// Appends to `out` the index entries `update` (of the row whose sort key is `row_sort_key`
/// in `base`) makes in `indexes`. A value too long to be an index's row key is refused, in
/// Cassandra's words, before anything is written; with `skip_oversize` (replay, and a build
/// over rows written before the index) it is left out of the index, with a warning.
pub(super) fn derive(
    skip_oversize: bool,
    keyspace: &str,
    base: &ColumnFamilyStore,
    indexes: &[IndexStore],
    (row_key, row_sort_key): (&[u8], &[u8]),
    update: &RowUpdate<'_>,
    out: &mut Vec<Derived>,
) -> Result<()> {
    let first = out.len();
    let def = base.def();
    let composite = is_composite(&def);
    let mut name = Vec::new();
    for (entry_key, entry) in &update.entries {
        let EntryRef::Cell(CellRef {
            timestamp,
            value: CellValueRef::Live { value, ttl },
        }) = entry
        else {
            continue;
        };
        name.clear();
        def.comparator
            .decode_sort_key(entry_key, &mut name)
            .map_err(|e| Error::invalid(format!("an indexed write's column name: {e}")))?;
        for idx in indexes {
            let Some((clustering, value)) = idx.def.matches(composite, row_key, &name, value)
            else {
                continue;
            };
            // An empty value is not indexed: a query for one reads the table instead.
            if value.is_empty() {
                continue;
            }
            if value.len() > MAX_INDEXED_VALUE {
                if skip_oversize {
                    tracing::warn!(
                        "a value of {} bytes in {keyspace}.{} is too long for index {}; not indexed",
                        value.len(),
                        def.name,
                        idx.def.name
                    );
                    continue;
                }
                return Err(Error::invalid(format!(
                    "Cannot index value of size {} for index {} on {keyspace}.{}({}) (maximum allowed size={MAX_INDEXED_VALUE})",
                    value.len(),
                    idx.def.name,
                    def.name,
                    String::from_utf8_lossy(&idx.def.column),
                )));
            }
            let entry_name = idx.def.entry_name(row_sort_key, &clustering);
            let mut entry_key = Vec::new();
            cell_key::column_into(
                idx.store.def().comparator.as_ref(),
                &entry_name,
                &mut entry_key,
            );
            // A key column's entry stands for its row while any cell of it lives: it never
            // expires, and a row's cells make it once, at their latest timestamp.
            let rows = idx.def.of.of_rows();
            let same = |d: &Derived| {
                Arc::ptr_eq(&d.store, &idx.store) && d.entry_key == entry_key && d.value == *value
            };
            if let Some(d) = out[first..].iter_mut().find(|d| rows && same(d)) {
                d.timestamp = d.timestamp.max(*timestamp);
                continue;
            }
            out.push(Derived {
                store: idx.store.clone(),
                value: value.to_vec(),
                entry_key,
                timestamp: *timestamp,
                ttl: if rows { None } else { *ttl },
            });
        }
    }
    Ok(())
}

impl Derived {
    /// Whether this is the entry under `value` keyed `entry_key`.
    pub(super) fn is(&self, value: &[u8], entry_key: &[u8]) -> bool {
        self.value == value && self.entry_key == entry_key
    }
}

/// Applies derived entries to their indexes' memtables.
pub(super) fn apply(partitioner: Partitioner, derived: &[Derived]) {
    for d in derived {
        let value = CellValueRef::Live {
            value: &[],
            ttl: d.ttl,
        };
        d.apply(partitioner, value);
    }
}

/// Deletes derived entries (at their own timestamps, deleted at `now_seconds`) in their
/// indexes' memtables, skipping an index whose memtable is due a flush (the caller is no
/// writer, and a writer's next write flushes it).
pub(super) fn delete(partitioner: Partitioner, derived: &[Derived], now_seconds: i64) {
    for d in derived.iter().filter(|d| !d.store.memtable_full()) {
        let value = CellValueRef::Tombstone {
            local_deletion_time: now_seconds,
        };
        d.apply(partitioner, value);
        d.store.mark_unlogged();
    }
}

impl Derived {
    /// Applies this entry, as `value`, to its index's memtable.
    fn apply(&self, partitioner: Partitioner, value: CellValueRef<'_>) {
        let update = RowUpdate {
            deletion: None,
            entries: vec![(
                Cow::Borrowed(self.entry_key.as_slice()),
                EntryRef::Cell(CellRef {
                    timestamp: self.timestamp,
                    value,
                }),
            )],
        };
        let sort_key = partitioner.row_sort_key(&self.value);
        self.store.apply(&sort_key, &self.value, &update);
    }
}
