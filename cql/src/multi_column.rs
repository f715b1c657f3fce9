//! Multi-column relations on clustering columns, as Cassandra takes them in a `SELECT`:
//! `(c1, c2) = (v1, v2)`, `(c1, c2) IN ((…), (…))` (each tuple a row prefix, not every
//! combination of its values) and `(c1, c2) > (v1, v2)` with the other slice operators,
//! compared in the columns' value order. The columns are the leading clustering columns, in
//! order; a tuple is a literal or a bound `tuple<…>`. This file reads the relations into
//! tuples and turns them into clustering slices (`bounds.rs` builds them); `select_plan.rs`
//! asks.

use super::ast::{Op, Term, TupleTerm};
use super::bounds::{clustering_slices, multi_slice, Bounds, Tuple};
use super::error::CqlError;
use super::session::Session;
use super::table::{Kind, Table};
use super::types::{CqlType, Literal};

/// What the multi-column relations of a `WHERE` restrict the leading clustering columns to.
#[derive(Default)]
pub(super) struct MultiColumn {
    /// How many leading clustering columns they name (0: none).
    pub width: usize,
    /// `=` or `IN`: the row prefixes named.
    pub tuples: Option<Vec<Tuple>>,
    pub lower: Option<(Tuple, bool)>,
    pub upper: Option<(Tuple, bool)>,
}

impl Session<'_> {
    /// Reads `(cols) op tuple` (`op` `None`: `IN` of `terms`) into `m`.
    pub(super) fn multi_column(
        &self,
        t: &Table,
        cols: &[String],
        op: Option<Op>,
        terms: &[TupleTerm],
        m: &mut MultiColumn,
    ) -> Result<(), CqlError> {
        let mut types = Vec::with_capacity(cols.len());
        for (k, c) in cols.iter().enumerate() {
            let (i, d) = t.column(c)?;
            if !matches!(d.kind, Kind::Clustering(_)) {
                return Err(CqlError::invalid(format!(
                    "Multi-column relations can only be applied to clustering columns but was applied to: {c}"
                )));
            }
            if t.clustering.get(k) != Some(&i) {
                return Err(CqlError::invalid(format!(
                    "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: ({})",
                    cols.join(", ")
                )));
            }
            types.push(d.ty.clone());
        }
        // Two ranges may name different numbers of columns (Cassandra keeps the longer):
        // `(a) > (1) AND (a, b) < (2, 3)`.
        let ranges = matches!(op, Some(Op::Gt | Op::Ge | Op::Lt | Op::Le))
            && m.tuples.is_none()
            && (m.lower.is_some() || m.upper.is_some());
        if m.width != 0 && m.width != cols.len() && !ranges || (m.tuples.is_some() && op.is_some())
        {
            return Err(CqlError::invalid(format!(
                "({}) cannot be restricted by more than one relation of this kind",
                cols.join(", ")
            )));
        }
        m.width = m.width.max(cols.len());
        let tuple_type = CqlType::Tuple(types);
        let mut tuples = Vec::with_capacity(terms.len());
        for term in terms {
            tuples.push(self.tuple_of(&tuple_type, term, cols)?);
        }
        let slot = match op {
            None | Some(Op::Eq) => {
                if m.lower.is_some() || m.upper.is_some() || m.tuples.is_some() {
                    return Err(CqlError::invalid(format!(
                        "({}) cannot be restricted by both an equality and a range",
                        cols.join(", ")
                    )));
                }
                m.tuples = Some(tuples);
                return Ok(());
            }
            Some(Op::Gt | Op::Ge) => &mut m.lower,
            Some(Op::Lt | Op::Le) => &mut m.upper,
            Some(other) => {
                return Err(CqlError::invalid(format!(
                    "{other:?} is not a multi-column relation here"
                )))
            }
        };
        let inclusive = matches!(op, Some(Op::Ge | Op::Le));
        let tuple = tuples.pop().unwrap_or_default();
        if slot.replace((tuple, inclusive)).is_some() {
            return Err(CqlError::invalid(format!(
                "More than one restriction was found for the {} bound on ({})",
                if matches!(op, Some(Op::Gt | Op::Ge)) {
                    "start"
                } else {
                    "end"
                },
                cols.join(", ")
            )));
        }
        Ok(())
    }

    /// A tuple term's values, one per column, none null.
    fn tuple_of(&self, ty: &CqlType, term: &TupleTerm, cols: &[String]) -> Result<Tuple, CqlError> {
        let term = match term {
            TupleTerm::Whole(term) => term,
            TupleTerm::Each(items) => return self.tuple_of_each(ty, items, cols),
        };
        if let Term::Literal(Literal::Tuple(items)) = term {
            if items.len() != cols.len() {
                return Err(CqlError::invalid(format!(
                    "Expected {} elements in value tuple, but got {}: {}",
                    cols.len(),
                    items.len(),
                    Literal::Tuple(items.clone()).text()
                )));
            }
        }
        let name = format!("({})", cols.join(", "));
        let bytes = self
            .value(ty, term, &name)?
            .ok_or_else(|| CqlError::invalid(format!("Invalid null value for {name}")))?;
        let values = ty.tuple_elements(&bytes).map_err(CqlError::invalid)?;
        values
            .into_iter()
            .zip(cols)
            .map(|(v, c)| {
                v.ok_or_else(|| {
                    CqlError::invalid(format!("Invalid null value in condition for column {c}"))
                })
            })
            .collect()
    }
}

impl Session<'_> {
    /// The values of `(t1, t2, …)` given a term per column (a marker among them), none null.
    fn tuple_of_each(
        &self,
        ty: &CqlType,
        items: &[Term],
        cols: &[String],
    ) -> Result<Tuple, CqlError> {
        let CqlType::Tuple(types) = ty else {
            return Err(CqlError::invalid(
                "a multi-column relation's value is a tuple",
            ));
        };
        if items.len() != cols.len() {
            return Err(CqlError::invalid(format!(
                "Expected {} elements in value tuple, but got {}",
                cols.len(),
                items.len()
            )));
        }
        let mut out = Vec::with_capacity(items.len());
        for ((term, ty), c) in items.iter().zip(types).zip(cols) {
            out.push(self.value(ty, term, c)?.ok_or_else(|| {
                CqlError::invalid(format!("Invalid null value in condition for column {c}"))
            })?);
        }
        Ok(out)
    }
}

/// The clustering slices of restrictions that include multi-column ones: a slice for each
/// tuple of `=`/`IN` (with the single-column restrictions of the columns after them), in
/// clustering order and each once, or the one slice of a multi-column range.
pub(super) fn multi_slices(
    t: &Table,
    m: &MultiColumn,
    eq: &[Option<Vec<Vec<u8>>>],
    lower: &[Option<(Vec<u8>, bool)>],
    upper: &[Option<(Vec<u8>, bool)>],
) -> Result<Vec<Bounds>, CqlError> {
    let Some(tuples) = &m.tuples else {
        let (lower, upper) = merged_ranges(t, m, eq, lower, upper)?;
        return multi_slice(t, m.width, lower.as_ref(), upper.as_ref());
    };
    for &ci in &t.clustering[..m.width] {
        if eq[ci].is_some() || lower[ci].is_some() || upper[ci].is_some() {
            return Err(CqlError::invalid(format!(
                "Column \"{}\" cannot be restricted by both a multi-column and a single-column relation",
                t.columns[ci].name
            )));
        }
    }
    let mut out: Vec<Bounds> = Vec::new();
    for tuple in tuples {
        let mut eq = eq.to_vec();
        for (&ci, v) in t.clustering.iter().zip(tuple) {
            eq[ci] = Some(vec![v.clone()]);
        }
        out.extend(clustering_slices(t, &eq, lower, upper)?);
    }
    let cmp = t.comparator();
    out.sort_by(|a, b| cmp.compare(&a.start, &b.start));
    out.dedup_by(|a, b| a.start == b.start && a.finish == b.finish);
    Ok(out)
}

/// One end of a multi-column range: its values and whether it includes them.
type Bound = Option<(Tuple, bool)>;

/// The bounds of a multi-column range with a single-column range on the first clustering
/// column merged in (`(a, b) > (1, 2) AND a < 3`, as Cassandra merges them: each bound from
/// one relation only). Refused in Cassandra's words: an `=` beside the range, a range on
/// another of its columns, a column after it restricted.
fn merged_ranges(
    t: &Table,
    m: &MultiColumn,
    eq: &[Option<Vec<Vec<u8>>>],
    lower: &[Option<(Vec<u8>, bool)>],
    upper: &[Option<(Vec<u8>, bool)>],
) -> Result<(Bound, Bound), CqlError> {
    let (mut lo, mut hi) = (m.lower.clone(), m.upper.clone());
    for (k, &ci) in t.clustering.iter().enumerate() {
        let name = &t.columns[ci].name;
        let ranged = lower[ci].is_some() || upper[ci].is_some();
        if k >= m.width {
            if eq[ci].is_some() || ranged {
                let first = &t.columns[t.clustering[0]].name;
                return Err(CqlError::invalid(format!(
                    "Clustering column \"{name}\" cannot be restricted (preceding column \"{first}\" is restricted by a non-EQ relation)"
                )));
            }
            continue;
        }
        if eq[ci].is_some() {
            return Err(CqlError::invalid(format!(
                "Column \"{name}\" cannot be restricted by both an equality and an inequality relation"
            )));
        }
        if ranged && k > 0 {
            return Err(CqlError::invalid(format!(
                "Column \"{name}\" cannot be restricted by two inequalities not starting with the same column"
            )));
        }
        for (single, bound, which) in [(&lower[ci], &mut lo, "start"), (&upper[ci], &mut hi, "end")]
        {
            let Some((v, inclusive)) = single else {
                continue;
            };
            if bound.is_some() {
                return Err(CqlError::invalid(format!(
                    "More than one restriction was found for the {which} bound on {name}"
                )));
            }
            *bound = Some((vec![v.clone()], *inclusive));
        }
    }
    Ok((lo, hi))
}
