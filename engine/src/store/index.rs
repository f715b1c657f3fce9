//! The secondary indexes a column family's store writes into: each index's definition and the
//! store of its hidden column family. The base store holds them so a write finds its indexes
//! with the store it writes to; what goes into them is decided in `db/index_write.rs`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use arc_swap::Guard;

use super::ColumnFamilyStore;
use crate::schema::IndexDef;

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
}
