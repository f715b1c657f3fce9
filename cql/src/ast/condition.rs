//! The `IF` of a conditional write — `IF [NOT] EXISTS`, or comparisons of columns, their
//! elements and fields — and what a `DELETE` or a condition names inside a column. Syntax only:
//! what each means is `conditional/`'s and `write.rs`'s.

use super::{Op, Term};

/// The `IF` of a conditional write (a lightweight transaction).
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// `IF NOT EXISTS` (an `INSERT`): the row must not be there.
    NotExists,
    /// `IF EXISTS` (an `UPDATE` or `DELETE`): the row must be there.
    Exists,
    /// `IF c op v AND …` (an `UPDATE` or `DELETE`): each regular column (or one element or
    /// field of it) compares so.
    Columns(Vec<ColumnCondition>),
}

/// One comparison of an `IF`: `c op v`, `m['k'] op v`, `u.f op v`, or `… IN (v, w)` / `IN ?`.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnCondition {
    /// The column.
    pub column: String,
    /// The element or field of it compared, if not the whole value.
    pub subscript: Option<Subscript>,
    /// The comparison (`=` for `IN`).
    pub op: Op,
    /// The value compared with, or `IN`'s values.
    pub values: Vec<Term>,
    /// `IN`: any of `values` will do.
    pub is_in: bool,
    /// `IN ?`: `values` is the one marker, bound to a list of the values.
    pub list_marker: bool,
}

impl ColumnCondition {
    /// `column op value`.
    pub fn compare(column: String, op: Op, value: Term) -> ColumnCondition {
        ColumnCondition {
            column,
            subscript: None,
            op,
            values: vec![value],
            is_in: false,
            list_marker: false,
        }
    }

    /// Its terms, in statement order: the element's, then the values.
    pub fn terms(&self) -> impl Iterator<Item = &Term> {
        let element = self.subscript.as_ref().and_then(Subscript::term);
        element.into_iter().chain(&self.values)
    }
}

impl Condition {
    /// The terms of its comparisons, each with its column, in statement order.
    pub fn terms(&self) -> impl Iterator<Item = (&str, &Term)> {
        let cs: &[ColumnCondition] = match self {
            Condition::Columns(cs) => cs,
            _ => &[],
        };
        cs.iter()
            .flat_map(|c| c.terms().map(move |t| (c.column.as_str(), t)))
    }
}

/// What a `DELETE` names inside a column: one element of its collection or one field of its
/// user type.
#[derive(Debug, Clone, PartialEq)]
pub enum Subscript {
    /// `m['k']`, `l[0]`, `s['x']`
    Element(Term),
    /// `u.f`
    Field(String),
}

impl Subscript {
    /// The element's term, if it names one.
    pub fn term(&self) -> Option<&Term> {
        match self {
            Subscript::Element(t) => Some(t),
            Subscript::Field(_) => None,
        }
    }
}
