//! The memory of one memtable: a bump allocator over large chunks. Allocations are never freed
//! one by one; the whole arena goes when the memtable does, as a handful of large frees
//! (instead of one free per cell racing the writers for the allocator's locks). What it holds is
//! counted exactly, so the memtable's size is the arena's size, not a guess.
//!
//! A memtable that is flushed gives its large chunks to the database's [`ChunkPool`], and the
//! next memtable fills those before it asks the system for more: memory the system hands out is
//! zeroed page by page on first touch (a fault and 2 MiB of `clear_page` per huge page), which
//! was a sixth of a write.
//!
//! This file hands out aligned, stable pieces of memory whose bytes are unspecified (a recycled
//! chunk holds what an earlier memtable wrote); what is stored in them, and initialising it, is
//! the skiplist's business.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

/// Bytes of an ordinary chunk. Larger allocations get a chunk of their own.
const CHUNK: usize = 1 << 20;
/// Bytes of the chunks after the first: one transparent huge page where the system gives them
/// (a fault per 2 MiB instead of one per 4 KiB, which was a twentieth of a wide-row write), and
/// returned to the system as soon as the memtable goes.
const LARGE_CHUNK: usize = 2 << 20;

/// Memory of one chunk.
#[derive(Debug)]
enum Chunk {
    Heap(#[allow(dead_code)] Box<[u64]>),
    /// A chunk of [`LARGE_CHUNK`] bytes: the kind a [`ChunkPool`] keeps.
    Large(#[allow(dead_code)] LargeChunk),
}

/// [`LARGE_CHUNK`] bytes: a huge-page mapping where the system gives one.
#[derive(Debug)]
enum LargeChunk {
    Heap(Box<[u64]>),
    #[cfg(target_os = "linux")]
    Mapped(memmap2::MmapMut),
}

impl LargeChunk {
    fn new() -> LargeChunk {
        #[cfg(target_os = "linux")]
        if let Ok(m) = memmap2::MmapMut::map_anon(LARGE_CHUNK) {
            // Only a hint: without huge pages the mapping is still memory.
            let _ = m.advise(memmap2::Advice::HugePage);
            return LargeChunk::Mapped(m);
        }
        LargeChunk::Heap(vec![0u64; LARGE_CHUNK / ALIGN].into_boxed_slice())
    }

    fn start(&mut self) -> *mut u8 {
        match self {
            LargeChunk::Heap(b) => b.as_mut_ptr().cast::<u8>(),
            #[cfg(target_os = "linux")]
            LargeChunk::Mapped(m) => m.as_mut_ptr(),
        }
    }
}

/// Large chunks of flushed memtables, kept for the next memtables of a database (up to a
/// bound: beyond it they go back to the system). Moving a chunk moves only its handle; its
/// memory stays where it is.
#[derive(Debug)]
pub struct ChunkPool {
    free: Mutex<Vec<LargeChunk>>,
    max_chunks: usize,
}

impl ChunkPool {
    /// A pool keeping at most `max_bytes` of chunks.
    pub fn new(max_bytes: usize) -> ChunkPool {
        ChunkPool {
            free: Mutex::new(Vec::new()),
            max_chunks: max_bytes / LARGE_CHUNK,
        }
    }

    fn has_free(&self) -> bool {
        !self.free.lock().is_empty()
    }

    fn take(&self) -> Option<LargeChunk> {
        self.free.lock().pop()
    }

    fn give(&self, chunks: impl Iterator<Item = LargeChunk>) {
        let mut free = self.free.lock();
        for c in chunks {
            if free.len() >= self.max_chunks {
                break;
            }
            free.push(c);
        }
    }

    /// Bytes the pool holds.
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.free.lock().len() * LARGE_CHUNK
    }
}
/// Alignment of every allocation (the skiplist's links are 8-byte atomics).
pub const ALIGN: usize = 8;

/// The chunk being filled, and the chunks owned.
#[derive(Debug, Default)]
struct Chunks {
    /// Owned memory; a chunk's buffer never moves, so pointers into it stay valid.
    owned: Vec<Chunk>,
    /// Next free byte of the current chunk, and the end of it (addresses).
    next: usize,
    end: usize,
    /// Bytes handed out (counted under the lock: no atomic per allocation).
    used: usize,
}

/// A bump allocator.
#[derive(Debug, Default)]
pub struct Arena {
    chunks: Mutex<Chunks>,
    /// Bytes of all chunks (what the arena costs the process).
    reserved: AtomicUsize,
    /// Where large chunks come from first, and go when the arena does.
    pool: Option<Arc<ChunkPool>>,
}

impl Drop for Arena {
    fn drop(&mut self) {
        if let Some(pool) = &self.pool {
            let owned = std::mem::take(&mut self.chunks.get_mut().owned);
            pool.give(owned.into_iter().filter_map(|c| match c {
                Chunk::Large(l) => Some(l),
                Chunk::Heap(_) => None,
            }));
        }
    }
}

impl Arena {
    /// An empty arena.
    #[cfg(test)]
    pub fn new() -> Arena {
        Arena::default()
    }

    /// An empty arena that takes large chunks from `pool` first and gives them back to it.
    pub fn with_pool(pool: Option<Arc<ChunkPool>>) -> Arena {
        Arena {
            chunks: Mutex::default(),
            reserved: AtomicUsize::new(0),
            pool,
        }
    }

    /// A piece of `size` bytes (rounded up to [`ALIGN`]), aligned to [`ALIGN`], valid until
    /// the arena is dropped and never handed out again. Its bytes are unspecified: the caller
    /// writes every byte it will read.
    pub fn alloc(&self, size: usize) -> *mut u8 {
        let size = size.div_ceil(ALIGN) * ALIGN;
        let mut c = self.chunks.lock();
        c.used += size;
        if c.end - c.next < size {
            if size > CHUNK / 4 {
                // A large value: its own chunk, so the current one is not abandoned.
                return self.new_chunk(&mut c, size, false);
            }
            // A memtable's first chunk is a small one (a column family written a little costs
            // little), unless the pool has a large one to spare.
            let chunk = if c.owned.is_empty() && !self.pool.as_ref().is_some_and(|p| p.has_free()) {
                CHUNK
            } else {
                LARGE_CHUNK
            };
            let start = self.new_chunk(&mut c, chunk, true);
            c.next = start as usize + size;
            return start;
        }
        let at = c.next;
        c.next += size;
        at as *mut u8
    }

    fn new_chunk(&self, c: &mut Chunks, size: usize, current: bool) -> *mut u8 {
        let (chunk, start) = self.chunk(size);
        if current {
            c.next = start as usize;
            c.end = start as usize + size;
        }
        c.owned.push(chunk);
        self.reserved.fetch_add(size, Ordering::Relaxed);
        start
    }

    /// `size` bytes, aligned to [`ALIGN`]: a large chunk from the pool if it has one, else
    /// from the system.
    fn chunk(&self, size: usize) -> (Chunk, *mut u8) {
        if size == LARGE_CHUNK {
            let mut large = self
                .pool
                .as_ref()
                .and_then(|p| p.take())
                .unwrap_or_else(LargeChunk::new);
            let start = large.start();
            return (Chunk::Large(large), start);
        }
        let mut heap = vec![0u64; size.div_ceil(ALIGN)].into_boxed_slice();
        let start = heap.as_mut_ptr().cast::<u8>();
        (Chunk::Heap(heap), start)
    }

    /// Bytes handed out so far.
    #[cfg(test)]
    pub fn used(&self) -> usize {
        self.chunks.lock().used
    }

    /// Bytes the arena holds from the allocator (at least [`Arena::used`]).
    pub fn reserved(&self) -> usize {
        self.reserved.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_aligned_disjoint_and_counted() {
        let a = Arena::new();
        let mut seen: Vec<(usize, usize)> = Vec::new();
        for size in [
            1,
            7,
            8,
            100,
            CHUNK / 4 + 1,
            3,
            CHUNK - 8,
            64,
            LARGE_CHUNK - 8,
            40,
        ] {
            let p = a.alloc(size) as usize;
            assert_eq!(p % ALIGN, 0);
            let len = size.div_ceil(ALIGN) * ALIGN;
            for &(s, l) in &seen {
                assert!(p + len <= s || s + l <= p, "overlap");
            }
            seen.push((p, len));
        }
        let used: usize = seen.iter().map(|(_, l)| l).sum();
        assert_eq!(a.used(), used);
        assert!(a.reserved() >= used);
    }

    #[test]
    fn a_dropped_arena_gives_its_large_chunks_to_the_pool_up_to_its_bound() {
        let pool = Arc::new(ChunkPool::new(3 * LARGE_CHUNK));
        let a = Arena::with_pool(Some(pool.clone()));
        // A small first chunk, then four large ones.
        for _ in 0..(CHUNK + 4 * LARGE_CHUNK) / (CHUNK / 8) {
            a.alloc(CHUNK / 8 - 64);
        }
        assert_eq!(a.reserved(), CHUNK + 4 * LARGE_CHUNK);
        drop(a);
        assert_eq!(
            pool.bytes(),
            3 * LARGE_CHUNK,
            "kept up to the bound, the rest freed"
        );

        // The next arena starts on a pooled chunk and fills the pool's chunks before any new.
        let b = Arena::with_pool(Some(pool.clone()));
        b.alloc(64);
        assert_eq!(b.reserved(), LARGE_CHUNK);
        assert_eq!(pool.bytes(), 2 * LARGE_CHUNK);
        drop(b);
        assert_eq!(pool.bytes(), 3 * LARGE_CHUNK);

        // Without a pool nothing is kept.
        let c = Arena::with_pool(None);
        c.alloc(CHUNK);
        drop(c);
        assert_eq!(pool.bytes(), 3 * LARGE_CHUNK);
    }
}
