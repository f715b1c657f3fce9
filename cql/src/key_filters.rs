//! Restrictions on primary key columns that cannot narrow a read become filters on the rows
//! read, as Cassandra's do: a clustering column restricted after one left unrestricted (or
//! after a range), and a partition key restricted on some of its columns only or by a range. Such a query
//! filters, so it needs `ALLOW FILTERING` unless an index finds its rows. An `IN` on such a
//! column filters too (Cassandra 4.0 on), but beside an index of a key column, which refuses it.

use super::error::CqlError;
use super::table::{Kind, Table};
use super::types::{in_list, Op};

/// A filter: a column's index, the operator and the value.
type Filter = (usize, Op, Vec<u8>);

/// Each column's `=`/`IN` values, and its lower and upper bounds (value, inclusive).
pub(super) struct KeyRestrictions<'r> {
    /// What multi-column relations restrict the clustering columns to.
    pub multi: Option<MultiKeys>,
    /// An index of a key column finds the rows: every key restriction (but `IN`) filters.
    pub by_key_index: bool,
    pub eq: &'r mut [Option<Vec<Vec<u8>>>],
    pub lower: &'r mut [Option<(Vec<u8>, bool)>],
    pub upper: &'r mut [Option<(Vec<u8>, bool)>],
}

/// Multi-column relations on the clustering columns.
#[derive(Clone, Copy)]
pub(super) enum MultiKeys {
    /// `=` or `IN`: their slices take every clustering column.
    Tuples,
    /// A range over the clustering columns at positions `start..end`: those after it filter,
    /// as after a single-column range.
    Range { start: usize, end: usize },
}

/// What [`demote`] moved.
#[derive(Default)]
pub(super) struct Demoted {
    /// How many filters it added.
    pub count: usize,
    /// The first clustering column it moved, the column before it (left unrestricted, or
    /// restricted by a range), and whether that one holds a range.
    pub clustering: Option<(usize, usize, bool)>,
}

pub(super) const NEEDS_FILTERING: &str = "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING";

impl Demoted {
    /// Whether a query without `ALLOW FILTERING` may run with `filters` filters (these moved
    /// among them), `index` when an index finds its rows (`Some(true)`: an index of a key
    /// column, whose equality is among those moved): an indexed equality needs no `ALLOW
    /// FILTERING`, nor do the key columns filtered beside it; every other filter does.
    /// Refused in Cassandra's words.
    pub(super) fn allowed(
        &self,
        t: &Table,
        filters: usize,
        index: Option<bool>,
    ) -> Result<(), CqlError> {
        let (indexed, on_key) = (index.is_some(), index == Some(true));
        if let (Some((c, before, ranged)), false) = (self.clustering, indexed) {
            let (name, prev) = (&t.columns[c].name, &t.columns[before].name);
            return Err(CqlError::invalid(if ranged {
                format!("Clustering column \"{name}\" cannot be restricted (preceding column \"{prev}\" is restricted by a non-EQ relation)")
            } else {
                format!("PRIMARY KEY column \"{name}\" cannot be restricted as preceding column \"{prev}\" is not restricted")
            }));
        }
        let others = filters - self.count;
        if !indexed && self.count > 0 || others > usize::from(indexed && !on_key) {
            return Err(CqlError::invalid(NEEDS_FILTERING));
        }
        Ok(())
    }
}

/// Moves the key restrictions of `r` that cannot narrow the read into `filters`.
pub(super) fn demote(t: &Table, r: KeyRestrictions<'_>, filters: &mut Vec<Filter>) -> Demoted {
    let before = filters.len();
    let mut clustering = None;
    // The clustering prefix fixed by `=`, then at most one range, narrows the read.
    let mut k = 0;
    while k < t.clustering.len() && r.eq[t.clustering[k]].is_some() {
        k += 1;
    }
    let ranged = t
        .clustering
        .get(k)
        .is_some_and(|&i| r.eq[i].is_none() && (r.lower[i].is_some() || r.upper[i].is_some()));
    let after = if r.by_key_index {
        0
    } else if let Some(multi) = r.multi {
        match multi {
            MultiKeys::Tuples => t.clustering.len(),
            MultiKeys::Range { end, .. } => end,
        }
    } else {
        k + usize::from(ranged)
    };
    let past_prefix = t.clustering.iter().skip(after).copied();
    // A partition key restricted on some of its columns names no partition.
    let named = t
        .partition_key
        .iter()
        .filter(|&&i| r.eq[i].is_some())
        .count();
    let key_ranged = t
        .partition_key
        .iter()
        .any(|&i| r.lower[i].is_some() || r.upper[i].is_some());
    let partial = key_ranged || named > 0 && (named < t.partition_key.len() || r.by_key_index);
    let keys = t.partition_key.iter().copied().filter(|_| partial);
    for i in past_prefix.chain(keys) {
        let moved = filters.len();
        match r.eq[i].take() {
            Some(mut v) if v.len() == 1 => filters.push((i, Op::Eq, v.pop().unwrap_or_default())),
            // An index of a key column leaves an `IN` to be refused (Cassandra's words).
            Some(v) if r.by_key_index => r.eq[i] = Some(v),
            Some(v) => filters.push((i, Op::In, in_list(&v))),
            None => {}
        }
        if let Some((v, inclusive)) = r.lower[i].take() {
            filters.push((i, if inclusive { Op::Ge } else { Op::Gt }, v));
        }
        if let Some((v, inclusive)) = r.upper[i].take() {
            filters.push((i, if inclusive { Op::Le } else { Op::Lt }, v));
        }
        if let (Kind::Clustering(j), true) = (t.columns[i].kind, filters.len() > moved) {
            let prev = t.clustering[j.saturating_sub(1)];
            // The first column moved follows one left in place: free, or holding the range
            // (a multi-column range is named by its first column).
            let moved = match r.multi {
                Some(MultiKeys::Range { start, .. }) => (i, t.clustering[start], true),
                _ => (i, prev, r.lower[prev].is_some() || r.upper[prev].is_some()),
            };
            clustering = clustering.or(Some(moved));
        }
    }
    Demoted {
        count: filters.len() - before,
        clustering,
    }
}
