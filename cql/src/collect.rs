//! Grouping a `SELECT`'s cells back into CQL rows, one partition at a time: the row each cell
//! belongs to (a row exists when its marker or any cell is live), the partition's static
//! columns attached to each row (or, with no row, one row of them), the filters, LIMIT, PER
//! PARTITION LIMIT and DISTINCT, the projection, and where a page ended. `select.rs` reads the
//! cells; this file reads nothing.

use super::assemble::{cell_parts, project, Row};
use super::error::CqlError;
use super::functions::{cell_time, Context};
use super::page::Position;
use super::pages::PAGE;
use super::rows::Rows;
use super::select_plan::SelectPlan;
use super::select_shape::merged;
use super::selection::Group;
use super::table::{Kind, Table};
use super::types::{add_element, holds_entry, matches_filter, CqlType};
use supercolumn::model::comparator::CompositeType;
use supercolumn::query::Column;

/// Cells met in read order, one partition's at a time.
pub(super) type Cells<'a> = dyn Iterator<Item = Result<Column, CqlError>> + 'a;

/// Where a cell goes in the row being assembled: its clustering prefix's length, the slot of
/// its column (`None`: the row marker, or a column dropped since), a collection's element.
pub(super) type CellAt = (usize, Option<usize>, Option<Vec<u8>>);

/// Whether a cell of column `col` (at `slot`; `None`: the row marker, when `col` is empty) is
/// read: not when it is a dropped column's (a column no longer in the table, or written before
/// the column was dropped and added back).
pub(super) fn kept(t: &Table, slot: Option<usize>, col: &[u8], cell: &Column) -> bool {
    match slot {
        None => col.is_empty(),
        Some(i) => t.columns[i].dropped_at.is_none_or(|at| cell.timestamp > at),
    }
}

/// Keeps `cell` in the row being assembled, opening one if none is. `reversed`: the cells come
/// last first (a collection's value keeps its own order). `timed`: the columns whose cells'
/// times are recorded (`assemble::Row`).
pub(super) fn take(
    t: &Table,
    current: &mut Option<Open>,
    cell: Column,
    at: CellAt,
    reversed: bool,
    timed: &[bool],
) {
    let (prefix_len, slot, element) = at;
    let width = t.columns.len();
    let Some(i) = slot else {
        // The marker (or a column dropped since): the row is live, nothing to keep.
        current.get_or_insert_with(|| (cell.name, prefix_len, vec![None; width]));
        return;
    };
    let ty = &t.columns[i].ty;
    let Column {
        name,
        value,
        timestamp,
        expires_at,
        ..
    } = cell;
    let entry = current.get_or_insert_with(|| (name, prefix_len, vec![None; width]));
    if let (Some(e), Some(true)) = (&element, timed.get(i)) {
        if entry.2.len() < 2 * width {
            entry.2.resize(2 * width, None);
        }
        let records = entry.2[width + i].get_or_insert_with(|| (Vec::new(), 0, None));
        cell_time::record(&mut records.0, e, timestamp, expires_at, reversed);
    }
    match (ty, element) {
        (CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..), Some(e)) => {
            let v = entry.2[i].get_or_insert_with(|| (vec![0; 4], timestamp, expires_at));
            add_element(&mut v.0, ty, &e, &value, reversed);
        }
        (CqlType::Udt(u), Some(e)) => {
            let v = entry.2[i].get_or_insert_with(|| (Vec::new(), timestamp, expires_at));
            CqlType::udt_set_cell(u, &mut v.0, &e, &value);
        }
        (ty, None) if !ty.is_multi_cell() => entry.2[i] = Some((value, timestamp, expires_at)),
        _ => {}
    }
}

/// A plan's rows as they are assembled: the result so far, and what LIMIT, paging and a
/// post-query ORDER BY need to know of it.
pub(super) struct Collect<'p> {
    pub p: &'p SelectPlan,
    out: Rows,
    /// Rows matched so far (returned, or counted by `COUNT(*)`).
    count: usize,
    /// The rows this call may return.
    pub limit: usize,
    per_partition: usize,
    paged: bool,
    /// The last row returned: its partition key, clustering prefix, and rows of its partition.
    last: Option<(Vec<u8>, Vec<u8>, usize)>,
    /// The clustering prefix of each row returned, for a post-query ORDER BY's merge.
    merge_keys: Vec<Vec<u8>>,
    /// The static columns of the partition being read (empty: the table has none).
    statics: Row,
    /// Rows met in the partition being read, whether they passed the filters or not.
    rows_met: usize,
    /// The group being aggregated (aggregates, or `GROUP BY`).
    group: Option<OpenGroup>,
    /// The partition of the last group started and how many groups it has started (`PER
    /// PARTITION LIMIT` counts a `GROUP BY`'s groups).
    partition_groups: (Vec<u8>, usize),
    /// An error met where a `bool` says whether to go on.
    failed: Option<CqlError>,
    cx: Context<'p>,
}

/// A group being aggregated: its key (the partition key and the grouped clustering prefix;
/// `None` without `GROUP BY`), its state, and its last row's place (where a page ends).
struct OpenGroup {
    key: Option<(Vec<u8>, Vec<u8>)>,
    /// Its first row's clustering prefix (where a post-query ORDER BY places the group).
    first: Vec<u8>,
    group: Group,
    last: Option<(Vec<u8>, Vec<u8>, usize)>,
}

/// The row being assembled: the name of its first cell (whose first `len` bytes are the
/// clustering prefix every cell of the row shares), `len`, and its columns.
pub(super) type Open = (Vec<u8>, usize, Row);

impl<'p> Collect<'p> {
    /// The rows of `p` this call assembles: at most `limit`, a page when `paged`.
    pub(super) fn new(
        p: &'p SelectPlan,
        limit: usize,
        paged: bool,
        cx: Context<'p>,
    ) -> Collect<'p> {
        Collect {
            p,
            out: Rows::new(p.columns.clone()),
            count: 0,
            // A post-query ORDER BY merges every partition's first rows, then cuts; aggregates
            // without GROUP BY read every row for their one row (Cassandra ignores the LIMIT).
            limit: if p.post_order || p.aggregating {
                usize::MAX
            } else {
                limit
            },
            per_partition: if p.post_order {
                p.per_partition.min(limit)
            } else {
                p.per_partition
            },
            paged,
            last: None,
            merge_keys: Vec::new(),
            statics: Row::new(),
            rows_met: 0,
            group: None,
            partition_groups: (Vec::new(), 0),
            failed: None,
            cx,
        }
    }

    /// Cells a page must hold for the rows the query may return: a marker and each regular
    /// column per row (filters may need more; the pages go on as needed).
    pub(super) fn cells_wanted(&self) -> usize {
        let t = &self.p.table;
        let per_row = 1 + t.columns.len() - t.partition_key.len() - t.clustering.len();
        let rows = if self.p.one_row {
            1
        } else {
            self.limit.min(self.per_partition)
        };
        rows.saturating_mul(per_row)
            .saturating_add(1)
            .clamp(2, PAGE)
    }

    /// Groups one slice of partition `key` into rows; `in_partition` counts the partition's
    /// rows across its slices (IN on clustering). `Ok(false)` once the limit is reached.
    pub(super) fn partition(
        &mut self,
        key: &[u8],
        cells: &mut Cells<'_>,
        in_partition: &mut usize,
    ) -> Result<bool, CqlError> {
        let p = self.p;
        // A GROUP BY's limit per partition counts groups, not rows (`group_row`).
        let rows_done = p.group_by.is_none() && *in_partition >= self.per_partition;
        if rows_done || (p.distinct && *in_partition > 0) {
            return Ok(self.count < self.limit);
        }
        let pk = p.table.split_row_key(key);
        let n_ck = p.table.clustering.len();
        let mut current: Option<Open> = None;
        for cell in cells {
            let cell = cell?;
            if CompositeType::is_static(&cell.name) {
                continue; // read on their own, before the rows (`statics_of`)
            }
            let Some((prefix_len, col, element)) = cell_parts(&cell.name, n_ck) else {
                continue;
            };
            let prefix = &cell.name[..prefix_len];
            if current
                .as_ref()
                .is_some_and(|(name, len, _)| name[..*len] != *prefix)
            {
                if let Some((name, len, row)) = current.take() {
                    if !self.emit(key, &pk, &name[..len], row, in_partition)? {
                        return Ok(self.count < self.limit);
                    }
                }
            }
            let slot =
                self.p.table.columns.iter().position(|c| {
                    c.kind == Kind::Regular && !c.is_static && c.name.as_bytes() == col
                });
            if !kept(&self.p.table, slot, col, &cell) {
                continue;
            }
            let element = element.map(<[u8]>::to_vec);
            let at = (prefix_len, slot, element);
            let (t, reversed) = (&self.p.table, self.p.reversed);
            take(t, &mut current, cell, at, reversed, &self.p.timed);
        }
        if let Some((name, len, row)) = current.take() {
            self.emit(key, &pk, &name[..len], row, in_partition)?;
        }
        Ok(self.count < self.limit)
    }

    /// A whole row of partition `key` (split into `pk`): returned (or aggregated) when it
    /// passes the filters. `false` once no more rows are wanted from this partition or at all.
    fn emit(
        &mut self,
        key: &[u8],
        pk: &[Vec<u8>],
        prefix: &[u8],
        row: Row,
        in_partition: &mut usize,
    ) -> Result<bool, CqlError> {
        let p = self.p;
        let mut row = row;
        self.rows_met += 1;
        if self.statics.len() > row.len() {
            row.resize(self.statics.len(), None); // the statics' cell times
        }
        for (slot, v) in row.iter_mut().zip(&self.statics) {
            if v.is_some() {
                slot.clone_from(v);
            }
        }
        let passes = p.filters.iter().all(|(i, op, v)| {
            // A key column's value is the row's key or clustering, not a cell.
            let value = match p.table.columns[*i].kind {
                Kind::PartitionKey(j) => pk.get(j).map(Vec::as_slice),
                Kind::Clustering(j) => CompositeType::components_of(prefix)
                    .nth(j)
                    .and_then(Result::ok)
                    .map(|c| c.bytes),
                Kind::Regular => row[*i].as_ref().map(|x| x.0.as_slice()),
            };
            matches_filter(&p.table.columns[*i].ty, value, *op, v)
        }) && p.entries.iter().all(|(i, k, v)| {
            let value = row[*i].as_ref().map(|x| x.0.as_slice());
            holds_entry(&p.table.columns[*i].ty, value, k, v)
        });
        if passes && (p.aggregating || p.group_by.is_some()) {
            return self.group_row(key, pk, prefix, row, in_partition);
        }
        if passes {
            *in_partition += 1;
            self.count += 1;
            if self.paged {
                self.last = Some((key.to_vec(), prefix.to_vec(), *in_partition));
            }
            if p.post_order {
                self.merge_keys.push(prefix.to_vec());
            }
            let row = project(&p.resolved, key, pk, prefix, row, p.now_seconds);
            match &p.selection {
                Some(sel) => {
                    let out = sel.row(&row, &self.cx)?;
                    self.out.push_row(out.iter().map(Option::as_deref));
                }
                None => self.out.push_row(row.iter().map(Option::as_deref)),
            }
        }
        Ok(self.count < self.limit && *in_partition < self.per_partition && !p.distinct)
    }

    /// Adds a row to its group, first closing the group before it when this row starts
    /// another. `false` once the groups wanted are complete.
    fn group_row(
        &mut self,
        key: &[u8],
        pk: &[Vec<u8>],
        prefix: &[u8],
        row: Row,
        in_partition: &mut usize,
    ) -> Result<bool, CqlError> {
        let p = self.p;
        let Some(sel) = &p.selection else {
            return Ok(false);
        };
        let inputs = project(&p.resolved, key, pk, prefix, row, p.now_seconds);
        let group_key = p
            .group_by
            .map(|n| (key.to_vec(), clustering_prefix(prefix, n)));
        if self.group.as_ref().is_some_and(|g| g.key != group_key) {
            self.close_group()?;
            if self.count >= self.limit {
                return Ok(false);
            }
        }
        if self.group.is_none() && p.group_by.is_some() {
            if self.partition_groups.0 != key {
                self.partition_groups = (key.to_vec(), 0);
            }
            if self.partition_groups.1 >= self.per_partition {
                return Ok(false); // the partition's groups are all returned
            }
            self.partition_groups.1 += 1;
        }
        let g = self.group.get_or_insert_with(|| OpenGroup {
            key: group_key,
            first: prefix.to_vec(),
            group: sel.group(),
            last: None,
        });
        sel.add(&mut g.group, inputs, &self.cx)?;
        *in_partition += 1;
        if self.paged {
            g.last = Some((key.to_vec(), prefix.to_vec(), *in_partition));
        }
        // DISTINCT aggregates one row per partition.
        Ok(!p.distinct)
    }

    /// The open group's output row.
    fn close_group(&mut self) -> Result<(), CqlError> {
        let (Some(g), Some(sel)) = (self.group.take(), &self.p.selection) else {
            return Ok(());
        };
        let out = sel.finish(&g.group, &self.cx)?;
        self.out.push_row(out.iter().map(Option::as_deref));
        if self.p.post_order {
            self.merge_keys.push(g.first);
        }
        self.count += 1;
        if g.last.is_some() {
            self.last = g.last;
        }
        Ok(())
    }

    /// Starts a partition whose static columns are `statics`.
    pub(super) fn begin(&mut self, statics: Row) {
        self.statics = statics;
        self.rows_met = 0;
    }

    /// Ends a partition read from its start: when it has live static columns and no row, and
    /// the query restricts no clustering column, its one row of statics (the clustering and
    /// regular columns null), as Cassandra returns it. `false` once no more rows are wanted.
    pub(super) fn statics_alone(&mut self, key: &[u8], in_partition: &mut usize) -> bool {
        if self.rows_met > 0 || !self.p.whole_partitions || self.statics.iter().all(Option::is_none)
        {
            return self.count < self.limit;
        }
        let pk = self.p.table.split_row_key(key);
        let row = vec![None; self.p.table.columns.len()];
        // A group's error surfaces when the result is finished.
        if let Err(e) = self.emit(key, &pk, &[], row, in_partition) {
            self.failed = Some(e);
            return false;
        }
        self.count < self.limit
    }

    /// The result, and where it ended when it is a full page short of the LIMIT (more rows
    /// may follow).
    pub(super) fn finish(
        mut self,
        resume: Option<&Position>,
        limit_left: usize,
    ) -> Result<(Rows, Option<Position>), CqlError> {
        let p = self.p;
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.close_group()?;
        if p.aggregating && self.count == 0 {
            // Aggregates over no row are still one row (a count of 0, a null max).
            if let Some(sel) = &p.selection {
                let out = sel.finish(&sel.group(), &self.cx)?;
                self.out.push_row(out.iter().map(Option::as_deref));
                if p.post_order {
                    self.merge_keys.push(Vec::new());
                }
            }
        }
        let mut out = self.out;
        if p.post_order {
            out = merged(&p.table, out, &self.merge_keys, p.reversed, limit_left);
        }
        let full_page = !p.post_order && self.count == self.limit && self.limit < limit_left;
        let end = self
            .last
            .filter(|_| full_page)
            .map(|(key, prefix, n)| Position {
                key,
                clustering: (!prefix.is_empty() && !p.distinct && n < self.per_partition)
                    .then_some(prefix),
                in_partition: n as u64,
                returned: resume.map_or(0, |r| r.returned) + self.count as u64,
            });
        Ok((out, end))
    }
}

/// The first `n` clustering values of a row's clustering prefix.
fn clustering_prefix(prefix: &[u8], n: usize) -> Vec<u8> {
    let mut parts = CompositeType::components_of(prefix);
    for _ in 0..n {
        if parts.next().is_none() {
            break;
        }
    }
    prefix[..parts.offset()].to_vec()
}
