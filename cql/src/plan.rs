//! Plans made once, when a statement is prepared, for the shapes a client's hot path is made
//! of: an `INSERT` of plain columns, a `SELECT` of one CQL row by its whole primary key (here),
//! and a `SELECT` of a slice of one partition (`slice_plan.rs`). Executing a plan goes from the
//! bound values to one engine call: no walk of the statement, no copy of the values; the point
//! read hands the engine the sort keys of its names and takes back cells, not columns.
//! Everything else, and every value a plan would have to refuse (a null or empty key part),
//! runs the general path, which owns the answers and the errors; a plan only ever answers what
//! the general path would. A planned insert runs here; the `SELECT` plans run in the executor
//! (`select.rs`).

use std::borrow::Cow;
use std::sync::Arc;

use smallvec::SmallVec;

use super::ast::{Op, Relation, Select, Selector, Statement, Term};
use super::error::CqlError;
use super::plan_values::{checked, resolve, row_key, sort_suffix, source, Check, Parts, Source};
use super::plan_values::{push_ttl, push_write_time};
use super::rows::{Columns, Rows};
use super::select_shape::plain_columns;
use super::session::{CqlResult, Session};
use super::slice_plan::SlicePlan;
use super::table::{Kind, Table};
use super::types::CqlType;
use supercolumn::model::comparator::{Comparator, CompositeType, MarshalError};
use supercolumn::query::ColumnPathRef;
use supercolumn::{BatchMutation, SortedName, WriteOptions};

/// A prepared statement's plan.
#[derive(Debug, Clone)]
pub(super) enum Plan {
    Insert(InsertPlan),
    PointRead(PointReadPlan),
    /// Boxed: the largest plan, by far.
    Slice(Box<SlicePlan>),
}

/// An `INSERT` of columns that are not collections, without `USING` or `IF`.
#[derive(Debug, Clone)]
pub(super) struct InsertPlan {
    /// The partition key's sources, in key order.
    key: Vec<Source>,
    /// The clustering columns' sources, in clustering order.
    clustering: Vec<Source>,
    /// The regular columns given: their names (the last component of their cells' names)
    /// and their sources.
    regular: Vec<(String, Source)>,
    /// Each bind marker's column type, by position, to check the bytes bound to it.
    checks: Vec<Check>,
    /// The column family's comparator when the statement was prepared: the engine builds the
    /// cell names and their sort keys with it (a `SortedName`), and takes them as given while
    /// the table keeps it.
    comparator: Arc<dyn Comparator>,
}

/// One output column of a point read.
#[derive(Debug, Clone)]
enum Out {
    /// A primary key column: the value the statement bound it to.
    Key(usize),
    /// A regular column's value, write time or TTL (by index into the names read).
    Value(usize),
    WriteTime(usize),
    Ttl(usize),
}

/// A `SELECT` of plain columns (or their write times and TTLs) of one CQL row named by `=` on
/// every primary key column, from a table without collections.
#[derive(Debug, Clone)]
pub(super) struct PointReadPlan {
    /// Partition key sources, then clustering sources (what [`Out::Key`] indexes).
    key: Vec<Source>,
    partition_len: usize,
    /// The sort key of the last component of each cell name read: the row marker's first,
    /// then the regular columns'.
    suffixes: Vec<Vec<u8>>,
    /// Each clustering column's component comparator, to build the names' sort keys.
    clustering_cmp: Vec<Arc<dyn Comparator>>,
    outputs: Vec<Out>,
    columns: Columns,
    checks: Vec<Check>,
}

impl Plan {
    /// The plan of a statement prepared against `t` (whose column family's comparator is
    /// `comparator`), if it has one of the planned shapes.
    pub(super) fn of(
        statement: &Statement,
        t: &Table,
        comparator: &Arc<dyn Comparator>,
    ) -> Option<Plan> {
        match statement {
            Statement::Insert {
                columns,
                values,
                using,
                condition: None,
                ..
            } if using.ttl.is_none() && using.timestamp.is_none() && t.options.default_ttl == 0 => {
                insert_plan(t, columns, values, comparator).map(Plan::Insert)
            }
            Statement::Select(s) => point_read_plan(t, s)
                .map(Plan::PointRead)
                .or_else(|| SlicePlan::of(t, s).map(|p| Plan::Slice(Box::new(p)))),
            _ => None,
        }
    }
}

fn insert_plan(
    t: &Table,
    columns: &[String],
    values: &[Term],
    comparator: &Arc<dyn Comparator>,
) -> Option<InsertPlan> {
    if columns.len() != values.len() {
        return None;
    }
    let mut given: Vec<Option<Source>> = vec![None; t.columns.len()];
    let mut checks = Vec::new();
    for (c, v) in columns.iter().zip(values) {
        let (i, def) = t.column(c).ok()?;
        // Collections, and frozen ones whose bound bytes may need sorting, take the general path.
        if given[i].is_some() || def.ty.is_multi_cell() || matches!(def.ty, CqlType::Frozen(_)) {
            return None;
        }
        given[i] = Some(source(v, &def.ty, c, &mut checks)?);
    }
    let key = t
        .partition_key
        .iter()
        .map(|&i| given[i].clone())
        .collect::<Option<Vec<_>>>()?;
    let clustering = t
        .clustering
        .iter()
        .map(|&i| given[i].clone())
        .collect::<Option<Vec<_>>>()?;
    let regular = t
        .columns
        .iter()
        .zip(given)
        .filter(|(def, _)| def.kind == Kind::Regular)
        .filter_map(|(def, g)| Some((def.name.clone(), g?)))
        .collect();
    Some(InsertPlan {
        key,
        clustering,
        regular,
        checks,
        comparator: comparator.clone(),
    })
}

fn point_read_plan(t: &Table, s: &Select) -> Option<PointReadPlan> {
    let plain = !s.distinct
        && !s.json
        && s.group_by.is_empty()
        && s.order_by.is_empty()
        && s.limit.is_none()
        && s.per_partition_limit.is_none()
        && !t.columns.iter().any(|c| c.ty.is_multi_cell());
    if !plain {
        return None;
    }
    let mut given: Vec<Option<Source>> = vec![None; t.columns.len()];
    let mut checks = Vec::new();
    for r in &s.relations {
        let Relation::Compare(c, Op::Eq, term) = r else {
            return None;
        };
        let (i, def) = t.column(c).ok()?;
        if def.kind == Kind::Regular || given[i].is_some() {
            return None;
        }
        given[i] = Some(source(term, &def.ty, c, &mut checks)?);
    }
    let key = t
        .partition_key
        .iter()
        .chain(&t.clustering)
        .map(|&i| given[i].clone())
        .collect::<Option<Vec<_>>>()?;
    let regular = t.regular_sorted();
    let suffixes: Vec<Vec<u8>> = std::iter::once("")
        .chain(regular.iter().map(|&i| t.columns[i].name.as_str()))
        .map(sort_suffix)
        .collect();
    let (columns, selectors) = plain_columns(t, s)?.ok()?;
    let read_index = |c: &str| {
        let (i, def) = t.column(c).ok()?;
        match def.kind {
            Kind::PartitionKey(k) => Some(Err(k)),
            Kind::Clustering(k) => Some(Err(t.partition_key.len() + k)),
            Kind::Regular => regular.iter().position(|&r| r == i).map(|p| Ok(p + 1)),
        }
    };
    let outputs = selectors
        .iter()
        .map(|sel| match sel {
            Selector::Column(c) => Some(match read_index(c)? {
                Ok(n) => Out::Value(n),
                Err(k) => Out::Key(k),
            }),
            Selector::WriteTime(c, _) => read_index(c)?.ok().map(Out::WriteTime),
            Selector::Ttl(c) => read_index(c)?.ok().map(Out::Ttl),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(PointReadPlan {
        key,
        partition_len: t.partition_key.len(),
        suffixes,
        clustering_cmp: t.clustering_comparators(),
        outputs,
        columns: columns.into(),
        checks,
    })
}

/// Buffers a planned insert fills for each CQL row (a batch of many rows allocates them once).
#[derive(Default)]
pub(super) struct InsertBuffers {
    key: Vec<u8>,
    /// A cell name and its sort key: the clustering prefix, then the column's component.
    name: SortedName,
}

impl InsertBuffers {
    fn capacity(&self) -> usize {
        self.key.capacity() + self.name.capacity()
    }
}

/// A name the engine would not build: the general path's error, as CQL says it.
fn marshal(e: MarshalError) -> CqlError {
    CqlError::invalid(e.0)
}

thread_local! {
    /// The batch and buffers of the last lone planned insert on this thread, emptied.
    static INSERT_SCRATCH: std::cell::Cell<Option<(BatchMutation, InsertBuffers)>> =
        const { std::cell::Cell::new(None) };
}

/// Room a thread keeps for its next planned insert.
const KEPT_INSERT_SCRATCH: usize = 64 * 1024;

impl InsertPlan {
    /// Writes the row key of these values into `b.key`, and their clustering prefix and its
    /// sort key into `b.name` and `b.sort`; `Ok(false)` when the general path must run (a null
    /// or empty key part, a component over 65,535 bytes).
    fn fill(&self, values: &[Option<&[u8]>], b: &mut InsertBuffers) -> Result<bool, CqlError> {
        checked(&self.checks, values)?;
        let pk: Option<Parts<'_>> = self.key.iter().map(|s| resolve(s, values)).collect();
        let ck: Option<Parts<'_>> = self.clustering.iter().map(|s| resolve(s, values)).collect();
        let (Some(pk), Some(ck)) = (pk, ck) else {
            return Ok(false);
        };
        b.key.clear();
        match pk.as_slice() {
            [one] if !one.is_empty() => b.key.extend_from_slice(one),
            [_] => return Ok(false),
            many if CompositeType::fits(many) => CompositeType::build_into(many, 0, &mut b.key),
            _ => return Ok(false),
        }
        // One more component (the column's) follows; its length is checked by the engine.
        if !CompositeType::fits(&ck) {
            return Ok(false);
        }
        b.name.start(&self.comparator).map_err(marshal)?;
        for value in &ck {
            b.name.push(value).map_err(marshal)?;
        }
        Ok(true)
    }
}

/// What a planned point read asks the engine for: a row key (the bound value itself when the
/// partition key is one column) and the sort keys of cell names, one after another in one
/// buffer (inline for the usual short names).
pub(super) struct PointRead<'v> {
    pub key: Cow<'v, [u8]>,
    keys: SmallVec<[u8; 96]>,
    ends: SmallVec<[usize; 8]>,
}

impl PointRead<'_> {
    /// The sort keys of the names, in the plan's order (the row marker's first).
    pub fn sort_keys(&self) -> SmallVec<[&[u8]; 8]> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let key = &self.keys[start..end];
                start = end;
                key
            })
            .collect()
    }
}

impl PointReadPlan {
    /// Whether an output is a `TTL()` (which counts down from the database clock).
    pub(super) fn asks_ttl(&self) -> bool {
        self.outputs.iter().any(|o| matches!(o, Out::Ttl(_)))
    }

    /// The row key and names to read, or `Ok(None)` when the general path must run.
    pub(super) fn request<'v>(
        &'v self,
        values: &[Option<&'v [u8]>],
    ) -> Result<Option<PointRead<'v>>, CqlError> {
        checked(&self.checks, values)?;
        let parts: Option<Parts<'v>> = self.key.iter().map(|s| resolve(s, values)).collect();
        let Some(parts) = parts else {
            return Ok(None);
        };
        let (pk, ck) = parts.split_at(self.partition_len);
        // The general path refuses a clustering value over 65,535 bytes.
        let (Some(key), true) = (row_key(pk), CompositeType::fits(ck)) else {
            return Ok(None);
        };
        // For each name, the clustering prefix's sort key and then its last component, one
        // after another in one inline buffer.
        let mut keys = SmallVec::<[u8; 96]>::new();
        let mut prefix = Vec::new();
        let mut scratch = Vec::new();
        for (cmp, value) in self.clustering_cmp.iter().zip(ck) {
            CompositeType::push_component_sort_key(
                cmp.as_ref(),
                value,
                0,
                &mut prefix,
                &mut scratch,
            );
        }
        let mut ends = SmallVec::new();
        for s in &self.suffixes {
            keys.extend_from_slice(&prefix);
            keys.extend_from_slice(s);
            ends.push(keys.len());
        }
        Ok(Some(PointRead { key, keys, ends }))
    }

    /// The result of the read: one row when any of its cells (the marker included) is live.
    /// `found` holds each live cell by its place in the request.
    pub(super) fn rows(
        &self,
        values: &[Option<&[u8]>],
        found: SmallVec<[Option<Kept>; 8]>,
        now_seconds: i64,
    ) -> Rows {
        let mut out = Rows::with_capacity(self.columns.clone(), 1);
        if found.iter().all(Option::is_none) {
            return out;
        }
        for o in &self.outputs {
            let value = match *o {
                Out::Key(k) => resolve(&self.key[k], values),
                Out::Value(n) => found[n].as_ref().map(|c| &c.0[..]),
                Out::WriteTime(n) => {
                    push_write_time(&mut out, found[n].as_ref().map(|c| c.1));
                    continue;
                }
                Out::Ttl(n) => {
                    push_ttl(&mut out, found[n].as_ref().and_then(|c| c.2), now_seconds);
                    continue;
                }
            };
            out.push_opt(value);
        }
        out.end_row();
        out
    }
}

/// A live cell read: its value, timestamp and expiry (seconds).
pub(super) type Kept = (Vec<u8>, i64, Option<i64>);

impl Session<'_> {
    /// Runs a prepared `INSERT`'s plan; `Ok(None)` when its values need the general path.
    pub(super) fn run_insert_plan(
        &self,
        p: &InsertPlan,
        t: &Table,
        id: u64,
        values: &[Option<&[u8]>],
    ) -> Result<Option<CqlResult>, CqlError> {
        self.check_pinned(t, id)?;
        // A lone insert fills this thread's batch and buffers: fresh ones grow from empty,
        // several allocations a statement.
        let (mut batch, mut buffers) = INSERT_SCRATCH.take().unwrap_or_default();
        let done = match self.add_planned_insert(p, t, values, &mut batch, &mut buffers) {
            Ok(true) => self.apply(&t.keyspace, &batch).map(|()| true),
            other => other,
        };
        batch.clear();
        // A statement that carried a large value gives its room back.
        if batch.capacity_bytes() + buffers.capacity() <= KEPT_INSERT_SCRATCH {
            INSERT_SCRATCH.set(Some((batch, buffers)));
        }
        Ok(done?.then_some(CqlResult::Void))
    }

    /// Adds a planned insert's cells to `batch`; `Ok(false)` (nothing added) when its values
    /// need the general path.
    pub(super) fn add_planned_insert(
        &self,
        p: &InsertPlan,
        t: &Table,
        values: &[Option<&[u8]>],
        batch: &mut BatchMutation,
        buffers: &mut InsertBuffers,
    ) -> Result<bool, CqlError> {
        if !p.fill(values, buffers)? {
            return Ok(false);
        }
        let write = match self.default_timestamp {
            Some(ts) => WriteOptions::at(ts),
            None => WriteOptions::now(),
        };
        let write = self.stamped(write, t);
        let cf = t.name.as_str();
        // The names, built with their sort keys by the engine: the row marker (an empty last
        // component), then one per column given.
        let InsertBuffers { key, name } = buffers;
        let prefix = name.mark();
        name.push(b"").map_err(marshal)?;
        batch.insert_sorted(key, cf, name, b"", write);
        for (column, source) in &p.regular {
            name.truncate(prefix);
            name.push(column.as_bytes()).map_err(marshal)?;
            match resolve(source, values) {
                Some(v) => batch.insert_sorted(key, cf, name, v, write),
                None => batch.remove(
                    &*key,
                    ColumnPathRef::new(cf).column(name.name()),
                    write.timestamp,
                ),
            };
        }
        Ok(true)
    }
}
