//! A cache of blocks shared by every SSTable of a database, bounded in bytes: hot reads then
//! neither decompress nor decode again. What a block is, and what it costs, is its owner's
//! business ([`Charge`]); this file only keeps and evicts.
//!
//! Every read of every thread looks here, so a hit must take no exclusive lock and write no
//! line other threads read: the cache is `quick_cache`'s, sharded, whose hits take a shard's
//! read lock and mark the entry with one atomic store, and whose S3-FIFO eviction keeps what is
//! read again over what a scan passes once. (A sharded LRU took each shard's mutex and moved the
//! entry in its list on every hit, and stopped reads scaling.)

use std::sync::Arc;

use quick_cache::sync::Cache;
use quick_cache::{DefaultHashBuilder, Lifecycle, Weighter};

/// Identifies a block: the SSTable's process-unique id and the block's number.
pub type BlockKey = (u64, u32);

/// What a cached value costs against the capacity, in bytes.
pub trait Charge {
    /// Bytes charged.
    fn charge(&self) -> usize;
}

/// Weighs a block by its charge.
#[derive(Clone, Debug)]
struct ByCharge;

impl<V: Charge> Weighter<BlockKey, Arc<V>> for ByCharge {
    fn weight(&self, _key: &BlockKey, block: &Arc<V>) -> u64 {
        // A zero weight would pin the entry: every block costs at least a byte.
        block.charge().max(1) as u64
    }
}

/// Counts the blocks an insert evicted.
#[derive(Clone, Debug, Default)]
pub(super) struct CountEvictions;

impl<K, V> Lifecycle<K, V> for CountEvictions {
    type RequestState = u64;

    fn on_evict(&self, evicted: &mut u64, _key: K, _val: V) {
        *evicted += 1;
    }
}

type Blocks<V> = Cache<BlockKey, Arc<V>, ByCharge, DefaultHashBuilder, CountEvictions>;

/// Bytes per shard the cache aims for: a shard must hold many blocks for its own eviction
/// order to stand for the whole cache's.
const MIN_SHARD_BYTES: usize = 1 << 20;
/// The most shards: enough that many cores rarely meet on one.
const MAX_SHARDS: usize = 64;
/// The typical block, for sizing the table of entries.
const TYPICAL_BLOCK: usize = 4 << 10;

/// The block cache.
#[derive(Debug)]
pub struct BlockCache<V> {
    /// `None` when the capacity is 0.
    cache: Option<Blocks<V>>,
    /// Bytes each shard may hold: a larger block is never cached.
    shard_capacity: usize,
}

impl<V: Charge> BlockCache<V> {
    /// A cache of at most `capacity` bytes (0 disables it).
    pub fn new(capacity: usize) -> Self {
        if capacity == 0 {
            return BlockCache {
                cache: None,
                shard_capacity: 0,
            };
        }
        let shards = (capacity / MIN_SHARD_BYTES)
            .clamp(1, MAX_SHARDS)
            .next_power_of_two()
            .min(MAX_SHARDS);
        let options = quick_cache::OptionsBuilder::new()
            .shards(shards)
            .estimated_items_capacity((capacity / TYPICAL_BLOCK).max(16))
            .weight_capacity(capacity as u64)
            .build();
        let cache = options.ok().map(|o| {
            Cache::with_options(o, ByCharge, DefaultHashBuilder::default(), CountEvictions)
        });
        let shard_capacity = cache.as_ref().map_or(0, |c| c.shard_capacity() as usize);
        BlockCache {
            cache,
            shard_capacity,
        }
    }

    /// The cached block.
    pub fn get(&self, key: BlockKey) -> Option<Arc<V>> {
        self.cache.as_ref()?.get(&key)
    }

    /// Caches a block; returns how many blocks were evicted to make room.
    pub fn insert(&self, key: BlockKey, block: Arc<V>) -> u64 {
        let Some(cache) = &self.cache else {
            return 0;
        };
        if block.charge() > self.shard_capacity {
            return 0;
        }
        // A block two readers missed at once is inserted twice: the second insert's
        // replacement is reported as an eviction, a count off by one that no lookup is spent
        // to avoid.
        let mut evicted = 0;
        cache.insert_with_lifecycle(key, block, &mut evicted);
        evicted
    }

    /// Bytes held.
    #[cfg(test)]
    pub fn used(&self) -> usize {
        self.cache.as_ref().map_or(0, |c| c.weight() as usize)
    }

    /// Drops every block of one SSTable (when it is deleted).
    pub fn forget_table(&self, table: u64) {
        if let Some(c) = &self.cache {
            c.retain(|(t, _), _| *t != table);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Charge for usize {
        fn charge(&self) -> usize {
            *self
        }
    }

    #[test]
    fn holds_its_bytes_counts_evictions_and_forgets_a_table() {
        let c = BlockCache::new(1000);
        assert_eq!(c.insert((1, 0), Arc::new(400)), 0);
        assert_eq!(c.get((1, 0)).as_deref(), Some(&400));
        let mut evicted = 0;
        for b in 1..20 {
            evicted += c.insert((1, b), Arc::new(400));
        }
        assert!(c.used() <= 1000, "over budget: {}", c.used());
        assert!(evicted >= 17, "evictions counted: {evicted}");
        c.insert((2, 0), Arc::new(10usize));
        c.forget_table(1);
        assert_eq!(c.used(), 10);
        assert!(c.get((2, 0)).is_some());
        assert_eq!(
            c.insert((3, 0), Arc::new(5000usize)),
            0,
            "larger than the cache"
        );
        assert!(c.get((3, 0)).is_none());
        let off = BlockCache::new(0);
        off.insert((1, 0), Arc::new(1usize));
        assert!(off.get((1, 0)).is_none());
    }

    #[test]
    fn blocks_read_again_outlast_a_scan() {
        let c = BlockCache::new(64 << 20);
        // Hot blocks, read twice: 8 MiB.
        for b in 0..128u32 {
            c.insert((7, b), Arc::new(64usize << 10));
            assert!(c.get((7, b)).is_some());
        }
        // A scan of blocks met once: four times the cache.
        for b in 0..4096u32 {
            c.insert((8, b), Arc::new(64usize << 10));
        }
        let used = c.used();
        assert!(used <= 64 << 20, "over budget: {used}");
        let kept = (0..128u32).filter(|b| c.get((7, *b)).is_some()).count();
        assert!(
            kept >= 100,
            "hot blocks kept through the scan: {kept} of 128"
        );
    }
}
