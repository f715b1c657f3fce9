//! `ALTER TABLE … DROP` as Cassandra defines it: a dropped column's data is never read again,
//! also after a column of that name is added back (Cassandra's `dropped_columns`: the cells
//! written at or before the drop stay hidden, later ones show); what cannot be dropped or added
//! back is refused in Cassandra's words; the drop survives a flush and a reopen; statements
//! prepared before it are prepared again.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused as invalid, shown};
use supercolumn::{Database, Options};
use supercolumn_cql::{CqlError, Session};

/// The rows of `q`, sorted.
fn rows(cql: &mut Session<'_>, q: &str) -> Vec<String> {
    let mut r = shown(cql, q);
    r.sort();
    r
}

const SCHEMA: &str = "CREATE TABLE t (k int, c int, v text, w int, l list<int>, s int static, \
                      PRIMARY KEY (k, c))";

#[test]
fn a_dropped_columns_data_stays_hidden_also_after_it_is_added_back() {
    for flush in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = open_cql(dir.path(), SCHEMA);
        let mut cql = ks_session(&db);
        cql.execute(
            "INSERT INTO t (k, c, v, w, l, s) VALUES (1, 1, 'old', 1, [1, 2], 7); \
             UPDATE t SET v = 'only v' WHERE k = 2 AND c = 2",
        )
        .unwrap();
        if flush {
            db.flush_all().unwrap();
        }
        cql.execute("ALTER TABLE t DROP v").unwrap();
        cql.execute("ALTER TABLE t DROP (l, s)").unwrap();
        // The row that held only the dropped column is gone with it.
        assert_eq!(rows(&mut cql, "SELECT * FROM t"), ["1|1|1"]);
        let m = invalid(&mut cql, "SELECT v FROM t");
        assert!(m.contains("v"), "{m}");
        cql.execute("ALTER TABLE t ADD v text").unwrap();
        cql.execute("ALTER TABLE t ADD l list<int>").unwrap();
        cql.execute("ALTER TABLE t ADD s int static").unwrap();
        assert_eq!(
            rows(&mut cql, "SELECT k, c, v, l, s FROM t"),
            ["1|1|null|null|null"]
        );
        cql.execute("UPDATE t SET v = 'new', l = l + [3], s = 8 WHERE k = 1 AND c = 1")
            .unwrap();
        if flush {
            db.flush_all().unwrap();
        }
        assert_eq!(
            rows(&mut cql, "SELECT k, c, v, l, s FROM t"),
            ["1|1|new|[3]|8"]
        );
        // Reopened, the drops are remembered.
        drop(cql);
        let path = dir.path().to_path_buf();
        db.close().unwrap();
        let db = Database::open(&path, Options::default()).unwrap();
        let mut cql = ks_session(&db);
        assert_eq!(
            rows(&mut cql, "SELECT k, c, v, l, s, w FROM t"),
            ["1|1|new|[3]|8|1"]
        );
        let described = cql.query("DESCRIBE TABLE t").unwrap().displayed()[0].join("");
        assert!(!described.contains("DROP"), "{described}");
        assert!(described.contains("v text"), "{described}");
    }
}

#[test]
fn using_timestamp_decides_which_cells_the_drop_hides() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    cql.execute(
        "INSERT INTO t (k, c, w) VALUES (1, 1, 10) USING TIMESTAMP 100; \
         INSERT INTO t (k, c, w) VALUES (1, 2, 20) USING TIMESTAMP 300",
    )
    .unwrap();
    cql.execute("ALTER TABLE t DROP w USING TIMESTAMP 200")
        .unwrap();
    cql.execute("ALTER TABLE t ADD w int").unwrap();
    assert_eq!(rows(&mut cql, "SELECT c, w FROM t"), ["1|null", "2|20"]);
}

#[test]
fn what_cannot_be_dropped_or_added_back_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    assert_eq!(
        invalid(&mut cql, "ALTER TABLE t DROP c"),
        "Cannot drop PRIMARY KEY column c"
    );
    assert_eq!(
        invalid(&mut cql, "ALTER TABLE t DROP nope"),
        "Column nope was not found in table ks.t"
    );
    cql.execute("ALTER TABLE t DROP v").unwrap();
    assert_eq!(
        invalid(&mut cql, "ALTER TABLE t ADD v int"),
        "Cannot re-add previously dropped column 'v' of type int, incompatible with previous type text"
    );
    cql.execute("ALTER TABLE t DROP l").unwrap();
    assert_eq!(
        invalid(&mut cql, "ALTER TABLE t ADD l set<int>"),
        "Cannot re-add previously dropped column 'l' of type set<int>, incompatible with previous type list<int>"
    );
    invalid(&mut cql, "ALTER TABLE t DROP v");
}

#[test]
fn a_statement_prepared_before_a_drop_must_be_prepared_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    let read = cql
        .prepare("SELECT v FROM t WHERE k = ? AND c = ?")
        .unwrap();
    let write = cql
        .prepare("INSERT INTO t (k, c, v) VALUES (?, ?, ?)")
        .unwrap();
    cql.execute("ALTER TABLE t DROP v").unwrap();
    let (k, c) = (1i32.to_be_bytes(), 1i32.to_be_bytes());
    for (p, values) in [
        (&read, vec![Some(&k[..]), Some(&c[..])]),
        (&write, vec![Some(&k[..]), Some(&c[..]), Some(&b"x"[..])]),
    ] {
        let e = cql.execute_prepared(p, &values).unwrap_err();
        assert!(matches!(e, CqlError::Stale(_)), "{e:?}");
    }
    assert!(cql
        .prepare("SELECT v FROM t WHERE k = ? AND c = ?")
        .is_err());
}
