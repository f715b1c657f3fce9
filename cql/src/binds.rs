//! What each bind marker (`?` or `:name`) of a prepared statement stands for: the column it is bound to and that
//! column's type (or the pseudo-columns `[ttl]`, `[timestamp]`, `[limit]`, `partition key
//! token`), in marker order. A client (the native protocol's PREPARED result) needs this to
//! serialize the values it binds. This file only reads a parsed statement and its table.

use super::ast::{
    Assignment, Bind, ColumnCondition, Condition, Op, Relation, Selector, Statement, Subscript,
    Term, TupleTerm, Using,
};
use super::error::CqlError;
use super::functions::{fold, Context};
use super::table::Table;
use super::types::{CqlType, Literal};
use supercolumn::model::partitioner::Partitioner;
use supercolumn::model::timeuuid::TimeUuidGenerator;

mod literals;
mod selectors;

use literals::{call_markers, call_markers_of};

/// What one marker stands for: the name a client binds it by (its own for `:name`, else its
/// column's), the column (or pseudo-column) it is bound to, and the type.
pub type Marker = (String, String, CqlType);

type Out = Vec<Option<Marker>>;

/// The table each statement (a batch's statements each) writes or reads, if known.
pub type Tables<'t> = &'t dyn Fn(&Statement) -> Option<&'t Table>;

/// Each marker, by position; a marker whose column is not known (a table that does not exist,
/// a marker inside a collection literal) is a `blob`.
pub fn markers(statement: &Statement, tables: Tables<'_>) -> Vec<Marker> {
    let mut out: Out = Vec::new();
    walk(statement, tables, &mut out);
    out.into_iter()
        .enumerate()
        .map(|(i, b)| b.unwrap_or_else(|| (format!("[{i}]"), String::new(), CqlType::Blob)))
        .collect()
}

/// Records marker `t`'s column and type; a `:name` marker is known by its own name, which a
/// client binds by.
fn put(out: &mut Out, t: &Term, name: &str, ty: CqlType) {
    if let Term::Literal(lit) = t {
        call_markers_of(out, lit, Some(&ty), name);
    }
    if let Term::Bind(b) = t {
        let i = b.index();
        if out.len() <= i {
            out.resize(i + 1, None);
        }
        let given = match b {
            Bind::Named(_, n) => n.as_str(),
            Bind::Positional(_) => name,
        };
        out[i] = Some((given.to_string(), name.to_string(), ty));
    }
}

fn bind_of(at: usize, given: &Option<String>) -> Bind {
    match given {
        Some(n) => Bind::Named(at, n.clone()),
        None => Bind::Positional(at),
    }
}

fn column_type(table: Option<&Table>, name: &str) -> CqlType {
    table
        .and_then(|t| t.column(name).ok())
        .map_or(CqlType::Blob, |(_, c)| c.ty.clone())
}

/// The type of what `CONTAINS` or `CONTAINS KEY` looks for in a column of type `ty`.
fn contained(ty: &CqlType, op: Op) -> CqlType {
    match (ty, op) {
        (CqlType::Frozen(inner), _) => contained(inner, op),
        (CqlType::Map(k, _), Op::ContainsKey) => (**k).clone(),
        (CqlType::List(e) | CqlType::Set(e) | CqlType::Map(_, e), _) => (**e).clone(),
        (other, _) => other.clone(),
    }
}

/// The type of one element's key (a map's key, a list's index) and of its value.
fn element_types(ty: &CqlType) -> (CqlType, CqlType) {
    match ty {
        CqlType::Map(k, v) => ((**k).clone(), (**v).clone()),
        CqlType::List(e) => (CqlType::Int, (**e).clone()),
        CqlType::Set(e) => ((**e).clone(), CqlType::Boolean),
        CqlType::Frozen(inner) => element_types(inner),
        other => (CqlType::Blob, other.clone()),
    }
}

fn using(u: &Using, out: &mut Out) {
    if let Some(t) = &u.ttl {
        put(out, t, "[ttl]", CqlType::Int);
    }
    if let Some(t) = &u.timestamp {
        put(out, t, "[timestamp]", CqlType::Bigint);
    }
}

fn relations(rs: &[Relation], table: Option<&Table>, out: &mut Out) {
    for r in rs {
        match r {
            Relation::Compare(c, op @ (Op::Contains | Op::ContainsKey), t) => {
                put(out, t, c, contained(&column_type(table, c), *op));
            }
            Relation::Compare(c, _, t) => put(out, t, c, column_type(table, c)),
            Relation::In(c, ts) => {
                let ty = column_type(table, c);
                ts.iter().for_each(|t| put(out, t, c, ty.clone()));
            }
            Relation::InMarker(c, b) => {
                let ty = CqlType::List(Box::new(column_type(table, c)));
                put(out, &Term::Bind(b.clone()), &format!("in({c})"), ty);
            }
            Relation::Multi(cs, _, t) => tuple_term(out, table, cs, t),
            Relation::MultiIn(cs, ts) => ts.iter().for_each(|t| tuple_term(out, table, cs, t)),
            // `token(k) op token(?)`: the marker is a partition key value, not a token.
            Relation::Token(cols, _, ts, true) => {
                for (c, t) in cols.iter().zip(ts) {
                    put(out, t, c, column_type(table, c));
                }
            }
            Relation::Token(_, _, ts, false) => ts
                .iter()
                .for_each(|t| put(out, t, "partition key token", CqlType::Bigint)),
            // `m[?] = ?`: Cassandra's names for a map's key and value.
            Relation::Entry(c, k, _, v) => {
                let (kt, vt) = column_type(table, c)
                    .element_access(c)
                    .unwrap_or((CqlType::Blob, CqlType::Blob));
                put(out, k, &format!("key({c})"), kt);
                put(out, v, &format!("value({c})"), vt);
            }
        }
    }
}

/// The markers of a multi-column relation's value: one taking the tuple of the columns'
/// types, or one per column taking its type and name.
fn tuple_term(out: &mut Out, table: Option<&Table>, cs: &[String], t: &TupleTerm) {
    match t {
        TupleTerm::Whole(t) => {
            let ty = CqlType::Tuple(cs.iter().map(|c| column_type(table, c)).collect());
            put(out, t, &format!("({})", cs.join(",")), ty);
        }
        TupleTerm::Each(ts) => {
            for (t, c) in ts.iter().zip(cs) {
                put(out, t, c, column_type(table, c));
            }
        }
    }
}

/// The terms of one `IF` comparison, each with the name and type its marker takes (Cassandra's
/// names: `key(m)` or `idx(l)` for an element's key, `value(m)` for an element, `a.f` for a
/// field); a subscript the column's type cannot take gives no type here, and is refused when
/// the condition is checked.
fn condition_terms<'c>(
    table: Option<&Table>,
    cc: &'c ColumnCondition,
) -> Vec<(&'c Term, String, CqlType)> {
    let c = &cc.column;
    let ty = column_type(table, c);
    let mut out = Vec::new();
    let value = match &cc.subscript {
        // What `CONTAINS` looks for: an element (`value(c)`), or a map's key (`key(c)`).
        None if cc.op == Op::Contains => (format!("value({c})"), contained(&ty, cc.op)),
        None if cc.op == Op::ContainsKey => (format!("key({c})"), contained(&ty, cc.op)),
        None => (c.clone(), ty),
        Some(Subscript::Element(k)) => {
            let (kt, vt) = ty
                .element_access(c)
                .unwrap_or((CqlType::Blob, CqlType::Blob));
            let key = if matches!(ty, CqlType::List(_)) {
                "idx"
            } else {
                "key"
            };
            out.push((k, format!("{key}({c})"), kt));
            (format!("value({c})"), vt)
        }
        Some(Subscript::Field(f)) => {
            let ft = ty.field_access(c, f).map_or(CqlType::Blob, |(_, t)| t);
            (format!("{c}.{f}"), ft)
        }
    };
    let value = if cc.list_marker {
        // Cassandra's name and type for the marker of `IF c IN ?`.
        (format!("in({})", value.0), CqlType::List(Box::new(value.1)))
    } else {
        value
    };
    for t in &cc.values {
        out.push((t, value.0.clone(), value.1.clone()));
    }
    out
}

/// The `IF` of a conditional `UPDATE` or `DELETE`.
fn condition(s: &Statement) -> Option<&Condition> {
    match s {
        Statement::Update { condition, .. } | Statement::Delete { condition, .. } => {
            condition.as_ref()
        }
        _ => None,
    }
}

// Long because it is one match over the statement kinds that hold markers.
fn walk(s: &Statement, tables: Tables<'_>, out: &mut Out) {
    let table = tables(s);
    if let Some(Condition::Columns(cs)) = condition(s) {
        for cc in cs {
            for (t, name, ty) in condition_terms(table, cc) {
                put(out, t, &name, ty);
            }
        }
    }
    match s {
        Statement::Insert {
            columns,
            values,
            using: u,
            ..
        } => {
            for (c, t) in columns.iter().zip(values) {
                put(out, t, c, column_type(table, c));
            }
            using(u, out);
        }
        Statement::InsertJson { json, using: u, .. } => {
            put(out, json, "[json]", CqlType::Text);
            using(u, out);
        }
        Statement::Update {
            using: u,
            assignments,
            relations: r,
            ..
        } => {
            using(u, out);
            for a in assignments {
                let ty = column_type(table, a.column());
                match a {
                    Assignment::Set(c, t) | Assignment::Add(c, t) | Assignment::Prepend(c, t) => {
                        put(out, t, c, ty)
                    }
                    Assignment::Discard(c, t) => {
                        let ty = match ty {
                            CqlType::Map(k, _) => CqlType::Set(k),
                            other => other,
                        };
                        put(out, t, c, ty)
                    }
                    Assignment::SetElement(c, k, v) => {
                        let (kt, vt) = element_types(&ty);
                        put(out, k, &format!("key({c})"), kt);
                        put(out, v, &format!("value({c})"), vt);
                    }
                    Assignment::SetField(c, f, v) => {
                        let ft = match &ty {
                            CqlType::Udt(u) => u.field(f).map(|(_, t)| t.clone()),
                            _ => None,
                        };
                        put(out, v, &format!("{c}.{f}"), ft.unwrap_or(CqlType::Blob));
                    }
                }
            }
            relations(r, table, out);
        }
        Statement::Delete {
            columns,
            using: u,
            relations: r,
            ..
        } => {
            for (c, e) in columns {
                if let Some(t) = e.as_ref().and_then(Subscript::term) {
                    let (kt, _) = element_types(&column_type(table, c));
                    put(out, t, &format!("key({c})"), kt);
                }
            }
            using(u, out);
            relations(r, table, out);
        }
        Statement::Select(sel) => {
            for s in &sel.selectors {
                selectors::selector_markers(out, s, table);
            }
            relations(&sel.relations, table, out);
            for t in sel.per_partition_limit.iter().chain(&sel.limit) {
                put(out, t, "[limit]", CqlType::Int);
            }
        }
        Statement::Batch {
            statements,
            using: u,
            ..
        } => {
            using(u, out);
            for s in statements {
                walk(s, tables, out);
            }
        }
        _ => {}
    }
}

/// A term given for `column`: a literal must be of its type.
fn literal(table: &Table, column: &str, t: &Term) -> Result<(), CqlError> {
    let (_, def) = table.column(column)?;
    literal_of(&def.ty, column, t)
}

/// Checks a literal given as a value of `ty` for `name`.
fn literal_of(ty: &CqlType, name: &str, t: &Term) -> Result<(), CqlError> {
    match t {
        Term::Bind(_) => Ok(()),
        // Calls are chosen and typed (and evaluated) as Cassandra does at PREPARE; what they
        // give at execution is the session's to compute.
        Term::Literal(lit) if lit.has_call() => {
            let uuids = TimeUuidGenerator::new(0);
            let cx = Context {
                now_micros: 0,
                uuids: &uuids,
                partitioner: Partitioner::default(),
                binds: &[],
            };
            let folded = fold(lit, ty, &cx)?;
            // A marker's value is not known yet (it folds to a null, which a collection's
            // element may not be): the whole value is checked when it is.
            let mut marked = false;
            lit.markers(&mut |_| marked = true);
            if marked {
                return Ok(());
            }
            ty.encode(&folded, name).map(|_| ())
        }
        Term::Literal(lit) => ty.encode(lit, name).map(|_| ()),
    }
}

/// The relations of a `WHERE`, checked at PREPARE time: their columns exist, their literals
/// are of their columns' types.
fn check_relations(table: &Table, rs: &[Relation]) -> Result<(), CqlError> {
    for r in rs {
        match r {
            // What CONTAINS looks for is checked when the query is planned.
            Relation::Compare(_, Op::Contains | Op::ContainsKey, _) => {}
            Relation::Compare(c, _, t) => literal(table, c, t)?,
            Relation::In(c, ts) => ts.iter().try_for_each(|t| literal(table, c, t))?,
            Relation::InMarker(c, _) | Relation::Entry(c, ..) => {
                table.column(c)?;
            }
            Relation::Multi(cs, ..) | Relation::MultiIn(cs, _) | Relation::Token(cs, ..) => {
                for c in cs {
                    table.column(c)?;
                }
            }
        }
    }
    Ok(())
}

/// Checks at PREPARE time what Cassandra checks then: every column the statement names
/// exists in its table, and every literal given for a column is of that column's type.
pub fn check(statement: &Statement, table: &Table) -> Result<(), CqlError> {
    let literal = |column: &str, t: &Term| literal(table, column, t);
    let relations = |rs: &[Relation]| check_relations(table, rs);
    if let Some(Condition::Columns(cs)) = condition(statement) {
        for cc in cs {
            table.column(&cc.column)?;
            for (t, name, ty) in condition_terms(Some(table), cc) {
                literal_of(&ty, &name, t)?;
            }
        }
    }
    match statement {
        Statement::InsertJson {
            json: Term::Literal(Literal::Str(text)),
            default_unset,
            ..
        } => super::json_insert::columns_of(table, text, *default_unset).map(drop),
        Statement::Insert {
            columns, values, ..
        } => columns
            .iter()
            .zip(values)
            .try_for_each(|(c, t)| literal(c, t)),
        Statement::Update {
            assignments,
            relations: r,
            ..
        } => {
            for a in assignments {
                match a {
                    Assignment::Set(c, t) => literal(c, t)?,
                    other => {
                        table.column(other.column())?;
                    }
                }
            }
            relations(r)
        }
        Statement::Delete {
            columns,
            relations: r,
            ..
        } => {
            for (c, _) in columns {
                table.column(c)?;
            }
            relations(r)
        }
        Statement::Select(sel) => {
            for s in &sel.selectors {
                if let Selector::Column(c) | Selector::WriteTime(c, _) | Selector::Ttl(c) = s {
                    table.column(c)?;
                }
            }
            for (c, _) in &sel.order_by {
                table.column(c)?;
            }
            relations(&sel.relations)
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bind_columns(s: &Statement, t: Option<&Table>) -> Vec<(String, CqlType)> {
        markers(s, &|_| t)
            .into_iter()
            .map(|(name, _, ty)| (name, ty))
            .collect()
    }
    use crate::parser::parse;

    fn table() -> Table {
        let s = parse("CREATE TABLE ks.t (k int, c text, v map<text, bigint>, PRIMARY KEY (k, c))")
            .unwrap()
            .remove(0);
        Table::from_statement("ks", &s).unwrap()
    }

    #[test]
    fn markers_take_their_columns_types_in_order() {
        let t = table();
        let s = parse("UPDATE t USING TTL ? SET v[?] = ? WHERE k = ? AND c IN (?, ?)")
            .unwrap()
            .remove(0);
        let b = bind_columns(&s, Some(&t));
        let names: Vec<&str> = b.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["[ttl]", "key(v)", "value(v)", "k", "c", "c"]);
        assert_eq!(b[1].1, CqlType::Text);
        assert_eq!(b[2].1, CqlType::Bigint);
        assert_eq!(b[3].1, CqlType::Int);
        let s = parse("SELECT * FROM t WHERE token(k) >= token(?) AND token(k) < ? LIMIT ?")
            .unwrap()
            .remove(0);
        let b = bind_columns(&s, Some(&t));
        let types: Vec<&CqlType> = b.iter().map(|(_, ty)| ty).collect();
        assert_eq!(types, [&CqlType::Int, &CqlType::Bigint, &CqlType::Int]);
    }

    #[test]
    fn prepare_time_checks_catch_unknown_columns_and_mistyped_literals() {
        let t = table();
        let ok = |q: &str| check(&parse(q).unwrap().remove(0), &t);
        assert!(ok("INSERT INTO t (k, c, v) VALUES (?, 'x', {'a': 1})").is_ok());
        assert!(ok("UPDATE t SET v = v + {'b': 2} WHERE k = 1 AND c = ?").is_ok());
        assert!(ok("SELECT ttl(v), c FROM t WHERE k IN (1, 2) ORDER BY c DESC").is_ok());
        for bad in [
            "INSERT INTO t (k, nope) VALUES (1, 1)",
            "INSERT INTO t (k, c) VALUES (1, 2)",
            "UPDATE t SET nope = 1 WHERE k = 1",
            "SELECT nope FROM t",
            "DELETE nope FROM t WHERE k = 1",
            "SELECT * FROM t WHERE nope = 1",
            "SELECT * FROM t WHERE k = 'one'",
        ] {
            assert!(ok(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_unknown_table_binds_blobs() {
        let s = parse("INSERT INTO t (k, c) VALUES (?, ?)")
            .unwrap()
            .remove(0);
        let b = bind_columns(&s, None);
        assert_eq!(b.len(), 2);
        assert!(b.iter().all(|(_, ty)| *ty == CqlType::Blob));
    }
}
