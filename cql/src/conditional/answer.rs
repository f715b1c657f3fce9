//! The answers of conditional writes, Cassandra's: the `[applied]` row of one write (with
//! what decided it when not applied), a batch's rows, and the partition's statics a condition
//! on them is checked against. Reading and checking the rows is `mod.rs`'s.

use super::super::ast::Condition;
use super::super::rows::Rows;
use super::super::table::{Kind, Table};
use super::super::types::CqlType;

/// The first row of `partition` with only its key and static columns kept (the others null);
/// none when no static column is live.
pub(super) fn statics_only(t: &Table, partition: &Rows) -> Rows {
    let mut out = Rows::new(partition.columns().clone());
    let kept: Vec<bool> = partition
        .columns()
        .iter()
        .map(|(name, _)| {
            t.column(name)
                .is_ok_and(|(_, d)| d.is_static || matches!(d.kind, Kind::PartitionKey(_)))
        })
        .collect();
    let live = |name: &str, v: Option<&[u8]>| t.is_static(name) && v.is_some();
    if let Some(first) = partition.first() {
        let any_static = first
            .iter()
            .zip(partition.columns().iter())
            .any(|(v, (name, _))| live(name, v));
        if any_static {
            let values: Vec<Option<&[u8]>> = first
                .iter()
                .zip(&kept)
                .map(|(v, keep)| v.filter(|_| *keep))
                .collect();
            out.push_row(values);
        }
    }
    out
}

/// The `[applied]` row: alone when applied (and for `IF EXISTS`, or a row that does not
/// exist), else with what decided it.
pub(super) fn answer(applied: bool, condition: &Condition, current: Rows) -> Rows {
    let flag = [u8::from(applied)];
    let mut columns = vec![("[applied]".to_string(), CqlType::Boolean)];
    let mut row = vec![Some(&flag[..])];
    if !applied {
        let existing = current.first();
        match condition {
            Condition::Exists => {}
            Condition::NotExists => {
                if let Some(r) = existing {
                    columns.extend(current.columns().iter().cloned());
                    row.extend(r.iter());
                }
            }
            // A row that does not exist answers `[applied]` alone (Cassandra's).
            Condition::Columns(cs) => {
                for c in cs.iter().filter(|_| existing.is_some()).map(|c| &c.column) {
                    if columns.iter().any(|(n, _)| n == c) {
                        continue;
                    }
                    if let Some(i) = current.columns().iter().position(|(n, _)| n == c) {
                        columns.push(current.columns()[i].clone());
                        row.push(existing.and_then(|r| r.get(i)));
                    }
                }
            }
        }
    }
    let mut out = Rows::new(columns);
    out.push_row(row);
    out
}

/// A conditional batch's answer: `[applied]` alone when applied (or when no row checked
/// exists), else a row per existing row checked, in clustering order, with its key columns and
/// the conditioned ones (every column, when a statement asked whether its row exists).
pub(super) fn batch_answer(
    applied: bool,
    t: &Table,
    conditions: &[&Condition],
    mut read: Vec<(Vec<Vec<u8>>, Rows)>,
) -> Rows {
    let flag = [u8::from(applied)];
    read.retain(|(_, r)| !r.is_empty());
    // The rows checked carry their partition's statics: the statics checked on their own
    // answer only when no row was.
    if read.iter().any(|(c, _)| !c.is_empty()) {
        read.retain(|(c, _)| !c.is_empty());
    }
    let Some(columns) = read
        .first()
        .map(|(_, r)| r.columns().clone())
        .filter(|_| !applied)
    else {
        let mut out = Rows::new(vec![("[applied]".to_string(), CqlType::Boolean)]);
        out.push_row([Some(&flag[..])]);
        return out;
    };
    let every = conditions
        .iter()
        .any(|c| matches!(c, Condition::Exists | Condition::NotExists));
    // Every column, or the key columns then the conditioned ones in the order the conditions
    // name them.
    let at = |name: &str| columns.iter().position(|(n, _)| n == name);
    let mut kept: Vec<usize> = (0..columns.len())
        .filter(|&i| {
            every
                || t.column(&columns[i].0)
                    .is_ok_and(|(_, d)| d.kind != Kind::Regular)
        })
        .collect();
    if !every {
        for c in conditions {
            if let Condition::Columns(cs) = c {
                for i in cs.iter().filter_map(|c| at(&c.column)) {
                    if !kept.contains(&i) {
                        kept.push(i);
                    }
                }
            }
        }
    }
    let cmps = t.clustering_comparators();
    read.sort_by(|(a, _), (b, _)| {
        a.iter()
            .zip(b)
            .zip(&cmps)
            .map(|((x, y), cmp)| cmp.compare(x, y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut out = Rows::new(
        std::iter::once(("[applied]".to_string(), CqlType::Boolean))
            .chain(kept.iter().map(|&i| columns[i].clone()))
            .collect::<Vec<_>>(),
    );
    for (_, r) in &read {
        for row in r {
            let values = kept.iter().map(|&i| row.get(i));
            out.push_row(std::iter::once(Some(&flag[..])).chain(values));
        }
    }
    out
}
