//! Counters per column family: what the caches, bloom filters and disk did. Tests assert them,
//! benchmarks report them, and `Database::column_family_stats` shows them.

use std::sync::atomic::{AtomicU64, Ordering};

/// Live counters, updated by reads.
#[derive(Debug, Default)]
pub struct Counters {
    pub(crate) bloom_checks: AtomicU64,
    pub(crate) bloom_negatives: AtomicU64,
    pub(crate) bloom_false_positives: AtomicU64,
    pub(crate) key_cache_hits: AtomicU64,
    pub(crate) key_cache_misses: AtomicU64,
    pub(crate) key_cache_evictions: AtomicU64,
    pub(crate) block_cache_hits: AtomicU64,
    pub(crate) block_cache_misses: AtomicU64,
    pub(crate) block_cache_evictions: AtomicU64,
    pub(crate) index_searches: AtomicU64,
    pub(crate) blocks_read: AtomicU64,
    pub(crate) flushes: AtomicU64,
    pub(crate) compactions: AtomicU64,
    pub(crate) bytes_compacted: AtomicU64,
    pub(crate) tombstones_purged: AtomicU64,
}

/// Adds one to a counter.
pub(crate) fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// A snapshot of one column family's counters and sizes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ColumnFamilyStats {
    /// Live SSTables.
    pub sstables: usize,
    /// Bytes of the live SSTables.
    pub sstable_bytes: u64,
    /// Bytes held by memtables (approximate).
    pub memtable_bytes: usize,
    /// Column writes in the active memtable.
    pub memtable_operations: u64,
    /// Memtables flushed since open.
    pub flushes: u64,
    /// Compactions completed since open.
    pub compactions: u64,
    /// Bytes read by compactions since open.
    pub bytes_compacted: u64,
    /// Tombstones purged by compactions since open.
    pub tombstones_purged: u64,
    /// Bloom filter checks of row keys.
    pub bloom_checks: u64,
    /// Checks the filter answered "absent".
    pub bloom_negatives: u64,
    /// Checks the filter answered "maybe" for a row that was not there.
    pub bloom_false_positives: u64,
    /// Key cache hits.
    pub key_cache_hits: u64,
    /// Key cache misses.
    pub key_cache_misses: u64,
    /// Key cache entries evicted to make room.
    pub key_cache_evictions: u64,
    /// Key cache capacity in entries.
    pub key_cache_capacity: usize,
    /// Key cache entries held.
    pub key_cache_size: usize,
    /// Block cache hits for this CF's blocks.
    pub block_cache_hits: u64,
    /// Block cache misses for this CF's blocks.
    pub block_cache_misses: u64,
    /// Blocks evicted from the block cache by this CF's inserts.
    pub block_cache_evictions: u64,
    /// Block index searches.
    pub index_searches: u64,
    /// Data blocks read from disk (decompressed and decoded).
    pub blocks_read: u64,
}

impl Counters {
    /// A snapshot of the counters (sizes are filled in by the caller).
    pub(crate) fn snapshot(&self) -> ColumnFamilyStats {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ColumnFamilyStats {
            flushes: g(&self.flushes),
            compactions: g(&self.compactions),
            bytes_compacted: g(&self.bytes_compacted),
            tombstones_purged: g(&self.tombstones_purged),
            bloom_checks: g(&self.bloom_checks),
            bloom_negatives: g(&self.bloom_negatives),
            bloom_false_positives: g(&self.bloom_false_positives),
            key_cache_hits: g(&self.key_cache_hits),
            key_cache_misses: g(&self.key_cache_misses),
            key_cache_evictions: g(&self.key_cache_evictions),
            block_cache_hits: g(&self.block_cache_hits),
            block_cache_misses: g(&self.block_cache_misses),
            block_cache_evictions: g(&self.block_cache_evictions),
            index_searches: g(&self.index_searches),
            blocks_read: g(&self.blocks_read),
            ..ColumnFamilyStats::default()
        }
    }
}
