//! What a `SELECT` returns and may ask before anything is read: its output columns and the
//! selector filling each, Cassandra's refusals (checked at PREPARE time too), the groups of a
//! `GROUP BY`, the read's direction under `ORDER BY`, the merge of several partitions' rows by it (Cassandra's
//! post-query ordering), and the cell names of a row named whole. `select.rs` reads; this file
//! reads nothing.

use super::ast::{Op, Relation, Select, Selector};
use super::error::CqlError;
use super::rows::Rows;
use super::selection::{function_word, plain, resolve, selection_function, Selection};
use super::table::{Kind, Table};
use super::types::CqlType;
use supercolumn::model::partitioner::Partitioner;

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

/// What Cassandra refuses in a `SELECT` before reading anything, checked at PREPARE time too.
pub(super) fn validate(t: &Table, s: &Select, p: Partitioner) -> Result<(), CqlError> {
    let (_, _, selection) = output_columns(t, s, p)?;
    let aggregating = selection.as_ref().is_some_and(Selection::aggregating);
    // With GROUP BY, PER PARTITION LIMIT counts each partition's groups.
    if s.per_partition_limit.is_some() && aggregating && s.group_by.is_empty() {
        return Err(CqlError::invalid(
            "PER PARTITION LIMIT is not allowed with aggregate queries.",
        ));
    }
    if s.per_partition_limit.is_some() && s.distinct {
        return Err(CqlError::invalid(
            "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries",
        ));
    }
    if s.distinct && !distinct_restrictions_allowed(t, &s.relations) {
        return Err(CqlError::invalid(
            "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.",
        ));
    }
    let keyed = t.partition_key.iter().all(|&i| {
        let name = &t.columns[i].name;
        s.relations.iter().any(|r| match r {
            Relation::Compare(c, Op::Eq, _) | Relation::In(c, _) | Relation::InMarker(c, _) => {
                c == name
            }
            _ => false,
        })
    });
    if !s.order_by.is_empty() && !keyed {
        return Err(CqlError::invalid(
            "ORDER BY is only supported when the partition key is restricted by an EQ or an IN.",
        ));
    }
    Ok(())
}

/// Whether a `SELECT DISTINCT`'s relations restrict only partition key and static columns.
fn distinct_restrictions_allowed(t: &Table, relations: &[Relation]) -> bool {
    let allowed = |c: &str| {
        t.column(c)
            .is_ok_and(|(_, d)| matches!(d.kind, Kind::PartitionKey(_)) || d.is_static)
    };
    relations.iter().all(|r| match r {
        Relation::Compare(c, ..) | Relation::In(c, _) | Relation::InMarker(c, _) => allowed(c),
        Relation::Entry(c, ..) => allowed(c),
        Relation::Multi(..) | Relation::MultiIn(..) => false,
        Relation::Token(..) => true,
    })
}

/// Whether `ORDER BY` reads the partition in reverse, as Cassandra decides it: it names
/// clustering columns in their declared order, skipping only those `fixed` by `=` (by
/// position), each in the table's order or each reversed. Refused in Cassandra's words.
pub(super) fn read_reversed(
    t: &Table,
    order_by: &[(String, bool)],
    fixed: &dyn Fn(usize) -> bool,
) -> Result<bool, CqlError> {
    let mut reversed = None;
    let mut next = 0;
    for (c, desc) in order_by {
        let Some(pos) = t.clustering.iter().position(|&ci| t.columns[ci].name == *c) else {
            t.column(c)?;
            return Err(CqlError::invalid(format!(
                "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got {c}"
            )));
        };
        if pos < next || (next..pos).any(|skipped| !fixed(skipped)) {
            return Err(CqlError::invalid(
                "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY",
            ));
        }
        next = pos + 1;
        let this = *desc != t.descending[pos];
        if reversed.is_some_and(|r| r != this) {
            return Err(CqlError::invalid("Unsupported order by relation"));
        }
        reversed = Some(this);
    }
    Ok(reversed.unwrap_or(false))
}

/// A result's typed columns, and the selector that fills each.
type Output = (Vec<(String, CqlType)>, Vec<Selector>);

/// The result's columns and what fills each, when every selector is a column, a `WRITETIME`
/// or a `TTL` (`*` included); `None` when some selector computes.
pub(super) fn plain_columns(t: &Table, s: &Select) -> Option<Result<Output, CqlError>> {
    if !plain(t, &s.selectors) {
        return None;
    }
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
    let mut columns = Vec::new();
    for (n, sel) in selectors.iter().enumerate() {
        let (c, ty) = match sel {
            Selector::Column(c) => {
                let d = match t.column(c) {
                    Ok((_, d)) => d,
                    Err(e) => return Some(Err(e)),
                };
                if s.distinct && !matches!(d.kind, Kind::PartitionKey(_)) && !d.is_static {
                    return Some(Err(CqlError::invalid(format!(
                        "SELECT DISTINCT queries must only request partition key columns and/or static columns (not {c})"
                    ))));
                }
                (c, d.ty.clone())
            }
            Selector::WriteTime(c, _) | Selector::Ttl(c) => {
                let wt = matches!(sel, Selector::WriteTime(..));
                let checked = t
                    .column(c)
                    .and_then(|(_, d)| selection_function(d, function_word(sel)));
                if let Err(e) = checked {
                    return Some(Err(e));
                }
                (c, if wt { CqlType::Bigint } else { CqlType::Int })
            }
            _ => return None,
        };
        let name = match s.aliases.get(n).cloned().flatten() {
            Some(alias) => alias,
            None if matches!(sel, Selector::Column(_)) => c.clone(),
            None => sel.text(),
        };
        columns.push((name, ty));
    }
    Some(Ok((columns, selectors)))
}

/// The columns selector `sel` reads, into `out`.
fn columns_named<'s>(sel: &'s Selector, out: &mut Vec<&'s str>) {
    match sel {
        Selector::Column(c) | Selector::WriteTime(c, _) | Selector::Ttl(c) => out.push(c),
        Selector::Count | Selector::Literal(_) => {}
        Selector::Call(_, args) => args.iter().for_each(|a| columns_named(a, out)),
        Selector::Arith(_, l, r) => {
            columns_named(l, out);
            columns_named(r, out);
        }
        Selector::TimeOf(x, _)
        | Selector::Cast(x, _)
        | Selector::Negate(x)
        | Selector::Element(x, _)
        | Selector::Slice(x, ..)
        | Selector::Field(x, _) => columns_named(x, out),
    }
}

/// A result's typed columns, the selector filling each, and the selection computing them.
type Computed = (Vec<(String, CqlType)>, Vec<Selector>, Option<Selection>);

/// The result's columns, what fills each, and, when some selector computes (a function, an
/// aggregate, arithmetic), the selection that does.
pub(super) fn output_columns(t: &Table, s: &Select, p: Partitioner) -> Result<Computed, CqlError> {
    if let Some(plain) = plain_columns(t, s) {
        let (columns, selectors) = plain?;
        return Ok((columns, selectors, None));
    }
    if s.distinct {
        // Functions and aggregates of the partition key and static columns are kept
        // (`SELECT DISTINCT k, count(k) … GROUP BY k`), as Cassandra keeps them.
        let mut named = Vec::new();
        s.selectors
            .iter()
            .for_each(|sel| columns_named(sel, &mut named));
        for c in named {
            let (_, d) = t.column(c)?;
            if !matches!(d.kind, Kind::PartitionKey(_)) && !d.is_static {
                return Err(CqlError::invalid(format!(
                    "SELECT DISTINCT queries must only request partition key columns and/or static columns (not {c})"
                )));
            }
        }
    }
    let (selection, types) = resolve(t, &s.selectors, p)?;
    let columns = s
        .selectors
        .iter()
        .zip(types)
        .enumerate()
        .map(|(n, (sel, ty))| {
            let name = s
                .aliases
                .get(n)
                .cloned()
                .flatten()
                .unwrap_or_else(|| sel.text());
            (name, ty)
        })
        .collect();
    Ok((columns, s.selectors.clone(), Some(selection)))
}

/// How many leading clustering columns a `GROUP BY` groups by (`None`: no `GROUP BY`). Its
/// columns must follow the primary key's order, from the whole partition key on; a column
/// restricted by `=` may be left out (Cassandra's rules and messages).
pub(super) fn group_by(
    t: &Table,
    s: &Select,
    eq: &[Option<Vec<Vec<u8>>>],
) -> Result<Option<usize>, CqlError> {
    if s.group_by.is_empty() {
        return Ok(None);
    }
    const ORDER: &str = "Group by currently only support groups of columns following their declared order in the PRIMARY KEY";
    let mut pk = t.partition_key.iter().chain(&t.clustering).copied();
    let mut clustering = 0;
    let mut covered = 0;
    for name in &s.group_by {
        let (i, d) = t.column(name)?;
        if d.kind == Kind::Regular {
            return Err(CqlError::invalid(format!(
                "Group by is currently only supported on the columns of the PRIMARY KEY, got {name}"
            )));
        }
        loop {
            let Some(next) = pk.next() else {
                return Err(CqlError::invalid(ORDER));
            };
            covered += 1;
            if matches!(t.columns[next].kind, Kind::Clustering(_)) {
                clustering += 1;
            }
            if next == i {
                break;
            }
            if eq[next].as_ref().is_none_or(|v| v.len() != 1) {
                return Err(CqlError::invalid(ORDER));
            }
        }
    }
    if covered < t.partition_key.len() {
        return Err(CqlError::invalid(
            "Group by is not supported on only a part of the partition key",
        ));
    }
    if clustering > 0 && s.distinct {
        return Err(CqlError::invalid(
            "Grouping on clustering columns is not allowed for SELECT DISTINCT queries",
        ));
    }
    Ok(Some(clustering))
}

/// The cell names of the one row every clustering column is fixed to (its marker, then each
/// regular column in name order), when the table has no collections; `None` when it has.
pub(super) fn names_of_one_row(
    t: &Table,
    eq: &[Option<Vec<Vec<u8>>>],
) -> Result<Option<Vec<Vec<u8>>>, CqlError> {
    if t.columns.iter().any(|c| c.ty.is_multi_cell()) {
        return Ok(None);
    }
    // A value no composite holds names no row: the slices (none) answer.
    let too_long = |i: usize| {
        eq[i]
            .iter()
            .flatten()
            .any(|v| v.len() > usize::from(u16::MAX))
    };
    if t.clustering.iter().any(|&i| too_long(i)) {
        return Ok(None);
    }
    let ck: Vec<&[u8]> = t
        .clustering
        .iter()
        .filter_map(|&i| eq[i].as_ref().and_then(|v| v.first()))
        .map(Vec::as_slice)
        .collect();
    // A static column's cells are read with the partition's statics, not by name here.
    std::iter::once("")
        .chain(
            t.regular_sorted()
                .into_iter()
                .filter(|&i| !t.columns[i].is_static)
                .map(|i| t.columns[i].name.as_str()),
        )
        .map(|n| t.cell_name(&ck, n))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// What a query reading a range of partitions (no partition named by its key) may not select,
/// in Cassandra's words: a `DISTINCT` without every partition key column (it would have to
/// merge partitions), and, through an index, static columns alone.
pub(super) fn check_range_selection(
    t: &Table,
    s: &Select,
    range: bool,
    indexed: bool,
) -> Result<(), CqlError> {
    if !range {
        return Ok(());
    }
    let selected: Vec<&str> = s
        .selectors
        .iter()
        .filter_map(|sel| match sel {
            Selector::Column(c) => Some(c.as_str()),
            _ => None,
        })
        .collect();
    if s.distinct && !s.selectors.is_empty() {
        let missing = t
            .partition_key
            .iter()
            .map(|&i| t.columns[i].name.as_str())
            .find(|k| !selected.contains(k));
        if let Some(k) = missing {
            return Err(CqlError::invalid(format!(
                "SELECT DISTINCT queries must request all the partition key columns (missing {k})"
            )));
        }
    }
    let statics_only = selected.len() == s.selectors.len()
        && selected.iter().any(|c| t.is_static(c))
        && selected.iter().all(|c| {
            t.is_static(c)
                || t.column(c)
                    .is_ok_and(|(_, d)| matches!(d.kind, Kind::PartitionKey(_)))
        });
    if indexed && statics_only {
        return Err(CqlError::invalid(
            "Queries using 2ndary indexes don't support selecting only static columns",
        ));
    }
    Ok(())
}
