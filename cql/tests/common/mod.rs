//! Helpers shared by the CQL integration tests: a database whose keyspace `ks` holds a schema
//! and a session on it, beside the engine tests' own helpers (they use only the engine's
//! public API).
#![allow(dead_code)]

#[path = "../../../engine/tests/common/mod.rs"]
mod engine;
#[allow(unused_imports)]
pub use engine::*;

use std::path::Path;

use supercolumn::{Database, Options};
use supercolumn_cql::{CqlError, Session};

/// A database in `dir` whose keyspace `ks` (one replica) holds what `schema` creates.
pub fn open_cql(dir: &Path, schema: &str) -> Database {
    open_cql_with(dir, Options::default(), schema)
}

/// [`open_cql`] with these options (a manual clock, say).
pub fn open_cql_with(dir: &Path, options: Options, schema: &str) -> Database {
    let db = Database::open(dir, options).unwrap();
    let mut cql = Session::new(&db);
    cql.execute(
        "CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; USE ks",
    )
    .unwrap();
    cql.execute(schema).unwrap();
    db
}

/// A session on keyspace `ks`.
pub fn ks_session(db: &Database) -> Session<'_> {
    let mut cql = Session::new(db);
    cql.execute("USE ks").unwrap();
    cql
}

/// Each row of `q` as cqlsh shows it, its values joined by `|`.
pub fn shown(cql: &mut Session<'_>, q: &str) -> Vec<String> {
    cql.query(q)
        .unwrap_or_else(|e| panic!("{q}: {e}"))
        .displayed()
        .into_iter()
        .map(|r| r.join("|"))
        .collect()
}

/// Each result column of `q` as `name:type`.
pub fn names(cql: &mut Session<'_>, q: &str) -> Vec<String> {
    let rows = cql.query(q).unwrap_or_else(|e| panic!("{q}: {e}"));
    rows.columns()
        .iter()
        .map(|(n, t)| format!("{n}:{t}"))
        .collect()
}

/// The message of the `Invalid` error `q` must fail with.
pub fn refused(cql: &mut Session<'_>, q: &str) -> String {
    match cql.execute(q) {
        Err(CqlError::Invalid(m)) => m,
        other => panic!("{q}: expected Invalid, got {other:?}"),
    }
}

/// The rows of `q`, prepared, read a page of `size` rows at a time, each page's end sent
/// back as a client holds it (its bytes); each page holds at most `size` rows.
pub fn paged(cql: &mut Session<'_>, q: &str, size: usize) -> Vec<String> {
    use supercolumn_cql::{CqlResult, PageRequest, Position};
    let p = cql.prepare(q).unwrap();
    let (mut all, mut after) = (Vec::new(), None::<Position>);
    for _ in 0..100_000 {
        cql.set_page(Some(PageRequest {
            size,
            after: after.take(),
        }));
        let CqlResult::Rows(rows) = cql.execute_prepared(&p, &[]).unwrap() else {
            panic!("{q}: not rows");
        };
        assert!(rows.len() <= size, "{q}: a page of {} rows", rows.len());
        all.extend(rows.displayed().into_iter().map(|r| r.join("|")));
        match cql.page_end() {
            Some(end) => after = Some(Position::from_bytes(&end.to_bytes()).unwrap()),
            None => {
                cql.set_page(None);
                return all;
            }
        }
    }
    panic!("{q}: never ends");
}
