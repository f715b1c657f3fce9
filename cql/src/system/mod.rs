//! Reads of the system keyspaces (`system`, `system_schema`, `system_virtual_schema`): a
//! `SELECT` on one of their tables is answered from the catalog (`tables.rs`), with `=` and
//! `IN` restrictions on literal values, a column list or `*`, and `COUNT(*)`. Server-side
//! `DESCRIBE` is `describe.rs`. Nothing here writes.

pub mod describe;
pub mod server;
pub mod tables;
pub mod traces;
pub mod views;

use crate::ast::{Bind, Relation, Select, Selector, Term};
use crate::error::CqlError;
use crate::rows::Rows;
use crate::types::{CqlType, Literal, Op};
use supercolumn::Database;

/// The CQL version this crate speaks.
pub const CQL_VERSION: &str = "3.4.5";
/// The Cassandra release whose behaviour is offered (server-side DESCRIBE, the `system_schema`
/// tables): drivers pick their schema queries by it.
pub const RELEASE_VERSION: &str = "4.0.11";

pub use server::{ConnectedClient, ServerState, ServerTraffic};
pub use tables::Node;

/// Keyspaces whose tables this module answers; writes to them are refused.
pub fn is_system_keyspace(name: &str) -> bool {
    matches!(
        name,
        "system"
            | "system_schema"
            | "system_virtual_schema"
            | "system_views"
            | "system_auth"
            | "system_distributed"
            | "system_traces"
    )
}

/// The name and type of each bind marker of a `SELECT` on a system table, in marker order
/// (what PREPARE reports, so that drivers can bind them).
pub fn bind_columns(
    db: &Database,
    node: &Node,
    keyspace: &str,
    sel: &Select,
) -> Result<Vec<(String, CqlType)>, CqlError> {
    let content = tables::content(db, node, keyspace, &sel.table.table)
        .ok_or_else(|| CqlError::Unconfigured(format!("table {keyspace}.{}", sel.table.table)))?;
    let mut out: Vec<(usize, String, CqlType)> = Vec::new();
    for rel in &sel.relations {
        let (name, terms) = match rel {
            Relation::Compare(c, _, t) => (c, std::slice::from_ref(t)),
            Relation::In(c, ts) => (c, ts.as_slice()),
            Relation::Token(..)
            | Relation::Entry(..)
            | Relation::InMarker(..)
            | Relation::Multi(..)
            | Relation::MultiIn(..) => continue,
        };
        let ty = content
            .columns
            .iter()
            .find(|(c, _)| *c == name.as_str())
            .map_or(CqlType::Blob, |(_, t)| t.clone());
        for t in terms {
            if let Term::Bind(b) = t {
                let given = match b {
                    Bind::Named(_, n) => n.clone(),
                    Bind::Positional(_) => name.clone(),
                };
                out.push((b.index(), given, ty.clone()));
            }
        }
    }
    out.sort_by_key(|(i, ..)| *i);
    Ok(out.into_iter().map(|(_, n, t)| (n, t)).collect())
}

/// Answers a `SELECT` on a system table: its rows. `binds` are the values of its markers, in
/// marker order.
// Long because it evaluates a system table SELECT's restrictions, selectors and limit over rows
// built whole, in one pass.
pub fn select(
    db: &Database,
    node: &Node,
    keyspace: &str,
    sel: &Select,
    binds: &[Option<Vec<u8>>],
) -> Result<Rows, CqlError> {
    let content = tables::content(db, node, keyspace, &sel.table.table)
        .ok_or_else(|| CqlError::Unconfigured(format!("table {keyspace}.{}", sel.table.table)))?;
    let column = |name: &str| {
        content
            .columns
            .iter()
            .position(|(c, _)| *c == name)
            .ok_or_else(|| {
                CqlError::invalid(format!(
                    "Undefined column name {name} in table {keyspace}.{}",
                    sel.table.table
                ))
            })
    };
    let encode = |ty: &CqlType, lit: &Literal, name: &str| ty.encode(lit, name);
    let mut rows: Vec<Vec<Option<Vec<u8>>>> = Vec::with_capacity(content.rows.len());
    for r in &content.rows {
        let mut out = Vec::with_capacity(r.len());
        for ((name, ty), lit) in content.columns.iter().zip(r) {
            out.push(encode(ty, lit, name)?);
        }
        rows.push(out);
    }
    for rel in &sel.relations {
        let (name, wanted) = match rel {
            Relation::Compare(c, Op::Eq, t) => (c, vec![t]),
            Relation::In(c, ts) => (c, ts.iter().collect()),
            _ => {
                return Err(CqlError::invalid(
                    "a system table takes only = and IN restrictions",
                ))
            }
        };
        let i = column(name)?;
        let ty = &content.columns[i].1;
        let mut values = Vec::new();
        for t in wanted {
            values.push(match t {
                Term::Literal(lit) => encode(ty, lit, name)?,
                Term::Bind(b) => match binds.get(b.index()) {
                    Some(v) => v.clone(),
                    None => {
                        return Err(CqlError::invalid(format!(
                            "no value for bind marker {} of {name}",
                            b.index()
                        )))
                    }
                },
            });
        }
        rows.retain(|r| values.contains(&r[i]));
    }
    let columns: Vec<(String, CqlType)> = content
        .columns
        .iter()
        .map(|(n, t)| (n.to_string(), t.clone()))
        .collect();
    if sel.selectors.is_empty() {
        return Ok(Rows::from_vecs(columns, rows));
    }
    if let [Selector::Count] = sel.selectors.as_slice() {
        return Ok(Rows::from_vecs(
            vec![("count".into(), CqlType::Bigint)],
            [vec![Some((rows.len() as i64).to_be_bytes().to_vec())]],
        ));
    }
    let mut picks = Vec::with_capacity(sel.selectors.len());
    for s in &sel.selectors {
        let Selector::Column(name) = s else {
            return Err(CqlError::invalid(
                "a system table's selection takes column names or COUNT(*)",
            ));
        };
        picks.push(column(name)?);
    }
    Ok(Rows::from_vecs(
        picks
            .iter()
            .map(|&i| columns[i].clone())
            .collect::<Vec<_>>(),
        rows.into_iter()
            .map(|r| picks.iter().map(|&i| r[i].clone()).collect()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse, Session, Statement};
    use supercolumn::Options;

    fn query(db: &Database, text: &str) -> Result<Rows, CqlError> {
        let Statement::Select(sel) = parse(text)?.remove(0) else {
            panic!("not a select");
        };
        let node = Node {
            address: "127.0.0.1".into(),
            port: 9042,
            server: None,
        };
        let ks = sel.table.keyspace.clone().unwrap_or_default();
        select(db, &node, &ks, &sel, &[])
    }

    #[test]
    fn system_schema_tables_shows_the_options_a_table_sets() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), Options::default()).unwrap();
        Session::new(&db)
            .execute("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
                      CREATE TABLE ks.o (k int PRIMARY KEY) WITH bloom_filter_fp_chance = 0.1
                          AND compression = {'class': 'SnappyCompressor', 'chunk_length_in_kb': 32}
                          AND min_index_interval = 64;
                      CREATE TABLE ks.d (k int PRIMARY KEY)")
            .unwrap();
        let q = "SELECT table_name, bloom_filter_fp_chance, compression, min_index_interval FROM system_schema.tables WHERE keyspace_name = 'ks'";
        let rows = query(&db, q).unwrap();
        let shown: Vec<Vec<String>> = rows.displayed();
        let d = shown.iter().find(|r| r[0] == "d").unwrap();
        let o = shown.iter().find(|r| r[0] == "o").unwrap();
        assert_eq!((d[1].as_str(), d[3].as_str()), ("0.01", "128"), "{d:?}");
        // Before: the defaults, whatever the table set.
        assert_eq!((o[1].as_str(), o[3].as_str()), ("0.1", "64"), "{o:?}");
        assert!(
            o[2].contains("'chunk_length_in_kb': '32'")
                && o[2].contains("org.apache.cassandra.io.compress.SnappyCompressor"),
            "{o:?}"
        );
    }

    #[test]
    fn the_schema_tables_describe_cql_tables() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), Options::default()).unwrap();
        let mut s = Session::new(&db);
        s.execute("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
            .unwrap();
        s.execute("CREATE TABLE ks.t (k int, c text, v map<text, int>, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)")
            .unwrap();
        let cols = query(
            &db,
            "SELECT column_name, kind, position, clustering_order, type FROM system_schema.columns WHERE keyspace_name = 'ks' AND table_name IN ('t')",
        )
        .unwrap();
        let text = |b: &Option<Vec<u8>>| String::from_utf8(b.clone().unwrap()).unwrap();
        let got: Vec<(String, String, String, String)> = cols
            .to_vecs()
            .iter()
            .map(|r| (text(&r[0]), text(&r[1]), text(&r[3]), text(&r[4])))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "k".into(),
                    "partition_key".into(),
                    "none".into(),
                    "int".into()
                ),
                (
                    "c".into(),
                    "clustering".into(),
                    "desc".into(),
                    "text".into()
                ),
                (
                    "v".into(),
                    "regular".into(),
                    "none".into(),
                    "map<text, int>".into()
                ),
            ]
        );
        assert_eq!(cols.to_vecs()[2][2], Some((-1i32).to_be_bytes().to_vec()));
        let ks = query(
            &db,
            "SELECT * FROM system_schema.keyspaces WHERE keyspace_name = 'ks'",
        )
        .unwrap();
        assert_eq!(ks.to_vecs().len(), 1);
        let local = query(
            &db,
            "SELECT schema_version, partitioner FROM system.local WHERE key = 'local'",
        )
        .unwrap();
        assert_eq!(local.to_vecs().len(), 1);
        assert!(text(&local.to_vecs()[0][1]).ends_with("RandomPartitioner"));
        assert!(query(&db, "SELECT * FROM system.peers")
            .unwrap()
            .to_vecs()
            .is_empty());
        assert!(matches!(
            query(&db, "SELECT * FROM system.nothing"),
            Err(CqlError::Unconfigured(_))
        ));
        assert!(query(&db, "SELECT nothing FROM system.local").is_err());
        // The system keyspaces and their tables are listed too (cqlsh checks a SELECT's
        // keyspace and table against them).
        let ks = query(
            &db,
            "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name IN ('system', 'system_schema')",
        )
        .unwrap();
        assert_eq!(ks.to_vecs().len(), 2);
        let local = query(
            &db,
            "SELECT column_name, kind FROM system_schema.columns WHERE keyspace_name = 'system' AND table_name = 'local'",
        )
        .unwrap();
        assert_eq!(
            local.to_vecs()[0],
            [Some(b"key".to_vec()), Some(b"partition_key".to_vec())]
        );
        let t = query(
            &db,
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'system_schema'",
        )
        .unwrap();
        assert_eq!(t.to_vecs().len(), 9);
    }
}
