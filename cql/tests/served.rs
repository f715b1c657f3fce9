//! What a session answers with rows it builds whole, without a server: Thrift-era column
//! families seen as tables, the system keyspaces and `DESCRIBE`. The embedded `Session`
//! answers them as `serve` does (the server runs the same session).

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use supercolumn::{BatchMutation, ColumnPath, Database, Options, WriteOptions};
use supercolumn_cql::{CqlError, CqlResult, CqlType, Session};

fn seeded() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    // A new database holds the seeds' Keyspace1 (Standard2: UTF8 names).
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut b = BatchMutation::new();
    for (name, value, ts) in [("first", "John", 10), ("last", "Smith", 11)] {
        b.insert(
            "jsmith",
            ColumnPath::new("Standard2").column(name),
            value,
            WriteOptions::at(ts),
        );
    }
    db.batch_mutate("Keyspace1", &b).unwrap();
    (dir, db)
}

#[test]
fn a_thrift_era_column_family_reads_and_writes_as_a_table() {
    let (_dir, db) = seeded();
    let mut s = Session::new(&db);
    let rows = s
        .query("SELECT column1, value, writetime(value) FROM \"Keyspace1\".\"Standard2\" WHERE key = 0x6a736d697468")
        .unwrap();
    assert_eq!(
        rows.displayed(),
        [
            ["first", "0x4a6f686e", "10"],
            ["last", "0x536d697468", "11"]
        ]
    );
    s.execute("USE \"Keyspace1\"; INSERT INTO \"Standard2\" (key, column1, value) VALUES (0x6a736d697468, 'middle', 0x51) USING TIMESTAMP 12")
        .unwrap();
    let got = db
        .get(
            "Keyspace1",
            "jsmith",
            &ColumnPath::new("Standard2").column("middle"),
        )
        .unwrap()
        .unwrap();
    let got = got.as_column().unwrap();
    assert_eq!((got.value.as_slice(), got.timestamp), (&b"Q"[..], 12));
    let count = s.query("SELECT count(*) FROM \"Standard2\"").unwrap();
    assert_eq!(count.displayed(), [["3"]]);
}

#[test]
fn the_system_tables_answer_and_refuse_writes() {
    let (_dir, db) = seeded();
    let mut s = Session::new(&db);
    let local = s
        .query("SELECT release_version, rpc_port FROM system.local WHERE key = 'local'")
        .unwrap();
    assert_eq!(local.displayed(), [["4.0.11", "9042"]]);
    // A marker on a system table is typed by its column, and bound when executed.
    let p = s
        .prepare("SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?")
        .unwrap();
    assert_eq!(
        p.bind_columns(),
        [("keyspace_name".to_string(), CqlType::Text)]
    );
    let CqlResult::Rows(tables) = s.execute_prepared(&p, &[Some(b"Keyspace1")]).unwrap() else {
        panic!("not rows");
    };
    assert!(tables.displayed().iter().any(|r| r[0] == "Standard2"));
    let e = s
        .execute("INSERT INTO system.local (key) VALUES ('x')")
        .unwrap_err();
    assert!(matches!(e, CqlError::Unauthorized(_)), "{e}");
    assert_eq!(e.code(), 0x2100);
}

#[test]
fn describe_answers_with_the_statements_that_recreate_the_schema() {
    let (_dir, db) = seeded();
    let mut s = Session::new(&db);
    s.execute("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE ks.t (k int PRIMARY KEY, v text)")
        .unwrap();
    let Some(CqlResult::Rows(rows)) = s.execute("DESCRIBE TABLE ks.t").unwrap().pop() else {
        panic!("not rows");
    };
    let shown = rows.displayed();
    assert_eq!(&shown[0][..3], ["ks", "table", "t"]);
    assert!(shown[0][3].starts_with("CREATE TABLE ks.t ("), "{shown:?}");
    let Some(CqlResult::Rows(names)) = s.execute("DESC KEYSPACES").unwrap().pop() else {
        panic!("not rows");
    };
    let names: Vec<String> = names
        .displayed()
        .into_iter()
        .map(|r| r[2].clone())
        .collect();
    assert!(names.contains(&"ks".to_string()) && names.contains(&"\"Keyspace1\"".to_string()));
}
