//! Which entries a major compaction of a secondary index keeps. An entry is a pointer: an
//! overwrite, a delete or an expiry of its row's value leaves it in place, and every read
//! checks it against the row (`index_read.rs`). A major compaction of the index asks the base
//! row once more, and drops an entry the row no longer makes: no write can make that entry
//! valid again without writing it anew, so nothing the index must answer is lost.
//!
//! It owns the check only; the compaction that applies it is `store/compaction.rs`'s, and
//! which entries a row makes is `index_write.rs`'s.

use std::borrow::Cow;
use std::sync::Arc;

use super::index_write::{self, Derived};
use crate::error::{Error, Result};
use crate::model::cell::{CellRef, CellValueRef, EntryRef, Ttl};
use crate::model::comparator::CompositeType;
use crate::model::partitioner::{Partitioner, RowKey};
use crate::mutation::RowUpdate;
use crate::query::SliceRange;
use crate::schema::index::is_composite;
use crate::schema::IndexOf;
use crate::store::{ColumnFamilyStore, EntryCheck, IndexStore};

/// A live cell of a base row: its key in the row, timestamp, value and TTL.
pub(super) type LiveCell = (Vec<u8>, i64, Vec<u8>, Option<Ttl>);

/// Sets on the column family of `idx` (an index of `base`, in `keyspace`) the check its major
/// compactions make. The check holds both stores weakly: it lives in one of them.
pub(super) fn wire(keyspace: &str, base: &Arc<ColumnFamilyStore>, idx: &IndexStore) {
    let p = base.partitioner();
    let (base_w, store_w) = (Arc::downgrade(base), Arc::downgrade(&idx.store));
    let (keyspace, def) = (keyspace.to_string(), idx.def.clone());
    idx.store
        .set_entry_check(EntryCheck(Box::new(move |value, entry_key| {
            let (Some(base), Some(store)) = (base_w.upgrade(), store_w.upgrade()) else {
                return Ok(true);
            };
            let idx = IndexStore {
                def: def.clone(),
                store,
            };
            stands(&keyspace, &base, &idx, p, value, entry_key)
        })));
}

/// Whether the entry of `idx` under `value` keyed `entry_key` is one its base row makes now.
fn stands(
    keyspace: &str,
    base: &ColumnFamilyStore,
    idx: &IndexStore,
    p: Partitioner,
    value: &[u8],
    entry_key: &[u8],
) -> Result<bool> {
    let mut name = Vec::new();
    idx.store
        .def()
        .comparator
        .decode_sort_key(entry_key, &mut name)
        .map_err(|e| Error::invalid(format!("an entry of index {}: {e}", idx.def.name)))?;
    let Some((row_sort_key, clustering)) = idx.def.split_entry(&name) else {
        return Ok(true);
    };
    let key = p.key_part(row_sort_key);
    // The cells that could make the entry: the indexed column of a Thrift-era row, a static
    // column's cells, the CQL row of its clustering, or the whole partition of a table without
    // clustering columns.
    let range = if idx.def.of == IndexOf::StaticValue {
        let mut parts: Vec<&[u8]> = vec![b""; usize::from(idx.def.clustering)];
        parts.push(&idx.def.column);
        SliceRange {
            start: CompositeType::build_static(&parts, -1),
            finish: CompositeType::build_static(&parts, 1),
            ..SliceRange::all()
        }
    } else if !is_composite(&base.def()) {
        SliceRange {
            start: idx.def.column.clone(),
            finish: idx.def.column.clone(),
            ..SliceRange::all()
        }
    } else if clustering.is_empty() {
        SliceRange::all()
    } else {
        SliceRange {
            start: CompositeType::build(&clustering, -1),
            finish: CompositeType::build(&clustering, 1),
            ..SliceRange::all()
        }
    };
    let mut cells: Vec<LiveCell> = Vec::new();
    let row = RowKey::new(p, key);
    base.visit_slice(&row, &range, base.now_seconds(), |k, cell| {
        let timestamp = cell.as_ref().timestamp;
        if let Some((v, ttl)) = cell.into_live() {
            cells.push((k.to_vec(), timestamp, v, ttl));
        }
        Ok(true)
    })?;
    let derived = entries_of(keyspace, base, idx, (key, row_sort_key), &cells)?;
    Ok(derived.iter().any(|d| d.is(value, entry_key)))
}

/// The entries of index `idx` that the live `cells` of one row of `base` make.
pub(super) fn entries_of(
    keyspace: &str,
    base: &ColumnFamilyStore,
    idx: &IndexStore,
    row: (&[u8], &[u8]),
    cells: &[LiveCell],
) -> Result<Vec<Derived>> {
    let update = RowUpdate {
        deletion: None,
        entries: cells
            .iter()
            .map(|(k, timestamp, value, ttl)| {
                let cell = CellRef {
                    timestamp: *timestamp,
                    value: CellValueRef::Live { value, ttl: *ttl },
                };
                (Cow::Borrowed(k.as_slice()), EntryRef::Cell(cell))
            })
            .collect(),
    };
    let mut derived = Vec::new();
    index_write::derive(
        true,
        keyspace,
        base,
        std::slice::from_ref(idx),
        row,
        &update,
        &mut derived,
    )?;
    Ok(derived)
}
