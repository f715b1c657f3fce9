//! Server-side `DESCRIBE` (Cassandra 4.0+, what cqlsh 6 sends): the names of keyspaces or
//! tables, the cluster, and the statements that recreate a keyspace, a table or the whole
//! schema, as rows of `keyspace_name`, `type`, `name` (and `create_statement`).

use crate::error::CqlError;
use crate::rows::Rows;
use crate::table::{quote_ident, Table};
use crate::types::{CqlType, UserType};
use crate::user_types::{create_statement as create_type_statement, UserTypes};
use std::sync::Arc;
use supercolumn::Database;

use super::tables::cql_tables;

/// Whether `text` is a DESCRIBE statement (this server answers it; the CQL layer does not).
pub fn is_describe(text: &str) -> bool {
    let first = text.split_whitespace().next().unwrap_or("");
    first.eq_ignore_ascii_case("describe") || first.eq_ignore_ascii_case("desc")
}

/// Splits a DESCRIBE into words, folding unquoted ones to lower case (`"Keyspace1"` keeps its
/// case) and dropping a trailing `;`.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.trim().trim_end_matches(';').chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() || c == '.' {
            chars.next();
        } else if c == '"' {
            chars.next();
            let mut w = String::new();
            while let Some(c) = chars.next() {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        w.push('"');
                    } else {
                        break;
                    }
                } else {
                    w.push(c);
                }
            }
            out.push(w);
        } else {
            let mut w = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || c == '.' || c == '"' {
                    break;
                }
                w.push(c.to_ascii_lowercase());
                chars.next();
            }
            out.push(w);
        }
    }
    out
}

fn text(v: &str) -> Option<Vec<u8>> {
    Some(v.as_bytes().to_vec())
}

/// The rows of a listing (`DESCRIBE KEYSPACES`, `TABLES`): names quoted where CQL needs it
/// (`"Keyspace1"`), as Cassandra lists them, so they can be typed back.
fn names(rows: Vec<(String, &str, String)>) -> Rows {
    let rows = rows
        .into_iter()
        .map(|(k, t, n)| (quote_ident(&k), t, quote_ident(&n)));
    Rows::from_vecs(
        vec![
            ("keyspace_name".into(), CqlType::Text),
            ("type".into(), CqlType::Text),
            ("name".into(), CqlType::Text),
        ],
        rows.map(|(k, t, n)| vec![text(&k), text(t), text(&n)]),
    )
}

fn statements(rows: Vec<(String, &str, String, String)>) -> Rows {
    Rows::from_vecs(
        vec![
            ("keyspace_name".into(), CqlType::Text),
            ("type".into(), CqlType::Text),
            ("name".into(), CqlType::Text),
            ("create_statement".into(), CqlType::Text),
        ],
        rows.into_iter()
            .map(|(k, t, n, s)| vec![text(&k), text(t), text(&n), text(&s)]),
    )
}

/// The `CREATE KEYSPACE` that recreates `ks`.
pub fn create_keyspace(db: &Database, ks: &str) -> Result<String, CqlError> {
    let def = db
        .describe_keyspace(ks)
        .map_err(|_| CqlError::invalid(format!("'{ks}' not found in keyspaces")))?;
    let class = if def
        .replica_placement_strategy
        .ends_with("NetworkTopologyStrategy")
    {
        "NetworkTopologyStrategy"
    } else {
        "SimpleStrategy"
    };
    Ok(format!(
        "CREATE KEYSPACE {} WITH replication = {{'class': '{class}', 'replication_factor': '{}'}}  AND durable_writes = {};",
        quote_ident(ks),
        def.replication_factor,
        def.durable_writes
    ))
}

fn keyspace_rows(
    db: &Database,
    ks: &str,
    tables: &[Table],
) -> Result<Vec<(String, &'static str, String, String)>, CqlError> {
    let mut out = vec![(
        ks.to_string(),
        "keyspace",
        ks.to_string(),
        create_keyspace(db, ks)?,
    )];
    for t in keyspace_types(db, ks) {
        out.push((
            ks.to_string(),
            "type",
            t.name.clone(),
            create_type_statement(&t),
        ));
    }
    for t in tables.iter().filter(|t| t.keyspace == ks) {
        out.push((
            ks.to_string(),
            "table",
            t.name.clone(),
            t.create_statement(),
        ));
        out.extend(index_rows(t));
    }
    Ok(out)
}

/// A DESCRIBE row for each index of `t`.
fn index_rows(t: &Table) -> Vec<(String, &'static str, String, String)> {
    t.indexes
        .iter()
        .map(|i| {
            (
                t.keyspace.clone(),
                "index",
                i.name.clone(),
                i.create_statement(t),
            )
        })
        .collect()
}

/// Answers a DESCRIBE; `current` is the connection's keyspace.
pub fn describe(db: &Database, current: Option<&str>, statement: &str) -> Result<Rows, CqlError> {
    let w = words(statement);
    let w: Vec<&str> = w.iter().skip(1).map(String::as_str).collect();
    let tables = cql_tables(db);
    let in_scope = |t: &&Table| current.is_none_or(|k| t.keyspace == k);
    let user = |ks: &String| !super::is_system_keyspace(ks);
    match w.as_slice() {
        ["keyspaces"] => Ok(names(
            db.keyspaces()
                .into_iter()
                .map(|k| (k.clone(), "keyspace", k))
                .collect(),
        )),
        ["tables"] | ["columnfamilies"] => Ok(names(
            tables
                .iter()
                .filter(in_scope)
                .map(|t| (t.keyspace.clone(), "table", t.name.clone()))
                .collect(),
        )),
        ["types"] => {
            let mut rows = Vec::new();
            for ks in db.keyspaces() {
                if current.is_none_or(|k| k == ks) {
                    for t in keyspace_types(db, &ks) {
                        rows.push((ks.clone(), "type", t.name.clone()));
                    }
                }
            }
            Ok(names(rows))
        }
        ["type", rest @ ..] => user_type(db, current, rest),
        ["functions"] | ["aggregates"] => Ok(names(Vec::new())),
        ["cluster"] => Ok(Rows::from_vecs(
            vec![
                ("cluster".into(), CqlType::Text),
                ("partitioner".into(), CqlType::Text),
                ("snitch".into(), CqlType::Text),
            ],
            [vec![
                text("supercolumn"),
                text(&format!(
                    "org.apache.cassandra.dht.{}",
                    db.partitioner().class_name()
                )),
                text("org.apache.cassandra.locator.SimpleSnitch"),
            ]],
        )),
        ["schema"] | ["full", "schema"] => {
            let mut out = Vec::new();
            for ks in db.keyspaces().iter().filter(|k| user(k)) {
                out.extend(keyspace_rows(db, ks, &tables)?);
            }
            Ok(statements(out))
        }
        ["keyspace"] => match current {
            Some(ks) => Ok(statements(keyspace_rows(db, ks, &tables)?)),
            None => Err(CqlError::invalid(
                "no keyspace specified and no current keyspace",
            )),
        },
        ["keyspace", ks] => Ok(statements(keyspace_rows(db, ks, &tables)?)),
        ["table" | "columnfamily", rest @ ..] => table(&tables, current, rest),
        [ks] if db.keyspaces().iter().any(|k| k == ks) => {
            Ok(statements(keyspace_rows(db, ks, &tables)?))
        }
        [_] | [_, _] => table(&tables, current, &w),
        _ => Err(CqlError::syntax(
            1,
            1,
            format!("cannot DESCRIBE '{}'", w.join(" ")),
        )),
    }
}

/// The user types of keyspace `ks`, in creation order (each after the types it names).
fn keyspace_types(db: &Database, ks: &str) -> Vec<Arc<UserType>> {
    db.describe_keyspace(ks)
        .ok()
        .and_then(|def| UserTypes::of(&def).ok())
        .map(|t| t.list().to_vec())
        .unwrap_or_default()
}

/// `DESCRIBE TYPE [ks.]name`.
fn user_type(db: &Database, current: Option<&str>, name: &[&str]) -> Result<Rows, CqlError> {
    let (ks, t) = qualified(current, name, "DESCRIBE TYPE takes [keyspace.]type")?;
    let found = keyspace_types(db, ks)
        .into_iter()
        .find(|x| x.name == t)
        .ok_or_else(|| {
            CqlError::invalid(format!("User type '{t}' not found in keyspace '{ks}'"))
        })?;
    Ok(statements(vec![(
        ks.to_string(),
        "type",
        t.to_string(),
        create_type_statement(&found),
    )]))
}

/// The keyspace and name of `[ks.]name` (`current`: the keyspace in use); `usage` when it is
/// neither.
fn qualified<'a>(
    current: Option<&'a str>,
    name: &[&'a str],
    usage: &str,
) -> Result<(&'a str, &'a str), CqlError> {
    match name {
        [ks, t] => Ok((*ks, *t)),
        [t] => Ok((
            current.ok_or_else(|| {
                CqlError::invalid("no keyspace specified and no current keyspace")
            })?,
            *t,
        )),
        _ => Err(CqlError::syntax(1, 1, usage)),
    }
}

fn table(tables: &[Table], current: Option<&str>, name: &[&str]) -> Result<Rows, CqlError> {
    let (ks, t) = qualified(current, name, "DESCRIBE TABLE takes [keyspace.]table")?;
    let found = tables
        .iter()
        .find(|x| x.keyspace == ks && x.name == t)
        .ok_or_else(|| CqlError::invalid(format!("'{t}' not found in keyspace '{ks}'")))?;
    let mut rows = vec![(
        ks.to_string(),
        "table",
        t.to_string(),
        found.create_statement(),
    )];
    rows.extend(index_rows(found));
    Ok(statements(rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Session;
    use supercolumn::Options;

    #[test]
    fn describe_names_and_recreates() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), Options::default()).unwrap();
        let mut s = Session::new(&db);
        s.execute("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE ks.t (k int PRIMARY KEY, v text)")
            .unwrap();
        let r = describe(&db, None, "DESCRIBE KEYSPACE ks;").unwrap();
        assert_eq!(r.to_vecs().len(), 2);
        let stmt = String::from_utf8(r.to_vecs()[1][3].clone().unwrap()).unwrap();
        assert!(stmt.starts_with("CREATE TABLE ks.t ("), "{stmt}");
        assert_eq!(
            describe(&db, Some("ks"), "desc t").unwrap().to_vecs().len(),
            1
        );
        assert_eq!(describe(&db, None, "DESC ks.t").unwrap().to_vecs().len(), 1);
        assert_eq!(
            describe(&db, Some("ks"), "DESC TABLES")
                .unwrap()
                .to_vecs()
                .len(),
            1
        );
        // Every keyspace's, Keyspace1's four Thrift-era column families among them.
        assert_eq!(
            describe(&db, None, "DESC TABLES").unwrap().to_vecs().len(),
            5
        );
        assert!(describe(&db, None, "DESC TABLE ks.nothing").is_err());
        assert!(describe(&db, None, "DESC KEYSPACE \"Nothing\"").is_err());
        assert!(is_describe("  desc keyspaces"));
    }

    #[test]
    fn listings_quote_names_that_need_quotes() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), Options::default()).unwrap();
        let listed = |q: &str| -> Vec<(String, String)> {
            describe(&db, None, q)
                .unwrap()
                .to_vecs()
                .into_iter()
                .map(|r| {
                    let s = |v: &Option<Vec<u8>>| String::from_utf8(v.clone().unwrap()).unwrap();
                    (s(&r[0]), s(&r[2]))
                })
                .collect()
        };
        assert!(
            listed("DESC KEYSPACES").contains(&("\"Keyspace1\"".into(), "\"Keyspace1\"".into()))
        );
        assert!(listed("DESC TABLES").contains(&("\"Keyspace1\"".into(), "\"Standard1\"".into())));
    }
}
