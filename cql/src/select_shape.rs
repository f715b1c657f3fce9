//! What a `SELECT` returns and may ask before anything is read: its output columns and the
//! selector filling each, Cassandra's refusals (checked at PREPARE time too), the read's
//! direction under `ORDER BY`, and the merge of several partitions' rows by it (Cassandra's
//! post-query ordering). `select.rs` reads; this file reads nothing.

use super::ast::{Op, Relation, Select, Selector};
use super::error::CqlError;
use super::rows::Rows;
use super::table::{ColumnDef, Kind, Table};
use super::types::CqlType;

/// `rows` (partition after partition, each in read order) merged by their clustering prefixes
/// in read order, the earlier partition first among equals, and cut to `limit`.
pub(super) fn merged(
    t: &Table,
    rows: Rows,
    prefixes: &[Vec<u8>],
    reversed: bool,
    limit: usize,
) -> Rows {
    let cmp = t.comparator();
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| {
        let o = cmp.compare(&prefixes[a], &prefixes[b]);
        if reversed {
            o.reverse()
        } else {
            o
        }
    });
    let mut out = Rows::with_capacity(rows.columns().clone(), order.len().min(limit));
    for i in order.into_iter().take(limit) {
        out.push_row(rows.row(i).iter());
    }
    out
}

/// `writeTime` and `ttl` take a regular column holding one cell (Cassandra's messages).
fn selection_function(d: &ColumnDef, f: &str) -> Result<(), CqlError> {
    let c = &d.name;
    if d.kind != Kind::Regular {
        return Err(CqlError::invalid(format!(
            "Cannot use selection function {f} on PRIMARY KEY part {c}"
        )));
    }
    if d.ty.is_collection() {
        return Err(CqlError::invalid(format!(
            "Cannot use selection function {f} on non-frozen collection {c}"
        )));
    }
    Ok(())
}

/// What Cassandra refuses in a `SELECT` before reading anything, checked at PREPARE time too.
pub(super) fn validate(t: &Table, s: &Select) -> Result<(), CqlError> {
    let counting = matches!(s.selectors.first(), Some(Selector::Count));
    if s.per_partition_limit.is_some() && counting {
        return Err(CqlError::invalid(
            "PER PARTITION LIMIT is not allowed with aggregate queries.",
        ));
    }
    if s.per_partition_limit.is_some() && s.distinct {
        return Err(CqlError::invalid(
            "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries",
        ));
    }
    let keyed = t.partition_key.iter().all(|&i| {
        let name = &t.columns[i].name;
        s.relations.iter().any(|r| match r {
            Relation::Compare(c, Op::Eq, _) | Relation::In(c, _) => c == name,
            _ => false,
        })
    });
    if !s.order_by.is_empty() && !keyed {
        return Err(CqlError::invalid(
            "ORDER BY is only supported when the partition key is restricted by an EQ or an IN.",
        ));
    }
    output_columns(t, s).map(|_| ())
}

/// Whether the read walks the clustering order backwards (`ORDER BY` against the declared
/// order of the first clustering column).
pub(super) fn read_reversed(t: &Table, order_by: &[(String, bool)]) -> Result<bool, CqlError> {
    let mut reversed = None;
    for (i, (c, desc)) in order_by.iter().enumerate() {
        let ok = t
            .clustering
            .get(i)
            .is_some_and(|&ci| t.columns[ci].name == *c);
        if !ok {
            return Err(CqlError::invalid(
                "ORDER BY names the clustering columns, in order",
            ));
        }
        let this = *desc != t.descending[i];
        if reversed.is_some_and(|r| r != this) {
            return Err(CqlError::invalid(
                "ORDER BY must follow the clustering order or its exact reverse",
            ));
        }
        reversed = Some(this);
    }
    Ok(reversed.unwrap_or(false))
}

/// A result's typed columns, and the selector that fills each.
type Output = (Vec<(String, CqlType)>, Vec<Selector>);

/// The result's columns and what fills each.
pub(super) fn output_columns(t: &Table, s: &Select) -> Result<Output, CqlError> {
    let selectors: Vec<Selector> = if s.selectors.is_empty() {
        let keys = t.partition_key.iter().chain(&t.clustering).copied();
        let cols: Vec<usize> = if s.distinct {
            let statics = t.regular_sorted().into_iter();
            let statics = statics.filter(|&i| t.columns[i].is_static);
            t.partition_key.iter().copied().chain(statics).collect()
        } else {
            keys.chain(t.regular_sorted()).collect()
        };
        cols.into_iter()
            .map(|i| Selector::Column(t.columns[i].name.clone()))
            .collect()
    } else {
        s.selectors.clone()
    };
    if selectors.iter().any(|x| matches!(x, Selector::Count)) && selectors.len() > 1 {
        return Err(CqlError::invalid(
            "COUNT(*) cannot be selected with other columns here",
        ));
    }
    let mut columns = Vec::new();
    for sel in &selectors {
        columns.push(match sel {
            Selector::Column(c) => {
                let (_, d) = t.column(c)?;
                if s.distinct && !matches!(d.kind, Kind::PartitionKey(_)) && !d.is_static {
                    return Err(CqlError::invalid(format!(
                        "SELECT DISTINCT queries must only request partition key columns and/or static columns (not {c})"
                    )));
                }
                (c.clone(), d.ty.clone())
            }
            Selector::WriteTime(c) => {
                let (_, d) = t.column(c)?;
                selection_function(d, "writeTime")?;
                (format!("writetime({c})"), CqlType::Bigint)
            }
            Selector::Ttl(c) => {
                let (_, d) = t.column(c)?;
                selection_function(d, "ttl")?;
                (format!("ttl({c})"), CqlType::Int)
            }
            Selector::Count => ("count".to_string(), CqlType::Bigint),
        });
    }
    Ok((columns, selectors))
}
