//! Stale index entries of CQL tables and compaction: for an index of a regular column,
//! of a clustering column, of a partition key component, of a collection's values, keys and
//! entries, and of a static column, rows overwritten and deleted leave entries behind that
//! queries skip; a major compaction drops exactly those, a minor one those of the cells it
//! discards that no other cell makes, and every query answers as before.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, shown};
use supercolumn::schema::entry_value;
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

/// The table with every kind of index, 40 rows written (flushed in two halves), 20 of them
/// updated and 10 deleted (each flushed as `flush` says): four SSTables when it does.
fn filled(db: &Database, flush: bool) -> supercolumn_cql::Session<'_> {
    let mut cql = ks_session(db);
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
        if i == 19 && flush {
            db.flush_all().unwrap();
        }
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
        if i == 19 && flush {
            db.flush_all().unwrap();
        }
    }
    if flush {
        db.flush_all().unwrap();
    }
    cql
}

const ONE: [u8; 4] = 1i32.to_be_bytes();
const GONE: [u8; 4] = 25i32.to_be_bytes();

/// Entries held under values no row, or fewer rows, hold now: `v = 'a'`, `c2 = 25`,
/// `k2 = 1`, `s CONTAINS 1`, `m CONTAINS KEY 'x'`.
fn stale(db: &Database) -> [usize; 5] {
    [
        held(db, "v_idx", b"a"),
        held(db, "c2_idx", &GONE),
        held(db, "k2_idx", &ONE),
        held(db, "s_idx", &ONE),
        held(db, "mk_idx", b"x"),
    ]
}

#[test]
fn a_major_compaction_drops_only_stale_entries_of_every_kind_of_index() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = filled(&db, false);
    let before = answers(&mut cql);
    let counts: Vec<usize> = before.iter().map(Vec::len).collect();
    assert_eq!(counts, [10, 20, 1, 0, 10, 10, 30, 20]);
    assert_eq!(stale(&db), [40, 1, 13, 40, 40]);

    db.compact("ks", Some("t")).unwrap();
    assert_eq!(answers(&mut cql), before);
    assert_eq!(stale(&db), [10, 0, 10, 10, 30]);
}

#[test]
fn a_minor_compaction_of_the_table_drops_the_entries_of_the_cells_it_discards() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = filled(&db, true);
    // The background compactor may have merged the four SSTables already; this waits for it,
    // or runs it.
    db.compact_pending("ks", Some("t")).unwrap();
    let after = answers(&mut cql);
    let counts: Vec<usize> = after.iter().map(Vec::len).collect();
    assert_eq!(counts, [10, 20, 1, 0, 10, 10, 30, 20]);
    // A value's, a set element's, a map key's entry is one cell's: it goes with the cell. A
    // key column's is every cell of its row's, some of which may lie in SSTables outside the
    // compaction: a major compaction of the index drops it.
    assert_eq!(stale(&db), [10, 1, 13, 10, 30]);
    // The map entries index: the ('x', 1) entries of the 20 updated rows and the 10 deleted
    // ones went, those of the 10 untouched rows stay.
    assert_eq!(held(&db, "me_idx", &entry_value(b"x", &ONE)), 10);
    db.compact("ks", Some("t")).unwrap();
    assert_eq!(answers(&mut cql), after);
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
