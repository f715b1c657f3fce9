//! `ALTER KEYSPACE … WITH replication = {…} AND durable_writes = …` as Cassandra takes it: the
//! options checked as `CREATE KEYSPACE` checks them, kept across a reopen, shown by
//! `system_schema.keyspaces`; and writes made while `durable_writes` was off, still only in
//! memtables, are not lost by a clean close after it is turned back on.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql};
use supercolumn::{Database, Options};
use supercolumn_cql::{CqlError, Session};

fn keyspace_row(cql: &mut Session<'_>) -> String {
    cql.query(
        "SELECT durable_writes, replication FROM system_schema.keyspaces WHERE keyspace_name = 'ks'",
    )
    .unwrap()
    .displayed()[0]
        .join("|")
}

#[test]
fn altered_options_are_checked_kept_and_shown() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), "CREATE TABLE t (k int PRIMARY KEY, v int)");
    let mut cql = ks_session(&db);
    cql.execute(
        "ALTER KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3} \
         AND durable_writes = false",
    )
    .unwrap();
    let shown = keyspace_row(&mut cql);
    assert!(shown.starts_with("False|"), "{shown}");
    assert!(shown.contains("'replication_factor': '3'"), "{shown}");
    for (q, says) in [
        (
            "ALTER KEYSPACE ks WITH replication = {'class': 'SimpleStrategy'}",
            "SimpleStrategy requires a replication_factor strategy option.",
        ),
        (
            "ALTER KEYSPACE ks WITH replication = {'class': 'NoSuchStrategy'}",
            "Unable to find replication strategy class 'NoSuchStrategy'",
        ),
        (
            "ALTER KEYSPACE nope WITH durable_writes = true",
            "Cannot alter unknown keyspace nope",
        ),
    ] {
        match cql.execute(q) {
            Err(CqlError::Invalid(m)) => assert_eq!(m, says, "{q}"),
            other => panic!("{q}: {other:?}"),
        }
    }
    assert!(cql.execute("ALTER KEYSPACE ks").is_err());
    assert_eq!(
        keyspace_row(&mut cql),
        shown,
        "a refused ALTER changes nothing"
    );
    drop(cql);
    let path = dir.path().to_path_buf();
    db.close().unwrap();
    let db = Database::open(&path, Options::default()).unwrap();
    assert_eq!(keyspace_row(&mut ks_session(&db)), shown);
}

#[test]
fn writes_made_without_the_log_survive_a_clean_close_after_durable_writes_is_back_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), "CREATE TABLE t (k int PRIMARY KEY, v int)");
    let mut cql = ks_session(&db);
    cql.execute("ALTER KEYSPACE ks WITH durable_writes = false")
        .unwrap();
    for k in 0..50 {
        cql.execute(&format!("INSERT INTO t (k, v) VALUES ({k}, {k})"))
            .unwrap();
    }
    cql.execute("ALTER KEYSPACE ks WITH durable_writes = true")
        .unwrap();
    cql.execute("INSERT INTO t (k, v) VALUES (50, 50)").unwrap();
    drop(cql);
    let path = dir.path().to_path_buf();
    db.close().unwrap();
    let db = Database::open(&path, Options::default()).unwrap();
    let n = ks_session(&db).query("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(n.row(0).get(0), Some(&51i64.to_be_bytes()[..]));
}
