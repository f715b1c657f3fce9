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

/// Levels a node may have; with a branching factor of 4 this serves far more nodes than a
/// memtable holds.
pub const MAX_HEIGHT: usize = 12;

/// A node's fixed part. Its `height` links follow it, then the row key, the entry key and the
/// value, in that order.
#[repr(C)]
struct Header {
    head: u64,
    /// Address of the row key: this node's own copy, or the one an earlier node of its row
    /// holds (in the same arena).
    row_at: u64,
    row_len: u32,
    entry_len: u32,
    version: u32,
    value_len: u32,
    height: u8,
    /// Whether the row key is stored in this node (after its links).
    own_row: u8,
    _pad: [u8; 6],
}

const HEADER: usize = std::mem::size_of::<Header>();
const LINK: usize = std::mem::size_of::<AtomicUsize>();

/// The first 8 bytes of a row key as a big-endian integer (zero-padded): for any two keys,
/// different heads order them as their bytes do.
pub fn head(row: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = row.len().min(8);
    b[..n].copy_from_slice(&row[..n]);
    u64::from_be_bytes(b)
}

/// Where a search key stands among the entries of its row.
#[derive(Clone, Copy, Debug)]
pub enum EntryPos<'k> {
    /// Before every entry of the row (the row's first node).
    First,
    /// At this entry key and version (versions descend).
    At(&'k [u8], u32),
    /// After every entry of the row.
    Last,
}

/// A key to search for.
#[derive(Clone, Copy, Debug)]
pub struct SearchKey<'k> {
    head: u64,
    row: &'k [u8],
    entry: EntryPos<'k>,
}

impl<'k> SearchKey<'k> {
    /// The key at `entry` of row `row`.
    pub fn new(row: &'k [u8], entry: EntryPos<'k>) -> Self {
        SearchKey {
            head: head(row),
            row,
            entry,
        }
    }
}

/// A node, borrowed from the arena it lives in.
#[derive(Clone, Copy)]
pub struct Node<'a> {
    addr: usize,
    _arena: PhantomData<&'a Arena>,
}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("row", &self.row())
            .field("entry", &self.entry())
            .field("version", &self.version())
            .finish()
    }
}

impl<'a> Node<'a> {
    fn at(addr: usize) -> Option<Node<'a>> {
        (addr != 0).then_some(Node {
            addr,
            _arena: PhantomData,
        })
    }

    fn header(self) -> &'a Header {
        // SAFETY: `addr` came from `SkipList::alloc`, which placed an initialised, 8-aligned
        // `Header` there in memory the arena keeps until it is dropped, and nothing writes a
        // header after its node is published.
        unsafe { &*(self.addr as *const Header) }
    }

    fn link(self, level: usize) -> &'a AtomicUsize {
        debug_assert!(level < usize::from(self.header().height));
        // SAFETY: the node was allocated with room for `height` links right after its header,
        // 8-aligned and zeroed (a zeroed `AtomicUsize` is a valid null link), and
        // `level < height`.
        unsafe { &*((self.addr + HEADER + level * LINK) as *const AtomicUsize) }
    }

    /// The node after this one at `level`.
    fn next(self, level: usize) -> Option<Node<'a>> {
        Node::at(self.link(level).load(Mem::Acquire))
    }

    fn bytes(self, from: usize, len: usize) -> &'a [u8] {
        // SAFETY: `from..from + len` lies inside the node's allocation (see `SkipList::alloc`),
        // written before the node was published and never written again.
        unsafe { std::slice::from_raw_parts((self.addr + from) as *const u8, len) }
    }

    fn keys_at(self) -> usize {
        HEADER + usize::from(self.header().height) * LINK
    }

    /// The row sort key.
    pub fn row(self) -> &'a [u8] {
        let h = self.header();
        // SAFETY: `row_at` is this node's own copy of the row key, or an earlier node's in the
        // same arena (`RowBytes::Of`), written before either node was published and alive as
        // long as the arena.
        unsafe { std::slice::from_raw_parts(h.row_at as usize as *const u8, h.row_len as usize) }
    }

    fn own_row_len(self) -> usize {
        let h = self.header();
        if h.own_row != 0 {
            h.row_len as usize
        } else {
            0
        }
    }

    /// The entry key (empty for a row's own node, such as its deletion).
    pub fn entry(self) -> &'a [u8] {
        let h = self.header();
        self.bytes(self.keys_at() + self.own_row_len(), h.entry_len as usize)
    }

    /// The version.
    pub fn version(self) -> u32 {
        self.header().version
    }

    /// The value.
    pub fn value(self) -> &'a [u8] {
        let h = self.header();
        let at = self.keys_at() + self.own_row_len() + h.entry_len as usize;
        self.bytes(at, h.value_len as usize)
    }

    /// Whether this node is of row `row`.
    pub fn is_row(self, row: &[u8]) -> bool {
        let h = self.header();
        h.head == head(row) && (self.shares_row(row) || self.row() == row)
    }

    /// Whether `row` is this node's very copy of its row key (then they are equal).
    fn shares_row(self, row: &[u8]) -> bool {
        let h = self.header();
        h.row_at == row.as_ptr() as usize as u64 && h.row_len as usize == row.len()
    }

    /// The node after this one in order.
    pub fn successor(self) -> Option<Node<'a>> {
        self.next(0)
    }

    /// Orders this node against a search key.
    fn cmp_key(self, key: &SearchKey<'_>) -> Ordering {
        let h = self.header();
        h.head
            .cmp(&key.head)
            .then_with(|| {
                if self.shares_row(key.row) {
                    Ordering::Equal
                } else {
                    self.row().cmp(key.row)
                }
            })
            .then_with(|| match key.entry {
                EntryPos::First => Ordering::Greater,
                EntryPos::Last => Ordering::Less,
                EntryPos::At(entry, version) => self
                    .entry()
                    .cmp(entry)
                    .then_with(|| version.cmp(&h.version)),
            })
    }
}

/// A new node's row key: copied into it, or the copy an existing node of the row holds.
#[derive(Clone, Copy, Debug)]
pub enum RowBytes<'k> {
    /// Copied into the new node.
    Copy(&'k [u8]),
    /// Shared with this node of the same row (in the same arena).
    Of(Node<'k>),
}

impl<'k> RowBytes<'k> {
    /// The row key.
    pub fn bytes(self) -> &'k [u8] {
        match self {
            RowBytes::Copy(b) => b,
            RowBytes::Of(n) => n.row(),
        }
    }
}

/// What a new node holds besides its value: its key, and the value's length.
#[derive(Clone, Copy, Debug)]
pub struct NewNode<'k> {
    /// The row sort key.
    pub row: RowBytes<'k>,
    /// The entry key.
    pub entry: &'k [u8],
    /// The version.
    pub version: u32,
    /// Bytes of the value.
    pub value_len: usize,
}

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
#[derive(Debug)]
pub struct SkipList {
    head: usize,
    /// The tallest node's height (levels above it are empty).
    height: AtomicUsize,
}

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
    /// An empty list whose head node lives in `arena`.
    pub fn new(arena: &Arena) -> SkipList {
        let empty = NewNode {
            row: RowBytes::Copy(&[]),
            entry: &[],
            version: 0,
            value_len: 0,
        };
        let head = Self::alloc(arena, MAX_HEIGHT, &empty).0;
        SkipList {
            head,
            height: AtomicUsize::new(1),
        }
    }

    fn head<'a>(&self, _arena: &'a Arena) -> Node<'a> {
        Node {
            addr: self.head,
            _arena: PhantomData,
        }
    }

    /// Allocates a node of `height` in `arena` holding the keys, and returns its address and
    /// where its (zeroed) value goes, for the caller to fill before linking it.
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
            _pad: [0; 6],
        };
        // SAFETY: `p` is a fresh, 8-aligned, zeroed allocation of `size` bytes that no one else
        // holds; the header, the (already zero) links, the row key if it is copied and the
        // entry key all fit in it, and the value is the rest of it.
        let value = unsafe {
            std::ptr::write(p.cast::<Header>(), header);
            let keys = p.add(keys_at);
            std::ptr::copy_nonoverlapping(row_bytes.as_ptr(), keys, own);
            std::ptr::copy_nonoverlapping(entry.as_ptr(), keys.add(own), entry.len());
            keys.add(own + entry.len())
        };
        (p as usize, value)
    }

    /// Finds where `key` goes.
    pub fn find(&self, arena: &Arena, key: &SearchKey<'_>) -> Splice {
        let head = self.head(arena);
        let mut splice = Splice {
            prev: [head.addr; MAX_HEIGHT],
            next: [0; MAX_HEIGHT],
        };
        let top = self.height.load(Mem::Relaxed).min(MAX_HEIGHT);
        let mut x = head;
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
    /// nothing between) says, with a value that `fill` writes. Another writer may have linked
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
        self.height.fetch_max(height, Mem::Relaxed);
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
                        let (p, n) = Self::scan_level(prev_node, level, &key);
                        splice.prev[level] = p.addr;
                        splice.next[level] = n.map_or(0, |n| n.addr);
                    }
                }
            }
        }
        node
    }

    /// The first node at or after `key`.
    pub fn seek<'a>(&self, arena: &'a Arena, key: &SearchKey<'_>) -> Option<Node<'a>> {
        let top = self.height.load(Mem::Relaxed).min(MAX_HEIGHT);
        let mut x = self.head(arena);
        let mut found = None;
        for level in (0..top).rev() {
            (x, found) = Self::scan_level(x, level, key);
        }
        // The node the scan compared, not a fresh load of the link: a writer may have linked a
        // node that sorts before `key` (the row before it, say) in between.
        found
    }

    /// The last node before `key`.
    pub fn before<'a>(&self, arena: &'a Arena, key: &SearchKey<'_>) -> Option<Node<'a>> {
        let top = self.height.load(Mem::Relaxed).min(MAX_HEIGHT);
        let head = self.head(arena);
        let mut x = head;
        for level in (0..top).rev() {
            x = Self::scan_level(x, level, key).0;
        }
        (x.addr != head.addr).then_some(x)
    }

    /// The first node.
    pub fn first<'a>(&self, arena: &'a Arena) -> Option<Node<'a>> {
        self.head(arena).next(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn insert(list: &SkipList, arena: &Arena, row: &[u8], entry: &[u8], version: u32) {
        let mut s = list.find(arena, &SearchKey::new(row, EntryPos::At(entry, version)));
        let new = NewNode {
            row: RowBytes::Copy(row),
            entry,
            version,
            value_len: 4,
        };
        list.insert(arena, &mut s, &new, |v| {
            v.copy_from_slice(&version.to_be_bytes())
        });
    }

    fn all(list: &SkipList, arena: &Arena) -> Vec<(Vec<u8>, Vec<u8>, u32)> {
        let mut out = Vec::new();
        let mut n = list.first(arena);
        while let Some(x) = n {
            assert_eq!(x.value(), x.version().to_be_bytes());
            out.push((x.row().to_vec(), x.entry().to_vec(), x.version()));
            n = x.successor();
        }
        out
    }

    proptest! {
        #[test]
        fn iterates_in_key_order_and_seeks_like_a_sorted_vec(
            keys in proptest::collection::btree_set(
                (proptest::collection::vec(0u8..3, 0..10), proptest::collection::vec(0u8..3, 0..3), 0u32..4),
                0..200,
            ),
            probe in (proptest::collection::vec(0u8..3, 0..10), proptest::collection::vec(0u8..3, 0..3), 0u32..4),
        ) {
            let arena = Arena::new();
            let list = SkipList::new(&arena);
            let mut keys: Vec<_> = keys.into_iter().collect();
            // Insert in a scrambled order.
            let n = keys.len();
            for i in 0..n {
                let (r, e, v) = &keys[(i * 7919) % n.max(1)];
                if !all(&list, &arena).contains(&(r.clone(), e.clone(), *v)) {
                    insert(&list, &arena, r, e, *v);
                }
            }
            // Rows, then entries, then versions descending.
            keys.sort_by(|a, b| (&a.0, &a.1, std::cmp::Reverse(a.2)).cmp(&(&b.0, &b.1, std::cmp::Reverse(b.2))));
            prop_assert_eq!(all(&list, &arena), keys.clone());
            let key = SearchKey::new(&probe.0, EntryPos::At(&probe.1, probe.2));
            let want = keys.iter().find(|k| (&k.0, &k.1, std::cmp::Reverse(k.2)) >= (&probe.0, &probe.1, std::cmp::Reverse(probe.2)));
            let got = list.seek(&arena, &key).map(|n| (n.row().to_vec(), n.entry().to_vec(), n.version()));
            prop_assert_eq!(got.as_ref(), want);
            let before = keys.iter().rev().find(|k| (&k.0, &k.1, std::cmp::Reverse(k.2)) < (&probe.0, &probe.1, std::cmp::Reverse(probe.2)));
            let got = list.before(&arena, &key).map(|n| (n.row().to_vec(), n.entry().to_vec(), n.version()));
            prop_assert_eq!(got.as_ref(), before);
        }
    }

    #[test]
    fn concurrent_writers_lose_no_node() {
        let arena = Arena::new();
        let list = SkipList::new(&arena);
        std::thread::scope(|s| {
            for t in 0..4u32 {
                let (list, arena) = (&list, &arena);
                s.spawn(move || {
                    for i in 0..5_000u32 {
                        let row = (i.wrapping_mul(2_654_435_761) ^ t).to_be_bytes();
                        insert(list, arena, &row, &[1], t + 1);
                    }
                });
            }
        });
        let got = all(&list, &arena);
        assert_eq!(got.len(), 20_000);
        assert!(got
            .windows(2)
            .all(|w| (&w[0].0, &w[0].1, std::cmp::Reverse(w[0].2))
                < (&w[1].0, &w[1].1, std::cmp::Reverse(w[1].2))));
    }
}
