//! What the plans made when a statement is prepared (`plan.rs`, `slice_plan.rs`) are built
//! from: where each value comes from (a bind marker or a literal encoded once), how a value
//! bound to a marker is checked against its column's type, and the small encoders their
//! executors share (a row key from its parts, a name's last component's sort key, a kept
//! cell's write time and TTL). Nothing here plans or reads.

use std::borrow::Cow;
use std::sync::Arc;

use smallvec::SmallVec;

use super::ast::Term;
use super::error::CqlError;
use super::rows::Rows;
use super::types::CqlType;
use supercolumn::model::comparator::{Comparator, CompositeType, Utf8Type};

/// Key or clustering values of one statement (inline for the usual few).
pub(super) type Parts<'v> = SmallVec<[&'v [u8]; 4]>;

/// Where a column's value comes from.
#[derive(Debug, Clone)]
pub(super) enum Source {
    /// The `?` marker at this position.
    Bind(usize),
    /// A literal, serialized when the statement was prepared.
    Literal(Vec<u8>),
}

/// What a bound value is checked against: its marker's position, its column's type and that
/// type's comparator (built once, when the statement is prepared, not for every value bound),
/// and the column's name for the error.
#[derive(Debug, Clone)]
pub(super) struct Check {
    index: usize,
    ty: CqlType,
    cmp: Option<Arc<dyn Comparator>>,
    column: String,
}

/// The sort key of a cell name's last component, `column`.
pub(super) fn sort_suffix(column: &str) -> Vec<u8> {
    let mut key = Vec::new();
    CompositeType::push_component_sort_key(
        &Utf8Type,
        column.as_bytes(),
        0,
        &mut key,
        &mut Vec::new(),
    );
    key
}

/// The source of a term, and the check its bound bytes need; `None` when the term is not one
/// a plan takes (a null or `now()` literal, a literal that does not encode).
pub(super) fn source(
    term: &Term,
    ty: &CqlType,
    column: &str,
    checks: &mut Vec<Check>,
) -> Option<Source> {
    match term {
        // Bound frozen sets and maps are put in order first: the general path does that.
        Term::Bind(_) if matches!(ty, CqlType::Frozen(_)) => None,
        Term::Bind(b) => {
            checks.push(Check {
                index: b.index(),
                ty: ty.clone(),
                cmp: ty.comparator(),
                column: column.to_string(),
            });
            Some(Source::Bind(b.index()))
        }
        // A call is evaluated per execution (`now()`), by the general path.
        Term::Literal(lit) if lit.has_call() => None,
        Term::Literal(lit) => ty.encode(lit, column).ok().flatten().map(Source::Literal),
    }
}

/// Checks the bound values against their columns' types (a null passes: the general path
/// decides what a null means where it stands).
// `#[inline]` on this file's small helpers: the planned reads and writes call them per value,
// from other codegen units.
#[inline]
pub(super) fn checked(checks: &[Check], values: &[Option<&[u8]>]) -> Result<(), CqlError> {
    for c in checks {
        if let Some(Some(bytes)) = values.get(c.index) {
            c.ty.check_with(bytes, c.cmp.as_deref())
                .map_err(|e| CqlError::invalid(format!("invalid value for {}: {e}", c.column)))?;
        }
    }
    Ok(())
}

#[inline]
pub(super) fn resolve<'a>(s: &'a Source, values: &[Option<&'a [u8]>]) -> Option<&'a [u8]> {
    match s {
        Source::Bind(i) => values.get(*i).copied().flatten(),
        Source::Literal(v) => Some(v),
    }
}

/// The row key of these partition key values, if the general path would accept them: no null,
/// no empty single-column key, no component over 65,535 bytes.
#[inline]
pub(super) fn row_key<'v>(parts: &[&'v [u8]]) -> Option<Cow<'v, [u8]>> {
    match parts {
        [one] if !one.is_empty() => Some(Cow::Borrowed(*one)),
        [_] => None,
        many => CompositeType::fits(many).then(|| Cow::Owned(CompositeType::build(many, 0))),
    }
}

/// Appends a kept cell's write time (null without the cell).
#[inline]
pub(super) fn push_write_time(out: &mut Rows, timestamp: Option<i64>) {
    match timestamp {
        Some(t) => out.push_value(&t.to_be_bytes()),
        None => out.push_null(),
    }
}

/// Appends the seconds a kept cell has left at `now_seconds` (null when it does not expire).
#[inline]
pub(super) fn push_ttl(out: &mut Rows, expires: Option<i64>, now_seconds: i64) {
    match expires {
        Some(expires) => {
            let left = (expires - now_seconds).clamp(0, i64::from(i32::MAX));
            out.push_value(&(left as i32).to_be_bytes());
        }
        None => out.push_null(),
    }
}
