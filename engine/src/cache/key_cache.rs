//! The key cache of the seeds: per column family, an LRU from (SSTable, row key) to where the
//! row lies in that SSTable, so a hit skips the index search and the presence check. Its
//! capacity is `KeysCachedFraction` × the row keys in the CF's live SSTables (0 disables it),
//! recomputed as SSTables come and go.

use std::num::NonZeroUsize;

use lru::LruCache;
use parking_lot::Mutex;
use smallvec::SmallVec;
use xxhash_rust::xxh3::xxh3_64;

use crate::model::cell::DeletionTime;

/// Where a row lies in one SSTable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowPosition {
    /// The first block holding the row.
    pub start_block: u32,
    /// The last block holding the row.
    pub end_block: u32,
    /// The row's deletion in that SSTable.
    pub deletion: Option<DeletionTime>,
    /// The item number of the row's header in its first block, when the search that found
    /// the row saw it: reading the row then needs no second search of that block.
    pub header: Option<u32>,
}

/// (SSTable id, row key), as the id's 8 bytes then the key: one buffer, so a lookup can borrow
/// a key built on the stack instead of allocating one.
type CacheKey = Box<[u8]>;

/// Cache key → position; `None` while the cache is disabled.
type Lru = Option<LruCache<CacheKey, RowPosition>>;

/// A lookup key on the stack (row keys up to 56 bytes need no allocation).
type LookupKey = SmallVec<[u8; 64]>;

fn lookup_key(table: u64, key: &[u8]) -> LookupKey {
    let mut k = LookupKey::with_capacity(8 + key.len());
    k.extend_from_slice(&table.to_be_bytes());
    k.extend_from_slice(key);
    k
}

fn table_of(k: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(k.get(..8)?.try_into().ok()?))
}

/// A column family's key cache.
#[derive(Debug)]
pub struct KeyCache {
    inner: Mutex<Lru>,
    doorkeeper: Mutex<Doorkeeper>,
}

impl Default for KeyCache {
    fn default() -> Self {
        KeyCache {
            inner: Mutex::new(None),
            doorkeeper: Mutex::new(Doorkeeper::default()),
        }
    }
}

/// Admission to a full cache (TinyLFU's doorkeeper): a key met for the first time since the
/// last reset is only marked; met again, it is admitted and evicts the least recent entry.
/// Random reads over far more rows than the cache holds then stop churning it (each of them
/// evicted a useful entry for one that was never read again: 9% of a read at 1M rows), while
/// keys read twice still come in.
#[derive(Debug, Default)]
struct Doorkeeper {
    bits: Vec<u64>,
    marked: usize,
}

impl Doorkeeper {
    /// Whether `hash` was marked since the last reset; marks it if not.
    fn seen(&mut self, hash: u64, capacity: usize) -> bool {
        // Eight bits per cached entry; reset once as many keys were marked as the cache holds
        // four times, so what is marked stays recent.
        let words = (capacity / 8).next_power_of_two().max(1);
        if self.bits.len() != words || self.marked >= capacity.saturating_mul(4) {
            self.bits.clear();
            self.bits.resize(words, 0);
            self.marked = 0;
        }
        let bit = (hash as usize) & (words * 64 - 1);
        let (w, m) = (bit / 64, 1u64 << (bit % 64));
        let was = self.bits[w] & m != 0;
        if !was {
            self.bits[w] |= m;
            self.marked += 1;
        }
        was
    }
}

impl KeyCache {
    /// Sets the capacity in entries (0 disables the cache), keeping the most recent entries.
    pub fn set_capacity(&self, entries: usize) {
        let mut g = self.inner.lock();
        match NonZeroUsize::new(entries) {
            None => *g = None,
            Some(n) => match g.as_mut() {
                Some(lru) => lru.resize(n),
                None => *g = Some(LruCache::new(n)),
            },
        }
    }

    /// The capacity in entries.
    pub fn capacity(&self) -> usize {
        self.inner.lock().as_ref().map_or(0, |l| l.cap().get())
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.inner.lock().as_ref().map_or(0, LruCache::len)
    }

    /// The cached position of `key` in SSTable `table`.
    pub fn get(&self, table: u64, key: &[u8]) -> Option<RowPosition> {
        let k = lookup_key(table, key);
        let mut g = self.inner.lock();
        g.as_mut()?.get(&k[..]).copied()
    }

    /// Remembers where `key` lies in SSTable `table`; returns whether another entry was
    /// evicted to make room.
    pub fn insert(&self, table: u64, key: &[u8], pos: RowPosition) -> bool {
        let mut g = self.inner.lock();
        let Some(lru) = g.as_mut() else {
            return false;
        };
        let k = lookup_key(table, key);
        let full = lru.len() >= lru.cap().get();
        if full && !lru.contains(&k[..]) {
            let hash = xxh3_64(&k);
            if !self.doorkeeper.lock().seen(hash, lru.cap().get()) {
                return false;
            }
        }
        // `push` hands back what it displaced: the same key (replaced) or the least recent.
        match lru.push(Box::from(&k[..]), pos) {
            Some((old, _)) => *old != *k,
            None => false,
        }
    }

    /// Forgets every row of one SSTable (when it leaves the live set).
    pub fn forget_table(&self, table: u64) {
        if let Some(lru) = self.inner.lock().as_mut() {
            let keys: Vec<CacheKey> = lru
                .iter()
                .filter(|(k, _)| table_of(k) == Some(table))
                .map(|(k, _)| k.clone())
                .collect();
            for k in keys {
                lru.pop(&k);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_zero_disables_and_resizing_keeps_recent_entries() {
        let c = KeyCache::default();
        let pos = RowPosition {
            start_block: 1,
            end_block: 2,
            deletion: None,
            header: None,
        };
        assert!(!c.insert(1, b"k", pos));
        assert_eq!(c.get(1, b"k"), None);
        c.set_capacity(2);
        assert!(!c.insert(1, b"a", pos));
        assert!(!c.insert(1, b"b", pos));
        assert!(!c.insert(1, b"b", pos), "replacing is not evicting");
        assert!(
            !c.insert(2, b"c", pos),
            "a full cache turns away a key met once"
        );
        assert_eq!(c.get(1, b"a"), Some(pos));
        assert!(c.insert(2, b"c", pos), "met again, it comes in and evicts");
        assert_eq!(c.len(), 2);
        assert_eq!(c.get(1, b"b"), None, "the least recent went");
        assert_eq!(c.get(2, b"c"), Some(pos));
        c.forget_table(2);
        assert_eq!(c.get(2, b"c"), None);
        c.set_capacity(0);
        assert_eq!(c.capacity(), 0);
    }
}
