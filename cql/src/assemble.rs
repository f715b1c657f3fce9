//! Turning a slice's cells back into CQL rows: where each cell name splits (clustering
//! prefix, column, collection element), what each selector outputs, and one output row from
//! an assembled row. `select.rs` reads and groups; this file owns no reads.

use super::ast::Selector;
use super::functions::cell_time;
use super::table::{Kind, Table};
use supercolumn::model::comparator::CompositeType;

/// A CQL row being assembled: per column, its value, write time and expiry (seconds). Where
/// the times of a multi-cell column's cells are selected, the slot as far past the table's
/// columns as the column's is into them holds their records (`cell_time::record`).
pub(super) type Row = Vec<Option<(Vec<u8>, i64, Option<i64>)>>;

/// What one selector outputs, resolved against the table once per statement.
#[derive(Clone)]
pub(super) enum Resolved {
    PartitionKey(usize),
    Clustering(usize),
    /// A column's value, moved out of the row when no later selector needs the column.
    Value(usize, bool),
    WriteTime(usize),
    Ttl(usize),
    /// The records of the times of a multi-cell column's cells, by their slot in the row
    /// (past the table's columns), their expiries turned into the seconds left.
    CellTimes(usize),
    /// The row key (`token()`'s argument).
    RowKey,
    Nothing,
}

pub(super) fn resolve(t: &Table, selectors: &[Selector]) -> Vec<Resolved> {
    let index = |c: &str| t.columns.iter().position(|d| d.name == *c);
    let mut out: Vec<Resolved> = selectors
        .iter()
        .map(|sel| match sel {
            Selector::Column(c) => match index(c).map(|i| (i, t.columns[i].kind)) {
                Some((_, Kind::PartitionKey(k))) => Resolved::PartitionKey(k),
                Some((_, Kind::Clustering(k))) => Resolved::Clustering(k),
                Some((i, Kind::Regular)) => Resolved::Value(i, false),
                None => Resolved::Nothing,
            },
            Selector::WriteTime(c, _) => index(c).map_or(Resolved::Nothing, Resolved::WriteTime),
            Selector::Ttl(c) => index(c).map_or(Resolved::Nothing, Resolved::Ttl),
            _ => Resolved::Nothing,
        })
        .collect();
    // The last selector of a column takes its value; earlier ones copy it.
    let mut needed = vec![false; t.columns.len()];
    for r in out.iter_mut().rev() {
        match r {
            Resolved::Value(i, take) => {
                *take = !needed[*i];
                needed[*i] = true;
            }
            Resolved::WriteTime(i) | Resolved::Ttl(i) => needed[*i] = true,
            _ => {}
        }
    }
    out
}

/// A cell name's clustering prefix length, column name and collection element key.
type CellParts<'a> = (usize, &'a [u8], Option<&'a [u8]>);

/// Where a cell's name splits in a table with `n` clustering columns: the byte length of its
/// clustering prefix, its column's name, and a collection element's key; `None` for a name of
/// any other shape.
pub(super) fn cell_parts(name: &[u8], n: usize) -> Option<CellParts<'_>> {
    let mut parts = CompositeType::components_of(name);
    for _ in 0..n {
        parts.next()?.ok()?;
    }
    let prefix_len = parts.offset();
    let column = parts.next()?.ok()?.bytes;
    let element = match parts.next() {
        None => None,
        Some(Ok(e)) if parts.next().is_none() => Some(e.bytes),
        Some(_) => return None,
    };
    Some((prefix_len, column, element))
}

/// One output row of a CQL row whose cells share the clustering prefix `prefix`.
pub(super) fn project(
    resolved: &[Resolved],
    key: &[u8],
    pk: &[Vec<u8>],
    prefix: &[u8],
    mut row: Row,
    now_seconds: i64,
) -> Vec<Option<Vec<u8>>> {
    resolved
        .iter()
        .map(|r| match *r {
            Resolved::PartitionKey(k) => pk.get(k).cloned(),
            Resolved::Clustering(k) => CompositeType::components_of(prefix)
                .nth(k)
                .and_then(|c| c.ok())
                .map(|c| c.bytes.to_vec()),
            Resolved::Value(i, true) => row[i].take().map(|v| v.0),
            Resolved::Value(i, false) => row[i].as_ref().map(|v| v.0.clone()),
            Resolved::WriteTime(i) => row[i].as_ref().map(|v| v.1.to_be_bytes().to_vec()),
            Resolved::Ttl(i) => {
                let expires = row[i].as_ref()?.2?;
                let left = (expires - now_seconds).clamp(0, i64::from(i32::MAX));
                Some((left as i32).to_be_bytes().to_vec())
            }
            Resolved::CellTimes(slot) => row
                .get(slot)
                .and_then(Option::as_ref)
                .map(|v| cell_time::remaining(&v.0, now_seconds)),
            Resolved::RowKey => Some(key.to_vec()),
            Resolved::Nothing => None,
        })
        .collect()
}

/// Which of a table's `width` columns' cells have their times selected (empty: none).
pub(super) fn timed_columns(resolved: &[Resolved], width: usize) -> Vec<bool> {
    let mut timed = Vec::new();
    for r in resolved {
        if let Resolved::CellTimes(slot) = *r {
            timed.resize(width, false);
            if let Some(t) = timed.get_mut(slot - width) {
                *t = true;
            }
        }
    }
    timed
}
