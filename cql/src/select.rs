//! The `SELECT` executor, the one place a `SELECT` on a CQL table runs: a prepared one by the
//! plan made when it was prepared (a point read here, a slice of one partition by
//! `slice_read.rs`) when its values fit it, any other by a [`SelectPlan`] (`select_plan.rs`
//! makes it) one page at a time.
//! It reads each planned partition's slices through the engine, page by page (`pages.rs`), or
//! its one row by name, groups the cells back into CQL rows (a row exists when its marker or
//! any cell is live), filters, counts and projects them, and says where a page ended. It
//! refuses nothing the planner let through, except a page request a post-query ORDER BY cannot
//! answer.

use super::assemble::{cell_parts, Row};
use super::ast::{Select, Statement};
use super::bounds::Bounds;
use super::collect::{kept, take, Collect, Open};
use super::error::CqlError;
use super::page::{resume_slices, PageRequest, Position};
use super::pages::PAGE;
use super::plan::{Kept, Plan, PointReadPlan};
use super::rows::Rows;
use super::select_plan::{KeySpan, Partitions, SelectPlan};
use super::session::{CqlResult, Session};
use super::table::Table;
use super::types::{json_string, CqlType};
use smallvec::SmallVec;
use supercolumn::clock::Clock;
use supercolumn::model::comparator::STATIC_MARKER;
use supercolumn::model::CellValue;
use supercolumn::query::{
    ColumnOrSuperColumn, ColumnParent, KeyRange, RangeBound, SlicePredicate, SliceRange,
};
use supercolumn::{ColumnFamilyHandle, Partitioner};

impl Session<'_> {
    /// Runs a `SELECT` (`stmt`) with the values bound to its markers (`self.binds`): on a
    /// system table or a Thrift-era column family, its rows built whole (`served.rs`); on a CQL
    /// table, planned and executed, one page of it when the session asks for one.
    pub(super) fn run_select(
        &mut self,
        stmt: &Statement,
        s: &Select,
    ) -> Result<CqlResult, CqlError> {
        if let Some(result) = self.answer_served(stmt) {
            return result;
        }
        let page = self.page.take();
        let (rows, end) = self.select_page(s, page.as_ref())?;
        self.page_end = end;
        Ok(CqlResult::Rows(if s.json {
            json_rows(&rows)
        } else {
            rows
        }))
    }

    /// Runs a prepared `SELECT` by the plan made when it was prepared (a point read, or a slice
    /// of one partition), when its values and the page asked for fit that plan; `Ok(None)`
    /// sends it to [`run_select`](Self::run_select).
    pub(super) fn run_prepared_select(
        &mut self,
        plan: &Plan,
        t: &Table,
        id: u64,
        values: &[Option<&[u8]>],
    ) -> Result<Option<CqlResult>, CqlError> {
        let rows = match (plan, &self.page) {
            // A planned slice reads whole: a page that its LIMIT does not fit in, or a later
            // page, resumes through the general plan.
            (Plan::Slice(sp), Some(page))
                if page.after.is_some() || sp.limit(values).is_none_or(|l| l > page.size) =>
            {
                return Ok(None)
            }
            (Plan::Slice(sp), _) => {
                let store = self.pinned_store(t, id)?;
                self.run_slice_plan(&store, sp, values)?
            }
            (Plan::PointRead(pr), _) => {
                let store = self.pinned_store(t, id)?;
                self.run_point_read(&store, pr, values)?
            }
            (Plan::Insert(_), _) => return Ok(None),
        };
        Ok(rows.map(CqlResult::Rows))
    }

    /// A planned point read: the engine visits the names' cells by their sort keys, and the
    /// live ones make the row. `Ok(None)` when its values need the general plan.
    fn run_point_read(
        &self,
        store: &ColumnFamilyHandle,
        p: &PointReadPlan,
        values: &[Option<&[u8]>],
    ) -> Result<Option<Rows>, CqlError> {
        let Some(read) = p.request(values)? else {
            return Ok(None);
        };
        let keys = read.sort_keys();
        let mut found: SmallVec<[Option<Kept>; 8]> = keys.iter().map(|_| None).collect();
        self.db
            .visit_columns(store, &read.key, &keys, |key, cell| {
                let at = keys.iter().position(|k| *k == key);
                if let (Some(at), CellValue::Live { value, ttl }) = (at, cell.value) {
                    let expires = ttl.map(|t| t.local_expiration_time);
                    found[at] = Some((value, cell.timestamp, expires));
                }
            })?;
        // TTL() counts down as the general plan's does; the clock is read only if asked.
        let now_seconds = if p.asks_ttl() {
            self.db.options().clock.now_micros().div_euclid(1_000_000)
        } else {
            0
        };
        Ok(Some(p.rows(values, found, now_seconds)))
    }

    /// Every row of `s`.
    pub(super) fn select(&self, s: &Select) -> Result<Rows, CqlError> {
        Ok(self.select_page(s, None)?.0)
    }

    /// The rows of `s`, or one page of them and where it ended when more may follow.
    pub(super) fn select_page(
        &self,
        s: &Select,
        page: Option<&PageRequest>,
    ) -> Result<(Rows, Option<Position>), CqlError> {
        let plan = self.plan_select(s)?;
        self.execute_select(&plan, page)
    }

    /// Runs `p`: all its rows, or the page `page` asks for. (Aggregates without `GROUP BY`
    /// are one row, never paged.)
    pub(super) fn execute_select(
        &self,
        p: &SelectPlan,
        page: Option<&PageRequest>,
    ) -> Result<(Rows, Option<Position>), CqlError> {
        let page = page.filter(|_| !p.aggregating);
        let resume = page.and_then(|r| r.after.as_ref());
        // LIMIT counts the rows of every page; this call returns at most a page of them.
        let returned = resume.map_or(0, |r| usize::try_from(r.returned).unwrap_or(usize::MAX));
        let limit_left = p.limit.saturating_sub(returned);
        if limit_left == 0 {
            return Ok((Rows::new(p.columns.clone()), None));
        }
        let limit = page.map_or(limit_left, |r| r.size.clamp(1, limit_left.max(1)));
        if p.post_order && page.is_some_and(|r| limit_left > r.size) {
            return Err(CqlError::invalid(
                "Cannot page queries with both ORDER BY and a IN restriction on the partition key; you must either remove the ORDER BY or the IN and sort client side, or disable paging for this query",
            ));
        }
        let mut c = Collect::new(p, limit, page.is_some(), self.functions());
        match &p.partitions {
            Partitions::Keys(keys) => self.read_partitions(&mut c, keys, resume)?,
            Partitions::Scan(span) => self.scan(&mut c, span, resume)?,
            Partitions::Index(ix) => self.index_scan(&mut c, ix, resume)?,
        }
        c.finish(resume, limit_left)
    }

    /// Reads the named partitions `keys`, in order, from where `resume` left off.
    fn read_partitions(
        &self,
        c: &mut Collect<'_>,
        keys: &[Vec<u8>],
        mut resume: Option<&Position>,
    ) -> Result<(), CqlError> {
        let p = c.p;
        let cf = ColumnParent::new(&p.table.name);
        let want = c.cells_wanted();
        for key in keys {
            let mut in_partition = 0;
            let mut resumed = None;
            if let Some(r) = resume {
                if *key != r.key {
                    continue; // returned by an earlier page
                }
                resume = None;
                let Some(prefix) = &r.clustering else {
                    continue;
                };
                if p.by_name.is_some() {
                    continue; // its one row was returned
                }
                in_partition = usize::try_from(r.in_partition).unwrap_or(usize::MAX);
                resumed = Some(resume_slices(&p.table, &p.slices, prefix, p.reversed));
            }
            let fresh = resumed.is_none();
            c.begin(self.statics_of(&p.table, &cf, key, &p.timed)?);
            if let Some(names) = &p.by_name {
                let predicate = SlicePredicate::Names(names.clone());
                let found = self.db.get_slice(&p.table.keyspace, key, &cf, &predicate)?;
                let mut cells = found.into_iter().filter_map(|c| match c {
                    ColumnOrSuperColumn::Column(c) => Some(Ok(c)),
                    ColumnOrSuperColumn::SuperColumn(_) => None,
                });
                if !c.partition(key, &mut cells, &mut in_partition)? {
                    return Ok(());
                }
            } else {
                for b in resumed.as_ref().unwrap_or(&p.slices) {
                    let mut cells =
                        self.cells(&p.table.keyspace, &cf, key, b, p.reversed, want, None);
                    if !c.partition(key, &mut cells, &mut in_partition)? {
                        return Ok(());
                    }
                }
            }
            if fresh && !c.statics_alone(key, &mut in_partition) {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Reads every partition of `span` in token order, a range of them per engine call, from
    /// where `resume` left off. With one slice per partition, the range read brings each
    /// partition's first page of cells with it.
    fn scan(
        &self,
        c: &mut Collect<'_>,
        span: &KeySpan,
        resume: Option<&Position>,
    ) -> Result<(), CqlError> {
        if span.empty || inverted(self.db.partitioner(), span) {
            return Ok(()); // CQL's token ranges do not wrap: no rows
        }
        let p = c.p;
        let cf = ColumnParent::new(&p.table.name);
        let want = c.cells_wanted();
        let rows_per_page = partitions_per_range(c.limit, want);
        let mut start = span.start.clone();
        // The previous range's last partition (a range starts at it again), or an exclusive
        // start.
        let mut seen: Option<Vec<u8>> = span.skip_start.clone();
        // A client's page resumes in its last row's partition, or after it.
        let mut resumed: Option<(&[u8], Vec<Bounds>, usize)> = None;
        if let Some(r) = resume {
            start = RangeBound::Key(r.key.clone());
            match &r.clustering {
                None => seen = Some(r.key.clone()),
                Some(prefix) => {
                    seen = None;
                    let b = resume_slices(&p.table, &p.slices, prefix, p.reversed);
                    let n = usize::try_from(r.in_partition).unwrap_or(usize::MAX);
                    resumed = Some((&r.key, b, n));
                }
            }
        }
        let first = first_page(&p.slices, p.reversed, want);
        let prefetch = p.slices.len() == 1;
        loop {
            let range = KeyRange {
                start: start.clone(),
                end: span.end.clone(),
                count: rows_per_page,
            };
            let predicate = SlicePredicate::Range(first.clone());
            let found = self
                .db
                .get_range_slices(&p.table.keyspace, &cf, &predicate, &range)?;
            let full = found.len() == rows_per_page;
            for ks in found {
                let repeat = seen.as_deref() == Some(ks.key.as_slice());
                seen = Some(ks.key.clone());
                if repeat
                    || ks.columns.is_empty()
                    || span.skip_end.as_deref() == Some(ks.key.as_slice())
                {
                    continue;
                }
                let mut prefetched = prefetch.then_some(ks.columns);
                let mut in_partition = 0;
                let mut these = &p.slices;
                let mut fresh = true;
                if let Some((_, b, n)) = resumed.as_ref().filter(|r| r.0 == ks.key) {
                    (these, in_partition, prefetched, fresh) = (b, *n, None, false);
                }
                c.begin(self.statics_of(&p.table, &cf, &ks.key, &p.timed)?);
                for b in these {
                    let first = prefetched.take();
                    let mut cells =
                        self.cells(&p.table.keyspace, &cf, &ks.key, b, p.reversed, want, first);
                    if !c.partition(&ks.key, &mut cells, &mut in_partition)? {
                        return Ok(());
                    }
                }
                if fresh && !c.statics_alone(&ks.key, &mut in_partition) {
                    return Ok(());
                }
            }
            match (&seen, full) {
                (Some(k), true) => start = RangeBound::Key(k.clone()),
                _ => return Ok(()),
            }
        }
    }
}

/// Cells one range read of a scan may bring, at most: 128 partitions' first pages of 1,000
/// cells (a LIMIT of up to 600 rows of two cells each is not cut by it).
const SCAN_CELLS: usize = 128 * PAGE;

impl Session<'_> {
    /// The static columns of partition `key` of `t`, in a row's slots (empty when `t` has
    /// none): its static cells, which sort before the partition's rows.
    pub(super) fn statics_of(
        &self,
        t: &Table,
        cf: &ColumnParent,
        key: &[u8],
        timed: &[bool],
    ) -> Result<Row, CqlError> {
        if !t.has_statics() {
            return Ok(Row::new());
        }
        let b = Bounds {
            start: STATIC_MARKER.to_vec(),
            // An empty first component ending before everything: after every static name,
            // before every other.
            finish: vec![0, 0, 0xff],
        };
        let mut statics: Option<Open> = None;
        let n_ck = t.clustering.len();
        for cell in self.cells(&t.keyspace, cf, key, &b, false, PAGE, None) {
            let cell = cell?;
            let Some((prefix_len, col, element)) = cell_parts(&cell.name, n_ck) else {
                continue;
            };
            let slot = t
                .columns
                .iter()
                .position(|c| c.is_static && c.name.as_bytes() == col);
            if slot.is_none() || !kept(t, slot, col, &cell) {
                continue;
            }
            let element = element.map(<[u8]>::to_vec);
            take(
                t,
                &mut statics,
                cell,
                (prefix_len, slot, element),
                false,
                timed,
            );
        }
        Ok(statics.map_or_else(|| vec![None; t.columns.len()], |s| s.2))
    }
}

/// How many partitions one range read of a scan asks for, each with up to `want` cells: as
/// many as the LIMIT may need, within [`SCAN_CELLS`] (an aggregate over a whole table holds
/// one range at a time, however many rows it reads).
fn partitions_per_range(limit: usize, want: usize) -> usize {
    limit
        .saturating_add(1)
        .clamp(2, PAGE)
        .min((SCAN_CELLS / want.max(1)).max(2))
}

/// The slice a range read brings of each partition: the one slice's first cells, or (with
/// several slices, each read on its own) one cell, to learn the partition is there.
fn first_page(slices: &[Bounds], reversed: bool, want: usize) -> SliceRange {
    match slices {
        [b] => {
            let (from, to) = if reversed {
                (&b.finish, &b.start)
            } else {
                (&b.start, &b.finish)
            };
            SliceRange {
                start: from.clone(),
                finish: to.clone(),
                reversed,
                count: want,
            }
        }
        _ => SliceRange::all().count(1),
    }
}

/// `SELECT JSON`'s answer: each row one JSON object of its columns, in the one text column
/// `[json]` (a name that needs quoting in CQL is quoted inside the JSON key, as Cassandra's).
fn json_rows(rows: &Rows) -> Rows {
    let columns = rows.columns();
    let keys: Vec<String> = columns
        .iter()
        .map(|(name, _)| {
            // Cassandra's rule for an identifier that needs no quotes.
            let bare = name.starts_with(|c: char| c.is_ascii_lowercase())
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            let computed = name.contains('(') || name.contains('[');
            if bare || computed {
                json_string(name)
            } else {
                json_string(&format!("\"{}\"", name.replace('"', "\"\"")))
            }
        })
        .collect();
    let mut out = Rows::with_capacity(vec![("[json]".to_string(), CqlType::Text)], rows.len());
    for row in rows.iter() {
        let fields: Vec<String> = keys
            .iter()
            .zip(columns.iter())
            .enumerate()
            .map(|(i, (key, (_, ty)))| {
                let value = row
                    .get(i)
                    .map_or_else(|| "null".to_string(), |b| ty.to_json(b));
                format!("{key}: {value}")
            })
            .collect();
        let text = format!("{{{}}}", fields.join(", "));
        out.push_row([Some(text.as_bytes())]);
    }
    out
}

/// Whether `span` starts at a token past its end: an empty range, where a Thrift-era key range
/// would be refused.
fn inverted(p: Partitioner, span: &KeySpan) -> bool {
    let token = |b: &RangeBound| match b {
        RangeBound::Unbounded => None,
        RangeBound::Key(k) => Some(Partitioner::token_bytes(&p.token(k))),
        RangeBound::Token(t) => p.parse_token(t).ok().map(|t| Partitioner::token_bytes(&t)),
        _ => None,
    };
    matches!((token(&span.start), token(&span.end)), (Some(s), Some(e)) if s > e)
}
