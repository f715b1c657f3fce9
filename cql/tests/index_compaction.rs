//! Stale index entries of CQL tables and major compaction: for an index of a regular column,
//! of a clustering column, of a partition key component, of a collection's values, keys and
//! entries, and of a static column, rows overwritten and deleted leave entries behind that queries skip; a major
//! compaction drops exactly those, and every query answers as before.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, shown};
use supercolumn::Database;

const SCHEMA: &str = "CREATE TABLE t (k1 int, k2 int, c1 int, c2 int, v text, s set<int>, \
                      m map<text, int>, PRIMARY KEY ((k1, k2), c1, c2))";

const QUERIES: [&str; 8] = [
    "v = 'a'",
    "v = 'b'",
    "c2 = 5",
    "c2 = 25",
    "k2 = 1",
    "s CONTAINS 1",
    "m CONTAINS KEY 'x'",
    "m['x'] = 2",
];

fn answers(cql: &mut supercolumn_cql::Session<'_>) -> Vec<Vec<String>> {
    QUERIES
        .iter()
        .map(|q| shown(cql, &format!("SELECT k1, k2, c1, c2 FROM t WHERE {q}")))
        .collect()
}

/// How many entries `index` holds under `value`, stale ones too.
fn held(db: &Database, index: &str, value: &[u8]) -> usize {
    db.index_entries("ks", "t", index, value, None, 10_000)
        .unwrap()
        .len()
}

#[test]
fn a_major_compaction_drops_only_stale_entries_of_every_kind_of_index() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    for index in [
        "CREATE INDEX v_idx ON t (v)",
        "CREATE INDEX c2_idx ON t (c2)",
        "CREATE INDEX k2_idx ON t (k2)",
        "CREATE INDEX s_idx ON t (s)",
        "CREATE INDEX mk_idx ON t (keys(m))",
        "CREATE INDEX me_idx ON t (entries(m))",
    ] {
        cql.execute(index).unwrap();
    }
    for i in 0..40 {
        cql.execute(&format!(
            "INSERT INTO t (k1, k2, c1, c2, v, s, m) VALUES ({}, {}, {}, {i}, 'a', {{1, 2}}, \
             {{'x': 1}})",
            i % 4,
            i % 3,
            i % 2
        ))
        .unwrap();
    }
    db.flush_all().unwrap();
    for i in 0..30 {
        let row = format!(
            "k1 = {} AND k2 = {} AND c1 = {} AND c2 = {i}",
            i % 4,
            i % 3,
            i % 2
        );
        if i < 20 {
            cql.execute(&format!(
                "UPDATE t SET v = 'b', s = s - {{1}}, m['x'] = 2 WHERE {row}"
            ))
            .unwrap();
        } else {
            cql.execute(&format!("DELETE FROM t WHERE {row}")).unwrap();
        }
    }
    let before = answers(&mut cql);
    let counts: Vec<usize> = before.iter().map(Vec::len).collect();
    assert_eq!(counts, [10, 20, 1, 0, 10, 10, 30, 20]);
    let one = 1i32.to_be_bytes();
    let gone = 25i32.to_be_bytes();
    let stale = |db: &Database| {
        [
            held(db, "v_idx", b"a"),
            held(db, "c2_idx", &gone),
            held(db, "k2_idx", &one),
            held(db, "s_idx", &one),
            held(db, "mk_idx", b"x"),
        ]
    };
    assert_eq!(stale(&db), [40, 1, 13, 40, 40]);

    db.compact("ks", Some("t")).unwrap();
    assert_eq!(answers(&mut cql), before);
    assert_eq!(stale(&db), [10, 0, 10, 10, 30]);
}

#[test]
fn a_major_compaction_drops_the_stale_entries_of_a_static_column_index() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c int, st int static, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    cql.execute("CREATE INDEX st_idx ON t (st)").unwrap();
    for k in 0..12 {
        for c in 0..3 {
            cql.execute(&format!("INSERT INTO t (k, c, st) VALUES ({k}, {c}, 7)"))
                .unwrap();
        }
    }
    db.flush_all().unwrap();
    // Four partitions move their static on to 8, two lose it, one goes whole.
    for k in 0..4 {
        cql.execute(&format!("UPDATE t SET st = 8 WHERE k = {k}"))
            .unwrap();
    }
    for k in 4..6 {
        cql.execute(&format!("DELETE st FROM t WHERE k = {k}"))
            .unwrap();
    }
    cql.execute("DELETE FROM t WHERE k = 6").unwrap();
    let query = |cql: &mut supercolumn_cql::Session<'_>, v: i32| {
        shown(cql, &format!("SELECT k, c FROM t WHERE st = {v}"))
    };
    let (sevens, eights) = (query(&mut cql, 7), query(&mut cql, 8));
    assert_eq!((sevens.len(), eights.len()), (15, 12));
    assert_eq!(held(&db, "st_idx", &7i32.to_be_bytes()), 12);
    db.compact("ks", Some("t")).unwrap();
    assert_eq!((query(&mut cql, 7), query(&mut cql, 8)), (sevens, eights));
    assert_eq!(held(&db, "st_idx", &7i32.to_be_bytes()), 5);
    assert_eq!(held(&db, "st_idx", &8i32.to_be_bytes()), 4);
}
