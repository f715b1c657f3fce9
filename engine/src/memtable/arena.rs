//! The memory of one memtable: a bump allocator over large zeroed chunks. Allocations are never
//! freed one by one; the whole arena goes when the memtable does, as a handful of large frees
//! (instead of one free per cell racing the writers for the allocator's locks). What it holds is
//! counted exactly, so the memtable's size is the arena's size, not a guess.
//!
//! This file hands out aligned, zeroed, stable pieces of memory; what is stored in them is the
//! skiplist's business.

use std::sync::atomic::{AtomicUsize, Ordering};

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
    #[cfg(target_os = "linux")]
    Mapped(#[allow(dead_code)] memmap2::MmapMut),
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
}

impl Arena {
    /// An empty arena.
    pub fn new() -> Arena {
        Arena::default()
    }

    /// A zeroed piece of `size` bytes (rounded up to [`ALIGN`]), aligned to [`ALIGN`], valid
    /// until the arena is dropped and never handed out again.
    pub fn alloc(&self, size: usize) -> *mut u8 {
        let size = size.div_ceil(ALIGN) * ALIGN;
        let mut c = self.chunks.lock();
        c.used += size;
        if c.end - c.next < size {
            if size > CHUNK / 4 {
                // A large value: its own chunk, so the current one is not abandoned.
                return self.new_chunk(&mut c, size, false);
            }
            let chunk = if c.owned.is_empty() {
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
        let (chunk, start) = Self::zeroed(size);
        if current {
            c.next = start as usize;
            c.end = start as usize + size;
        }
        c.owned.push(chunk);
        self.reserved.fetch_add(size, Ordering::Relaxed);
        start
    }

    /// `size` zeroed bytes, aligned to [`ALIGN`]: a huge-page mapping for a large chunk.
    fn zeroed(size: usize) -> (Chunk, *mut u8) {
        #[cfg(target_os = "linux")]
        if size == LARGE_CHUNK {
            if let Ok(mut m) = memmap2::MmapMut::map_anon(size) {
                // Only a hint: without huge pages the mapping is still zeroed memory.
                let _ = m.advise(memmap2::Advice::HugePage);
                let start = m.as_mut_ptr();
                return (Chunk::Mapped(m), start);
            }
        }
        let mut heap = vec![0u64; size / ALIGN].into_boxed_slice();
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
    fn pieces_are_aligned_zeroed_disjoint_and_counted() {
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
}
