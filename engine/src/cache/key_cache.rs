//! The key cache of the seeds: per column family, a cache from (SSTable, row key) to where the
//! row lies in that SSTable, so a hit skips the index search and the presence check. Its
//! capacity is `KeysCachedFraction` × the row keys in the CF's live SSTables (0 disables it),
//! recomputed as SSTables come and go.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use parking_lot::Mutex;
use quick_cache::sync::Cache;
use quick_cache::{DefaultHashBuilder, UnitWeighter};
use smallvec::SmallVec;
use xxhash_rust::xxh3::xxh3_64;

use super::block_cache::CountEvictions;

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

type Positions = Cache<CacheKey, RowPosition, UnitWeighter, DefaultHashBuilder, CountEvictions>;

/// The cache and what guards its door.
#[derive(Debug)]
struct Inner {
    positions: Positions,
    door: Doorkeeper,
    /// Set by the first insert that evicted: from then on a key must be met twice to come in.
    full: AtomicBool,
}

/// Admission to a full cache (TinyLFU's doorkeeper): a key met for the first time since the
/// last reset is only marked; met again, it is admitted. Random reads over far more rows than
/// the cache holds then stop churning it (each of them evicted a useful entry, and paid an
/// insert, for a key never read again). Bits are set with atomic ORs: no lock.
#[derive(Debug)]
struct Doorkeeper {
    bits: Box<[AtomicU64]>,
    /// Keys marked since the last reset, counted one in eight (so threads marking keys
    /// rarely write this shared word).
    marked_eighths: AtomicUsize,
    /// Reset once this many eighths were counted: four times the cache's entries, so what is
    /// marked stays recent.
    reset_at: usize,
}

impl Doorkeeper {
    fn new(entries: usize) -> Self {
        // Eight bits per cached entry.
        let words = (entries / 8).next_power_of_two().max(1);
        Doorkeeper {
            bits: (0..words).map(|_| AtomicU64::new(0)).collect(),
            marked_eighths: AtomicUsize::new(0),
            reset_at: (entries / 2).max(1),
        }
    }

    /// Whether `hash` was marked since the last reset; marks it if not.
    fn seen(&self, hash: u64) -> bool {
        if self.marked_eighths.load(Ordering::Relaxed) >= self.reset_at {
            // Two threads may both reset: the second clears a few fresh marks, which only
            // delays those keys' admission.
            self.marked_eighths.store(0, Ordering::Relaxed);
            for w in self.bits.iter() {
                w.store(0, Ordering::Relaxed);
            }
        }
        let bit = (hash as usize) & (self.bits.len() * 64 - 1);
        let m = 1u64 << (bit % 64);
        let word = &self.bits[bit / 64];
        // Look before writing: a key met again writes nothing other threads read.
        let was =
            word.load(Ordering::Relaxed) & m != 0 || word.fetch_or(m, Ordering::Relaxed) & m != 0;
        if !was && hash >> 61 == 0 {
            self.marked_eighths.fetch_add(1, Ordering::Relaxed);
        }
        was
    }
}

/// A lookup key on the stack (row keys up to 56 bytes need no allocation).
type LookupKey = SmallVec<[u8; 64]>;

fn lookup_key(table: u64, key: &[u8]) -> LookupKey {
    let mut k = LookupKey::with_capacity(8 + key.len());
    k.extend_from_slice(&table.to_be_bytes());
    k.extend_from_slice(key);
    k
}

/// Entries per shard the cache aims for (fewer shards for a small cache, so each shard's
/// eviction order stands for the whole cache's).
const ENTRIES_PER_SHARD: usize = 1024;
const MAX_SHARDS: usize = 64;

/// The shard count for a capacity.
fn shards_for(entries: usize) -> usize {
    (entries / ENTRIES_PER_SHARD)
        .clamp(1, MAX_SHARDS)
        .next_power_of_two()
        .min(MAX_SHARDS)
}

/// A column family's key cache: `quick_cache`'s concurrent S3-FIFO cache, whose hits take no
/// exclusive lock (a mutex-guarded LRU here was taken, and its list relinked, by every read of
/// every thread), behind a doorkeeper once full.
#[derive(Debug, Default)]
pub struct KeyCache {
    /// `None` while the capacity is 0. Replaced whole when a new capacity wants another number
    /// of shards (the entries go; rare: SSTables came or went by a large factor).
    inner: ArcSwapOption<Inner>,
    /// The capacity asked for (the cache rounds it up to a multiple of its shards).
    capacity: AtomicUsize,
    /// Serializes capacity changes.
    resizing: Mutex<()>,
}

impl KeyCache {
    /// Sets the capacity in entries (0 disables the cache).
    pub fn set_capacity(&self, entries: usize) {
        let _one = self.resizing.lock();
        self.capacity.store(entries, Ordering::Relaxed);
        if entries == 0 {
            self.inner.store(None);
            return;
        }
        if let Some(c) = self.inner.load().as_ref() {
            if c.positions.num_shards() == shards_for(entries) {
                c.positions.set_capacity(entries as u64);
                return;
            }
        }
        let options = quick_cache::OptionsBuilder::new()
            .shards(shards_for(entries))
            .estimated_items_capacity(entries)
            .weight_capacity(entries as u64)
            .build();
        let inner = options.ok().map(|o| {
            Arc::new(Inner {
                positions: Cache::with_options(
                    o,
                    UnitWeighter,
                    DefaultHashBuilder::default(),
                    CountEvictions,
                ),
                door: Doorkeeper::new(entries),
                full: AtomicBool::new(false),
            })
        });
        self.inner.store(inner);
    }

    /// The capacity in entries.
    pub fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Relaxed)
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.inner.load().as_ref().map_or(0, |c| c.positions.len())
    }

    /// The cached position of `key` in SSTable `table`.
    pub fn get(&self, table: u64, key: &[u8]) -> Option<RowPosition> {
        let k = lookup_key(table, key);
        self.inner.load().as_ref()?.positions.get(&k[..])
    }

    /// Remembers where `key` lies in SSTable `table`; returns whether another entry was
    /// evicted to make room.
    pub fn insert(&self, table: u64, key: &[u8], pos: RowPosition) -> bool {
        let guard = self.inner.load();
        let Some(c) = guard.as_ref() else {
            return false;
        };
        let k = lookup_key(table, key);
        if c.full.load(Ordering::Relaxed) && !c.door.seen(xxh3_64(&k)) {
            return false;
        }
        // A key two readers missed at once is inserted twice: the second insert's replacement
        // is reported as an eviction, a count off by one that no lookup is spent to avoid.
        let mut evicted = 0;
        c.positions
            .insert_with_lifecycle(Box::from(&k[..]), pos, &mut evicted);
        if evicted > 0 && !c.full.load(Ordering::Relaxed) {
            c.full.store(true, Ordering::Relaxed);
        }
        evicted > 0
    }

    /// Forgets every row of one SSTable (when it leaves the live set).
    pub fn forget_table(&self, table: u64) {
        if let Some(c) = self.inner.load().as_ref() {
            let id = table.to_be_bytes();
            c.positions.retain(|k, _| !k.starts_with(&id));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(block: u32) -> RowPosition {
        RowPosition {
            start_block: block,
            end_block: block,
            deletion: None,
            header: None,
        }
    }

    #[test]
    fn capacity_zero_disables_it_and_a_full_cache_evicts() {
        let c = KeyCache::default();
        assert!(!c.insert(1, b"k", pos(1)));
        assert_eq!(c.get(1, b"k"), None);
        c.set_capacity(100);
        assert!(!c.insert(1, b"a", pos(1)));
        assert_eq!(c.get(1, b"a"), Some(pos(1)));
        c.insert(1, b"a", pos(2));
        assert_eq!(c.get(1, b"a"), Some(pos(2)));
        // Once full, a key comes in (evicting another) only when met a second time.
        // (The doorkeeper remembers about four times the cache's keys.)
        let once = (0..300u32)
            .filter(|i| c.insert(2, &i.to_be_bytes(), pos(*i)))
            .count();
        assert!(once <= 100, "keys met once taken in: {once}");
        let twice = (0..300u32)
            .filter(|i| c.insert(2, &i.to_be_bytes(), pos(*i)))
            .count();
        assert!(twice >= 150, "evictions counted: {twice}");
        assert!(c.len() <= 100);
        c.forget_table(2);
        assert!((0..300u32).all(|i| c.get(2, &i.to_be_bytes()).is_none()));
        c.set_capacity(100_000);
        assert_eq!(c.capacity(), 100_000);
        c.set_capacity(0);
        assert_eq!(c.capacity(), 0);
        assert_eq!(c.get(1, b"a"), None);
    }

    #[test]
    fn keys_read_again_outlast_random_keys_read_once() {
        let c = KeyCache::default();
        c.set_capacity(10_000);
        for i in 0..2000u32 {
            c.insert(1, &i.to_be_bytes(), pos(i));
            assert!(c.get(1, &i.to_be_bytes()).is_some());
        }
        for i in 0..100_000u32 {
            c.insert(2, &i.to_be_bytes(), pos(i));
        }
        let kept = (0..2000u32)
            .filter(|i| c.get(1, &i.to_be_bytes()).is_some())
            .count();
        assert!(kept >= 1500, "keys read again kept: {kept} of 2000");
    }
}
