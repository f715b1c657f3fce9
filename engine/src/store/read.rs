//! Reading a column family: a slice of one row, or a range of rows with a slice each, evaluated
//! by [`crate::query::slice`] over every source holding the row: memtables, then SSTables. A
//! point read finds the row in each file (bloom filter → key cache → index → blocks); a range
//! scan walks every source forward in one k-way merge of rows, so a row it meets is read where
//! the walk stands, without a lookup. Requests arrive validated.

use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use smallvec::SmallVec;

use super::column_family::ColumnFamilyStore;
use super::view::View;
use crate::error::Result;
use crate::memtable::MemRow;
use crate::merge::{merged_deletion, EntryItem, KMerge, RowSource};
use crate::model::cell::{Cell, CellIn, DeletionTime};
use crate::model::partitioner::RowKey;
use crate::query::slice::{self, NamedRead, SliceContext};
use crate::query::{Column, ColumnOrSuperColumn, KeySlice, SlicePredicate, SliceRange};
use crate::schema::ColumnFamilyDef;
use crate::sstable::iter::SstRow;
use crate::sstable::Sstable;
use crate::stats::bump;

/// What a read asks of each row it reads.
#[derive(Clone, Copy, Debug)]
pub struct ReadRequest<'a> {
    /// The super column whose sub-columns are read (Super CFs), if any.
    pub super_column: Option<&'a [u8]>,
    /// Which columns.
    pub predicate: &'a SlicePredicate,
    /// "Now", for TTL expiry.
    pub now_seconds: i64,
}

/// A range of rows in token order.
#[derive(Clone, Copy, Debug)]
pub struct RowRange<'a> {
    /// Where the range starts (a row sort key bound).
    pub start: Bound<&'a [u8]>,
    /// The last token included (`None`: to the end).
    pub end_token: Option<&'a [u8]>,
    /// At most this many live rows.
    pub count: usize,
}

impl ColumnFamilyStore {
    /// A read's context, under `def` (the definition as it was when the read began).
    fn context<'a>(&'a self, def: &'a ColumnFamilyDef, now_seconds: i64) -> SliceContext<'a> {
        SliceContext {
            origin: &self.origin,
            column_type: def.column_type,
            comparator: def.comparator.as_ref(),
            subcomparator: def
                .subcomparator
                .as_deref()
                .unwrap_or(&crate::model::comparator::BytesType),
            now_seconds,
        }
    }

    /// Evaluates a slice of one row over the memtables and SSTables of a view.
    fn eval_row(
        &self,
        view: &View,
        row: &RowKey<'_>,
        req: &ReadRequest<'_>,
    ) -> Result<Vec<ColumnOrSuperColumn>> {
        let (super_column, predicate) = (req.super_column, req.predicate);
        let Some(mem_rows) = self.memtable_rows(view, row)? else {
            return Ok(Vec::new());
        };
        let def = self.def();
        let ctx = self.context(&def, req.now_seconds);
        if let Some(named) = NamedRead::new(&ctx, super_column, predicate) {
            let named = self.read_named(view, row, &mem_rows, named)?;
            return named.finish(&ctx, ColumnOrSuperColumn::Column);
        }
        let found = self.with_sources(view, row, &mem_rows, |sources| {
            slice::slice(sources, &ctx, super_column, predicate)
        })?;
        Ok(found.unwrap_or_default())
    }

    /// Runs `f` over every source of the row (its memtable versions, then each SSTable that
    /// holds it); `None` when none does.
    fn with_sources<T>(
        &self,
        view: &View,
        row: &RowKey<'_>,
        mem_rows: &[MemRow<'_>],
        f: impl FnOnce(&[&dyn RowSource]) -> Result<T>,
    ) -> Result<Option<T>> {
        let rctx = self.read_context();
        let mut sst_rows: Vec<SstRow<'_>> = Vec::new();
        for t in &view.sstables {
            if let Some(pos) = t.locate(row, &rctx)? {
                sst_rows.push(t.row(row.sort_key(), pos, rctx));
            }
        }
        if mem_rows.is_empty() && sst_rows.is_empty() {
            return Ok(None);
        }
        let mut sources: Vec<&dyn RowSource> =
            mem_rows.iter().map(|r| r as &dyn RowSource).collect();
        sources.extend(sst_rows.iter().map(|r| r as &dyn RowSource));
        f(&sources).map(Some)
    }

    /// Visits the live cells of a validated range of a Standard column family's row (the
    /// range's `count` aside), in read order, each as its name's sort key and the cell, until
    /// `f` answers `false`. Nothing is built per cell but what `f` keeps.
    pub fn visit_slice(
        &self,
        row: &RowKey<'_>,
        range: &SliceRange,
        now_seconds: i64,
        f: impl FnMut(&[u8], CellIn<'_>) -> Result<bool>,
    ) -> Result<()> {
        let view = self.view();
        let Some(mem_rows) = self.memtable_rows(&view, row)? else {
            return Ok(());
        };
        let def = self.def();
        let ctx = self.context(&def, now_seconds);
        self.with_sources(&view, row, &mem_rows, |sources| {
            let del = merged_deletion(sources)?;
            slice::visit_live(sources, &ctx, ctx.comparator, &[], del, range, f)
        })?;
        Ok(())
    }

    /// The row's versions in the memtables, or `None` when no memtable holds the row and every
    /// file's filter rules it out: such a read is answered before anything is allocated or the
    /// key hashed for its token (each file counted as one filter check).
    fn memtable_rows<'v>(
        &self,
        view: &'v View,
        row: &RowKey<'_>,
    ) -> Result<Option<Vec<MemRow<'v>>>> {
        view.check_broken()?;
        // An empty memtable (the active one right after a flush) is not asked: asking hashes
        // the key for its sort key, which the files' filters do not need.
        let mem_rows: Vec<_> = view
            .memtables()
            .filter(|m| !m.is_empty())
            .filter_map(|m| m.row(row.sort_key()))
            .collect();
        if mem_rows.is_empty() && view.sstables.iter().all(|t| !t.may_contain(row.key())) {
            let n = view.sstables.len() as u64;
            crate::trace::event(|| {
                format!("No memtable holds the row, and the bloom filters of all {n} sstables rule it out")
            });
            self.counters
                .local()
                .bloom_checks
                .fetch_add(n, Ordering::Relaxed);
            self.counters
                .local()
                .bloom_negatives
                .fetch_add(n, Ordering::Relaxed);
            return Ok(None);
        }
        crate::trace::event(|| {
            format!(
                "Merging memtable contents ({} of {} memtables hold the row) with {} sstables",
                mem_rows.len(),
                view.memtables().count(),
                view.sstables.len()
            )
        });
        Ok(Some(mem_rows))
    }

    /// Named columns: each source asked once, newest SSTables first, stopping once what was
    /// found is newer than anything the rest hold.
    fn read_named(
        &self,
        view: &View,
        row: &RowKey<'_>,
        mem_rows: &[MemRow<'_>],
        mut named: NamedRead,
    ) -> Result<NamedRead> {
        let rctx = self.read_context();
        for r in mem_rows {
            named.add(r, &self.origin)?;
        }
        let mut tables: SmallVec<[&Arc<Sstable>; 8]> = view.sstables.iter().collect();
        tables.sort_by_key(|t| std::cmp::Reverse(t.footer().max_timestamp));
        for t in tables {
            if named.can_skip(t.footer().max_timestamp) {
                bump(&self.counters.local().sstables_skipped);
                continue;
            }
            if let Some(pos) = t.locate(row, &rctx)? {
                named.add(&t.row(row.sort_key(), pos, rctx), &self.origin)?;
            }
        }
        Ok(named)
    }

    /// Reads one column of a Standard column family's row by its validated name: the read a
    /// `get` makes, without building a predicate.
    pub fn column(
        &self,
        row: &RowKey<'_>,
        name: &[u8],
        now_seconds: i64,
    ) -> Result<Option<Column>> {
        let found = self.read_names(row, &[name], now_seconds, NamedRead::finish_one)?;
        Ok(found.flatten())
    }

    /// Visits the live cells of a Standard column family's row among those whose names have
    /// these sort keys, in key order, each with its key.
    pub fn visit_sort_keys(
        &self,
        row: &RowKey<'_>,
        keys: &[&[u8]],
        now_seconds: i64,
        f: impl FnMut(&[u8], Cell),
    ) -> Result<()> {
        let view = self.view();
        let Some(mem_rows) = self.memtable_rows(&view, row)? else {
            return Ok(());
        };
        let named = self.read_named(&view, row, &mem_rows, NamedRead::of_sort_keys(keys))?;
        named.visit(&self.context(&self.def(), now_seconds), f);
        Ok(())
    }

    /// Reads named columns of a Standard column family's row by their validated names, the
    /// read `get` makes for several names: the live ones, in name order.
    pub fn columns<N: AsRef<[u8]>>(
        &self,
        row: &RowKey<'_>,
        names: &[N],
        now_seconds: i64,
    ) -> Result<Vec<Column>> {
        let found = self.read_names(row, names, now_seconds, |n, ctx| n.finish(ctx, |c| c))?;
        Ok(found.unwrap_or_default())
    }

    /// A read of names over every source of the row, answered by `finish`; `None` when no
    /// source can hold the row.
    fn read_names<N: AsRef<[u8]>, T>(
        &self,
        row: &RowKey<'_>,
        names: &[N],
        now_seconds: i64,
        finish: impl FnOnce(NamedRead, &SliceContext<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        let view = self.view();
        let Some(mem_rows) = self.memtable_rows(&view, row)? else {
            return Ok(None);
        };
        let def = self.def();
        let ctx = self.context(&def, now_seconds);
        let named = NamedRead::of(&ctx, names);
        let named = self.read_named(&view, row, &mem_rows, named)?;
        finish(named, &ctx).map(Some)
    }

    /// Reads a validated slice of one row.
    pub fn slice(
        &self,
        row: &RowKey<'_>,
        req: &ReadRequest<'_>,
    ) -> Result<Vec<ColumnOrSuperColumn>> {
        self.eval_row(&self.view(), row, req)
    }

    /// Reads up to `range.count` live rows from `range.start`, in token order, while their
    /// token part is at most `range.end_token`, each with its slice.
    pub fn range_slices(
        &self,
        range: &RowRange<'_>,
        req: &ReadRequest<'_>,
    ) -> Result<Vec<KeySlice>> {
        let partitioner = self.ctx.partitioner;
        let view = self.view();
        view.check_broken()?;
        let rctx = self.read_context();
        let def = self.def();
        let ctx = self.context(&def, req.now_seconds);
        let mut streams: Vec<Box<dyn Iterator<Item = Result<ScanRow<'_>>> + '_>> = Vec::new();
        for m in view.memtables() {
            streams.push(Box::new(
                m.rows_from(range.start).map(|r| Ok(ScanRow::Mem(r))),
            ));
        }
        for t in &view.sstables {
            streams.push(Box::new(
                t.rows_from(range.start, rctx).map(|r| r.map(ScanRow::Sst)),
            ));
        }
        let mut out = Vec::new();
        let mut merge = KMerge::new(streams, ScanRow::key_of, false);
        let mut group = Vec::new();
        while out.len() < range.count && merge.next_into(&mut group) {
            // An error comes alone.
            if let Some(at) = group.iter().position(Result::is_err) {
                group.swap_remove(at)?;
            }
            let rows = group.iter().filter_map(|r| r.as_ref().ok());
            let sources: SmallVec<[&dyn RowSource; 4]> =
                rows.map(|r| r as &dyn RowSource).collect();
            let Some(sort_key) = group.first().and_then(ScanRow::key_of) else {
                continue;
            };
            if range
                .end_token
                .is_some_and(|end| partitioner.token_part(sort_key) > end)
            {
                break;
            }
            let columns = slice::slice(&sources, &ctx, req.super_column, req.predicate)?;
            // A row the slice found anything in is live; only an empty answer needs the check.
            if columns.is_empty() && !slice::row_is_live(&sources, &ctx)? {
                continue;
            }
            let key = partitioner.key_part(sort_key).to_vec();
            out.push(KeySlice { key, columns });
        }
        Ok(out)
    }
}

/// A row a range scan meets in one source.
enum ScanRow<'a> {
    Mem(MemRow<'a>),
    Sst(SstRow<'a>),
}

impl ScanRow<'_> {
    fn sort_key(&self) -> &[u8] {
        match self {
            ScanRow::Mem(r) => r.sort_key(),
            ScanRow::Sst(r) => r.sort_key(),
        }
    }

    /// The merge key of a stream item; `None` for an error, which the merge yields at once.
    fn key_of<'r>(item: &'r Result<ScanRow<'_>>) -> Option<&'r [u8]> {
        item.as_ref().ok().map(ScanRow::sort_key)
    }
}

impl RowSource for ScanRow<'_> {
    fn may_hold_prefix_deletions(&self) -> bool {
        match self {
            ScanRow::Mem(r) => r.may_hold_prefix_deletions(),
            ScanRow::Sst(r) => r.may_hold_prefix_deletions(),
        }
    }

    fn may_hold_range_deletions(&self) -> bool {
        match self {
            ScanRow::Mem(r) => r.may_hold_range_deletions(),
            ScanRow::Sst(r) => r.may_hold_range_deletions(),
        }
    }

    fn deletion(&self) -> Result<Option<DeletionTime>> {
        match self {
            ScanRow::Mem(r) => r.deletion(),
            ScanRow::Sst(r) => r.deletion(),
        }
    }

    fn scan<'s>(
        &'s self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        reversed: bool,
    ) -> Box<dyn Iterator<Item = Result<EntryItem<'s>>> + 's> {
        match self {
            ScanRow::Mem(r) => r.scan(lo, hi, reversed),
            ScanRow::Sst(r) => r.scan(lo, hi, reversed),
        }
    }
}
