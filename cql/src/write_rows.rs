//! The rows a write's `WHERE` names: `=` or `IN` on the whole partition key, then on every
//! clustering column (a CQL row), on a prefix of them (every row under it), or on none (a
//! partition); each combination of the values given, as a row key and clustering values.
//! Clustering columns may be named together, `(a, b) = (…)` or `(a, b) IN ((…), …)`, from the
//! first or after columns named by `=` or `IN`: each tuple then names those columns together,
//! not each combination of its values. Building the writes is
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

/// The column a relation of a write's `WHERE` restricts with `=` or `IN`, and its values;
/// `None` for what [`Deferred`] records.
fn write_restriction(r: &Relation) -> Result<Option<(&String, &[Term])>, CqlError> {
    match r {
        Relation::Compare(c, Op::Eq, v) => Ok(Some((c, std::slice::from_ref(v)))),
        Relation::In(c, vs) => Ok(Some((c, vs.as_slice()))),
        Relation::InMarker(c, _) => Err(CqlError::invalid(format!(
            "IN ? on {c} takes a list bound to a prepared statement"
        ))),
        Relation::Compare(c, ..) => Err(CqlError::invalid(format!(
            "only = and IN can restrict {c} in a write"
        ))),
        _ => Ok(None),
    }
}

/// What a write's `WHERE` holds that Cassandra refuses only once every relation is read, in
/// the order it checks: the partition key, then the clustering columns, then the others.
#[derive(Default)]
struct Deferred {
    token: bool,
    /// Partition key columns restricted by a slice (restricted, so not missing).
    key_slices: Vec<usize>,
    clustering_slice: bool,
    /// Columns outside the primary key, by index.
    others: Vec<usize>,
}

impl Deferred {
    /// Records `r` if it is one of the deferred kinds; `false` when it is not.
    fn note(&mut self, t: &Table, r: &Relation) -> Result<bool, CqlError> {
        let (c, op) = match r {
            Relation::Token(..) => {
                self.token = true;
                return Ok(true);
            }
            Relation::Multi(_, op, _) => {
                self.clustering_slice |= *op != Op::Eq;
                return Ok(*op != Op::Eq);
            }
            Relation::MultiIn(..) => return Ok(false),
            Relation::Entry(c, ..) => (c, None),
            Relation::Compare(c, op, _) => (c, Some(*op)),
            Relation::In(c, _) | Relation::InMarker(c, _) => (c, None),
        };
        let (i, def) = t.column(c)?;
        let slice = matches!(op, Some(Op::Gt | Op::Ge | Op::Lt | Op::Le));
        match def.kind {
            Kind::Regular => self.others.push(i),
            _ if matches!(op, Some(Op::Contains | Op::ContainsKey)) => {
                def.ty
                    .contained(c, op == Some(Op::ContainsKey))
                    .map_err(CqlError::invalid)?;
                return Ok(false);
            }
            Kind::PartitionKey(_) if slice => self.key_slices.push(i),
            Kind::Clustering(_) if slice => self.clustering_slice = true,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// Refuses a write's `WHERE`, as Cassandra does and in its order, for what `write_values`
/// deferred and for key columns left unrestricted.
fn refuse(
    t: &Table,
    (choices, multi, deferred): (&Choices, &MultiColumn, Deferred),
    clustering: Naming,
    stmt: &str,
) -> Result<(), CqlError> {
    if deferred.token {
        return Err(CqlError::invalid(format!(
            "The token function cannot be used in WHERE clauses for {stmt} statements"
        )));
    }
    let missing = |cols: &[usize]| -> Vec<&str> {
        cols.iter()
            .filter(|&&i| choices[i].is_none())
            .map(|&i| t.columns[i].name.as_str())
            .collect()
    };
    let missing_key: Vec<&str> = t
        .partition_key
        .iter()
        .filter(|&&i| choices[i].is_none() && !deferred.key_slices.contains(&i))
        .map(|&i| t.columns[i].name.as_str())
        .collect();
    if !missing_key.is_empty() {
        return Err(CqlError::invalid(format!(
            "Some partition key parts are missing: {}",
            missing_key.join(", ")
        )));
    }
    if !deferred.key_slices.is_empty() {
        return Err(CqlError::invalid(format!(
                "Only EQ and IN relation are supported on the partition key (unless you use the token() function) for {stmt} statements"
            )));
    }
    // Only an UPDATE's slices get here: a DELETE's are range deletions.
    if deferred.clustering_slice {
        return Err(CqlError::invalid(format!(
            "Slice restrictions are not supported on the clustering columns in {stmt} statements"
        )));
    }
    for &i in &t.clustering[multi.start..multi.start + multi.width] {
        if choices[i].is_some() {
            return Err(CqlError::invalid(format!(
                    "Column \"{}\" cannot be restricted by both a multi-column and a single-column relation",
                    t.columns[i].name
                )));
        }
    }
    if clustering == Naming::Rows {
        let named = multi.start..multi.start + multi.width;
        let missing_clustering: Vec<&str> = missing(&t.clustering)
            .into_iter()
            .filter(|c| {
                let at = t.clustering.iter().position(|&i| t.columns[i].name == *c);
                !at.is_some_and(|k| named.contains(&k))
            })
            .collect();
        if !missing_clustering.is_empty() {
            return Err(CqlError::invalid(format!(
                "Some clustering keys are missing: {}",
                missing_clustering.join(", ")
            )));
        }
    }
    if !deferred.others.is_empty() {
        return Err(t.non_key_refusal(deferred.others));
    }
    Ok(())
}

impl Session<'_> {
    /// The partitions, rows or ranges of rows a `WHERE` of a write (`stmt`: `UPDATE` or
    /// `DELETE`) names: `=` or `IN` on every partition key column and, as `clustering` says,
    /// on every clustering column or a prefix of them. Refusals come in Cassandra's order and
    /// words.
    pub(super) fn rows_named(
        &self,
        t: &Table,
        relations: &[Relation],
        clustering: Naming,
        stmt: &str,
    ) -> Result<Vec<NamedRow>, CqlError> {
        let (choices, multi, deferred) = self.write_values(t, relations)?;
        refuse(t, (&choices, &multi, deferred), clustering, stmt)?;
        let mut keys: Vec<Vec<Vec<u8>>> = vec![Vec::new()];
        for &i in &t.partition_key {
            keys = cross(keys, choices[i].as_deref().unwrap_or_default());
        }
        let mut tuples = match multi.tuples {
            Some(tuples) if clustering != Naming::Partitions => Some(tuples),
            _ => None,
        };
        let mut cks: Vec<Vec<Vec<u8>>> = vec![Vec::new()];
        let mut unrestricted = false;
        for (j, &i) in t.clustering.iter().enumerate() {
            let name = t.columns[i].name.as_str();
            if j == multi.start && clustering != Naming::Partitions {
                if let (Some(_), true) = (&tuples, unrestricted) {
                    let before = &t.columns[t.clustering[j.saturating_sub(1)]].name;
                    return Err(CqlError::invalid(format!(
                        "PRIMARY KEY column \"{name}\" cannot be restricted as preceding column \"{before}\" is not restricted"
                    )));
                }
                if let Some(mut tuples) = tuples.take() {
                    tuples.sort();
                    tuples.dedup();
                    cks = cks
                        .iter()
                        .flat_map(|p| tuples.iter().map(move |tuple| [&p[..], tuple].concat()))
                        .collect();
                }
            }
            if (multi.start..multi.start + multi.width).contains(&j) {
                continue;
            }
            match (&choices[i], clustering) {
                (_, Naming::Partitions) => break,
                (None, _) => unrestricted = true,
                (Some(_), Naming::Prefix) if unrestricted => {
                    let before = &t.columns[t.clustering[j.saturating_sub(1)]].name;
                    return Err(CqlError::invalid(format!(
                        "PRIMARY KEY column \"{name}\" cannot be restricted as preceding column \"{before}\" is not restricted"
                    )));
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

    /// Each key column's `=`/`IN` values (by column index), the leading clustering columns'
    /// tuples of a multi-column `(a, b) = (…)` or `IN`, and what is refused once all is read.
    fn write_values(
        &self,
        t: &Table,
        relations: &[Relation],
    ) -> Result<(Choices, MultiColumn, Deferred), CqlError> {
        let mut choices: Choices = vec![None; t.columns.len()];
        // Whether each column's first restriction was an `IN` (Cassandra names it refusing a
        // second).
        let mut by_in = vec![false; t.columns.len()];
        let mut deferred = Deferred::default();
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
            if deferred.note(t, r)? {
                continue;
            }
            let Some((c, terms)) = write_restriction(r)? else {
                continue;
            };
            let (i, def) = t.column(c)?;
            if choices[i].is_some() {
                let what = if by_in[i] { "a IN" } else { "an Equal" };
                return Err(CqlError::invalid(format!(
                    "{} cannot be restricted by more than one relation if it includes {what}",
                    def.name
                )));
            }
            by_in[i] = matches!(r, Relation::In(..));
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
        Ok((choices, multi, deferred))
    }
}
