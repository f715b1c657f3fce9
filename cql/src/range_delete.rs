//! A `DELETE` of a range of rows: `WHERE k = ? AND c >= ? AND c < ?`, a slice after `=` on the
//! clustering columns before it, a multi-column slice `(c1, c2) > (?, ?)`, or rows named by
//! multi-column `=`/`IN`. Each partition named by `=`/`IN` on its whole key, and each clustering
//! slice a `SELECT` with the same `WHERE` would read, becomes one engine range deletion
//! (Cassandra's range tombstone): rows written into the range later with an older timestamp
//! are deleted too, and an empty range (`c > 2 AND c < 1`) deletes nothing. Which `DELETE`s
//! come here is `write.rs`'s to decide; this file refuses what Cassandra refuses of their
//! `WHERE`, and never reads.

use super::ast::{Op, Relation};
use super::bounds::partition_keys;
use super::error::CqlError;
use super::session::Session;
use super::table::{Kind, Table};
use supercolumn::BatchMutation;

/// Whether a `DELETE`'s `WHERE` names its rows by a range of clustering values, one column's
/// or several (`(a, b) > (…)`): more than a prefix of `=`/`IN`.
pub(super) fn names_a_range(t: &Table, relations: &[Relation]) -> bool {
    relations.iter().any(|r| match r {
        Relation::Multi(_, op, _) => matches!(op, Op::Gt | Op::Ge | Op::Lt | Op::Le),
        Relation::Compare(c, Op::Gt | Op::Ge | Op::Lt | Op::Le, _) => t
            .column(c)
            .is_ok_and(|(_, d)| matches!(d.kind, Kind::Clustering(_))),
        _ => false,
    })
}

impl Session<'_> {
    /// Adds to `batch` the range deletions at `timestamp` (`None`: now) of the rows a
    /// `DELETE`'s `WHERE` names by a range.
    pub(super) fn add_range_deletions(
        &self,
        t: &Table,
        relations: &[Relation],
        timestamp: Option<i64>,
        batch: &mut BatchMutation,
    ) -> Result<(), CqlError> {
        let r = self.restrictions(t, relations)?;
        let filtered = r
            .filters
            .iter()
            .map(|f| f.0)
            .chain(r.entries.iter().map(|e| e.0))
            .chain(r.null_compared.iter().map(|n| n.0));
        let others: Vec<usize> = filtered.collect();
        if !others.is_empty() {
            return Err(t.non_key_refusal(others));
        }
        if !r.span.is_whole() {
            return Err(CqlError::invalid(
                "The token function cannot be used in WHERE clauses for DELETE statements",
            ));
        }
        let Some(keys) = partition_keys(t, &r.eq)? else {
            let missing: Vec<&str> = t
                .partition_key
                .iter()
                .map(|&i| t.columns[i].name.as_str())
                .collect();
            return Err(CqlError::invalid(format!(
                "Some partition key parts are missing: {}",
                missing.join(", ")
            )));
        };
        let slices = r.slices(t, false)?;
        for key in &keys {
            for s in &slices {
                batch.remove_range(key, &t.name, &s.start, &s.finish, timestamp);
            }
        }
        Ok(())
    }
}
