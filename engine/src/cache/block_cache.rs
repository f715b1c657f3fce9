//! A cache of blocks shared by every SSTable of a database, bounded in bytes, least recently
//! used first out: hot reads then neither decompress nor decode again. What a block is, and what
//! it costs, is its owner's business ([`Charge`]); this file only keeps and evicts.
//!
//! A large cache is cut into shards by block (LevelDB's `ShardedLRUCache`), each with its own
//! lock and its share of the bytes, so readers on different blocks do not wait for each other;
//! each shard evicts its own least recently used. A small cache is one shard, exactly LRU.

use std::sync::Arc;

use lru::LruCache;
use parking_lot::Mutex;

/// Identifies a block: the SSTable's process-unique id and the block's number.
pub type BlockKey = (u64, u32);

/// What a cached value costs against the capacity, in bytes.
pub trait Charge {
    /// Bytes charged.
    fn charge(&self) -> usize;
}

#[derive(Debug)]
struct Inner<V> {
    lru: LruCache<BlockKey, Arc<V>>,
    used: usize,
}

/// The block cache.
#[derive(Debug)]
pub struct BlockCache<V> {
    /// Bytes each shard may hold.
    capacity: usize,
    shards: Box<[Mutex<Inner<V>>]>,
}

/// The most shards, and the least bytes a shard is given (below that, fewer shards: a shard
/// must hold many blocks for its own LRU order to stand for the whole cache's).
const MAX_SHARDS: usize = 16;
const MIN_SHARD_BYTES: usize = 4 << 20;

impl<V: Charge> BlockCache<V> {
    /// A cache of at most `capacity` bytes (0 disables it).
    pub fn new(capacity: usize) -> Self {
        let n = (capacity / MIN_SHARD_BYTES).clamp(1, MAX_SHARDS);
        BlockCache {
            capacity: capacity / n,
            shards: (0..n)
                .map(|_| {
                    Mutex::new(Inner {
                        lru: LruCache::unbounded(),
                        used: 0,
                    })
                })
                .collect(),
        }
    }

    fn shard(&self, (table, block): BlockKey) -> &Mutex<Inner<V>> {
        // A multiplicative mix: blocks of one file, numbered in a row, spread over the shards.
        let h = (table ^ u64::from(block).wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .wrapping_mul(0xD6E8_FEB8_6659_FD93);
        &self.shards[(h >> 32) as usize % self.shards.len()]
    }

    /// The cached block, marking it recently used.
    pub fn get(&self, key: BlockKey) -> Option<Arc<V>> {
        if self.capacity == 0 {
            return None;
        }
        self.shard(key).lock().lru.get(&key).cloned()
    }

    /// Caches a block; returns how many blocks were evicted to make room.
    pub fn insert(&self, key: BlockKey, block: Arc<V>) -> u64 {
        if self.capacity == 0 || block.charge() > self.capacity {
            return 0;
        }
        let mut g = self.shard(key).lock();
        g.used += block.charge();
        if let Some(old) = g.lru.put(key, block) {
            g.used -= old.charge();
        }
        let mut evicted = 0;
        while g.used > self.capacity {
            match g.lru.pop_lru() {
                Some((_, b)) => {
                    g.used -= b.charge();
                    evicted += 1;
                }
                None => break,
            }
        }
        evicted
    }

    /// Bytes held.
    #[cfg(test)]
    pub fn used(&self) -> usize {
        self.shards.iter().map(|s| s.lock().used).sum()
    }

    /// Drops every block of one SSTable (when it is deleted).
    pub fn forget_table(&self, table: u64) {
        for shard in self.shards.iter() {
            let mut g = shard.lock();
            let keys: Vec<BlockKey> = g
                .lru
                .iter()
                .filter(|((t, _), _)| *t == table)
                .map(|(k, _)| *k)
                .collect();
            for k in keys {
                if let Some(b) = g.lru.pop(&k) {
                    g.used -= b.charge();
                }
            }
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
    fn evicts_least_recently_used_by_bytes() {
        let c = BlockCache::new(100);
        assert_eq!(c.insert((1, 0), Arc::new(40)), 0);
        assert_eq!(c.insert((1, 1), Arc::new(40)), 0);
        assert!(c.get((1, 0)).is_some());
        assert_eq!(c.insert((1, 2), Arc::new(40)), 1);
        assert!(c.get((1, 1)).is_none(), "the least recently used went");
        assert!(c.get((1, 0)).is_some() && c.get((1, 2)).is_some());
        assert_eq!(c.used(), 80);
        c.forget_table(1);
        assert_eq!(c.used(), 0);
        let off = BlockCache::new(0);
        off.insert((1, 0), Arc::new(1usize));
        assert!(off.get((1, 0)).is_none());
    }

    #[test]
    fn a_large_cache_is_sharded_and_holds_its_bytes_across_the_shards() {
        let c = BlockCache::new(64 << 20);
        assert_eq!(c.shards.len(), MAX_SHARDS);
        // Blocks of 1 MiB: far more than fit.
        for b in 0..1000u32 {
            c.insert((7, b), Arc::new(1usize << 20));
        }
        let used = c.used();
        assert!(used <= 64 << 20, "over budget: {used}");
        assert!(used >= 48 << 20, "shards left mostly empty: {used}");
        // Every shard got blocks: a file's consecutive blocks spread out.
        assert!(c.shards.iter().all(|s| s.lock().used > 0));
        c.forget_table(7);
        assert_eq!(c.used(), 0);
    }
}
