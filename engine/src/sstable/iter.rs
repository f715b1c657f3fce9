//! Reading an SSTable's rows as streams: its rows in order from a start bound, each ready to
//! read without a lookup (range scans and compaction walk files this way), and one row's entries
//! within bounds, forward or backward, block by block through the block cache. Opening the file
//! and locating one row by its key is `reader.rs`.
//!
//! Long because the row stream and the entry stream (forward and backward) share the block cursor
//! and the block cache's reads.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::ops::Bound;
use std::sync::Arc;

use super::block::{DataBlock, ItemRef};
use super::index::RowPoint;
use super::reader::{CachedBlock, ReadContext, Sstable};
use crate::cache::RowPosition;
use crate::error::{FormatError, Place, Result};
use crate::merge::{EntryItem, RowSource, Visitor};
use crate::model::cell::EntryIn;
use crate::model::partitioner::SortKey;

impl Sstable {
    /// A located row as a [`RowSource`].
    pub fn row<'a>(
        &'a self,
        sort_key: &[u8],
        pos: RowPosition,
        ctx: ReadContext<'a>,
    ) -> SstRow<'a> {
        SstRow {
            table: self,
            sort_key: SortKey::from_slice(sort_key),
            header: pos.header.map(|h| h as usize),
            pos,
            ctx,
            first: OnceCell::new(),
            last: OnceCell::new(),
            first_entries: OnceCell::new(),
        }
    }

    /// The rows from `start` on, in order, each with where it lies, so reading one needs no
    /// bloom filter, key cache or index search (range scans and compaction).
    pub fn rows_from<'a>(&'a self, start: Bound<&[u8]>, ctx: ReadContext<'a>) -> Rows<'a> {
        let first = match start {
            Bound::Unbounded => 0,
            Bound::Included(k) | Bound::Excluded(k) => {
                self.index.seek(k, RowPoint::Start).unwrap_or(0)
            }
        };
        Rows {
            table: self,
            ctx,
            start: start.map(<[u8]>::to_vec),
            block: first,
            items: None,
            at: 0,
            last: None,
            failed: false,
        }
    }

    /// The last block holding the row that starts in block `start`: a row runs on into the
    /// next block exactly when that block's first row is this one.
    fn last_block_of(&self, sort_key: &[u8], start: usize) -> usize {
        let mut end = start;
        while self
            .index
            .get(end + 1)
            .is_some_and(|e| e.first_row == sort_key)
        {
            end += 1;
        }
        end
    }
}

/// The rows of an SSTable in order, from a start bound.
pub struct Rows<'a> {
    table: &'a Sstable,
    ctx: ReadContext<'a>,
    start: Bound<Vec<u8>>,
    block: usize,
    items: Option<Arc<CachedBlock>>,
    at: usize,
    /// The last sort key returned: each must be above it, or the file is damaged.
    last: Option<Vec<u8>>,
    failed: bool,
}

impl Rows<'_> {
    fn after_start(&self, sort_key: &[u8]) -> bool {
        match &self.start {
            Bound::Unbounded => true,
            Bound::Included(s) => sort_key >= s.as_slice(),
            Bound::Excluded(s) => sort_key > s.as_slice(),
        }
    }

    /// The item to start from in a block the walk enters before reaching its start bound: the
    /// first row header at or after it, found by a binary search of the block's rows (deriving
    /// a sort key hashes the row key, so a linear walk hashed every row before the start).
    fn first_from_start(&self, block: &DataBlock) -> usize {
        if matches!(self.start, Bound::Unbounded) {
            return 0;
        }
        let headers = block.row_headers();
        let before = |h: u32| {
            let item = block.item(h as usize);
            self.table
                .sort_key_of(&item)
                .is_some_and(|k| !self.after_start(&k))
        };
        let i = partition_point(0, headers.len(), |i| before(headers[i]));
        headers.get(i).map_or(block.len(), |&h| h as usize)
    }
}

impl<'a> Iterator for Rows<'a> {
    type Item = Result<SstRow<'a>>;

    fn next(&mut self) -> Option<Result<SstRow<'a>>> {
        loop {
            if self.failed || self.block >= self.table.block_count() {
                return None;
            }
            let items = match &self.items {
                Some(b) => b.clone(),
                None => match self.table.block(self.block, &self.ctx) {
                    Ok(b) => {
                        self.items = Some(b.clone());
                        self.at = if self.last.is_none() {
                            self.first_from_start(&b.block)
                        } else {
                            0
                        };
                        b
                    }
                    Err(e) => {
                        self.failed = true;
                        return Some(Err(e));
                    }
                },
            };
            while self.at < items.block.len() {
                let header = self.at;
                let item = items.block.item(header);
                self.at += 1;
                let ItemRef::Row {
                    continued: false,
                    deletion,
                    ..
                } = item
                else {
                    continue;
                };
                let Some(sort_key) = self.table.sort_key_of(&item) else {
                    continue;
                };
                if self.last.as_deref().is_some_and(|l| l >= &*sort_key) {
                    self.failed = true;
                    return Some(Err(self.table.fault(
                        FormatError::malformed("rows out of order")
                            .at(Place::Block(self.block as u64)),
                    )));
                }
                if self.after_start(&sort_key) {
                    let last = self.last.get_or_insert_with(Vec::new);
                    last.clear();
                    last.extend_from_slice(&sort_key);
                    let pos = RowPosition {
                        start_block: self.block as u32,
                        end_block: self.table.last_block_of(&sort_key, self.block) as u32,
                        deletion,
                        header: u32::try_from(header).ok(),
                    };
                    return Some(Ok(SstRow {
                        table: self.table,
                        sort_key,
                        pos,
                        ctx: self.ctx,
                        header: Some(header),
                        first: OnceCell::from(items),
                        last: OnceCell::new(),
                        first_entries: OnceCell::new(),
                    }));
                }
            }
            self.items = None;
            self.block += 1;
        }
    }
}

/// One row of an SSTable, readable as a [`RowSource`].
pub struct SstRow<'a> {
    table: &'a Sstable,
    sort_key: SortKey,
    pos: RowPosition,
    ctx: ReadContext<'a>,
    /// The row header's item in the first block, when a scan of the file met the row there.
    header: Option<usize>,
    /// The row's first and last blocks once read (a scan hands over the first): entries in
    /// them are lent to the reader instead of copied, and they are not looked up twice.
    first: OnceCell<Arc<CachedBlock>>,
    last: OnceCell<Arc<CachedBlock>>,
    /// The row's entries in its first block, once found (a read of several names asks for
    /// them once per name).
    first_entries: OnceCell<(usize, usize)>,
}

/// The block a cell holds, read into it first if it is empty.
fn held(
    cell: &OnceCell<Arc<CachedBlock>>,
    read: impl FnOnce() -> Result<Arc<CachedBlock>>,
) -> Result<&Arc<CachedBlock>> {
    if let Some(b) = cell.get() {
        return Ok(b);
    }
    let b = read()?;
    Ok(cell.get_or_init(|| b))
}

impl SstRow<'_> {
    /// The row's sort key.
    pub fn sort_key(&self) -> &[u8] {
        &self.sort_key
    }
}

/// A block of a row: one it keeps for its life (its first or last), or one read for a moment.
enum RowBlock<'a> {
    Kept(&'a Arc<CachedBlock>),
    Read(Arc<CachedBlock>),
}

impl RowBlock<'_> {
    fn arc(self) -> Arc<CachedBlock> {
        match self {
            RowBlock::Kept(b) => b.clone(),
            RowBlock::Read(b) => b,
        }
    }
}

impl<'a> SstRow<'a> {
    /// Block `n` of the row (the first and last are read once and kept).
    fn block_at(&'a self, n: usize) -> Result<RowBlock<'a>> {
        let read = || self.table.block(n, &self.ctx);
        Ok(if n == self.pos.start_block as usize {
            RowBlock::Kept(held(&self.first, read)?)
        } else if n == self.pos.end_block as usize {
            RowBlock::Kept(held(&self.last, read)?)
        } else {
            RowBlock::Read(read()?)
        })
    }

    /// The item numbers `first..last` of the row's entries in block `n`.
    fn entries_in(&self, n: usize, block: &DataBlock) -> (usize, usize) {
        if n == self.pos.start_block as usize {
            return *self
                .first_entries
                .get_or_init(|| self.find_entries(n, block));
        }
        self.find_entries(n, block)
    }

    fn find_entries(&self, n: usize, block: &DataBlock) -> (usize, usize) {
        let entries = match self.header.filter(|_| n == self.pos.start_block as usize) {
            Some(header) => block.row_at(header),
            None => block
                .row(
                    &self.sort_key,
                    self.table.partitioner.key_part(&self.sort_key),
                )
                .map(|(_, entries)| entries),
        };
        entries.map_or((0, 0), |e| (e.start, e.end))
    }
}

impl RowSource for SstRow<'_> {
    fn may_hold_prefix_deletions(&self) -> bool {
        self.table.footer().prefix_deletions
    }

    fn may_hold_range_deletions(&self) -> bool {
        self.table.footer().range_deletions
    }

    fn deletion(&self) -> Result<Option<crate::model::cell::DeletionTime>> {
        Ok(self.pos.deletion)
    }

    /// One entry by its key: the block the index names, a binary search of the row's entries
    /// there, and the key lent from a kept block (no iterator, no copies of the bounds).
    fn get<'s>(&'s self, key: &[u8]) -> Result<Option<EntryItem<'s>>> {
        let (start, end) = (self.pos.start_block as usize, self.pos.end_block as usize);
        let mut n = if start == end {
            start
        } else {
            self.table
                .index
                .seek(&self.sort_key, RowPoint::Key(key))
                .unwrap_or(start)
                .clamp(start, end)
        };
        loop {
            let b = self.block_at(n)?;
            let block = match &b {
                RowBlock::Kept(k) => &k.block,
                RowBlock::Read(r) => &r.block,
            };
            let (first, last) = self.entries_in(n, block);
            let i = partition_point(first, last, |i| block.entry_key(i) < key);
            if i < last && block.entry_key(i) == key {
                let fault = |e: FormatError| self.table.fault(e.at(Place::Block(n as u64)));
                let Some(decoded) = block.item(i).entry() else {
                    return Ok(None);
                };
                let entry = decoded.map_err(fault)?;
                let key = match b {
                    RowBlock::Kept(k) => Cow::Borrowed(k.block.entry_key(i)),
                    RowBlock::Read(_) => Cow::Owned(key.to_vec()),
                };
                return Ok(Some((key, Cow::Owned(entry))));
            }
            // Every entry of the row here is below the key: it can only be further on.
            if i < last || n >= end {
                return Ok(None);
            }
            n += 1;
        }
    }

    fn scan<'s>(
        &'s self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        reversed: bool,
    ) -> Box<dyn Iterator<Item = Result<EntryItem<'s>>> + 's> {
        Box::new(self.entries(lo, hi, reversed))
    }

    fn visit(
        &self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        reversed: bool,
        f: &mut Visitor<'_>,
    ) -> Result<()> {
        self.entries(lo, hi, reversed).visit(f)
    }
}

impl<'a> SstRow<'a> {
    /// The row's entries within the bounds, forward or reversed.
    fn entries(&'a self, lo: Bound<&[u8]>, hi: Bound<&[u8]>, reversed: bool) -> RowEntries<'a> {
        let (start, end) = (self.pos.start_block as usize, self.pos.end_block as usize);
        let seek = |b: Bound<&[u8]>, default: usize| match b {
            Bound::Unbounded => default,
            Bound::Included(k) | Bound::Excluded(k) => self
                .table
                .index
                .seek(&self.sort_key, RowPoint::Key(k))
                .unwrap_or(start)
                .clamp(start, end),
        };
        let first = if reversed {
            seek(hi, end)
        } else {
            seek(lo, start)
        };
        RowEntries {
            row: self,
            lo: lo.map(<[u8]>::to_vec),
            hi: hi.map(<[u8]>::to_vec),
            reversed,
            block: first,
            current: None,
            from: 0,
            to: 0,
            done: false,
        }
    }
}

/// The entries of one SSTable row within bounds, block by block. A block's entries are
/// decoded only as they are yielded, so a short slice of a wide row decodes only what it returns.
struct RowEntries<'a> {
    row: &'a SstRow<'a>,
    lo: Bound<Vec<u8>>,
    hi: Bound<Vec<u8>>,
    reversed: bool,
    block: usize,
    /// The current block, and the items `from..to` of it still to yield (entries of the row
    /// within the bounds): from the front going forward, from the back reversed.
    current: Option<(usize, Arc<CachedBlock>)>,
    from: usize,
    to: usize,
    done: bool,
}

fn above_lo(k: &[u8], lo: &Bound<Vec<u8>>) -> bool {
    match lo {
        Bound::Unbounded => true,
        Bound::Included(l) => k >= l.as_slice(),
        Bound::Excluded(l) => k > l.as_slice(),
    }
}

fn below_hi(k: &[u8], hi: &Bound<Vec<u8>>) -> bool {
    match hi {
        Bound::Unbounded => true,
        Bound::Included(h) => k <= h.as_slice(),
        Bound::Excluded(h) => k < h.as_slice(),
    }
}

/// The first index in `from..to` where `pred` is false, given it holds for a prefix of them.
fn partition_point(mut from: usize, mut to: usize, pred: impl Fn(usize) -> bool) -> usize {
    while from < to {
        let mid = from + (to - from) / 2;
        if pred(mid) {
            from = mid + 1;
        } else {
            to = mid;
        }
    }
    from
}

impl<'a> RowEntries<'a> {
    /// Finds the row's entries within the bounds in the current block; returns whether the walk
    /// must stop after them (the bounds end inside this block).
    fn load(&mut self) -> Result<bool> {
        let row: &'a SstRow<'a> = self.row;
        let b = row.block_at(self.block)?.arc();
        let block = &b.block;
        let (first, last) = row.entries_in(self.block, block);
        let from = partition_point(first, last, |i| !above_lo(block.entry_key(i), &self.lo));
        let to = partition_point(from, last, |i| below_hi(block.entry_key(i), &self.hi));
        let stop = if self.reversed {
            from > first
        } else {
            to < last
        };
        (self.from, self.to) = (from, to);
        self.current = Some((self.block, b));
        Ok(stop)
    }

    /// The number of the next item of the current block to yield: from the front going
    /// forward, from the back reversed.
    fn step(&mut self) -> Option<usize> {
        if self.from >= self.to {
            return None;
        }
        Some(if self.reversed {
            self.to -= 1;
            self.to
        } else {
            self.from += 1;
            self.from - 1
        })
    }

    /// The next item to yield from the current block, decoded.
    fn take(&mut self) -> Option<Result<EntryItem<'a>>> {
        let row: &'a SstRow<'a> = self.row;
        self.current.as_ref()?;
        let i = self.step()?;
        let (number, b) = self.current.as_ref()?;
        let ItemRef::Entry { key, value } = b.block.item(i) else {
            return None;
        };
        // In the blocks the row holds for its whole life, the key is lent, not copied.
        let kept = if *number == row.pos.start_block as usize {
            row.first.get()
        } else if *number == row.pos.end_block as usize {
            row.last.get()
        } else {
            None
        };
        let key = match kept {
            Some(b) => Cow::Borrowed(b.block.entry_key(i)),
            None => Cow::Owned(key.to_vec()),
        };
        Some(match value.decode() {
            Ok(entry) => Ok((key, Cow::Owned(entry))),
            Err(e) => Err(self.row.table.fault(e.at(Place::Block(*number as u64)))),
        })
    }
}

impl<'a> RowEntries<'a> {
    /// Loads the next block holding entries of the row within the bounds: `None` once there
    /// is none.
    fn advance(&mut self) -> Option<Result<()>> {
        self.current = None;
        if self.done {
            return None;
        }
        let (start, end) = (
            self.row.pos.start_block as usize,
            self.row.pos.end_block as usize,
        );
        if self.block < start || self.block > end {
            return None;
        }
        Some(match self.load() {
            Ok(stop) => {
                let last = if self.reversed {
                    self.block == start
                } else {
                    self.block == end
                };
                if stop || last {
                    self.done = true;
                } else if self.reversed {
                    self.block -= 1;
                } else {
                    self.block += 1;
                }
                Ok(())
            }
            Err(e) => {
                self.done = true;
                Err(e)
            }
        })
    }

    /// Walks the entries as the iterator does, each lent to `f` straight from its block (no
    /// key copied, no value allocated), until `f` answers `false`; the first entry that fails
    /// to decode ends the walk with its error.
    fn visit(mut self, f: &mut Visitor<'_>) -> Result<()> {
        loop {
            if let Some((number, b)) = self.current.take() {
                while let Some(i) = self.step() {
                    let ItemRef::Entry { key, value } = b.block.item(i) else {
                        break;
                    };
                    let entry = value
                        .decode_ref()
                        .map_err(|e| self.row.table.fault(e.at(Place::Block(number as u64))))?;
                    if !f(key, EntryIn::Lent(entry))? {
                        return Ok(());
                    }
                }
            }
            match self.advance() {
                None => return Ok(()),
                Some(loaded) => loaded?,
            }
        }
    }
}

impl<'a> Iterator for RowEntries<'a> {
    type Item = Result<EntryItem<'a>>;

    fn next(&mut self) -> Option<Result<EntryItem<'a>>> {
        loop {
            if let Some(item) = self.take() {
                return Some(item);
            }
            if let Err(e) = self.advance()? {
                return Some(Err(e));
            }
        }
    }
}
