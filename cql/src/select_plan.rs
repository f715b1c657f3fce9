//! Planning a `SELECT`: its restrictions, ORDER BY, LIMIT and selectors, with the values bound
//! to them, become a [`SelectPlan`]: the partitions to read (named keys, or a scan in token
//! order), each partition's clustering slices in read order, the filters, the limits and what
//! fills each output column. Every refusal of a query's shape is made here, before anything is
//! read; `select.rs` runs the plan and decides nothing this file has not. (The two shapes of a
//! client's hot path are also planned once, without their values, when they are prepared:
//! `plan.rs`, `slice_plan.rs`.)
//!
//! Long because every relation a `WHERE` may hold is turned into a restriction or a filter
//! here, each refused in Cassandra's words where it cannot be; the shape checks that need no
//! restriction live in `select_shape.rs`, the key columns' demotion in `key_filters.rs`.

use std::sync::Arc;

use super::assemble::{resolve, timed_columns, Resolved};
use super::ast::{Op, Relation, Select, Term};
use super::bounds::{clustering_slices, partition_keys, Bounds};
use super::error::CqlError;
use super::index_plan::{key_index_wanted, usable_index, uses_index, IndexRead};
use super::index_use::{index_use, IndexUse, Weighed, WhereShape};
use super::key_filters::{demote, Demoted, KeyRestrictions, MultiKeys, NEEDS_FILTERING};
pub(super) use super::key_span::KeySpan;
use super::map_entry::EntryFilter;
use super::multi_column::{multi_slices, MultiColumn, MultiRelation, Single};
use super::select_shape::{
    check_range_selection, group_by, names_of_one_row, output_columns, read_reversed, validate,
};
use super::selection::{self, Selection};
use super::session::Session;
use super::table::{ColumnDef, Kind, Table};
use super::types::CqlType;
use supercolumn::clock::Clock;

/// Where a plan's partitions come from.
pub(super) enum Partitions {
    /// Named by `=` or `IN` on every partition key column: in the order of the key's types,
    /// each once (Cassandra's order, whatever order `IN` gave them).
    Keys(Vec<Vec<u8>>),
    /// Every partition of the span, in token order.
    Scan(KeySpan),
    /// The rows a secondary index lists for a value, in token order (each checked against
    /// the plan's filters, which hold the indexed equality too).
    Index(IndexRead),
}

/// A filter on a regular column: its index, the operator and the value.
pub(super) type Filter = (usize, Op, Vec<u8>);

/// A `SELECT` with its values bound: what to read, in which order, and what to return.
pub(super) struct SelectPlan {
    pub table: Arc<Table>,
    pub partitions: Partitions,
    /// Each partition's clustering slices, in read order.
    pub slices: Vec<Bounds>,
    pub reversed: bool,
    pub filters: Vec<Filter>,
    pub entries: Vec<EntryFilter>,
    /// The result's columns, and what fills each.
    pub columns: Vec<(String, CqlType)>,
    pub resolved: Vec<Resolved>,
    /// The columns whose cells' times `resolved` reads (`assemble::timed_columns`).
    pub timed: Vec<bool>,
    /// What the selectors compute from `resolved`'s values, when more than those values.
    pub selection: Option<Selection>,
    /// Aggregates without `GROUP BY`: one row over every row matched; never paged, LIMIT
    /// counts that row.
    pub aggregating: bool,
    /// `GROUP BY`: rows sharing their partition and this many leading clustering values are
    /// one group, one output row (the LIMIT and a page count groups).
    pub group_by: Option<usize>,
    pub distinct: bool,
    /// The statement's LIMIT, counted across pages (`usize::MAX`: none).
    pub limit: usize,
    pub per_partition: usize,
    /// ORDER BY over several named partitions: each is read in that order, then their rows are
    /// merged by it and LIMIT applies to the merge (Cassandra's post-query ordering).
    pub post_order: bool,
    /// Every clustering column is fixed to one value: a slice holds one CQL row at most.
    pub one_row: bool,
    /// The names of that one row's cells (its marker, then each regular column), when the
    /// table has no collections: read by name, as `get` reads, a source stops being asked once
    /// what was found is newer than all it holds (a slice asks every SSTable).
    pub by_name: Option<Vec<Vec<u8>>>,
    /// The database clock, in whole seconds: what `TTL()` counts down from, as expiry does.
    pub now_seconds: i64,
    /// No clustering column is restricted, and no regular one filtered: a partition with
    /// static columns and no row gives one row of its statics.
    pub whole_partitions: bool,
}

/// What a `WHERE` clause restricts each column (by index) to.
#[derive(Default)]
pub(super) struct Restrictions {
    pub eq: Vec<Option<Vec<Vec<u8>>>>,
    lower: Vec<Option<(Vec<u8>, bool)>>,
    upper: Vec<Option<(Vec<u8>, bool)>>,
    pub filters: Vec<Filter>,
    pub entries: Vec<EntryFilter>,
    pub span: KeySpan,
    multi: MultiColumn,
    /// Whether each column's `eq` came from an `IN` (Cassandra names it refusing a second).
    from_in: Vec<bool>,
    /// A regular column compared with null: refused once the query is known to filter
    /// (Cassandra asks for ALLOW FILTERING first).
    pub null_compared: Option<(usize, CqlError)>,
}

impl Restrictions {
    /// Moves the key restrictions that cannot narrow the read to the filters.
    fn demote_keys(&mut self, t: &Table) -> Result<Demoted, CqlError> {
        // A partition key column takes `=` (or `IN`) or a range, not both (Cassandra's words).
        for &i in &t.partition_key {
            let Some(vals) = &self.eq[i] else { continue };
            if self.lower[i].is_some() || self.upper[i].is_some() {
                let what = if vals.len() == 1 { "an Equal" } else { "a IN" };
                return Err(CqlError::invalid(format!(
                    "{} cannot be restricted by more than one relation if it includes {what}",
                    t.columns[i].name
                )));
            }
        }
        let keys = KeyRestrictions {
            multi: (self.multi.width > 0).then(|| match (&self.multi.lower, &self.multi.upper) {
                (None, None) => MultiKeys::Tuples,
                _ => MultiKeys::Range {
                    start: self.multi.start,
                    end: self.multi.start + self.multi.width,
                },
            }),
            by_key_index: key_index_wanted(t, &self.eq, &self.filters),
            eq: &mut self.eq,
            lower: &mut self.lower,
            upper: &mut self.upper,
        };
        Ok(demote(t, keys, &mut self.filters))
    }

    /// Whether `order_by` reads partitions in reverse (it may leave out a clustering column
    /// fixed by `=`).
    fn reversed(&self, t: &Table, order_by: &[(String, bool)]) -> Result<bool, CqlError> {
        let m = &self.multi;
        let fixed = |pos: usize| {
            let one_tuple = m.tuples.as_ref().is_some_and(|ts| ts.len() == 1);
            self.eq[t.clustering[pos]]
                .as_ref()
                .is_some_and(|v| v.len() == 1)
                || (one_tuple && (m.start..m.start + m.width).contains(&pos))
        };
        read_reversed(t, order_by, &fixed)
    }

    /// Whether the only filters are on static or partition key columns (each partition is then
    /// read whole, and one with only its statics is a row).
    fn statics_filters_only(&self, t: &Table) -> bool {
        self.entries.is_empty()
            && self.filters.iter().all(|(i, ..)| {
                t.columns[*i].is_static || matches!(t.columns[*i].kind, Kind::PartitionKey(_))
            })
    }

    /// Each restriction, by what it restricts, as an index weighs it.
    fn shape(&self, t: &Table) -> WhereShape {
        let mut w = WhereShape {
            token: !self.span.is_whole(),
            ..WhereShape::default()
        };
        for (k, &i) in t.partition_key.iter().chain(&t.clustering).enumerate() {
            let mut here = Vec::new();
            if let Some(vals) = &self.eq[i] {
                w.key_in |= k < t.partition_key.len() && vals.len() > 1;
                here.push(Weighed::new(i, (vals.len() == 1).then_some(Op::Eq)));
            }
            if self.lower[i].is_some() {
                here.push(Weighed::new(i, Some(Op::Gt)));
            }
            if self.upper[i].is_some() {
                here.push(Weighed::new(i, Some(Op::Lt)));
            }
            if k < t.partition_key.len() {
                w.partition.extend(here);
                continue;
            }
            let at = k - t.partition_key.len();
            if (self.multi.start..self.multi.start + self.multi.width).contains(&at) {
                // A multi-column relation: no index serves it. A range is one slice from its
                // first column, whatever its width.
                let slice = self.multi.lower.is_some() || self.multi.upper.is_some();
                if !slice || at == self.multi.start {
                    here.push(Weighed {
                        slice,
                        ..Weighed::new(i, None)
                    });
                }
            }
            w.clustering.extend(here);
        }
        w.others = self
            .filters
            .iter()
            .map(|&(i, op, _)| Weighed::new(i, Some(op)))
            .chain(self.entries.iter().map(|&(i, ..)| Weighed {
                entry: true,
                ..Weighed::new(i, Some(Op::Eq))
            }))
            .collect();
        w
    }

    /// The filters of every kind: on a column's value and on a map's entry.
    fn filter_count(&self) -> usize {
        self.filters.len() + self.entries.len()
    }

    /// Whether a clustering column is restricted, alone or in a multi-column relation.
    fn restricts_clustering(&self, t: &Table) -> bool {
        self.multi.width > 0
            || t.clustering.iter().any(|&i| {
                self.eq[i].is_some() || self.lower[i].is_some() || self.upper[i].is_some()
            })
    }

    /// Each partition's clustering slices, in read order.
    pub(super) fn slices(&self, t: &Table, reversed: bool) -> Result<Vec<Bounds>, CqlError> {
        let mut slices = if self.multi.width > 0 {
            multi_slices(t, &self.multi, &self.eq, &self.lower, &self.upper)?
        } else {
            clustering_slices(t, &self.eq, &self.lower, &self.upper)?
        };
        if reversed {
            // The slices are in clustering order; a reversed read takes them last first.
            slices.reverse();
        }
        Ok(slices)
    }
}

const ORDERED_INDEX: &str = "ORDER BY with 2ndary indexes is not supported.";

/// The index that finds the rows of a query restricted by `r` (its key restrictions that
/// cannot narrow the read moved to its filters), and whether it may filter: with `allowed`
/// (`ALLOW FILTERING`), or when one index group serves every restriction it filters with.
/// Refused in Cassandra's words when it would filter and may not.
fn filtering(
    t: &Table,
    allowed: bool,
    r: &mut Restrictions,
) -> Result<(Option<IndexRead>, bool), CqlError> {
    let m = &r.multi;
    let free_before = t.clustering[..m.start]
        .iter()
        .any(|&i| r.eq[i].is_none() || r.lower[i].is_some() || r.upper[i].is_some());
    // Filtering takes no multi-column range (Cassandra's words); without ALLOW FILTERING the
    // column left free or ranged before it is named instead.
    if allowed && (m.lower.is_some() || m.upper.is_some()) && free_before {
        return Err(CqlError::invalid(
            "Multi-column slice restrictions cannot be used for filtering.",
        ));
    }
    if let Some((_, refused)) = r.null_compared.take() {
        let filters = allowed || !t.indexes.is_empty();
        return Err(if filters {
            refused
        } else {
            CqlError::invalid(NEEDS_FILTERING)
        });
    }
    let contains_on_clustering = r
        .filters
        .iter()
        .find_map(|(i, op, _)| match t.columns[*i].kind {
            Kind::Clustering(j) if matches!(op, Op::Contains | Op::ContainsKey) => Some(j),
            _ => None,
        });
    if let (Some(j), false, true) = (contains_on_clustering, allowed, t.indexes.is_empty()) {
        let prev = t.clustering[j.saturating_sub(1)];
        return Err(CqlError::invalid(
            if j > 0 && (r.lower[prev].is_some() || r.upper[prev].is_some()) {
                format!(
                "Clustering column \"{}\" cannot be restricted (preceding column \"{}\" is restricted by a non-EQ relation)",
                t.columns[t.clustering[j]].name,
                t.columns[prev].name
            )
            } else {
                "Clustering columns can only be restricted with CONTAINS with a secondary index or filtering".into()
            },
        ));
    }
    let by_index = index_use(t, &r.shape(t))?;
    let demoted = r.demote_keys(t)?;
    let index = usable_index(t, &r.filters, &r.entries, &r.span)?;
    let filtering = allowed || by_index == IndexUse::Served;
    if !filtering {
        if by_index == IndexUse::Unserved {
            return Err(CqlError::invalid(NEEDS_FILTERING));
        }
        demoted.allowed(t, r.filter_count(), index.as_ref().map(|ix| ix.on_key))?;
    }
    Ok((index, filtering))
}

impl Session<'_> {
    /// The plan of `s` with the session's bound values, or why the query cannot run.
    pub(super) fn plan_select(&self, s: &Select) -> Result<SelectPlan, CqlError> {
        let t = self.table(&s.table)?;
        let partitioner = self.db.partitioner();
        if !s.order_by.is_empty() && uses_index(&t, s) {
            return Err(CqlError::invalid(ORDERED_INDEX));
        }
        validate(&t, s, partitioner)?;
        let mut r = self.restrictions(&t, &s.relations)?;
        let (index, filtering) = filtering(&t, s.allow_filtering, &mut r)?;
        let reversed = r.reversed(&t, &s.order_by)?;
        let now_seconds = self.db.options().clock.now_micros().div_euclid(1_000_000);
        let slices = r.slices(&t, reversed)?;
        let (columns, selectors, selection) = output_columns(&t, s, partitioner)?;
        let group_by = group_by(&t, s, &r.eq)?;
        // GROUP BY over plain columns still groups: each group gives its first row.
        let selection = match selection {
            None if group_by.is_some() => Some(selection::resolve(&t, &selectors, partitioner)?.0),
            other => other,
        };
        let limit = self.positive(s.limit.as_ref(), "LIMIT")?;
        let per_partition = self.positive(s.per_partition_limit.as_ref(), "PER PARTITION LIMIT")?;
        let keys = partition_keys(&t, &r.eq)?;
        check_range_selection(&t, s, keys.is_none(), index.is_some())?;
        let clustering_restricted = r.restricts_clustering(&t);
        if keys.is_none() && index.is_none() && clustering_restricted && !filtering {
            return Err(CqlError::invalid(NEEDS_FILTERING));
        }
        let aggregating =
            group_by.is_none() && selection.as_ref().is_some_and(Selection::aggregating);
        // GROUP BY's groups are merged as rows are, each placed by its first row.
        let post_order =
            !aggregating && !s.order_by.is_empty() && keys.as_ref().is_some_and(|k| k.len() > 1);
        let one_row = t
            .clustering
            .iter()
            .all(|&i| r.eq[i].as_ref().is_some_and(|v| v.len() == 1));
        let by_name = one_row
            .then(|| names_of_one_row(&t, &r.eq))
            .transpose()?
            .flatten();
        let whole_partitions = !clustering_restricted && r.statics_filters_only(&t);
        let resolved = selection.as_ref().map(|s| s.inputs.clone());
        let resolved = resolved.unwrap_or_else(|| resolve(&t, &selectors));
        Ok(SelectPlan {
            whole_partitions,
            timed: timed_columns(&resolved, t.columns.len()),
            resolved,
            partitions: match (keys, index) {
                // Named partitions are read whole (and filtered), not through an index.
                (Some(keys), _) => Partitions::Keys(keys),
                (None, Some(ix)) => Partitions::Index(ix),
                (None, None) => Partitions::Scan(r.span),
            },
            selection,
            aggregating,
            group_by,
            table: t,
            slices,
            reversed,
            filters: r.filters,
            entries: r.entries,
            columns,
            distinct: s.distinct,
            limit,
            per_partition,
            post_order,
            one_row,
            by_name,
            now_seconds,
        })
    }

    /// A LIMIT's value (`usize::MAX` without one); it must be strictly positive.
    fn positive(&self, term: Option<&Term>, what: &str) -> Result<usize, CqlError> {
        let Some(term) = term else {
            return Ok(usize::MAX);
        };
        match self.integer(term, what)? {
            l if l <= 0 => Err(CqlError::invalid(format!(
                "{what} must be strictly positive"
            ))),
            l => Ok(usize::try_from(l).unwrap_or(usize::MAX)),
        }
    }

    /// Each relation of a `WHERE` clause, checked and sorted by what it restricts.
    pub(super) fn restrictions(
        &self,
        t: &Table,
        relations: &[Relation],
    ) -> Result<Restrictions, CqlError> {
        let n = t.columns.len();
        let mut r = Restrictions {
            eq: vec![None; n],
            lower: vec![None; n],
            upper: vec![None; n],
            from_in: vec![false; n],
            ..Restrictions::default()
        };
        // Read once every other relation is: which of them stay multi-column depends on all.
        let mut multi: Vec<MultiRelation<'_>> = Vec::new();
        for relation in relations {
            match relation {
                Relation::Token(cols, op, terms, of_key) => {
                    self.token_restriction(t, cols, *op, terms, *of_key, &mut r.span)?
                }
                Relation::In(c, terms) => {
                    let (i, def) = t.column(c)?;
                    if def.kind == Kind::Regular {
                        r.filters.push(self.in_filter(t, c, terms)?);
                        continue;
                    }
                    let mut vals: Vec<Vec<u8>> = Vec::new();
                    for term in terms {
                        let v = self.value(&def.ty, term, c)?.ok_or_else(|| {
                            CqlError::invalid(format!(
                                "Invalid null value in condition for column {c}"
                            ))
                        })?;
                        // IN (1, 1) names one row once.
                        if !vals.contains(&v) {
                            vals.push(v);
                        }
                    }
                    r.second(i, c, Second::Equality)?;
                    r.eq[i] = Some(vals);
                    r.from_in[i] = true;
                }
                Relation::Compare(c, op, term) => self.comparison(t, c, *op, term, &mut r)?,
                Relation::InMarker(c, _) => return Err(unbound_list(c)),
                Relation::Multi(cols, op, term) => {
                    multi.push((cols, Some(*op), std::slice::from_ref(term)))
                }
                Relation::MultiIn(cols, terms) => multi.push((cols, None, terms)),
                Relation::Entry(c, key, op, value) => {
                    r.entries.push(self.entry_filter(t, c, key, *op, value)?)
                }
            }
        }
        for single in self.multi_relations(t, &multi, &mut r.multi)? {
            match single {
                Single::Eq { i, values, from_in } => {
                    r.second(i, &t.columns[i].name, Second::Equality)?;
                    r.eq[i] = Some(values);
                    r.from_in[i] = from_in;
                }
                Single::Range { i, op, value } => {
                    r.restrict_key(i, &t.columns[i].name.clone(), op, value)?
                }
            }
        }
        Ok(r)
    }

    /// `c op term`: a filter on a regular column, or a key or clustering restriction.
    fn comparison(
        &self,
        t: &Table,
        c: &str,
        op: Op,
        term: &Term,
        r: &mut Restrictions,
    ) -> Result<(), CqlError> {
        let (i, def) = t.column(c)?;
        if matches!(op, Op::Contains | Op::ContainsKey) {
            let ty = def
                .ty
                .contained(c, op == Op::ContainsKey)
                .map_err(CqlError::invalid)?;
            // A frozen collection in the clustering filters as a regular column does.
            if matches!(def.kind, Kind::PartitionKey(_)) {
                return Err(CqlError::invalid(format!(
                    "CONTAINS on the primary key column {c} is not supported"
                )));
            }
            let v = self
                .value(&ty, term, c)?
                .ok_or_else(|| null_value(c, def))?;
            r.filters.push((i, op, v));
            return Ok(());
        }
        let Some(v) = self.value(&def.ty, term, c)? else {
            if def.kind == Kind::Regular && r.null_compared.is_none() {
                r.null_compared = Some((i, null_value(c, def)));
                return Ok(());
            }
            return Err(null_value(c, def));
        };
        match (def.kind, op) {
            (Kind::PartitionKey(_) | Kind::Clustering(_), Op::Ne) => Err(CqlError::invalid(
                format!("Unsupported \"!=\" relation on the primary key column {c}"),
            )),
            (_, Op::Contains | Op::ContainsKey) => Ok(()),
            (Kind::Regular, _) => {
                let equality = matches!(op, Op::Eq | Op::Ne);
                // A duration has equality and no order, alone or inside another type
                // (Cassandra's words).
                if !equality && def.ty.references_duration() {
                    return Err(CqlError::invalid(format!(
                        "Slice restrictions are not supported on {}",
                        holding_durations(&def.ty)
                    )));
                }
                // A whole collection or user type that is not frozen is no one value to
                // compare (Cassandra's words).
                if def.ty.is_collection() {
                    return Err(CqlError::invalid(format!(
                        "Collection column '{c}' ({}) cannot be restricted by a '{}' relation",
                        def.ty,
                        op.symbol()
                    )));
                }
                if matches!(def.ty, CqlType::Udt(_)) {
                    return Err(CqlError::invalid(format!(
                        "Non-frozen UDT column '{c}' ({}) cannot be restricted by any relation",
                        def.ty
                    )));
                }
                // Values holding a duration compare equal byte for byte.
                if def.ty.comparator().is_none() && !(equality && def.ty.references_duration()) {
                    return Err(CqlError::invalid(format!(
                        "filtering on {c} of type {} is not supported yet",
                        def.ty
                    )));
                }
                r.filters.push((i, op, v));
                Ok(())
            }
            // A range on a partition key column names no partition: it filters a scan.
            (_, op) => r.restrict_key(i, c, op, v),
        }
    }
}

/// What a restriction of a column already restricted would add.
enum Second {
    /// An `=` or an `IN`.
    Equality,
    /// A lower bound.
    Start,
    /// An upper bound.
    End,
}

impl Restrictions {
    /// Restricts key column `i` (named `c`) by `op` (`=` or a range) to `v`.
    fn restrict_key(&mut self, i: usize, c: &str, op: Op, v: Vec<u8>) -> Result<(), CqlError> {
        match op {
            Op::Eq => {
                self.second(i, c, Second::Equality)?;
                self.eq[i] = Some(vec![v]);
            }
            Op::Gt | Op::Ge => {
                self.second(i, c, Second::Start)?;
                self.lower[i] = Some((v, op == Op::Ge));
            }
            _ => {
                self.second(i, c, Second::End)?;
                self.upper[i] = Some((v, op == Op::Le));
            }
        }
        Ok(())
    }

    /// Refuses, in Cassandra's words, restricting column `i` (named `c`) again as `new` says
    /// where the two cannot merge: anything beside an `=` or an `IN`, an `=` beside a range,
    /// a second bound on the same side.
    fn second(&self, i: usize, c: &str, new: Second) -> Result<(), CqlError> {
        let refused = if self.eq[i].is_some() {
            let what = if self.from_in[i] { "a IN" } else { "an Equal" };
            format!("{c} cannot be restricted by more than one relation if it includes {what}")
        } else {
            match new {
                Second::Equality if self.lower[i].is_some() || self.upper[i].is_some() => {
                    format!(
                        "Column \"{c}\" cannot be restricted by both an equality and an inequality relation"
                    )
                }
                Second::Start if self.lower[i].is_some() => {
                    format!("More than one restriction was found for the start bound on {c}")
                }
                Second::End if self.upper[i].is_some() => {
                    format!("More than one restriction was found for the end bound on {c}")
                }
                _ => return Ok(()),
            }
        };
        Err(CqlError::invalid(refused))
    }
}

/// What Cassandra calls a type holding a duration, refusing a range on it.
pub(super) fn holding_durations(ty: &CqlType) -> &'static str {
    let inner = match ty {
        CqlType::Frozen(t) => t.as_ref(),
        t => t,
    };
    match inner {
        CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) => "collections containing durations",
        CqlType::Tuple(_) => "tuples containing durations",
        CqlType::Udt(_) => "UDTs containing durations",
        _ => "duration columns",
    }
}

/// `IN ?` outside a prepared statement's execution (which expands it).
fn unbound_list(c: &str) -> CqlError {
    CqlError::invalid(format!(
        "IN ? on {c} takes a list bound to a prepared statement"
    ))
}

fn null_value(c: &str, def: &ColumnDef) -> CqlError {
    CqlError::invalid(match def.kind {
        _ if def.ty == CqlType::Counter => {
            "Invalid null value for counter increment/decrement".into()
        }
        Kind::PartitionKey(_) => format!("Invalid null value for partition key part {c}"),
        Kind::Clustering(_) => format!("Invalid null value for clustering key part {c}"),
        Kind::Regular => format!("Unsupported null value for column {c}"),
    })
}
