//! The plan of the third hot shape (beside `plan.rs`'s insert and point read): a `SELECT` of
//! plain columns of one partition, named by `=` on its whole partition key, with `=` on a
//! prefix of the clustering columns and a range on the next, in either order, with a `LIMIT`.
//! It reads through the engine's cell visitor and builds each CQL row straight from the cells'
//! sort keys: no column, name or page is built per cell. What the plan does not take — and
//! every value it would have to refuse — runs `select.rs`, which owns the answers and the
//! errors; this file only ever answers what that path would.

use std::sync::Arc;

use smallvec::SmallVec;

use super::ast::{Op, Relation, Select, Selector, Term};
use super::bounds::clustering_slices;
use super::error::CqlError;
use super::plan::{checked, resolve, row_key, source, Parts, Source};
use super::select::{output_columns, read_reversed};
use super::table::{Kind, Table};
use super::types::{CqlType, Literal};
use super::{Columns, Rows, Session};
use crate::model::cell::CellValueRef;
use crate::model::comparator::Comparator;
use crate::model::sort_key::{escaped_len, unescape_into};
use crate::query::{ColumnParent, SlicePredicate, SliceRange};

/// One output column of a planned slice.
#[derive(Debug, Clone)]
enum Out {
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
type Request = (Vec<u8>, Option<SlicePredicate>, usize);

/// A planned `SELECT` of many CQL rows of one partition.
#[derive(Clone)]
pub(super) struct SlicePlan {
    table: Arc<Table>,
    parent: ColumnParent,
    /// Partition key sources, in key order.
    key: Vec<Source>,
    /// Sources of `=` on the first clustering columns, in clustering order.
    clustering_eq: Vec<Source>,
    /// `>`/`>=` and `<`/`<=` on the next clustering column.
    lower: RangeBound,
    upper: RangeBound,
    limit: Option<Source>,
    reversed: bool,
    /// The regular columns, by slot: their names as stored in a cell name's last component.
    regular: Vec<Vec<u8>>,
    clustering_cmp: Vec<Arc<dyn Comparator>>,
    outputs: Vec<Out>,
    columns: Columns,
    checks: Vec<(usize, CqlType, String)>,
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
    pub(super) fn of(t: &Table, s: &Select) -> Option<SlicePlan> {
        let plain = !s.distinct
            && !s.allow_filtering
            && s.per_partition_limit.is_none()
            && !t.clustering.is_empty()
            && !t.columns.iter().any(|c| c.ty.is_collection());
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
                (Kind::Regular, _) => return None,
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
        let reversed = read_reversed(t, &s.order_by).ok()?;
        let (columns, selectors) = output_columns(t, s).ok()?;
        let regular: Vec<usize> = t.regular_sorted();
        let slot_of = |i: usize| regular.iter().position(|&r| r == i);
        let outputs = selectors
            .iter()
            .map(|sel| {
                let (i, def) = match sel {
                    Selector::Column(c) | Selector::WriteTime(c) | Selector::Ttl(c) => {
                        t.column(c).ok()?
                    }
                    Selector::Count => return None,
                };
                Some(match (sel, def.kind) {
                    (Selector::Column(_), Kind::PartitionKey(k)) => Out::Key(k),
                    (Selector::Column(_), Kind::Clustering(k)) => Out::Clustering(k),
                    (Selector::Column(_), Kind::Regular) => Out::Value(slot_of(i)?),
                    (Selector::WriteTime(_), Kind::Regular) => Out::WriteTime(slot_of(i)?),
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
            outputs,
            columns: columns.into(),
            checks,
        })
    }

    /// The slice predicate and row limit of these values; `None` when the general path must
    /// run (a null, a bad limit, a bound it refuses), `Some(None)` when the slice is empty.
    fn request(&self, values: &[Option<&[u8]>]) -> Option<Request> {
        let parts: Parts<'_> = self
            .key
            .iter()
            .map(|s| resolve(s, values))
            .collect::<Option<_>>()?;
        let key = row_key(&parts)?;
        let limit = match &self.limit {
            None => usize::MAX,
            Some(s) => {
                let bytes = resolve(s, values)?;
                let l = match bytes.len() {
                    8 => i64::from_be_bytes(bytes.try_into().ok()?),
                    4 => i64::from(i32::from_be_bytes(bytes.try_into().ok()?)),
                    _ => return None,
                };
                usize::try_from(l).ok().filter(|&l| l > 0)?
            }
        };
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

    /// Appends to `out` the output row of the CQL row whose cells' names begin with the sort
    /// key `prefix` and whose kept cells are `cells` (values in `held`); `false` (and nothing
    /// appended) when a clustering value does not decode.
    fn push_row(
        &self,
        values: &[Option<&[u8]>],
        prefix: &[u8],
        (cells, held): (&[Option<Held>], &[u8]),
        now_seconds: i64,
        scratch: &mut Vec<u8>,
        out: &mut Rows,
    ) -> bool {
        for o in &self.outputs {
            let value = match *o {
                Out::Key(k) => resolve(&self.key[k], values),
                Out::Clustering(k) => {
                    if self.clustering_value(prefix, k, scratch, out).is_none() {
                        out.abandon_row();
                        return false;
                    }
                    continue;
                }
                Out::Value(n) => cells[n].as_ref().map(|c| &held[c.0.clone()]),
                Out::WriteTime(n) => {
                    match cells[n].as_ref() {
                        Some(c) => out.push_value(&c.1.to_be_bytes()),
                        None => out.push_null(),
                    }
                    continue;
                }
                Out::Ttl(n) => {
                    match cells[n].as_ref().and_then(|c| c.2) {
                        Some(expires) => {
                            let left = (expires - now_seconds).clamp(0, i64::from(i32::MAX));
                            out.push_value(&(left as i32).to_be_bytes());
                        }
                        None => out.push_null(),
                    }
                    continue;
                }
            };
            match value {
                Some(v) => out.push_value(v),
                None => out.push_null(),
            }
        }
        out.end_row();
        true
    }

    /// Appends clustering column `k`'s value, decoded from a row's sort key prefix, to `out`.
    fn clustering_value(
        &self,
        prefix: &[u8],
        k: usize,
        scratch: &mut Vec<u8>,
        out: &mut Rows,
    ) -> Option<()> {
        let mut rest = prefix;
        for _ in 0..k {
            rest = &rest[escaped_len(rest)?..];
        }
        let n = escaped_len(rest)?;
        let part = &rest[..n - 2];
        let part = if part.contains(&0) {
            scratch.clear();
            unescape_into(part, scratch);
            &scratch[..]
        } else {
            part
        };
        self.clustering_cmp[k]
            .decode_sort_key(part, out.value_buf())
            .ok()?;
        out.end_value();
        Some(())
    }
}

/// A live cell kept for the row being assembled: where its value is in the row's buffer, its
/// timestamp and its expiry (seconds).
type Held = (std::ops::Range<usize>, i64, Option<i64>);

/// A cell name's clustering prefix length, column name, and whether an element follows.
type NameParts<'a> = (usize, &'a [u8], bool);

/// Where a cell's sort key splits: its clustering prefix's length, its column's name (as
/// stored, escaped), and whether a collection element follows; `Err` for a key that does not
/// split into terminated components (damage: the general path reports it), `Ok(None)` for one
/// of another shape (the general path skips it). The first `known` bytes, when not 0, are
/// known to hold the clustering components (the row's prefix, met again).
fn split(key: &[u8], n_ck: usize, known: usize) -> Result<Option<NameParts<'_>>, ()> {
    // Only the two ends a caller needs are kept: where the clustering prefix ends and where
    // the column's component does; every component is still checked to be terminated.
    let mut parts = if known > 0 { n_ck } else { 0 };
    let mut prefix = if n_ck == 0 { 0 } else { known };
    let mut column_end = 0;
    let mut at = known;
    while at < key.len() {
        let n = escaped_len(&key[at..]).ok_or(())?;
        if !(1..=3).contains(&key[at + n - 1]) {
            return Err(());
        }
        at += n;
        parts += 1;
        if parts == n_ck && known == 0 {
            prefix = at;
        }
        if parts == n_ck + 1 {
            column_end = at - 2;
        }
    }
    if parts < n_ck + 1 || parts > n_ck + 2 {
        return Ok(None);
    }
    Ok(Some((prefix, &key[prefix..column_end], parts == n_ck + 2)))
}

impl Session<'_> {
    /// Runs a planned slice; `Ok(None)` when its values (or the data) need the general path.
    pub(super) fn run_slice_plan(
        &self,
        p: &SlicePlan,
        values: &[Option<&[u8]>],
    ) -> Result<Option<Rows>, CqlError> {
        checked(&p.checks, values)?;
        let Some((key, predicate, limit)) = p.request(values) else {
            return Ok(None);
        };
        // A LIMIT's rows at once (up to a page's worth): no regrowth on the way.
        let mut out = Rows::with_capacity(p.columns.clone(), limit.min(256));
        let Some(predicate) = predicate else {
            return Ok(Some(out));
        };
        // TTL() counts down as the general path's does (see `select`).
        let now_seconds = (self.db.options().clock.now_micros() + 999_999).div_euclid(1_000_000);
        let n_ck = p.table.clustering.len();
        let mut prefix: Vec<u8> = Vec::new();
        // The open row's kept cells, by slot, and their values, one after another.
        let mut cells: SmallVec<[Option<Held>; 4]> = SmallVec::new();
        let mut held: Vec<u8> = Vec::new();
        let mut open = false;
        let mut fallback = false;
        // One buffer for every escaped name part unescaped on the way.
        let mut scratch = Vec::new();
        self.db.visit_slice(
            &p.table.keyspace,
            &key,
            &p.parent,
            &predicate,
            |name, cell| {
                // A row's cells after its first share its prefix: only the rest is split.
                let known = if open && n_ck > 0 && name.starts_with(&prefix) {
                    prefix.len()
                } else {
                    0
                };
                let (prefix_len, column, element) = match split(name, n_ck, known) {
                    Ok(Some(s)) => s,
                    Ok(None) => return Ok(true),
                    Err(()) => {
                        fallback = true;
                        return Ok(false);
                    }
                };
                // A known prefix was met again: the same row.
                if open && known == 0 && prefix[..] != name[..prefix_len] {
                    let row = (&cells[..], &held[..]);
                    if !p.push_row(values, &prefix, row, now_seconds, &mut scratch, &mut out) {
                        fallback = true;
                        return Ok(false);
                    }
                    open = false;
                    if out.len() >= limit {
                        return Ok(false);
                    }
                }
                if !open {
                    prefix.clear();
                    prefix.extend_from_slice(&name[..prefix_len]);
                    cells.clear();
                    cells.resize(p.regular.len(), None);
                    held.clear();
                    open = true;
                }
                // The marker (or a column dropped since) only says the row is live.
                let mut unescaped = Vec::new();
                let column = if column.contains(&0) {
                    // A quoted column name holding a NUL: rare enough to allocate for.
                    unescape_into(column, &mut unescaped);
                    &unescaped[..]
                } else {
                    column
                };
                let slot = p.regular.iter().position(|r| r[..] == *column);
                if let (Some(slot), false) = (slot, element) {
                    let c = cell.as_ref();
                    if let CellValueRef::Live { value, ttl } = c.value {
                        let at = held.len();
                        held.extend_from_slice(value);
                        let expires = ttl.map(|t| t.local_expiration_time);
                        cells[slot] = Some((at..held.len(), c.timestamp, expires));
                    }
                }
                Ok(true)
            },
        )?;
        if fallback {
            return Ok(None);
        }
        let row = (&cells[..], &held[..]);
        if open
            && out.len() < limit
            && !p.push_row(values, &prefix, row, now_seconds, &mut scratch, &mut out)
        {
            return Ok(None);
        }
        Ok(Some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::split;
    use crate::model::sort_key::escape_into;

    /// A composite sort key of these components (each at end of component 0).
    fn key(parts: &[&[u8]]) -> Vec<u8> {
        let mut k = Vec::new();
        for p in parts {
            escape_into(p, &mut k);
            k.extend_from_slice(&[0, 2]);
        }
        k
    }

    #[test]
    fn a_sort_key_splits_alike_with_or_without_its_known_prefix() {
        let ck: &[u8] = b"a\0b";
        let prefix = key(&[ck]).len();
        for (parts, want) in [
            (vec![ck, b"" as &[u8]], Some((prefix, &b""[..], false))),
            (vec![ck, b"v"], Some((prefix, &b"v"[..], false))),
            (vec![ck, b"m", b"e"], Some((prefix, &b"m"[..], true))),
            (vec![ck, b"m", b"e", b"x"], None),
        ] {
            let k = key(&parts);
            assert_eq!(split(&k, 1, 0), Ok(want), "{parts:?}");
            assert_eq!(
                split(&k, 1, prefix),
                Ok(want),
                "{parts:?} with its prefix known"
            );
        }
        // The clustering component alone is no cell of a column.
        assert_eq!(split(&key(&[ck]), 1, 0), Ok(None));
        // Damage: an unterminated or badly terminated component.
        assert_eq!(split(b"ab", 1, 0), Err(()));
        assert_eq!(split(&[b'a', 0, 9], 1, 0), Err(()));
        // A table without clustering columns: the column is the first component.
        assert_eq!(split(&key(&[b"v"]), 0, 0), Ok(Some((0, &b"v"[..], false))));
    }
}
