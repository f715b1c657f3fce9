//! The ordered index of a memtable: an insert-only skiplist whose nodes live in the memtable's
//! arena (RocksDB's `InlineSkipList`, LevelDB's `SkipList`), one node per version of a cell,
//! ordered by (row sort key, entry key, version descending).
//!
//! A node is one piece of arena memory: a 40-byte header (the row key's first 8 bytes as a
//! big-endian integer, where the row key is, the lengths, the version, the height), its links,
//! then the row key (unless another node of the row already holds it), the entry key and the
//! value. Comparing against a node of another row almost always ends at the 8-byte head, which
//! sits in the node's first cache line next to the links a search follows; the nodes of one row
//! share one copy of its key, so comparing against a node of the same row ends at a pointer
//! comparison instead of a `memcmp` (and a wide row does not repeat its key per cell).
//!
//! Writers insert concurrently: a node is linked bottom-up, each level with a compare-and-swap
//! from its predecessor, after its contents are written, so a reader that reaches it (through
//! acquire loads) sees it whole. Nodes are never removed; they go with the arena. Keys are
//! unique (the memtable gives each version of a row a fresh version number), so two writers
//! never race to insert the same key.
//!
//! The node layout is `node.rs`'s; this file links nodes and searches them.

#![expect(
    unsafe_code,
    reason = "nodes in one arena, linked with atomics: no allocation and no epoch per insert; \
              the crossbeam skiplist it replaces spent a quarter of a fill searching"
)]

use std::cell::Cell;
use std::cmp::Ordering;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering as Mem};

use super::arena::Arena;

mod node;

pub use node::{head, EntryPos, NewNode, Node, RowBytes, SearchKey};
use node::{Header, HEADER, LINK};

/// Levels a node may have; with a branching factor of 4 this serves far more nodes than a
/// memtable holds.
pub const MAX_HEIGHT: usize = 12;

/// Where a key goes: at each level, the last node before it and the first node after it.
#[derive(Clone, Copy, Debug)]
pub struct Splice {
    prev: [usize; MAX_HEIGHT],
    next: [usize; MAX_HEIGHT],
}

impl Splice {
    /// The first node at or after the key the splice was found for.
    pub fn found<'a>(&self) -> Option<Node<'a>> {
        Node::at(self.next[0])
    }
}

/// The skiplist. Its nodes live in an arena the caller keeps alive as long as the list.
///
/// Under the RandomPartitioner row keys begin with a uniformly random token, so the list is
/// cut into buckets by the leading bits of a key's head, and each bucket in use has a
/// sentinel: a full-height node linked in the list ahead of the bucket's first key. A search
/// starts at its bucket's sentinel instead of the list's head, so it skips the levels that
/// separate buckets and walks only the few nodes of its own bucket (a memtable of 300,000 rows
/// in 65,536 buckets: about 5 rows each; at 16,384 buckets, 18 rows each, the walk was a
/// quarter of a random-order fill). Sentinels hold the empty row key, which sorts before
/// every row of their bucket (row keys are never empty); callers never see them. Keys that do
/// not spread (the order-preserving partitioner's) share a few buckets and search as one list.
#[derive(Debug)]
pub struct SkipList {
    head: usize,
    /// The tallest node's height (levels above it are empty).
    height: AtomicUsize,
    /// Leading bits of a head that pick its bucket (0: one bucket, searched from `head`).
    bits: u32,
    /// Per bucket: its sentinel's address, `CLAIMED` while one is being linked, or 0.
    buckets: Box<[AtomicUsize]>,
}

/// A bucket whose sentinel a writer is linking.
const CLAIMED: usize = 1;
/// The most buckets a list has: 65,536 sentinels are 8.9 MiB of the arena at most (a bucket
/// gets its sentinel when its first row comes), and the bucket table 512 KiB.
const MAX_BUCKET_BITS: u32 = 16;
/// Rows per bucket a list is sized for.
const ROWS_PER_BUCKET: usize = 2;

thread_local! {
    static HEIGHT_RNG: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_usize(&h as *const _ as usize);
    h.finish() | 1
}

/// A height with P(h) = (3/4)(1/4)^(h-1): a branching factor of four, as LevelDB's.
fn random_height() -> usize {
    HEIGHT_RNG.with(|c| {
        let mut x = c.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.set(x);
        let mut h = 1;
        while h < MAX_HEIGHT && (x >> (2 * h)) & 3 == 0 {
            h += 1;
        }
        h
    })
}

impl SkipList {
    /// An empty list whose head node lives in `arena`, with buckets for about `rows` rows.
    pub fn new(arena: &Arena, rows: usize) -> SkipList {
        let head = Self::alloc(arena, MAX_HEIGHT, &Self::EMPTY).0;
        let bits = (rows / ROWS_PER_BUCKET)
            .checked_ilog2()
            .unwrap_or(0)
            .min(MAX_BUCKET_BITS);
        SkipList {
            head,
            height: AtomicUsize::new(1),
            bits,
            buckets: (0..1usize << bits).map(|_| AtomicUsize::new(0)).collect(),
        }
    }

    const EMPTY: NewNode<'static> = NewNode {
        row: RowBytes::Copy(&[]),
        entry: &[],
        version: 0,
        value_len: 0,
    };

    fn bucket(&self, head: u64) -> usize {
        match self.bits {
            0 => 0,
            bits => (head >> (64 - bits)) as usize,
        }
    }

    /// The key of bucket `b`'s sentinel: before every row whose head is in the bucket.
    fn sentinel_key(&self, b: usize) -> SearchKey<'static> {
        SearchKey {
            head: if self.bits == 0 {
                0
            } else {
                (b as u64) << (64 - self.bits)
            },
            row: &[],
            entry: EntryPos::At(&[], u32::MAX),
        }
    }

    /// Where a search for a key in bucket `b` may start: the sentinel of `b` (unless not
    /// `include_b`) or of the nearest bucket before it that has one, else the head. Every such
    /// node sorts before the key, and is full height.
    fn start<'a>(&self, arena: &'a Arena, b: usize, include_b: bool) -> Node<'a> {
        let end = if include_b { b + 1 } else { b };
        self.buckets[..end.min(self.buckets.len())]
            .iter()
            .rev()
            .map(|s| s.load(Mem::Acquire))
            .find(|&a| a > CLAIMED)
            .and_then(Node::at)
            .unwrap_or_else(|| self.head(arena))
    }

    /// Where a writer's search for a key with `head` starts: its bucket's sentinel, linked
    /// first if the bucket has none (unless another writer is linking it just now).
    fn writer_start<'a>(&self, arena: &'a Arena, head: u64) -> Node<'a> {
        if self.bits == 0 {
            return self.head(arena);
        }
        let b = self.bucket(head);
        let slot = &self.buckets[b];
        if slot.load(Mem::Acquire) != 0
            || slot
                .compare_exchange(0, CLAIMED, Mem::Acquire, Mem::Relaxed)
                .is_err()
        {
            return self.start(arena, b, true);
        }
        let key = self.sentinel_key(b);
        let mut splice = self.find_from(self.start(arena, b, false), &key);
        let (addr, _) = Self::alloc(arena, MAX_HEIGHT, &Self::EMPTY);
        // SAFETY: the node was just allocated and is not linked yet, so no one else reads its
        // header; the head and the flag are set before it is published.
        unsafe {
            let h = &mut *(addr as *mut Header);
            h.head = key.head;
            h.version = u32::MAX;
            h.sentinel = 1;
        }
        let node = Node::at(addr).unwrap_or_else(|| self.head(arena));
        self.link(node, MAX_HEIGHT, &key, &mut splice);
        slot.store(addr, Mem::Release);
        node
    }

    fn head<'a>(&self, _arena: &'a Arena) -> Node<'a> {
        Node {
            addr: self.head,
            _arena: PhantomData,
        }
    }

    /// Allocates a node of `height` in `arena` holding the keys, with null links, and returns
    /// its address and where its value goes, for the caller to fill (every byte) before
    /// linking it.
    fn alloc(arena: &Arena, height: usize, key: &NewNode<'_>) -> (usize, *mut u8) {
        let NewNode {
            row,
            entry,
            version,
            value_len,
        } = *key;
        let row_bytes = row.bytes();
        let own = match row {
            RowBytes::Copy(b) => b.len(),
            RowBytes::Of(_) => 0,
        };
        let keys_at = HEADER + height * LINK;
        let size = keys_at + own + entry.len() + value_len;
        let p = arena.alloc(size);
        let row_at = match row {
            RowBytes::Copy(_) => p as usize + keys_at,
            RowBytes::Of(n) => n.header().row_at as usize,
        };
        let header = Header {
            head: head(row_bytes),
            row_at: row_at as u64,
            // Row keys, entry keys and values are bounded far below 4 GiB by validation.
            row_len: row_bytes.len() as u32,
            entry_len: entry.len() as u32,
            version,
            value_len: value_len as u32,
            height: height as u8,
            own_row: u8::from(own > 0),
            sentinel: 0,
            _pad: [0; 5],
        };
        // SAFETY: `p` is a fresh, 8-aligned allocation of `size` bytes that no one else holds
        // (its bytes are whatever an earlier memtable left in a recycled chunk); the header,
        // the links (nulled here: a node is found by its links before `link` sets them, and
        // the head's are never set), the row key if it is copied and the entry key all fit in
        // it, and the value is the rest of it, which `insert`'s caller fills.
        let value = unsafe {
            std::ptr::write(p.cast::<Header>(), header);
            std::ptr::write_bytes(p.add(HEADER), 0, height * LINK);
            let keys = p.add(keys_at);
            std::ptr::copy_nonoverlapping(row_bytes.as_ptr(), keys, own);
            std::ptr::copy_nonoverlapping(entry.as_ptr(), keys.add(own), entry.len());
            keys.add(own + entry.len())
        };
        (p as usize, value)
    }

    /// Finds where `key` goes (a writer's search: it gives the key's bucket a sentinel).
    pub fn find(&self, arena: &Arena, key: &SearchKey<'_>) -> Splice {
        self.find_from(self.writer_start(arena, key.head), key)
    }

    /// Finds where `key` goes, from `x`: a full-height node before it.
    fn find_from(&self, x: Node<'_>, key: &SearchKey<'_>) -> Splice {
        let mut splice = Splice {
            prev: [x.addr; MAX_HEIGHT],
            next: [0; MAX_HEIGHT],
        };
        let top = self.height.load(Mem::Relaxed).min(MAX_HEIGHT);
        let mut x = x;
        for level in (0..top).rev() {
            let (p, n) = Self::scan_level(x, level, key);
            splice.prev[level] = p.addr;
            splice.next[level] = n.map_or(0, |n| n.addr);
            x = p;
        }
        splice
    }

    /// Moves `splice` forward to where `key` goes: `key` must not sort before the key the
    /// splice was found for. The search starts at the lowest level whose bracket still holds
    /// `key` and goes down from there (RocksDB's splice reuse), so moving to a key near the
    /// last one costs a few steps, and moving across a long stretch (from a wide row's start
    /// to its end) costs a search of that stretch, never a walk of its bottom level.
    pub fn advance(&self, arena: &Arena, splice: &mut Splice, key: &SearchKey<'_>) {
        let top = self.height.load(Mem::Relaxed).min(MAX_HEIGHT);
        let head = self.head(arena);
        // Every `prev` sorts before `key` (it did before the splice's own key); a level whose
        // `next` does not sort before `key` brackets it, and so does every level above it.
        let held = (0..top)
            .find(|&level| {
                Node::at(splice.next[level]).is_none_or(|n| n.cmp_key(key) != Ordering::Less)
            })
            .unwrap_or(top);
        // Levels raised since the splice was found hold `head`, which precedes every key.
        let mut x = Node::at(splice.prev[held.min(top.saturating_sub(1))]).unwrap_or(head);
        let from = if held == top { top } else { held };
        for level in (0..from).rev() {
            let (p, n) = Self::scan_level(x, level, key);
            splice.prev[level] = p.addr;
            splice.next[level] = n.map_or(0, |n| n.addr);
            x = p;
        }
    }

    /// From `x` along `level`: the last node before `key`, and the one after it.
    fn scan_level<'a>(
        mut x: Node<'a>,
        level: usize,
        key: &SearchKey<'_>,
    ) -> (Node<'a>, Option<Node<'a>>) {
        loop {
            match x.next(level) {
                Some(n) if n.cmp_key(key) == Ordering::Less => x = n,
                n => return (x, n),
            }
        }
    }

    /// Inserts a node for `new` where `splice` (found for a key at or just before it, with
    /// nothing between) says, with a value that `fill` writes whole (it starts as unspecified
    /// bytes). Another writer may have linked
    /// nodes around the splice since it was found; the splice is repaired level by level.
    pub fn insert<'a>(
        &self,
        arena: &'a Arena,
        splice: &mut Splice,
        new: &NewNode<'_>,
        fill: impl FnOnce(&mut [u8]),
    ) -> Node<'a> {
        let height = random_height();
        let (addr, value) = Self::alloc(arena, height, new);
        // SAFETY: `value` points at the last `value_len` bytes of the node just allocated, which
        // no one else can reach until the node is linked below.
        fill(unsafe { std::slice::from_raw_parts_mut(value, new.value_len) });
        let node: Node<'a> = Node {
            addr,
            _arena: PhantomData,
        };
        let key = SearchKey::new(new.row.bytes(), EntryPos::At(new.entry, new.version));
        self.link(node, height, &key, splice);
        node
    }

    /// Links `node` (of `height`, with `key`) where `splice` says, repairing it as needed.
    fn link(&self, node: Node<'_>, height: usize, key: &SearchKey<'_>, splice: &mut Splice) {
        let addr = node.addr;
        // Most nodes are short: only a taller one writes the shared height.
        if height > self.height.load(Mem::Relaxed) {
            self.height.fetch_max(height, Mem::Relaxed);
        }
        for level in 0..height {
            loop {
                let (prev, next) = (splice.prev[level], splice.next[level]);
                node.link(level).store(next, Mem::Relaxed);
                let prev_node: Node<'_> = Node {
                    addr: prev,
                    _arena: PhantomData,
                };
                // Release: whoever loads the new link sees the node's contents.
                match prev_node
                    .link(level)
                    .compare_exchange(next, addr, Mem::AcqRel, Mem::Acquire)
                {
                    Ok(_) => break,
                    Err(_) => {
                        let (p, n) = Self::scan_level(prev_node, level, key);
                        splice.prev[level] = p.addr;
                        splice.next[level] = n.map_or(0, |n| n.addr);
                    }
                }
            }
        }
    }

    /// The first node at or after `key`.
    pub fn seek<'a>(&self, arena: &'a Arena, key: &SearchKey<'_>) -> Option<Node<'a>> {
        let top = self.height.load(Mem::Relaxed).min(MAX_HEIGHT);
        let mut x = self.start(arena, self.bucket(key.head), true);
        let mut found = None;
        for level in (0..top).rev() {
            (x, found) = Self::scan_level(x, level, key);
        }
        // The node the scan compared, not a fresh load of the link: a writer may have linked a
        // node that sorts before `key` (the row before it, say) in between. Past a sentinel
        // (which sorts after `key`) everything does too.
        Node::real(found)
    }

    /// The last node before `key`.
    pub fn before<'a>(&self, arena: &'a Arena, key: &SearchKey<'_>) -> Option<Node<'a>> {
        let top = self.height.load(Mem::Relaxed).min(MAX_HEIGHT);
        let head = self.head(arena);
        let mut key = *key;
        let mut x = self.start(arena, self.bucket(key.head), true);
        loop {
            for level in (0..top).rev() {
                x = Self::scan_level(x, level, &key).0;
            }
            if x.addr == head.addr {
                return None;
            }
            if !x.is_sentinel() {
                return Some(x);
            }
            // The first key of its bucket: what is before it is before the sentinel.
            let b = self.bucket(x.header().head);
            key = self.sentinel_key(b);
            x = self.start(arena, b, false);
        }
    }

    /// The first node.
    pub fn first<'a>(&self, arena: &'a Arena) -> Option<Node<'a>> {
        Node::real(self.head(arena).next(0))
    }
}

#[cfg(test)]
mod tests;
