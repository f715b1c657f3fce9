//! Unset bound values (native protocol v4): a value a client leaves unset leaves its part of the
//! statement out, as Cassandra does. An unset column value in an `INSERT` or an `UPDATE … SET`
//! writes nothing for that column (a null would delete it); an unset `USING TTL` or `TIMESTAMP`
//! is as if absent, as are an unset `LIMIT` and `PER PARTITION LIMIT`; an unset list index in a
//! `DELETE` deletes nothing. What cannot be left out is refused in Cassandra's words: an unset key
//! or restriction value, map key, list index being set, or condition value.
//!
//! This file rewrites a parsed statement and nothing else; the statement it returns keeps the
//! markers' numbers, so the values bound to the markers that remain stay where they were.

use super::ast::{Assignment, Condition, Relation, Select, Statement, Subscript, Term, Using};
use super::error::CqlError;
use super::table::{Kind, Table};
use super::types::CqlType;

/// `stmt` without the parts whose markers `unset` marks (by marker position), or `None` when
/// nothing of it is left to do (every column an `UPDATE` or a `DELETE` names is unset).
/// `tables` gives each row-level statement's table (a batch's, each in turn), when known.
pub fn without_unset<'t>(
    stmt: &Statement,
    tables: &mut dyn FnMut() -> Option<&'t Table>,
    unset: &[bool],
) -> Result<Option<Statement>, CqlError> {
    let is_unset = |t: &Term| matches!(t, Term::Bind(b) if unset.get(b.index()) == Some(&true));
    let mut s = stmt.clone();
    match &mut s {
        Statement::Insert {
            columns,
            values,
            using,
            ..
        } => {
            let table = tables();
            let mut kept = (Vec::new(), Vec::new());
            for (c, v) in columns.iter().zip(values.iter()) {
                if !is_unset(v) {
                    kept.0.push(c.clone());
                    kept.1.push(v.clone());
                } else if table.is_none_or(|t| is_key(t, c)) {
                    return Err(unset_column(c));
                }
            }
            (*columns, *values) = kept;
            strip_using(using, &is_unset);
        }
        Statement::Update {
            using,
            assignments,
            relations,
            condition,
            ..
        } => {
            let table = tables();
            check_write(relations, condition.as_ref(), using, &is_unset)?;
            let before = assignments.len();
            *assignments = kept_assignments(assignments, table, &is_unset)?;
            if assignments.is_empty() && before > 0 && condition.is_none() {
                return Ok(None);
            }
        }
        Statement::Delete {
            columns,
            using,
            relations,
            condition,
            ..
        } => {
            let table = tables();
            check_write(relations, condition.as_ref(), using, &is_unset)?;
            let before = columns.len();
            *columns = kept_deletions(columns, table, &is_unset)?;
            // A DELETE that named columns, all of them left out, must not become a DELETE of
            // the whole row.
            if columns.is_empty() && before > 0 {
                return Ok(None);
            }
        }
        Statement::Select(sel) => strip_select(sel, &is_unset)?,
        Statement::Batch {
            statements, using, ..
        } => {
            strip_using(using, &is_unset);
            let mut kept = Vec::with_capacity(statements.len());
            for st in statements.iter() {
                kept.extend(without_unset(st, tables, unset)?);
            }
            *statements = kept;
        }
        _ => {}
    }
    Ok(Some(s))
}

fn is_key(t: &Table, column: &str) -> bool {
    t.column(column)
        .is_ok_and(|(_, c)| !matches!(c.kind, Kind::Regular))
}

fn unset_column(column: &str) -> CqlError {
    CqlError::invalid(format!("Invalid unset value for column {column}"))
}

/// What an `UPDATE` and a `DELETE` share: their `WHERE` and `IF` refuse an unset value, their
/// `USING` leaves one out.
fn check_write(
    relations: &[Relation],
    condition: Option<&Condition>,
    using: &mut Using,
    is_unset: &dyn Fn(&Term) -> bool,
) -> Result<(), CqlError> {
    check_relations(relations, is_unset)?;
    check_condition(condition, is_unset)?;
    strip_using(using, is_unset);
    Ok(())
}

fn strip_using(u: &mut Using, is_unset: &dyn Fn(&Term) -> bool) {
    if u.ttl.as_ref().is_some_and(is_unset) {
        u.ttl = None;
    }
    if u.timestamp.as_ref().is_some_and(is_unset) {
        u.timestamp = None;
    }
}

fn check_relations(rs: &[Relation], is_unset: &dyn Fn(&Term) -> bool) -> Result<(), CqlError> {
    for r in rs {
        match r {
            Relation::Compare(c, _, t) if is_unset(t) => return Err(unset_column(c)),
            Relation::In(c, ts) if ts.iter().any(is_unset) => return Err(unset_column(c)),
            Relation::InMarker(c, b) if is_unset(&Term::Bind(b.clone())) => {
                return Err(unset_column(c))
            }
            Relation::Token(cs, _, ts, _) if ts.iter().any(is_unset) => {
                return Err(CqlError::invalid(format!(
                    "Invalid unset value for token({})",
                    cs.join(", ")
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

fn check_condition(
    c: Option<&Condition>,
    is_unset: &dyn Fn(&Term) -> bool,
) -> Result<(), CqlError> {
    match c {
        Some(c) if c.terms().any(|(_, t)| is_unset(t)) => {
            Err(CqlError::invalid("Invalid 'unset' value in condition"))
        }
        _ => Ok(()),
    }
}

fn is_list(table: Option<&Table>, column: &str) -> bool {
    table
        .and_then(|t| t.column(column).ok())
        .is_some_and(|(_, c)| matches!(c.ty, CqlType::List(_)))
}

/// The assignments left: one whose value is unset goes; an unset map key or list index is
/// refused.
fn kept_assignments(
    assignments: &[Assignment],
    table: Option<&Table>,
    is_unset: &dyn Fn(&Term) -> bool,
) -> Result<Vec<Assignment>, CqlError> {
    let mut kept = Vec::with_capacity(assignments.len());
    for a in assignments {
        if let Assignment::SetElement(c, key, _) = a {
            if is_unset(key) {
                return Err(CqlError::invalid(if is_list(table, c) {
                    "Invalid unset value for list index"
                } else {
                    "Invalid unset map key"
                }));
            }
        }
        // The value is an assignment's last term.
        if !a.terms().last().is_some_and(|t| is_unset(t)) {
            kept.push(a.clone());
        }
    }
    Ok(kept)
}

/// The columns a DELETE still names: an element whose list index is unset goes; an unset map
/// key is refused.
fn kept_deletions(
    columns: &[(String, Option<Subscript>)],
    table: Option<&Table>,
    is_unset: &dyn Fn(&Term) -> bool,
) -> Result<Vec<(String, Option<Subscript>)>, CqlError> {
    let mut kept = Vec::with_capacity(columns.len());
    for (c, element) in columns {
        match element.as_ref().and_then(Subscript::term) {
            Some(e) if is_unset(e) && is_list(table, c) => {}
            Some(e) if is_unset(e) => return Err(CqlError::invalid("Invalid unset map key")),
            _ => kept.push((c.clone(), element.clone())),
        }
    }
    Ok(kept)
}

fn strip_select(sel: &mut Select, is_unset: &dyn Fn(&Term) -> bool) -> Result<(), CqlError> {
    check_relations(&sel.relations, is_unset)?;
    // An unset limit is no limit, as in Cassandra.
    if sel.limit.as_ref().is_some_and(is_unset) {
        sel.limit = None;
    }
    if sel.per_partition_limit.as_ref().is_some_and(is_unset) {
        sel.per_partition_limit = None;
    }
    Ok(())
}
