//! An index cleaned as its base compacts, as Cassandra cleans one: a compaction of the base
//! tells which live cells it discarded (overwritten, or shadowed by a deletion among its
//! inputs), and the entries those cells made are deleted, at each cell's own timestamp. The
//! cost follows the garbage a compaction finds, minor or major, not the size of the index.
//!
//! Only entries one cell alone makes are deleted so: a regular or static column's value, a
//! map's key, a map's entry. An entry a row's other cells may make as well (a list's or map's
//! value, which two elements may share; a key column's, which every cell of its row makes) is
//! left to the read-time check and to the index's major compaction (`index_purge.rs`): a
//! cell that makes it may lie in an SSTable outside this compaction. A deletion's timestamp is
//! that of the discarded cell, so it never shadows an entry a later write made.
//!
//! The deletions skip the commit log (an entry left by a crash is stale, and reads check
//! every entry), and go into the index's memtable only while that memtable is under its flush
//! threshold: what a compaction writes there is bounded by it, and an entry not deleted now is
//! dropped by a later compaction or the read-time check. Owns this choice only; which entries
//! a cell makes is `index_write.rs`'s.

use std::borrow::Cow;
use std::sync::{Arc, PoisonError};

use crossbeam_utils::sync::ShardedLock;

use super::index_write;
use crate::error::Result;
use crate::model::cell::{CellRef, CellValueRef, EntryRef};
use crate::mutation::RowUpdate;
use crate::schema::IndexOf;
use crate::store::{ColumnFamilyStore, DiscardedCell, IndexStore, OnDiscard};

/// Sets on `base` (of `keyspace`) the hook its compactions call with the cells they discard;
/// `switch` orders the deletions' memtable applies against memtable switches, as writers'.
pub(super) fn wire(keyspace: &str, base: &Arc<ColumnFamilyStore>, switch: &Arc<ShardedLock<()>>) {
    let base_w = Arc::downgrade(base);
    let (keyspace, switch) = (keyspace.to_string(), Arc::clone(switch));
    base.set_discard_hook(OnDiscard(Box::new(move |key, sort_key, cells| {
        let Some(base) = base_w.upgrade() else {
            return;
        };
        if let Err(e) = clean(&keyspace, &base, &switch, (key, sort_key), cells) {
            tracing::warn!(
                "stale index entries of {keyspace}.{} left to later compactions: {e}",
                base.def().name
            );
        }
    })));
}

/// Whether an entry of an index of this kind is made by one cell alone.
fn one_cell_makes(of: IndexOf) -> bool {
    matches!(
        of,
        IndexOf::Value | IndexOf::StaticValue | IndexOf::ElementNames | IndexOf::ElementEntries
    )
}

/// Deletes the entries the discarded `cells` of one row of `base` made.
fn clean(
    keyspace: &str,
    base: &ColumnFamilyStore,
    switch: &ShardedLock<()>,
    row: (&[u8], &[u8]),
    cells: &[DiscardedCell],
) -> Result<()> {
    let indexes: Vec<IndexStore> = base
        .indexes()
        .iter()
        .filter(|i| one_cell_makes(i.def.of))
        .cloned()
        .collect();
    if indexes.is_empty() {
        return Ok(());
    }
    let update = RowUpdate {
        deletion: None,
        entries: cells
            .iter()
            .map(|(k, timestamp, value)| {
                let cell = CellRef {
                    timestamp: *timestamp,
                    value: CellValueRef::Live { value, ttl: None },
                };
                (Cow::Borrowed(k.as_slice()), EntryRef::Cell(cell))
            })
            .collect(),
    };
    let mut derived = Vec::new();
    index_write::derive(true, keyspace, base, &indexes, row, &update, &mut derived)?;
    // Nothing panics while holding it, and it guards no data: a poisoned lock still orders.
    let _switch = switch.read().unwrap_or_else(PoisonError::into_inner);
    index_write::delete(base.partitioner(), &derived, base.now_seconds());
    Ok(())
}
