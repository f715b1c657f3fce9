//! The plan of the third hot shape (beside `plan.rs`'s insert and point read): a `SELECT` of
//! plain columns of one partition, named by `=` on its whole partition key, with `=` on a
//! prefix of the clustering columns and a range on the next, in either order, with a `LIMIT`.
//! It reads through the engine's cell visitor and builds each CQL row straight from the cells'
//! sort keys: no column, name or page is built per cell (`slice_read.rs` runs it). What the
//! plan does not take — and every value it would have to refuse — runs `select.rs`, which owns
//! the answers and the errors; this file only ever answers what that path would.

use std::borrow::Cow;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use super::ast::{Op, Relation, Select, Selector, Term};
use super::bounds::clustering_slices;
use super::plan_values::{resolve, row_key, sort_suffix, source, Check, Parts, Source};
use super::rows::Columns;
use super::select_shape::{plain_columns, read_reversed};
use super::table::{Kind, Table};
use super::types::Literal;
use supercolumn::model::comparator::Comparator;
use supercolumn::query::{ColumnParent, SlicePredicate, SliceRange};

/// One output column of a planned slice.
#[derive(Debug, Clone)]
pub(super) enum Out {
    /// A partition key column: the value the statement bound it to.
    Key(usize),
    /// A clustering column, decoded from the row's cells' names.
    Clustering(usize),
    /// A regular column's value (by its slot).
    Value(usize),
    WriteTime(usize),
    Ttl(usize),
}

/// A range bound on the clustering column after the `=` prefix: its source and whether it
/// is inclusive.
type RangeBound = Option<(Source, bool)>;

/// A planned slice's row key, predicate (`None`: an empty range) and row limit.
type Request<'v> = (Cow<'v, [u8]>, Option<SlicePredicate>, usize);

/// A planned `SELECT` of many CQL rows of one partition.
#[derive(Clone)]
pub(super) struct SlicePlan {
    pub(super) table: Arc<Table>,
    pub(super) parent: ColumnParent,
    /// Partition key sources, in key order.
    pub(super) key: Vec<Source>,
    /// Sources of `=` on the first clustering columns, in clustering order.
    pub(super) clustering_eq: Vec<Source>,
    /// `>`/`>=` and `<`/`<=` on the next clustering column.
    pub(super) lower: RangeBound,
    pub(super) upper: RangeBound,
    pub(super) limit: Option<Source>,
    pub(super) reversed: bool,
    /// The regular columns, by slot: their names as stored in a cell name's last component.
    pub(super) regular: Vec<Vec<u8>>,
    pub(super) clustering_cmp: Vec<Arc<dyn Comparator>>,
    pub(super) outputs: Vec<Out>,
    pub(super) columns: Columns,
    pub(super) checks: Vec<Check>,
    /// The sort key of the last component of each cell name a row may hold: the row marker's
    /// first, then the regular columns', by slot.
    pub(super) suffixes: Vec<Vec<u8>>,
    /// When the outputs are key or clustering columns, then values in the order a read
    /// meets their cells (so each can be written as its cell comes): how many key or
    /// clustering columns lead.
    pub(super) lead: Option<usize>,
    /// The bytes of the last result's rows, each: what the next reserves for its own.
    pub(super) row_bytes: Arc<AtomicUsize>,
}

impl std::fmt::Debug for SlicePlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlicePlan")
            .field("table", &self.table.name)
            .field("outputs", &self.outputs)
            .finish_non_exhaustive()
    }
}

impl SlicePlan {
    /// The plan of `s` against `t`, if it has the planned shape.
    // Long because it lists every condition a statement must meet to take the planned slice in one
    // place, to be read against what select_plan.rs does.
    pub(super) fn of(t: &Table, s: &Select) -> Option<SlicePlan> {
        let plain = !s.distinct
            && !s.json
            && s.group_by.is_empty()
            && !s.allow_filtering
            && s.per_partition_limit.is_none()
            && !t.clustering.is_empty()
            && !t.columns.iter().any(|c| c.ty.is_multi_cell());
        if !plain {
            return None;
        }
        let n = t.columns.len();
        let mut eq: Vec<Option<Source>> = vec![None; n];
        let (mut lower, mut upper): (Vec<RangeBound>, Vec<RangeBound>) =
            (vec![None; n], vec![None; n]);
        let mut checks = Vec::new();
        for r in &s.relations {
            let Relation::Compare(c, op, term) = r else {
                return None;
            };
            let (i, def) = t.column(c).ok()?;
            let src = source(term, &def.ty, c, &mut checks)?;
            let slot = match (def.kind, op) {
                (Kind::Regular, _) | (_, Op::Ne | Op::Contains | Op::ContainsKey | Op::In) => {
                    return None
                }
                (_, Op::Eq) => &mut eq[i],
                (Kind::PartitionKey(_), _) => return None,
                (Kind::Clustering(_), _) => {
                    let (bounds, inclusive) = match op {
                        Op::Gt | Op::Ge => (&mut lower, *op == Op::Ge),
                        _ => (&mut upper, *op == Op::Le),
                    };
                    if bounds[i].replace((src, inclusive)).is_some() {
                        return None;
                    }
                    continue;
                }
            };
            if slot.replace(src).is_some() {
                return None;
            }
        }
        let key = t
            .partition_key
            .iter()
            .map(|&i| eq[i].clone())
            .collect::<Option<Vec<_>>>()?;
        // `=` on a prefix of the clustering columns, then at most a range on the next; the
        // rest unrestricted, and at least one column left open (else it is a point read).
        let fixed = t
            .clustering
            .iter()
            .take_while(|&&i| eq[i].is_some())
            .count();
        if fixed == t.clustering.len() {
            return None;
        }
        for (j, &i) in t.clustering.iter().enumerate() {
            let ranged = lower[i].is_some() || upper[i].is_some();
            let ok = if j < fixed {
                !ranged
            } else {
                eq[i].is_none() && (j == fixed || !ranged)
            };
            if !ok {
                return None;
            }
        }
        let clustering_eq = t.clustering[..fixed]
            .iter()
            .map(|&i| eq[i].clone())
            .collect::<Option<Vec<_>>>()?;
        let next = t.clustering[fixed];
        let limit = match &s.limit {
            None => None,
            Some(Term::Bind(b)) => Some(Source::Bind(b.index())),
            Some(Term::Literal(Literal::Number(text))) => {
                let l: i64 = text.parse().ok().filter(|&l| l > 0)?;
                Some(Source::Literal(l.to_be_bytes().to_vec()))
            }
            Some(_) => return None,
        };
        let reversed = read_reversed(t, &s.order_by, &|pos| pos < fixed).ok()?;
        let (columns, selectors) = plain_columns(t, s)?.ok()?;
        let regular: Vec<usize> = t.regular_sorted();
        let slot_of = |i: usize| regular.iter().position(|&r| r == i);
        let outputs = selectors
            .iter()
            .map(|sel| {
                let (i, def) = match sel {
                    Selector::Column(c) | Selector::WriteTime(c, _) | Selector::Ttl(c) => {
                        t.column(c).ok()?
                    }
                    _ => return None,
                };
                Some(match (sel, def.kind) {
                    (Selector::Column(_), Kind::PartitionKey(k)) => Out::Key(k),
                    (Selector::Column(_), Kind::Clustering(k)) => Out::Clustering(k),
                    (Selector::Column(_), Kind::Regular) => Out::Value(slot_of(i)?),
                    (Selector::WriteTime(..), Kind::Regular) => Out::WriteTime(slot_of(i)?),
                    (Selector::Ttl(_), Kind::Regular) => Out::Ttl(slot_of(i)?),
                    _ => return None,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(SlicePlan {
            table: Arc::new(t.clone()),
            parent: ColumnParent::new(&t.name),
            key,
            clustering_eq,
            lower: lower[next].clone(),
            upper: upper[next].clone(),
            limit,
            reversed,
            regular: regular
                .iter()
                .map(|&i| t.columns[i].name.as_bytes().to_vec())
                .collect(),
            clustering_cmp: t.clustering_comparators(),
            lead: streamed(&outputs, reversed),
            outputs,
            columns: columns.into(),
            checks,
            suffixes: std::iter::once("")
                .chain(regular.iter().map(|&i| t.columns[i].name.as_str()))
                .map(sort_suffix)
                .collect(),
            row_bytes: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// The row limit of these values (`usize::MAX`: none); `None` when it is not one the
    /// planned path takes.
    pub(super) fn limit(&self, values: &[Option<&[u8]>]) -> Option<usize> {
        let Some(s) = &self.limit else {
            return Some(usize::MAX);
        };
        let bytes = resolve(s, values)?;
        let l = match bytes.len() {
            8 => i64::from_be_bytes(bytes.try_into().ok()?),
            4 => i64::from(i32::from_be_bytes(bytes.try_into().ok()?)),
            _ => return None,
        };
        usize::try_from(l).ok().filter(|&l| l > 0)
    }

    /// The slice predicate and row limit of these values; `None` when the general path must
    /// run (a null, a bad limit, a bound it refuses), `Some(None)` when the slice is empty.
    pub(super) fn request<'v>(&'v self, values: &[Option<&'v [u8]>]) -> Option<Request<'v>> {
        let parts: Parts<'_> = self
            .key
            .iter()
            .map(|s| resolve(s, values))
            .collect::<Option<_>>()?;
        let key = row_key(&parts)?;
        let limit = self.limit(values)?;
        let t = &self.table;
        let restricted =
            !self.clustering_eq.is_empty() || self.lower.is_some() || self.upper.is_some();
        let (start, finish) = if restricted {
            // The general path's bounds, from the same function.
            let n = t.columns.len();
            let mut eq: Vec<Option<Vec<Vec<u8>>>> = vec![None; n];
            for (s, &i) in self.clustering_eq.iter().zip(&t.clustering) {
                eq[i] = Some(vec![resolve(s, values)?.to_vec()]);
            }
            let next = t.clustering[self.clustering_eq.len()];
            let bound = |b: &RangeBound| -> Option<Option<(Vec<u8>, bool)>> {
                match b {
                    None => Some(None),
                    Some((s, inclusive)) => Some(Some((resolve(s, values)?.to_vec(), *inclusive))),
                }
            };
            let (mut lower, mut upper) = (vec![None; n], vec![None; n]);
            lower[next] = bound(&self.lower)?;
            upper[next] = bound(&self.upper)?;
            match clustering_slices(t, &eq, &lower, &upper).ok()?.pop() {
                Some(b) => (b.start, b.finish),
                None => return Some((key, None, limit)),
            }
        } else {
            (Vec::new(), Vec::new())
        };
        let (start, finish) = if self.reversed {
            (finish, start)
        } else {
            (start, finish)
        };
        let range = SliceRange {
            start,
            finish,
            reversed: self.reversed,
            count: limit,
        };
        Some((key, Some(SlicePredicate::Range(range)), limit))
    }
}

/// How many key or clustering outputs lead, when every value output can be written as its
/// cell comes: no write time or TTL, values after the key and clustering columns, in the
/// order a read meets their cells (by slot, forward; a reversed read meets them backwards, so
/// there it takes one value at most).
fn streamed(outputs: &[Out], reversed: bool) -> Option<usize> {
    let lead = outputs
        .iter()
        .take_while(|o| matches!(o, Out::Key(_) | Out::Clustering(_)))
        .count();
    let mut slots = Vec::new();
    for o in &outputs[lead..] {
        match o {
            Out::Value(n) => slots.push(*n),
            _ => return None,
        }
    }
    let ordered = slots.windows(2).all(|w| w[0] < w[1]);
    (ordered && (!reversed || slots.len() <= 1)).then_some(lead)
}
