//! A TTL counts from the whole second of its write, as Cassandra counts it (`nowInSec` plus the
//! TTL), and reads, `TTL()` and conditional writes agree on when a cell is gone. Cassandra 5's
//! `maxwritetime()` and `minwritetime()` of a column of one cell are its write time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{ks_session, names, open_cql, open_cql_with, refused, shown};
use supercolumn::{ManualClock, Options};
use supercolumn_cql::CqlResult;

#[test]
fn a_ttl_of_one_second_written_at_x_37_is_gone_from_x_plus_1() {
    let dir = tempfile::tempdir().unwrap();
    let x = 1_700_000_000_000_000i64;
    let clock = Arc::new(ManualClock::new(x + 370_000));
    let db = open_cql_with(
        dir.path(),
        Options::default().with_clock(clock.clone()),
        "CREATE TABLE t (k int PRIMARY KEY, v int, lock text)",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, v, lock) VALUES (1, 1, 'held') USING TTL 1")
        .unwrap();
    let ttl = cql.query("SELECT TTL(v) FROM t WHERE k = 1").unwrap();
    assert_eq!(
        ttl.row(0).get(0),
        Some(&1i32.to_be_bytes()[..]),
        "TTL() is 1 until it lapses"
    );
    clock.advance_micros(629_999); // x + 0.999999
    assert_eq!(cql.query("SELECT v FROM t WHERE k = 1").unwrap().len(), 1);
    clock.advance_micros(1); // x + 1.0: gone (before, it read until x + 2.0)
    assert_eq!(cql.query("SELECT v FROM t WHERE k = 1").unwrap().len(), 0);
    let applied = |r: Vec<CqlResult>| match r.last() {
        Some(CqlResult::Rows(rows)) => rows.row(0).get(0) == Some(&[1][..]),
        other => panic!("{other:?}"),
    };
    // Conditions see it gone too.
    assert!(!applied(
        cql.execute("DELETE FROM t WHERE k = 1 IF EXISTS").unwrap()
    ));
    assert!(applied(
        cql.execute("UPDATE t SET lock = 'mine' WHERE k = 1 IF lock = null")
            .unwrap()
    ));
}

#[test]
fn maxwritetime_and_minwritetime_of_a_one_cell_column_are_its_write_time() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE w (k int, c int, v int, f frozen<list<int>>, l list<int>, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO w (k, c, v, f) VALUES (1, 1, 7, [1]) USING TIMESTAMP 1000")
        .unwrap();
    cql.execute("UPDATE w USING TIMESTAMP 2000 SET v = 8 WHERE k = 1 AND c = 1")
        .unwrap();
    let q = "SELECT maxwritetime(v), minwritetime(v), writetime(v), MAXWRITETIME(f) FROM w";
    assert_eq!(shown(&mut cql, q), ["2000|2000|2000|1000"]);
    assert_eq!(
        names(&mut cql, q),
        [
            "maxwritetime(v):bigint",
            "minwritetime(v):bigint",
            "writetime(v):bigint",
            "maxwritetime(f):bigint"
        ]
    );
    // A row without the column: null.
    cql.execute("INSERT INTO w (k, c) VALUES (1, 2)").unwrap();
    let q = "SELECT maxwritetime(v) FROM w WHERE k = 1 AND c = 2";
    assert_eq!(shown(&mut cql, q), ["null"]);
    for (q, why) in [
        (
            "SELECT maxwritetime(c) FROM w",
            "Cannot use selection function maxwritetime on PRIMARY KEY part c",
        ),
        (
            "SELECT minwritetime(k) FROM w",
            "Cannot use selection function minwritetime on PRIMARY KEY part k",
        ),
    ] {
        let e = refused(&mut cql, q);
        assert!(e.contains(why), "{q}: {e}");
    }
}
