//! Multi-column relations on clustering columns, as Cassandra takes them in a `SELECT`:
//! `(c1, c2) = (v1, v2)`, `(c1, c2) IN ((…), (…))` (each tuple a row prefix, not every
//! combination of its values) and `(c1, c2) > (v1, v2)` with the other slice operators,
//! compared in the columns' value order. The columns follow each other in clustering order,
//! from the first clustering column or after columns restricted by `=` or `IN`; a tuple is a
//! literal or a bound `tuple<…>`. This file reads the relations into tuples (or, where a
//! `WHERE` holds several starting at different columns, into the one-column restrictions they
//! amount to) and turns them into clustering slices (`bounds.rs` builds them);
//! `select_plan.rs` asks.

use super::ast::{Op, Term, TupleTerm};
use super::bounds::{clustering_slices, multi_slice, Bounds, Tuple};
use super::error::CqlError;
use super::session::Session;
use super::table::{Kind, Table};
use super::types::{CqlType, Literal};

/// What the multi-column relations of a `WHERE` restrict clustering columns to.
#[derive(Default)]
pub(super) struct MultiColumn {
    /// The clustering position of the first column they name.
    pub start: usize,
    /// How many clustering columns they name, from `start` (0: none).
    pub width: usize,
    /// `=` or `IN`: the row prefixes named.
    pub tuples: Option<Vec<Tuple>>,
    /// Whether `tuples` came from an `IN`.
    from_in: bool,
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
        let start = first_position(t, (cols, op, terms))?;
        let types: Vec<CqlType> = t.clustering[start..start + cols.len()]
            .iter()
            .map(|&i| t.columns[i].ty.clone())
            .collect();
        if m.width != 0 && m.start != start {
            return Err(CqlError::invalid(format!(
                "Column \"{}\" cannot be restricted by two tuple-notation relations not starting with the same column",
                cols[0]
            )));
        }
        m.start = start;
        // Two ranges may name different numbers of columns (Cassandra keeps the longer):
        // `(a) > (1) AND (a, b) < (2, 3)`.
        // The columns this relation shares with those already restricted (Cassandra names
        // them refusing the two together).
        let common = cols[..cols.len().min(m.width)].join(", ");
        let range = matches!(op, Some(Op::Gt | Op::Ge | Op::Lt | Op::Le));
        if m.tuples.is_some() {
            let what = if m.from_in { "a IN" } else { "an Equal" };
            return Err(CqlError::invalid(format!(
                "{common} cannot be restricted by more than one relation if it includes {what}"
            )));
        }
        if m.width != 0 && !range {
            return Err(CqlError::invalid(format!(
                "Column \"{common}\" cannot be restricted by both an equality and an inequality relation"
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
                m.from_in = op.is_none();
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
                "More than one restriction was found for the {} bound on {common}",
                if matches!(op, Some(Op::Gt | Op::Ge)) {
                    "start"
                } else {
                    "end"
                }
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

/// The clustering position of the first of multi-column relation's columns `cols`, refused in
/// Cassandra's words unless they are clustering columns that follow each other in order.
fn first_position(t: &Table, relation: MultiRelation<'_>) -> Result<usize, CqlError> {
    let cols = relation.0;
    let mut start = None;
    for (k, c) in cols.iter().enumerate() {
        let (i, d) = t.column(c)?;
        if !matches!(d.kind, Kind::Clustering(_)) {
            return Err(CqlError::invalid(format!(
                "Multi-column relations can only be applied to clustering columns but was applied to: {c}"
            )));
        }
        let at = t
            .clustering
            .iter()
            .position(|&x| x == i)
            .unwrap_or_default();
        if at != *start.get_or_insert(at) + k {
            return Err(CqlError::invalid(format!(
                "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: {}",
                relation_text(relation)
            )));
        }
    }
    Ok(start.unwrap_or_default())
}

/// A multi-column relation as the statement wrote it (Cassandra quotes it so).
fn relation_text((cols, op, terms): MultiRelation<'_>) -> String {
    let tuples: Vec<String> = terms.iter().map(tuple_text).collect();
    match op {
        None => format!("({}) IN ({})", cols.join(", "), tuples.join(", ")),
        Some(op) => format!(
            "({}) {} {}",
            cols.join(", "),
            op.symbol(),
            tuples.join(", ")
        ),
    }
}

/// A tuple term as the statement wrote it.
fn tuple_text(term: &TupleTerm) -> String {
    match term {
        TupleTerm::Whole(term) => term.text(),
        TupleTerm::Each(items) => {
            let items: Vec<String> = items.iter().map(Term::text).collect();
            format!("({})", items.join(", "))
        }
    }
}

/// A multi-column relation of a `WHERE`, read once the whole clause is: its columns, its
/// operator (`None`: `IN`) and its tuples.
pub(super) type MultiRelation<'a> = (&'a [String], Option<Op>, &'a [TupleTerm]);

/// The one-column restriction a multi-column relation amounts to.
pub(super) enum Single {
    /// `=` (one value) or `IN` (`from_in`) on column `i`.
    Eq {
        i: usize,
        values: Vec<Vec<u8>>,
        from_in: bool,
    },
    /// `op value` on column `i`.
    Range { i: usize, op: Op, value: Vec<u8> },
}

impl Session<'_> {
    /// Reads a `WHERE`'s multi-column relations into `m`. When they start at different
    /// clustering columns (`(b) = (1) AND (c, d) > (2, 3)`), only those that no single-column
    /// restrictions can stand for (an `IN` or a range of several columns) go into `m`; the
    /// others, and a one-column `=` or `IN` alone on its column, come back as what they
    /// amount to (`(b, c) = (1, 2)` is `b = 1 AND c = 2`,
    /// `(b) IN ((1), (2))` is `b IN (1, 2)`, `(d) > (1)` is `d > 1`), for the caller to apply.
    pub(super) fn multi_relations(
        &self,
        t: &Table,
        relations: &[MultiRelation<'_>],
        m: &mut MultiColumn,
    ) -> Result<Vec<Single>, CqlError> {
        let mut starts = Vec::with_capacity(relations.len());
        for (cols, op, terms) in relations {
            if let (Some(Op::Ne), [term]) = (op, terms) {
                return Err(CqlError::invalid(format!(
                    "Unsupported \"!=\" relation: ({}) != {}",
                    cols.join(", "),
                    tuple_text(term)
                )));
            }
            starts.push(first_position(t, (cols, *op, terms))?);
        }
        let single_start = starts.windows(2).all(|w| w[0] == w[1]);
        let alone = |start: usize| starts.iter().filter(|&&s| s == start).count() == 1;
        let mut singles = Vec::new();
        for ((cols, op, terms), &start) in relations.iter().zip(&starts) {
            let wide = cols.len() > 1 && *op != Some(Op::Eq);
            // `(b) = (1)` alone is `b = 1`, which an index of `b` serves.
            let one_equality = cols.len() == 1 && matches!(op, None | Some(Op::Eq)) && alone(start);
            if (single_start || wide) && !one_equality {
                self.multi_column(t, cols, *op, terms, m)?;
                continue;
            }
            let columns = &t.clustering[start..start + cols.len()];
            let ty = CqlType::Tuple(columns.iter().map(|&i| t.columns[i].ty.clone()).collect());
            let mut tuples = Vec::with_capacity(terms.len());
            for term in *terms {
                tuples.push(self.tuple_of(&ty, term, cols)?);
            }
            match op {
                None => {
                    let mut values: Vec<Vec<u8>> = Vec::new();
                    for v in tuples.into_iter().flatten() {
                        if !values.contains(&v) {
                            values.push(v);
                        }
                    }
                    let i = columns[0];
                    singles.push(Single::Eq {
                        i,
                        values,
                        from_in: true,
                    });
                }
                Some(Op::Eq) => {
                    for (&i, v) in columns.iter().zip(tuples.into_iter().flatten()) {
                        singles.push(Single::Eq {
                            i,
                            values: vec![v],
                            from_in: false,
                        });
                    }
                }
                Some(op) => {
                    let value = tuples.into_iter().flatten().next().unwrap_or_default();
                    singles.push(Single::Range {
                        i: columns[0],
                        op: *op,
                        value,
                    });
                }
            }
        }
        Ok(singles)
    }
}

/// The clustering slices of restrictions that include multi-column ones: a slice for each
/// tuple of `=`/`IN` (with the single-column restrictions of the columns before and after
/// them), in clustering order and each once, or the slices of a multi-column range after each
/// prefix the columns before it are held to.
pub(super) fn multi_slices(
    t: &Table,
    m: &MultiColumn,
    eq: &[Option<Vec<Vec<u8>>>],
    lower: &[Option<(Vec<u8>, bool)>],
    upper: &[Option<(Vec<u8>, bool)>],
) -> Result<Vec<Bounds>, CqlError> {
    let named = &t.clustering[m.start..m.start + m.width];
    let mut out: Vec<Bounds> = Vec::new();
    match &m.tuples {
        None => {
            let (lo, hi) = merged_ranges(t, m, eq, lower, upper)?;
            for prefix in prefixes(t, m.start, eq, lower, upper)? {
                out.extend(multi_slice(t, &prefix, m.width, lo.as_ref(), hi.as_ref())?);
            }
        }
        Some(tuples) => {
            for &ci in named {
                if eq[ci].is_some() || lower[ci].is_some() || upper[ci].is_some() {
                    return Err(CqlError::invalid(format!(
                        "Column \"{}\" cannot be restricted by both a multi-column and a single-column relation",
                        t.columns[ci].name
                    )));
                }
            }
            for tuple in tuples {
                let mut eq = eq.to_vec();
                for (&ci, v) in named.iter().zip(tuple) {
                    eq[ci] = Some(vec![v.clone()]);
                }
                out.extend(clustering_slices(t, &eq, lower, upper)?);
            }
        }
    }
    let cmp = t.comparator();
    out.sort_by(|a, b| cmp.compare(&a.start, &b.start));
    out.dedup_by(|a, b| a.start == b.start && a.finish == b.finish);
    Ok(out)
}

/// Every combination of the `=`/`IN` values of the clustering columns before position
/// `start`, refused in Cassandra's words where one of them is free or ranged.
fn prefixes(
    t: &Table,
    start: usize,
    eq: &[Option<Vec<Vec<u8>>>],
    lower: &[Option<(Vec<u8>, bool)>],
    upper: &[Option<(Vec<u8>, bool)>],
) -> Result<Vec<Tuple>, CqlError> {
    let mut out: Vec<Tuple> = vec![Vec::new()];
    let name = |k: usize| &t.columns[t.clustering[k]].name;
    for k in 0..start {
        let ci = t.clustering[k];
        if lower[ci].is_some() || upper[ci].is_some() {
            return Err(CqlError::invalid(format!(
                "Clustering column \"{}\" cannot be restricted (preceding column \"{}\" is restricted by a non-EQ relation)",
                name(k + 1),
                name(k)
            )));
        }
        let Some(values) = &eq[ci] else {
            return Err(CqlError::invalid(format!(
                "PRIMARY KEY column \"{}\" cannot be restricted as preceding column \"{}\" is not restricted",
                name(start),
                name(k)
            )));
        };
        out = out
            .iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push(v.clone());
                    q
                })
            })
            .collect();
    }
    Ok(out)
}

/// One end of a multi-column range: its values and whether it includes them.
type Bound = Option<(Tuple, bool)>;

/// The bounds of a multi-column range with a single-column range on its first column merged
/// in (`(a, b) > (1, 2) AND a < 3`, as Cassandra merges them: each bound from one relation
/// only). Refused in Cassandra's words: an `=` beside the range, a range on another of its
/// columns, a column after it restricted.
fn merged_ranges(
    t: &Table,
    m: &MultiColumn,
    eq: &[Option<Vec<Vec<u8>>>],
    lower: &[Option<(Vec<u8>, bool)>],
    upper: &[Option<(Vec<u8>, bool)>],
) -> Result<(Bound, Bound), CqlError> {
    let (mut lo, mut hi) = (m.lower.clone(), m.upper.clone());
    for (k, &ci) in t.clustering.iter().enumerate().skip(m.start) {
        let name = &t.columns[ci].name;
        let ranged = lower[ci].is_some() || upper[ci].is_some();
        // A later column's `=` or range, even one of the range's own columns after its first.
        if k >= m.start + m.width || (k > m.start && eq[ci].is_some()) {
            if eq[ci].is_some() || ranged {
                let first = &t.columns[t.clustering[m.start]].name;
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
        if ranged && k > m.start {
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
