//! CQL's `duration` as Cassandra defines it: literals in the standard form (`1h30m`, `-2d`) and
//! ISO 8601 (`P1DT2H`, `P2W`), stored as Cassandra's three zigzag variable-length integers,
//! printed in Cassandra's form, allowed as a value (also a list's element and a map's value),
//! compared for equality only, and refused wherever an order is needed, in Cassandra's words.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused as invalid, shown as rows};
use supercolumn_cql::{CqlError, Duration};

const SCHEMA: &str = "CREATE TABLE d (k int PRIMARY KEY, v duration, l list<duration>, \
                      m map<text, duration>)";

#[test]
fn durations_are_written_in_every_form_and_read_back_as_cassandra_prints_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    cql.execute(
        "INSERT INTO d (k, v, l, m) VALUES (1, 1h30m, [-2d, P1DT2H], {'w': P2W, 'y': 1y2mo}); \
         INSERT INTO d (k, v) VALUES (2, 12ms7us); \
         INSERT INTO d (k, v) VALUES (3, -P1Y)",
    )
    .unwrap();
    db.flush_all().unwrap();
    assert_eq!(
        rows(&mut cql, "SELECT v, l, m FROM d WHERE k = 1"),
        ["1h30m|[-2d, 1d2h]|{'w': 14d, 'y': 1y2mo}"]
    );
    assert_eq!(rows(&mut cql, "SELECT v FROM d WHERE k = 2"), ["12ms7us"]);
    assert_eq!(rows(&mut cql, "SELECT v FROM d WHERE k = 3"), ["-1y"]);
    // Equality filters; an order is refused.
    assert_eq!(
        rows(&mut cql, "SELECT k FROM d WHERE v = 90m ALLOW FILTERING"),
        ["1"]
    );
    assert_eq!(
        invalid(&mut cql, "SELECT k FROM d WHERE v > 1h ALLOW FILTERING"),
        "Slice restrictions are not supported on duration columns"
    );
    assert_eq!(
        invalid(&mut cql, "UPDATE d SET v = 1s WHERE k = 1 IF v > 1h"),
        "Slice conditions ( > ) are not supported on durations"
    );
    cql.execute("UPDATE d SET v = 2h WHERE k = 1 IF v = 1h30m")
        .unwrap();
    assert_eq!(rows(&mut cql, "SELECT v FROM d WHERE k = 1"), ["2h"]);
}

#[test]
fn a_bound_duration_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    let p = cql.prepare("INSERT INTO d (k, v) VALUES (?, ?)").unwrap();
    let k = 7i32.to_be_bytes();
    let good = Duration::parse("3d4h").unwrap().encode();
    cql.execute_prepared(&p, &[Some(&k), Some(&good)]).unwrap();
    assert_eq!(rows(&mut cql, "SELECT v FROM d WHERE k = 7"), ["3d4h"]);
    // Months 1, days -1: mixed signs; and bytes that are no three integers.
    for bad in [&[2u8, 1, 0][..], &[2, 4][..], &[][..]] {
        let e = cql
            .execute_prepared(&p, &[Some(&k), Some(bad)])
            .unwrap_err();
        assert!(matches!(e, CqlError::Invalid(_)), "{bad:?}: {e:?}");
    }
}

#[test]
fn a_duration_is_refused_where_an_order_is_needed() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    for (q, says) in [
        (
            "CREATE TABLE x (k duration PRIMARY KEY, v int)",
            "duration type is not supported for PRIMARY KEY column 'k'",
        ),
        (
            "CREATE TABLE x (k int, c duration, PRIMARY KEY (k, c))",
            "duration type is not supported for PRIMARY KEY column 'c'",
        ),
        (
            "CREATE TABLE x (k int PRIMARY KEY, s set<duration>)",
            "Durations are not allowed inside sets: set<duration>",
        ),
        (
            "CREATE TABLE x (k int PRIMARY KEY, m map<duration, int>)",
            "Durations are not allowed as map keys: map<duration, int>",
        ),
    ] {
        assert_eq!(invalid(&mut cql, q), says, "{q}");
    }
    // A string is no duration literal, as in Cassandra.
    let m = invalid(&mut cql, "INSERT INTO d (k, v) VALUES (1, '1h')");
    assert!(m.contains("duration"), "{m}");
}

#[test]
fn a_decimal_is_a_collections_element_and_a_sets_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    cql.execute(
        "CREATE TABLE dd (k int PRIMARY KEY, l list<decimal>, m map<text, decimal>); \
         INSERT INTO dd (k, l, m) VALUES (1, [1.50, -2], {'a': 0.001})",
    )
    .unwrap();
    assert_eq!(
        rows(&mut cql, "SELECT l, m FROM dd WHERE k = 1"),
        ["[1.50, -2]|{'a': 0.001}"]
    );
    // Unlike a duration, a decimal has an order: a set holds it, sorted by value.
    cql.execute(
        "CREATE TABLE ds (k int PRIMARY KEY, s set<decimal>); \
         INSERT INTO ds (k, s) VALUES (1, {10, -2.5, 0.001})",
    )
    .unwrap();
    assert_eq!(
        rows(&mut cql, "SELECT s FROM ds WHERE k = 1"),
        ["{-2.5, 0.001, 10}"]
    );
}

#[test]
fn a_decimal_in_a_key_orders_by_value_and_survives_a_flush_and_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let schema = "CREATE TABLE dk (p decimal, c decimal, v int, PRIMARY KEY (p, c));
                  CREATE TABLE dr (p int, c decimal, v int, w decimal, PRIMARY KEY (p, c))
                      WITH CLUSTERING ORDER BY (c DESC)";
    let written = ["10", "-2.5", "0.001", "1000", "-100", "1.5", "1.50", "0"];
    let by_value = ["-100", "-2.5", "0", "0.001", "1.5", "1.50", "10", "1000"];
    {
        let db = open_cql(dir.path(), schema);
        let mut cql = ks_session(&db);
        for (i, c) in written.iter().enumerate() {
            for t in ["dk", "dr"] {
                let p = if t == "dk" { "1.5" } else { "1" };
                cql.execute(&format!("INSERT INTO {t} (p, c, v) VALUES ({p}, {c}, {i})"))
                    .unwrap();
            }
        }
        db.flush_all().unwrap();
    }
    let db = open_cql(dir.path(), "");
    let mut cql = ks_session(&db);
    assert_eq!(rows(&mut cql, "SELECT c FROM dk WHERE p = 1.5"), by_value);
    let mut down: Vec<&str> = by_value.to_vec();
    down.reverse();
    assert_eq!(rows(&mut cql, "SELECT c FROM dr WHERE p = 1"), down);
    // Ranges compare values: 1.5 and 1.50 are both above 1 and below 2.
    assert_eq!(
        rows(
            &mut cql,
            "SELECT c FROM dk WHERE p = 1.5 AND c > 1 AND c <= 10"
        ),
        ["1.5", "1.50", "10"]
    );
    assert_eq!(
        rows(
            &mut cql,
            "SELECT c FROM dr WHERE p = 1 AND c >= -2.5 AND c < 0.5"
        ),
        ["0.001", "0", "-2.5"]
    );
    // A decimal partition key is its bytes: 1.50 names another partition than 1.5.
    assert!(rows(&mut cql, "SELECT c FROM dk WHERE p = 1.50").is_empty());
    // Conditions order decimals too.
    cql.execute("INSERT INTO dr (p, c, w) VALUES (2, 1, 0.25)")
        .unwrap();
    let q = "UPDATE dr SET v = 1 WHERE p = 2 AND c = 1 IF w < 0.5";
    assert_eq!(rows(&mut cql, q), ["True"]);
}
