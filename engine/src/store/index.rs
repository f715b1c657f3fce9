//! The secondary indexes a column family's store writes into: each index's definition and the
//! store of its hidden column family. The base store holds them so a write finds its indexes
//! with the store it writes to; what goes into them is decided in `db/index_write.rs`, and
//! which entries a major compaction of an index keeps in `db/index_purge.rs`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use arc_swap::Guard;

use super::ColumnFamilyStore;
use crate::schema::IndexDef;

pub use crate::compaction::task::DiscardedCell;

/// How a major compaction of an index's column family tells an entry that still stands for its
/// row (true) from one its row no longer makes (false: the compaction drops it), given the
/// entry's indexed value (its row key) and its key in that row.
pub struct EntryCheck(pub Box<crate::compaction::task::EntryTest>);

impl std::fmt::Debug for EntryCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EntryCheck")
    }
}

/// What a base column family's compactions tell of the live cells they discard, so its
/// indexes can drop the entries those cells made.
pub struct OnDiscard(pub Box<crate::compaction::task::DiscardHook>);

impl std::fmt::Debug for OnDiscard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnDiscard")
    }
}

/// One secondary index of a column family: what it covers and where it is stored.
#[derive(Debug, Clone)]
pub struct IndexStore {
    /// The index.
    pub def: IndexDef,
    /// The hidden column family holding its entries.
    pub store: Arc<ColumnFamilyStore>,
}

impl ColumnFamilyStore {
    /// The indexes this column family's writes maintain (empty for most).
    #[inline]
    pub fn indexes(&self) -> Guard<Arc<Vec<IndexStore>>> {
        self.indexes.load()
    }

    /// Whether it has indexes: one relaxed load, so a write to a column family without any
    /// (most) takes no guard of the list (`stress` fillrandom ran 5% slower taking two).
    #[inline]
    pub fn has_indexes(&self) -> bool {
        self.indexed.load(Ordering::Relaxed)
    }

    /// Replaces the indexes this column family's writes maintain.
    pub fn set_indexes(&self, indexes: Vec<IndexStore>) {
        let any = !indexes.is_empty();
        self.indexes.store(Arc::new(indexes));
        self.indexed.store(any, Ordering::Release);
    }

    /// Sets how this index column family's major compactions tell live entries from stale.
    pub fn set_entry_check(&self, check: EntryCheck) {
        self.entry_check.store(Some(Arc::new(check)));
    }

    /// Sets what this base column family's compactions tell of the cells they discard.
    pub fn set_discard_hook(&self, hook: OnDiscard) {
        self.discard_hook.store(Some(Arc::new(hook)));
    }

    /// The partitioner its rows are ordered by.
    pub fn partitioner(&self) -> crate::model::partitioner::Partitioner {
        self.ctx.partitioner
    }

    /// The engine clock's "now", in seconds.
    pub fn now_seconds(&self) -> i64 {
        self.ctx.clock.now_seconds()
    }
}
