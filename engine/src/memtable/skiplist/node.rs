//! A skiplist node: one piece of arena memory holding a 40-byte header (the row key's first 8
//! bytes as a big-endian integer, where the row key is, the lengths, the version, the height),
//! its links, then the row key (unless another node of the row already holds it), the entry
//! key and the value; and the keys searches compare nodes with. It owns the layout and reading
//! a node; linking nodes is the list's.

#![expect(
    unsafe_code,
    reason = "nodes are raw arena memory read in place: no allocation per node"
)]

use std::cmp::Ordering;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering as Mem};

use super::super::arena::Arena;

/// A node's fixed part. Its `height` links follow it, then the row key, the entry key and the
/// value, in that order.
#[repr(C)]
pub(super) struct Header {
    pub(super) head: u64,
    /// Address of the row key: this node's own copy, or the one an earlier node of its row
    /// holds (in the same arena).
    pub(super) row_at: u64,
    pub(super) row_len: u32,
    pub(super) entry_len: u32,
    pub(super) version: u32,
    pub(super) value_len: u32,
    pub(super) height: u8,
    /// Whether the row key is stored in this node (after its links).
    pub(super) own_row: u8,
    /// Whether this node is a bucket's sentinel rather than a version of a cell.
    pub(super) sentinel: u8,
    pub(super) _pad: [u8; 5],
}

pub(super) const HEADER: usize = std::mem::size_of::<Header>();
pub(super) const LINK: usize = std::mem::size_of::<AtomicUsize>();

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
    pub(super) head: u64,
    pub(super) row: &'k [u8],
    pub(super) entry: EntryPos<'k>,
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
    pub(super) addr: usize,
    pub(super) _arena: PhantomData<&'a Arena>,
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
    pub(super) fn at(addr: usize) -> Option<Node<'a>> {
        (addr != 0).then_some(Node {
            addr,
            _arena: PhantomData,
        })
    }

    pub(super) fn header(self) -> &'a Header {
        // SAFETY: `addr` came from `SkipList::alloc`, which placed an initialised, 8-aligned
        // `Header` there in memory the arena keeps until it is dropped, and nothing writes a
        // header after its node is published.
        unsafe { &*(self.addr as *const Header) }
    }

    pub(super) fn link(self, level: usize) -> &'a AtomicUsize {
        debug_assert!(level < usize::from(self.header().height));
        // SAFETY: the node was allocated with room for `height` links right after its header,
        // 8-aligned and nulled by `SkipList::alloc` (a zeroed `AtomicUsize` is a valid null
        // link), and `level < height`.
        unsafe { &*((self.addr + HEADER + level * LINK) as *const AtomicUsize) }
    }

    /// The node after this one at `level`.
    pub(super) fn next(self, level: usize) -> Option<Node<'a>> {
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

    /// The node after this one in order (sentinels are not nodes to a caller).
    pub fn successor(self) -> Option<Node<'a>> {
        Self::real(self.next(0))
    }

    /// `n`, or the first node after it, that is not a sentinel.
    pub(super) fn real(mut n: Option<Node<'a>>) -> Option<Node<'a>> {
        while let Some(x) = n.filter(|x| x.is_sentinel()) {
            n = x.next(0);
        }
        n
    }

    pub(super) fn is_sentinel(self) -> bool {
        self.header().sentinel != 0
    }

    /// Orders this node against a search key.
    pub(super) fn cmp_key(self, key: &SearchKey<'_>) -> Ordering {
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
