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

/// The message of the `Invalid` error `q` must fail with.
pub fn refused(cql: &mut Session<'_>, q: &str) -> String {
    match cql.execute(q) {
        Err(CqlError::Invalid(m)) => m,
        other => panic!("{q}: expected Invalid, got {other:?}"),
    }
}
