//! Per column family state (memtables, SSTables, caches, counters), the manifest of live
//! SSTables, and what all column families of a database share.

pub mod column_family;
mod compaction;
mod flush;
pub mod index;
pub mod manifest;
mod read;
mod view;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use parking_lot::Mutex;

pub use column_family::{ColumnFamilyStore, CompactionSettings, FlushLimits, SLOW_OPERATION};
pub use index::{DiscardedCell, EntryCheck, IndexStore, OnDiscard};
pub use read::{ReadRequest, RowRange};

use crate::clock::Clock;
use crate::error::Result;
use crate::io::FileSystem;
use crate::memtable::ChunkPool;
use crate::model::partitioner::Partitioner;
use crate::sstable::{BlockCache, TableOptions};
use manifest::Manifest;

/// What every column family store of one database shares.
#[derive(Debug)]
pub struct StoreContext {
    /// The data directory.
    pub root: PathBuf,
    /// The file-system door.
    pub fs: Arc<dyn FileSystem>,
    /// The manifest, kept in memory and rewritten on every change.
    pub manifest: Mutex<Manifest>,
    /// The block cache.
    pub blocks: BlockCache,
    /// Memory of flushed memtables, for the next ones.
    pub chunks: Arc<ChunkPool>,
    /// How SSTables are written (`ColumnIndexSizeInKB`, `BloomFilterFpChance`, partitioner).
    pub table: TableOptions,
    /// The engine's clock (memtable age, tombstone grace).
    pub clock: Arc<dyn Clock>,
    /// The database's partitioner (row keys from row sort keys).
    pub partitioner: Partitioner,
    /// Set when the database closes: queued flushes are skipped (the commit log keeps what
    /// they hold) and a running compaction stops.
    pub closing: AtomicBool,
    /// Obsolete files (relative to `root`) whose removal is durable: the next manifest write
    /// stops listing them.
    pub removed: Mutex<Vec<String>>,
}

impl StoreContext {
    /// Changes the manifest and stores it; on failure the in-memory copy is left unchanged.
    /// Obsolete files whose removal is durable are dropped from its list on the way.
    pub fn update_manifest(&self, f: impl FnOnce(&mut Manifest)) -> Result<()> {
        let mut m = self.manifest.lock();
        let mut next = m.clone();
        f(&mut next);
        let removed = std::mem::take(&mut *self.removed.lock());
        next.obsolete.retain(|o| !removed.contains(o));
        if let Err(e) = next.store(self.fs.as_ref(), &self.root) {
            self.removed.lock().extend(removed);
            return Err(e);
        }
        *m = next;
        Ok(())
    }

    /// A path under the data directory as the manifest records it (`Keyspace/file`).
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace(std::path::MAIN_SEPARATOR, "/")
    }

    /// A callback that tells this context an obsolete file's removal is durable.
    pub fn removal_notifier(self: &Arc<Self>) -> Arc<dyn Fn(&Path) + Send + Sync> {
        let ctx = Arc::downgrade(self);
        Arc::new(move |path: &Path| {
            if let Some(ctx) = ctx.upgrade() {
                let rel = ctx.relative(path);
                ctx.removed.lock().push(rel);
            }
        })
    }

    /// A fresh SSTable generation (persisted with the next manifest write).
    pub fn next_generation(&self) -> u64 {
        let mut m = self.manifest.lock();
        let g = m.next_generation;
        m.next_generation += 1;
        g
    }
}
