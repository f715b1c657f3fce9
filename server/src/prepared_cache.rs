//! The statements prepared on this server, shared by every connection, bounded by the bytes
//! they hold (each entry's `footprint`, an upper bound its test checks against an allocator),
//! the least recently used forgotten first: a driver prepares a forgotten one again when told
//! UNPREPARED. It keeps entries; what they mean is `dispatch.rs`'s.

use std::sync::Arc;

use parking_lot::Mutex;
use supercolumn_cql::Prepared;

/// The bytes all prepared statements may hold together.
pub const MAX_PREPARED_BYTES: usize = 64 << 20;

/// A statement prepared on this server.
#[derive(Clone)]
pub enum Entry {
    /// Resolved by the CQL layer.
    Cql(Arc<Prepared>),
    /// Answered by the server itself (a system table, DESCRIBE): kept as text, run as a query.
    Text(Arc<str>),
}

impl Entry {
    /// An upper bound of the bytes it holds.
    fn footprint(&self) -> usize {
        const OVERHEAD: usize = 128; // the cache's node, the id, the Arc's counts
        OVERHEAD
            + match self {
                Entry::Cql(p) => p.footprint(),
                Entry::Text(t) => t.len(),
            }
    }
}

/// Prepared statements by id, and the bytes they hold.
pub struct Cache {
    entries: Mutex<(lru::LruCache<[u8; 16], Entry>, usize)>,
    limit: usize,
}

impl Cache {
    /// A cache holding at most `limit` bytes.
    pub fn new(limit: usize) -> Cache {
        Cache {
            entries: Mutex::new((lru::LruCache::unbounded(), 0)),
            limit,
        }
    }

    /// The entry of `id`, if kept.
    pub fn get(&self, id: &[u8; 16]) -> Option<Entry> {
        self.entries.lock().0.get(id).cloned()
    }

    /// Keeps `entry` under `id`, forgetting the least recently used while over the bound. An
    /// entry larger than the whole bound is refused (`false`).
    pub fn put(&self, id: [u8; 16], entry: Entry) -> bool {
        let size = entry.footprint();
        if size > self.limit {
            return false;
        }
        let mut e = self.entries.lock();
        if let Some(old) = e.0.put(id, entry) {
            e.1 -= old.footprint();
        }
        e.1 += size;
        while e.1 > self.limit {
            match e.0.pop_lru() {
                Some((_, gone)) => e.1 -= gone.footprint(),
                None => break,
            }
        }
        true
    }

    /// Forgets `id`.
    pub fn pop(&self, id: &[u8; 16]) {
        let mut e = self.entries.lock();
        if let Some(gone) = e.0.pop(id) {
            e.1 -= gone.footprint();
        }
    }

    /// The bytes held, as the bound counts them.
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.entries.lock().1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bytes_held_stay_under_the_bound() {
        let cache = Cache::new(10_000);
        let text = |n: usize| Entry::Text("x".repeat(n).into());
        for i in 0..100u8 {
            assert!(cache.put([i; 16], text(1000)));
            assert!(cache.bytes() <= 10_000);
        }
        assert!(cache.get(&[99; 16]).is_some());
        assert!(cache.get(&[0; 16]).is_none(), "the oldest forgotten");
        assert!(!cache.put([200; 16], text(20_000)), "larger than the bound");
        cache.pop(&[99; 16]);
        assert!(cache.get(&[99; 16]).is_none());
        let left = cache.bytes();
        cache.put([98; 16], text(10)); // replaces, and counts the new size only
        assert!(cache.bytes() < left);
    }
}
