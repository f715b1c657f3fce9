//! Reading a column family: a slice of one row, or a range of rows with a slice each, evaluated
//! by [`crate::query::slice`] over every source holding the row: memtables, then SSTables
//! (bloom filter → key cache → index → blocks). Requests arrive validated.

use std::ops::Bound;
use std::sync::Arc;

use super::column_family::{ColumnFamilyStore, View};
use crate::error::Result;
use crate::merge::{row_key, KMerge, RowSource};
use crate::query::slice::{self, SliceContext};
use crate::query::{ColumnOrSuperColumn, KeySlice, SlicePredicate};
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

/// One row: its sort key and the key the client gave.
#[derive(Clone, Copy, Debug)]
pub struct RowRef<'a> {
    /// The row sort key (the partitioner's).
    pub sort_key: &'a [u8],
    /// The row key.
    pub key: &'a [u8],
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

/// Why a row is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    /// A point read: the slice, empty when the row has nothing.
    Point,
    /// A row met by a range scan: skipped unless it holds something live.
    RangeRow,
}

impl ColumnFamilyStore {
    fn context(&self, now_seconds: i64) -> SliceContext<'_> {
        SliceContext {
            origin: &self.origin,
            column_type: self.def.column_type,
            comparator: self.def.comparator.as_ref(),
            subcomparator: self
                .def
                .subcomparator
                .as_deref()
                .unwrap_or(&crate::model::comparator::BytesType),
            now_seconds,
        }
    }

    /// Evaluates a slice of one row over the memtables and SSTables of a view: `None` for a row
    /// of a range scan that holds nothing live.
    fn eval_row(
        &self,
        view: &View,
        row: RowRef<'_>,
        req: &ReadRequest<'_>,
        purpose: Purpose,
    ) -> Result<Option<Vec<ColumnOrSuperColumn>>> {
        let RowRef { sort_key, key } = row;
        let (super_column, predicate) = (req.super_column, req.predicate);
        let scan = purpose == Purpose::RangeRow;
        view.check_broken()?;
        let mem_rows: Vec<_> = view.memtables().filter_map(|m| m.row(sort_key)).collect();
        let rctx = self.read_context();
        let ctx = self.context(req.now_seconds);
        let mut sst_rows: Vec<SstRow<'_>> = Vec::new();
        // Named columns of a live read: newest SSTables first, stopping once what was found is
        // newer than anything the rest hold. A range scan's liveness check needs every source.
        match slice::requested_keys(&ctx, super_column, predicate).filter(|_| !scan) {
            Some(keys) => {
                let mut newest = vec![None; keys.len()];
                for r in &mem_rows {
                    slice::note_newest(r, &keys, &mut newest)?;
                }
                let mut tables: Vec<&Arc<Sstable>> = view.sstables.iter().collect();
                tables.sort_by_key(|t| std::cmp::Reverse(t.footer().max_timestamp));
                for t in tables {
                    let max = t.footer().max_timestamp;
                    if newest.iter().all(|n| n.is_some_and(|ts| ts > max)) {
                        bump(&self.counters.sstables_skipped);
                        continue;
                    }
                    if let Some(pos) = t.locate(sort_key, key, &rctx)? {
                        let row = t.row(sort_key, pos, rctx);
                        slice::note_newest(&row, &keys, &mut newest)?;
                        sst_rows.push(row);
                    }
                }
            }
            None => {
                for t in &view.sstables {
                    if let Some(pos) = t.locate(sort_key, key, &rctx)? {
                        sst_rows.push(t.row(sort_key, pos, rctx));
                    }
                }
            }
        }
        if mem_rows.is_empty() && sst_rows.is_empty() {
            return Ok(if scan { None } else { Some(Vec::new()) });
        }
        let mut sources: Vec<&dyn RowSource> =
            mem_rows.iter().map(|r| r as &dyn RowSource).collect();
        sources.extend(sst_rows.iter().map(|r| r as &dyn RowSource));
        let results = slice::slice(&sources, &ctx, super_column, predicate)?;
        // A row the slice found anything in is live; only an empty answer needs the check.
        if scan && results.is_empty() && !slice::row_is_live(&sources, &ctx)? {
            return Ok(None);
        }
        Ok(Some(results))
    }

    /// Reads a validated slice of one row.
    pub fn slice(
        &self,
        row: RowRef<'_>,
        req: &ReadRequest<'_>,
    ) -> Result<Vec<ColumnOrSuperColumn>> {
        let view = self.view();
        Ok(self
            .eval_row(&view, row, req, Purpose::Point)?
            .unwrap_or_default())
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
        let mut streams: Vec<Box<dyn Iterator<Item = Result<Vec<u8>>> + '_>> = Vec::new();
        for m in view.memtables() {
            streams.push(Box::new(m.rows_from(range.start).map(|k| Ok(k.to_vec()))));
        }
        for t in &view.sstables {
            streams.push(Box::new(t.rows_from(range.start, rctx)));
        }
        let mut out = Vec::new();
        for group in KMerge::new(streams, row_key, false) {
            if out.len() >= range.count {
                break;
            }
            let sort_key = match group.into_iter().next() {
                Some(Ok(k)) => k,
                Some(Err(e)) => return Err(e),
                None => continue,
            };
            if range
                .end_token
                .is_some_and(|end| partitioner.token_part(&sort_key) > end)
            {
                break;
            }
            let key = partitioner.key_part(&sort_key).to_vec();
            let row = RowRef {
                sort_key: &sort_key,
                key: &key,
            };
            if let Some(columns) = self.eval_row(&view, row, req, Purpose::RangeRow)? {
                out.push(KeySlice { key, columns });
            }
        }
        Ok(out)
    }
}
