//! The rows a write's `WHERE` names: `=` or `IN` on the whole partition key, then on every
//! clustering column (a CQL row), on a prefix of them (every row under it), or on none (a
//! partition); each combination of the values given, as a row key and clustering values. The
//! leading clustering columns may be named together, `(a, b) = (…)` or `(a, b) IN ((…), …)`:
//! each tuple then a prefix, not each combination of its values. Building the writes is
//! `execute.rs`'s; this file only names.

use super::ast::{Op, Relation, Term};
use super::error::CqlError;
use super::multi_column::MultiColumn;
use super::session::Session;
use super::table::{Kind, Table};

/// A row key, and the clustering values (all, a prefix, or none) of the rows named in it.
pub(super) type NamedRow = (Vec<u8>, Vec<Vec<u8>>);

/// The values `=` or `IN` give each column, by its index (`None`: not restricted so).
type Choices = Vec<Option<Vec<Vec<u8>>>>;

/// What a write's `WHERE` must name besides whole partitions.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Naming {
    /// Partitions only (the clustering columns are not looked at).
    Partitions,
    /// Whole CQL rows: every clustering column.
    Rows,
    /// A prefix of the clustering columns, maybe all of them (a range of rows sharing it).
    Prefix,
}

/// Whether `relations` restrict a clustering column of `t`.
pub(super) fn restricts_clustering(t: &Table, relations: &[Relation]) -> bool {
    relations.iter().any(|r| match r {
        Relation::Multi(..) | Relation::MultiIn(..) => true,
        Relation::Compare(c, ..) | Relation::In(c, _) | Relation::InMarker(c, _) => t
            .column(c)
            .is_ok_and(|(_, d)| matches!(d.kind, Kind::Clustering(_))),
        Relation::Token(..) | Relation::Entry(..) => false,
    })
}

/// Whether `relations` restrict every clustering column of `t` by `=` or `IN`, on it alone or
/// in a multi-column `(a, b) = (…)` or `IN` (what a `DELETE` of columns must name: whole
/// rows).
pub(super) fn names_every_row_whole(t: &Table, relations: &[Relation]) -> bool {
    let names = |c: &String, i: usize| t.column(c).is_ok_and(|(j, _)| j == i);
    t.clustering.iter().all(|&i| {
        relations.iter().any(|r| match r {
            Relation::Compare(c, Op::Eq, _) | Relation::In(c, _) | Relation::InMarker(c, _) => {
                names(c, i)
            }
            Relation::Multi(cs, Op::Eq, _) | Relation::MultiIn(cs, _) => {
                cs.iter().any(|c| names(c, i))
            }
            _ => false,
        })
    })
}

fn cross(prefixes: Vec<Vec<Vec<u8>>>, vals: &[Vec<u8>]) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::with_capacity(prefixes.len() * vals.len());
    for p in prefixes {
        for v in vals {
            let mut n = p.clone();
            n.push(v.clone());
            out.push(n);
        }
    }
    out
}

/// The column a relation of a write's `WHERE` restricts, and its values: only `=` and `IN`.
fn write_restriction(r: &Relation) -> Result<(&String, &[Term]), CqlError> {
    match r {
        Relation::Compare(c, Op::Eq, v) => Ok((c, std::slice::from_ref(v))),
        Relation::In(c, vs) => Ok((c, vs.as_slice())),
        // Only an UPDATE gets here with a slice: a DELETE's are range deletions.
        Relation::Compare(_, Op::Gt | Op::Ge | Op::Lt | Op::Le, _) | Relation::Multi(..) => {
            Err(CqlError::invalid(
                "Slice restrictions are not supported on the clustering columns in UPDATE statements",
            ))
        }
        Relation::Compare(c, ..) => Err(CqlError::invalid(format!(
            "only = and IN can restrict {c} in a write"
        ))),
        Relation::Token(..) => Err(CqlError::invalid("token() cannot restrict a write")),
        Relation::Entry(c, ..) => Err(CqlError::invalid(format!(
            "Non PRIMARY KEY columns found in where clause: {c}"
        ))),
        Relation::InMarker(c, _) => Err(CqlError::invalid(format!(
            "IN ? on {c} takes a list bound to a prepared statement"
        ))),
        // Read by `rows_named` before it asks here.
        Relation::MultiIn(cs, _) => Err(CqlError::invalid(format!(
            "({}) IN is not a single column's restriction",
            cs.join(", ")
        ))),
    }
}

impl Session<'_> {
    /// The partitions, rows or ranges of rows a `WHERE` of a write names: `=` or `IN` on every
    /// partition key column and, as `clustering` says, on every clustering column or a prefix
    /// of them.
    pub(super) fn rows_named(
        &self,
        t: &Table,
        relations: &[Relation],
        clustering: Naming,
    ) -> Result<Vec<NamedRow>, CqlError> {
        let (choices, multi) = self.write_values(t, relations)?;
        let mut keys: Vec<Vec<Vec<u8>>> = vec![Vec::new()];
        for &i in &t.partition_key {
            let vals = choices[i].as_ref().ok_or_else(|| {
                CqlError::invalid(format!(
                    "missing partition key column {}",
                    t.columns[i].name
                ))
            })?;
            keys = cross(keys, vals);
        }
        for &i in &t.clustering[..multi.width] {
            if choices[i].is_some() {
                return Err(CqlError::invalid(format!(
                    "Column \"{}\" cannot be restricted by both a multi-column and a single-column relation",
                    t.columns[i].name
                )));
            }
        }
        let mut cks: Vec<Vec<Vec<u8>>> = match multi.tuples {
            Some(mut tuples) if clustering != Naming::Partitions => {
                tuples.sort();
                tuples.dedup();
                tuples
            }
            _ => vec![Vec::new()],
        };
        let mut unrestricted: Option<&str> = None;
        for &i in &t.clustering[multi.width..] {
            let name = t.columns[i].name.as_str();
            match (&choices[i], clustering) {
                (_, Naming::Partitions) => break,
                (None, Naming::Rows) => {
                    return Err(CqlError::invalid(format!(
                        "missing clustering column {name}"
                    )))
                }
                (None, Naming::Prefix) => unrestricted = unrestricted.or(Some(name)),
                (Some(_), Naming::Prefix) if unrestricted.is_some() => {
                    return Err(CqlError::invalid(format!(
                        "clustering column {name} cannot be restricted: {} before it is not",
                        unrestricted.unwrap_or_default()
                    )))
                }
                (Some(vals), _) => cks = cross(cks, vals),
            }
        }
        let mut out = Vec::new();
        for k in &keys {
            let parts: Vec<&[u8]> = k.iter().map(Vec::as_slice).collect();
            let key = t.row_key(&parts)?;
            for ck in &cks {
                out.push((key.clone(), ck.clone()));
            }
        }
        Ok(out)
    }

    /// Each key column's `=`/`IN` values (by column index), and the leading clustering
    /// columns' tuples of a multi-column `(a, b) = (…)` or `IN`.
    fn write_values(
        &self,
        t: &Table,
        relations: &[Relation],
    ) -> Result<(Choices, MultiColumn), CqlError> {
        let mut choices: Choices = vec![None; t.columns.len()];
        // `(a, b) = (…)` and `(a, b) IN (…)`: the leading clustering columns' tuples.
        let mut multi = MultiColumn::default();
        for r in relations {
            match r {
                Relation::Multi(cs, Op::Eq, tuple) => {
                    let tuple = std::slice::from_ref(tuple);
                    self.multi_column(t, cs, Some(Op::Eq), tuple, &mut multi)?;
                    continue;
                }
                Relation::MultiIn(cs, tuples) => {
                    self.multi_column(t, cs, None, tuples, &mut multi)?;
                    continue;
                }
                _ => {}
            }
            if let Relation::Compare(c, Op::Gt | Op::Ge | Op::Lt | Op::Le, _) = r {
                if t.column(c)
                    .is_ok_and(|(_, d)| matches!(d.kind, Kind::PartitionKey(_)))
                {
                    return Err(CqlError::invalid(
                        "Only EQ and IN relation are supported on the partition key (unless you use the token() function)",
                    ));
                }
            }
            let (c, terms) = write_restriction(r)?;
            let (i, def) = t.column(c)?;
            if def.kind == Kind::Regular {
                return Err(CqlError::invalid(format!(
                    "non PRIMARY KEY column {c} found in WHERE of a write"
                )));
            }
            if choices[i].is_some() {
                return Err(CqlError::invalid(format!("{c} is restricted twice")));
            }
            let mut vals = Vec::new();
            for term in terms {
                let part = match def.kind {
                    Kind::PartitionKey(_) => "partition key part",
                    _ => "clustering key part",
                };
                vals.push(self.value(&def.ty, term, c)?.ok_or_else(|| {
                    CqlError::invalid(format!("Invalid null value for {part} {c}"))
                })?);
            }
            choices[i] = Some(vals);
        }
        Ok((choices, multi))
    }
}
