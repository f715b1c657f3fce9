//! A cache of blocks shared by every SSTable of a database, bounded in bytes, least recently
//! used first out: hot reads then neither decompress nor decode again. What a block is, and what
//! it costs, is its owner's business ([`Charge`]); this file only keeps and evicts.

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
    capacity: usize,
    inner: Mutex<Inner<V>>,
}

impl<V: Charge> BlockCache<V> {
    /// A cache of at most `capacity` bytes (0 disables it).
    pub fn new(capacity: usize) -> Self {
        BlockCache {
            capacity,
            inner: Mutex::new(Inner {
                lru: LruCache::unbounded(),
                used: 0,
            }),
        }
    }

    /// The cached block, marking it recently used.
    pub fn get(&self, key: BlockKey) -> Option<Arc<V>> {
        if self.capacity == 0 {
            return None;
        }
        self.inner.lock().lru.get(&key).cloned()
    }

    /// Caches a block; returns how many blocks were evicted to make room.
    pub fn insert(&self, key: BlockKey, block: Arc<V>) -> u64 {
        if self.capacity == 0 || block.charge() > self.capacity {
            return 0;
        }
        let mut g = self.inner.lock();
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
        self.inner.lock().used
    }

    /// Drops every block of one SSTable (when it is deleted).
    pub fn forget_table(&self, table: u64) {
        let mut g = self.inner.lock();
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
}
