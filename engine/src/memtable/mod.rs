//! The in-memory write buffer of one column family: every version of every cell in one
//! insert-only skiplist whose nodes live in the memtable's own arena, ordered by (row sort key,
//! entry key, version descending). A row's deletion is a node with an empty entry key, first
//! in its row.
//!
//! Writes reconcile on the way in: a cell that would lose to the version already here (or that
//! the row's deletion shadows) is not stored, so the newest version of a key is always the one a
//! read wants. A row mutation is visible all at once: rows hash to stripes, a writer holds its
//! row's stripe while it inserts the mutation's nodes under a fresh version number and then
//! publishes that number, and a reader sees only versions its row's stripe had published when
//! the read began. Memory is the arena's, counted exactly, and freed with it. The memtable never
//! touches disk; flushing it is the store's business.
//!
//! Long because the skiplist's write path (reconciling on the way in) and its read paths share the
//! ordering and snapshot rules written here.

mod arena;
mod key_filter;
pub mod skiplist;
pub mod standalone;

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::codec::{Reader, Writer};
use crate::error::{FormatError, Result};
use crate::merge::{EntryItem, RowSource};
use crate::model::cell::{DeletionTime, EntryRef};
use crate::model::cell_key;
use crate::model::entry_codec::{
    decode_deletion, decode_entry_ref, encode_deletion, encode_entry_ref,
};
use crate::model::reconcile::compare_refs;
use crate::mutation::RowUpdate;
use arena::Arena;
pub use arena::ChunkPool;
use key_filter::KeyFilter;
use skiplist::{EntryPos, NewNode, Node, RowBytes, SearchKey, SkipList};

/// Rows a memtable's key filter is sized for when nothing better is known.
const DEFAULT_EXPECTED_ROWS: usize = 300_000;

/// Stripes rows hash to for their writers' exclusion and their published versions.
const STRIPES: usize = 1024;

/// A column family's memtable.
#[derive(Debug)]
pub struct Memtable {
    arena: Arena,
    list: SkipList,
    /// Every row key ever added, so lookups of absent rows skip the skiplist.
    filter: KeyFilter,
    /// Writers of rows in a stripe take its lock, one mutation at a time.
    locks: Box<[Mutex<()>]>,
    /// The last version each stripe published: readers see nodes up to it.
    published: Box<[AtomicU32]>,
    operations: AtomicU64,
    /// Set before the first write goes in: a memtable without it holds nothing a reader may see.
    written: AtomicBool,
    /// Set before a prefix deletion of a Standard CF goes in: reads probe for the deletions
    /// covering what they find only in sources that may hold one.
    prefix_deletions: AtomicBool,
    /// Set before a range deletion goes in: reads gather a row's range deletions only from
    /// sources that may hold one.
    range_deletions: AtomicBool,
    /// Rows held (each counted by the write that put its first node in).
    rows: AtomicU64,
}

impl Default for Memtable {
    fn default() -> Self {
        Memtable::with_expected_rows(DEFAULT_EXPECTED_ROWS)
    }
}

thread_local! {
    /// Room to encode one entry before it is copied into its node.
    static SCRATCH: RefCell<Writer> = RefCell::new(Writer::default());
}

/// A new node's row key: shared with `anchor`, a node of the row already in the list, if any.
fn row_bytes<'k>(anchor: Option<Node<'k>>, sort_key: &'k [u8]) -> RowBytes<'k> {
    anchor.map_or(RowBytes::Copy(sort_key), RowBytes::Of)
}

/// The deletion a row (or super column) node holds.
fn node_deletion(n: Node<'_>) -> Option<DeletionTime> {
    decode_deletion(&mut Reader::new(n.value())).ok()
}

/// The entry a cell node holds. The memtable wrote it, so it decodes; a failure reads as absent.
fn node_entry(n: Node<'_>) -> Option<EntryRef<'_>> {
    decode_entry_ref(&mut Reader::new(n.value())).ok()
}

impl Memtable {
    /// An empty memtable whose key filter is sized for about `rows` rows (it still works past
    /// that, with more false positives).
    pub fn with_expected_rows(rows: usize) -> Self {
        Memtable::with_pool(rows, None)
    }

    /// [`Memtable::with_expected_rows`], its memory taken from `pool` first and given back to it
    /// when the memtable goes.
    pub fn with_pool(rows: usize, pool: Option<Arc<ChunkPool>>) -> Self {
        let arena = Arena::with_pool(pool);
        let list = SkipList::new(&arena, rows);
        Memtable {
            arena,
            list,
            filter: KeyFilter::new(rows),
            locks: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            published: (0..STRIPES).map(|_| AtomicU32::new(0)).collect(),
            operations: AtomicU64::new(0),
            written: AtomicBool::new(false),
            prefix_deletions: AtomicBool::new(false),
            range_deletions: AtomicBool::new(false),
            rows: AtomicU64::new(0),
        }
    }

    fn stripe(hash: u64) -> usize {
        (hash >> 32) as usize % STRIPES
    }

    /// The newest version of `(row, entry)` up to `snapshot`, searching from `start`.
    fn newest<'a>(
        start: Option<Node<'a>>,
        row: &[u8],
        entry: &[u8],
        snapshot: u32,
    ) -> Option<Node<'a>> {
        let mut n = start;
        while let Some(x) = n {
            if !x.is_row(row) || x.entry() != entry {
                return None;
            }
            if x.version() <= snapshot {
                return Some(x);
            }
            n = x.successor();
        }
        None
    }

    /// Applies one row's mutation atomically. `is_super` says how keys are laid out.
    // Long because one row's mutation applies atomically under the row's lock: its column, super
    // column and deletion cases share that one critical section.
    pub fn apply(&self, sort_key: &[u8], update: &RowUpdate<'_>, is_super: bool) {
        let hash = key_filter::hash(sort_key);
        // Marked written and in the filter before the row is in the list: a reader that finds
        // the row can never have been told it is absent.
        if !self.written.load(Ordering::Relaxed) {
            self.written.store(true, Ordering::Release);
        }
        self.filter.insert_hashed(hash);
        if !is_super {
            for (key, e) in &update.entries {
                if !matches!(e, EntryRef::GroupDeletion(_)) {
                    continue;
                }
                let flag = if key.starts_with(&cell_key::RANGE_DELETIONS) {
                    &self.range_deletions
                } else {
                    &self.prefix_deletions
                };
                if !flag.load(Ordering::Relaxed) {
                    flag.store(true, Ordering::Release);
                }
            }
        }
        let stripe = Self::stripe(hash);
        let _writer = self.locks[stripe].lock();
        // Everything before this version is published (the lock orders this stripe's writers).
        let version = self.published[stripe].load(Ordering::Relaxed) + 1;
        let (arena, list) = (&self.arena, &self.list);
        let row_deletion;
        // One search finds the row; each cell's place is found by moving on from there.
        let key = SearchKey::new(sort_key, EntryPos::At(&[], u32::MAX));
        let mut splice = list.find(arena, &key);
        // A node already holding the row's key: new nodes share its copy, and searches within
        // the row compare against it by address.
        let mut anchor = splice.found().filter(|n| n.is_row(sort_key));
        let new_row = anchor.is_none();
        {
            let current =
                Self::newest(splice.found(), sort_key, &[], u32::MAX).and_then(node_deletion);
            let merged = DeletionTime::merge_opt(current, update.deletion);
            if merged != current {
                if let Some(d) = merged {
                    let new = NewNode {
                        row: row_bytes(anchor, sort_key),
                        entry: &[],
                        version,
                        value_len: 16,
                    };
                    let n = list.insert(arena, &mut splice, &new, |v| {
                        let mut w = Writer::default();
                        encode_deletion(&mut w, d);
                        v.copy_from_slice(&w.buf);
                    });
                    anchor = anchor.or(Some(n));
                }
            }
            row_deletion = merged;
        }
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let mut last: &[u8] = &[];
            for (key, entry) in &update.entries {
                let (key, entry) = (key.as_ref(), *entry);
                let timestamp = entry.timestamp();
                if row_deletion.is_some_and(|d| d.shadows(timestamp)) {
                    continue;
                }
                let row = anchor.map_or(sort_key, |a| a.row());
                if is_super {
                    if let (EntryRef::Cell(_), Some(p)) = (entry, cell_key::group_prefix_len(key)) {
                        let group = SearchKey::new(row, EntryPos::At(&key[..p], u32::MAX));
                        let d = Self::newest(list.seek(arena, &group), row, &key[..p], u32::MAX)
                            .and_then(node_entry);
                        if matches!(d, Some(EntryRef::GroupDeletion(d)) if d.shadows(timestamp)) {
                            continue;
                        }
                    }
                }
                let search = SearchKey::new(row, EntryPos::At(key, u32::MAX));
                if key > last {
                    list.advance(arena, &mut splice, &search);
                } else {
                    splice = list.find(arena, &search);
                }
                last = key;
                let current = Self::newest(splice.found(), row, key, u32::MAX);
                let winner = match (current.and_then(node_entry), entry) {
                    (None, _) => entry,
                    (Some(EntryRef::Cell(old)), EntryRef::Cell(new)) => {
                        if compare_refs(&new, &old) != std::cmp::Ordering::Greater {
                            continue;
                        }
                        entry
                    }
                    (Some(EntryRef::GroupDeletion(old)), EntryRef::GroupDeletion(new)) => {
                        let merged = old.merge(new);
                        if merged == old {
                            continue;
                        }
                        EntryRef::GroupDeletion(merged)
                    }
                    // Kinds differ under one key only in damaged data; the newer write stands.
                    _ => entry,
                };
                scratch.buf.clear();
                encode_entry_ref(winner, &mut scratch);
                let bytes = &scratch.buf;
                let new = NewNode {
                    row: row_bytes(anchor, sort_key),
                    entry: key,
                    version,
                    value_len: bytes.len(),
                };
                let n = list.insert(arena, &mut splice, &new, |v| v.copy_from_slice(bytes));
                anchor = anchor.or(Some(n));
            }
        });
        if new_row && anchor.is_some() {
            self.rows.fetch_add(1, Ordering::Relaxed);
        }
        // Release: a reader that sees this version sees every node inserted under it.
        self.published[stripe].store(version, Ordering::Release);
        self.operations
            .fetch_add(update.operation_count(), Ordering::Relaxed);
    }

    /// The row with this sort key, as a reader sees it now.
    pub fn row(&self, sort_key: &[u8]) -> Option<MemRow<'_>> {
        let hash = key_filter::hash(sort_key);
        if !self.filter.may_contain_hashed(hash) {
            return None;
        }
        let snapshot = self.published[Self::stripe(hash)].load(Ordering::Acquire);
        let first = self
            .list
            .seek(&self.arena, &SearchKey::new(sort_key, EntryPos::First))?;
        first.is_row(sort_key).then(|| MemRow {
            mem: self,
            row: first.row(),
            snapshot,
            first,
        })
    }

    /// The rows from `lo` upwards, in order, each as a reader sees it now (a row none of whose
    /// writes is published yet reads as empty).
    pub fn rows_from(&self, lo: Bound<&[u8]>) -> impl Iterator<Item = MemRow<'_>> + '_ {
        let start = match lo {
            Bound::Unbounded => self.list.first(&self.arena),
            Bound::Included(k) => self
                .list
                .seek(&self.arena, &SearchKey::new(k, EntryPos::First)),
            Bound::Excluded(k) => self
                .list
                .seek(&self.arena, &SearchKey::new(k, EntryPos::Last)),
        };
        let mut next = start;
        std::iter::from_fn(move || {
            let n = next?;
            let row = n.row();
            next = self.next_row(n);
            let hash = key_filter::hash(row);
            let snapshot = self.published[Self::stripe(hash)].load(Ordering::Acquire);
            // The row's first node found again after the snapshot: a version published before
            // it may have been linked ahead of `n` since, and a reader must see all of a
            // mutation it can see any of.
            let first = self
                .list
                .seek(&self.arena, &SearchKey::new(row, EntryPos::First))
                .filter(|f| f.is_row(row))
                .unwrap_or(n);
            Some(MemRow {
                mem: self,
                row,
                snapshot,
                first,
            })
        })
    }

    /// Every row with its winning versions, in order, for a flush: the memtable must be frozen
    /// (no writer left), so every version is published.
    pub fn flush_rows(&self, is_super: bool) -> impl Iterator<Item = FlushRow<'_>> + '_ {
        let mut next = self.list.first(&self.arena);
        std::iter::from_fn(move || {
            let n = next?;
            let row = n.row();
            next = self.next_row(n);
            let (deletion, first_cell) = if n.entry().is_empty() {
                let mut c = n.successor();
                while let Some(x) = c.filter(|x| x.is_row(row) && x.entry().is_empty()) {
                    c = x.successor();
                }
                (node_deletion(n), c.filter(|x| x.is_row(row)))
            } else {
                (None, Some(n))
            };
            Some(FlushRow {
                sort_key: row,
                deletion,
                first: first_cell,
                is_super,
            })
        })
    }

    /// The first node of the row after `n`'s: a few steps along the bottom level (a point row
    /// has a node or two), or a search past the row when it is wide.
    fn next_row<'m>(&'m self, n: Node<'m>) -> Option<Node<'m>> {
        let row = n.row();
        let mut at = n.successor();
        for _ in 0..8 {
            match at {
                Some(x) if x.is_row(row) => at = x.successor(),
                other => return other,
            }
        }
        self.list
            .seek(&self.arena, &SearchKey::new(row, EntryPos::Last))
    }

    /// Bytes held (the arena's).
    pub fn live_bytes(&self) -> usize {
        self.arena.reserved()
    }

    /// Whether nothing was ever written here (a reader need not ask it for a row).
    pub fn is_empty(&self) -> bool {
        !self.written.load(Ordering::Acquire)
    }

    /// Column writes applied (inserts and deletions).
    pub fn operations(&self) -> u64 {
        self.operations.load(Ordering::Relaxed)
    }

    /// Rows held.
    pub fn rows(&self) -> u64 {
        self.rows.load(Ordering::Relaxed)
    }
}

/// One row of a frozen memtable, for a flush.
#[derive(Debug)]
pub struct FlushRow<'a> {
    /// The row sort key.
    pub sort_key: &'a [u8],
    /// The row's deletion.
    pub deletion: Option<DeletionTime>,
    first: Option<Node<'a>>,
    is_super: bool,
}

impl<'a> FlushRow<'a> {
    /// The row's entries in key order, each its winning version, without those its row's or
    /// its super column's deletion shadows.
    pub fn entries(&self) -> impl Iterator<Item = (&'a [u8], EntryRef<'a>)> + '_ {
        let row = self.sort_key;
        let row_deletion = self.deletion;
        let mut group: Option<(&'a [u8], DeletionTime)> = None;
        let mut last: Option<&'a [u8]> = None;
        let mut n = self.first;
        let is_super = self.is_super;
        std::iter::from_fn(move || loop {
            let x = n.filter(|x| x.is_row(row))?;
            n = x.successor();
            let key = x.entry();
            if last == Some(key) {
                continue; // an older version
            }
            last = Some(key);
            let entry = node_entry(x)?;
            let ts = entry.timestamp();
            if row_deletion.is_some_and(|d| d.shadows(ts)) {
                continue;
            }
            if let EntryRef::GroupDeletion(d) = entry {
                group = Some((key, d));
            } else if is_super {
                let shadowed = group.is_some_and(|(p, d)| key.starts_with(p) && d.shadows(ts));
                if shadowed {
                    continue;
                }
            }
            return Some((key, entry));
        })
    }
}

/// One row of a memtable as a read sees it: the versions its stripe had published when the read
/// began.
#[derive(Debug)]
pub struct MemRow<'m> {
    mem: &'m Memtable,
    row: &'m [u8],
    snapshot: u32,
    /// The row's first node, found after `snapshot` was taken (so no node a reader may see
    /// lies before it): the row's deletion and a forward walk start here without a search.
    first: Node<'m>,
}

impl<'m> MemRow<'m> {
    /// The row's sort key.
    pub fn sort_key(&self) -> &'m [u8] {
        self.row
    }

    fn seek(&self, entry: EntryPos<'_>) -> Option<Node<'_>> {
        self.mem
            .list
            .seek(&self.mem.arena, &SearchKey::new(self.row, entry))
    }
}

/// A node's entry, decoded.
fn decoded(n: Node<'_>) -> Result<EntryItem<'_>> {
    decode_entry_ref(&mut Reader::new(n.value()))
        .map(|e| (Cow::Borrowed(n.entry()), Cow::Owned(e.to_entry())))
        .map_err(|e: FormatError| crate::error::Error::CorruptName {
            column_family: "memtable".into(),
            reason: e.to_string(),
        })
}

impl RowSource for MemRow<'_> {
    /// The newest version of the entry a reader may see: one search, no iterator (a read by
    /// name asks each source for each name).
    fn get<'s>(&'s self, key: &[u8]) -> Result<Option<EntryItem<'s>>> {
        let start = self.seek(EntryPos::At(key, self.snapshot));
        Memtable::newest(start, self.row, key, self.snapshot)
            .map(decoded)
            .transpose()
    }

    fn may_hold_prefix_deletions(&self) -> bool {
        self.mem.prefix_deletions.load(Ordering::Acquire)
    }

    fn may_hold_range_deletions(&self) -> bool {
        self.mem.range_deletions.load(Ordering::Acquire)
    }

    fn deletion(&self) -> Result<Option<DeletionTime>> {
        let first = Some(self.first);
        Ok(Memtable::newest(first, self.row, &[], self.snapshot).and_then(node_deletion))
    }

    // Long because a scan's forward and backward steps over the skiplist share their snapshot and
    // bounds.
    fn scan<'s>(
        &'s self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        reversed: bool,
    ) -> Box<dyn Iterator<Item = Result<EntryItem<'s>>> + 's> {
        let lo = lo.map(<[u8]>::to_vec);
        let hi = hi.map(<[u8]>::to_vec);
        let decoded = |n: Node<'s>| Some(decoded(n));
        if !reversed {
            let start = match &lo {
                // The first cell: past the row's deletion versions, if any.
                Bound::Unbounded => {
                    let mut n = Some(self.first);
                    while let Some(x) = n.filter(|x| x.is_row(self.row) && x.entry().is_empty()) {
                        n = x.successor();
                    }
                    n
                }
                Bound::Included(k) => self.seek(EntryPos::At(k, u32::MAX)),
                Bound::Excluded(k) => self.seek(EntryPos::At(k, 0)),
            };
            let mut n = start;
            let mut last: Option<&[u8]> = None;
            return Box::new(std::iter::from_fn(move || loop {
                let x = n.filter(|x| x.is_row(self.row))?;
                n = x.successor();
                let key = x.entry();
                let beyond = match &hi {
                    Bound::Unbounded => false,
                    Bound::Included(h) => key > h.as_slice(),
                    Bound::Excluded(h) => key >= h.as_slice(),
                };
                if beyond {
                    return None;
                }
                if x.version() > self.snapshot || last == Some(key) {
                    continue;
                }
                last = Some(key);
                return decoded(x);
            }));
        }
        // Backwards: step to the entry before the last one yielded, then to its newest
        // version a reader may see.
        let mut upper: Option<Vec<u8>> = None;
        let mut started = false;
        Box::new(std::iter::from_fn(move || loop {
            let pos = match (&upper, started, &hi) {
                (Some(u), _, _) => EntryPos::At(u, u32::MAX),
                (None, false, Bound::Unbounded) => EntryPos::Last,
                (None, false, Bound::Included(h)) => EntryPos::At(h, 0),
                (None, false, Bound::Excluded(h)) => EntryPos::At(h, u32::MAX),
                (None, true, _) => return None,
            };
            started = true;
            let prev = self
                .mem
                .list
                .before(&self.mem.arena, &SearchKey::new(self.row, pos))
                .filter(|x| x.is_row(self.row) && !x.entry().is_empty())?;
            let key = prev.entry();
            let below = match &lo {
                Bound::Unbounded => false,
                Bound::Included(l) => key < l.as_slice(),
                Bound::Excluded(l) => key <= l.as_slice(),
            };
            if below {
                return None;
            }
            upper = Some(key.to_vec());
            let newest = Memtable::newest(
                self.seek(EntryPos::At(key, self.snapshot)),
                self.row,
                key,
                self.snapshot,
            );
            if let Some(x) = newest {
                return decoded(x);
            }
        }))
    }
}

#[cfg(test)]
mod tests;
