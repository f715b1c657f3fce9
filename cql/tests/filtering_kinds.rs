//! Filtering with `ALLOW FILTERING` on what a plain regular column is not, as Cassandra 4
//! takes it: a clustering column after a multi-column range, a frozen collection in the
//! clustering (`CONTAINS`, `CONTAINS KEY`), values holding durations (equality only), and a
//! comparison with null; each answer checked against the rows, each refusal in Cassandra's
//! words and order.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused, shown};

const FILTERING: &str = "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING";

#[test]
fn a_clustering_column_after_a_multi_column_range_filters() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (a int, b int, c int, d int, e int, PRIMARY KEY (a, b, c, d))",
    );
    let mut cql = ks_session(&db);
    for (b, c, d) in [
        (12, 13, 14),
        (22, 23, 24),
        (32, 33, 34),
        (32, 33, 35),
        (32, 40, 34),
    ] {
        cql.execute(&format!(
            "INSERT INTO t (a, b, c, d, e) VALUES (1, {b}, {c}, {d}, 0)"
        ))
        .unwrap();
    }
    assert_eq!(
        shown(
            &mut cql,
            "SELECT b, c, d FROM t WHERE (b, c) > (20, 30) AND d = 34 ALLOW FILTERING"
        ),
        ["32|33|34", "32|40|34"]
    );
    assert_eq!(
        shown(
            &mut cql,
            "SELECT b, c, d FROM t WHERE a = 1 AND (b, c) <= (32, 33) AND d IN (14, 35) ALLOW FILTERING"
        ),
        ["12|13|14", "32|33|35"]
    );
    assert_eq!(
        refused(&mut cql, "SELECT * FROM t WHERE a = 1 AND (b, c) > (20, 30) AND d = 34"),
        "Clustering column \"d\" cannot be restricted (preceding column \"b\" is restricted by a non-EQ relation)"
    );
}

#[test]
fn contains_filters_a_frozen_collection_in_the_clustering() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE l (a int, b frozen<list<int>>, c int, PRIMARY KEY (a, b, c));
         CREATE TABLE m (a int, b int, c frozen<map<text, text>>, d int, PRIMARY KEY (a, b, c))",
    );
    let mut cql = ks_session(&db);
    for (a, b, c) in [(11, "[1, 3]", 14), (21, "[2, 3]", 24), (21, "[3, 3]", 34)] {
        cql.execute(&format!("INSERT INTO l (a, b, c) VALUES ({a}, {b}, {c})"))
            .unwrap();
    }
    for (a, b, c) in [
        (11, 12, "{'1': '2'}"),
        (21, 22, "{'2': '3'}"),
        (21, 23, "{'3': '4'}"),
    ] {
        cql.execute(&format!(
            "INSERT INTO m (a, b, c, d) VALUES ({a}, {b}, {c}, 0)"
        ))
        .unwrap();
    }
    assert_eq!(
        shown(
            &mut cql,
            "SELECT c FROM l WHERE a = 21 AND b CONTAINS 2 ALLOW FILTERING"
        ),
        ["24"]
    );
    let mut all = shown(
        &mut cql,
        "SELECT c FROM l WHERE b CONTAINS 3 ALLOW FILTERING",
    );
    all.sort();
    assert_eq!(all, ["14", "24", "34"]);
    assert_eq!(
        shown(
            &mut cql,
            "SELECT b FROM m WHERE b > 20 AND c CONTAINS KEY '2' ALLOW FILTERING"
        ),
        ["22"]
    );
    assert_eq!(
        refused(&mut cql, "SELECT * FROM l WHERE a = 21 AND b CONTAINS 2"),
        "Clustering columns can only be restricted with CONTAINS with a secondary index or filtering"
    );
    assert_eq!(
        refused(&mut cql, "SELECT * FROM m WHERE a = 21 AND b > 20 AND c CONTAINS KEY '2'"),
        "Clustering column \"c\" cannot be restricted (preceding column \"b\" is restricted by a non-EQ relation)"
    );
}

#[test]
fn values_holding_durations_filter_by_equality_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TYPE withd (i int, d duration);
         CREATE TABLE t (k int PRIMARY KEY, l frozen<list<duration>>, p tuple<int, duration>,
             u frozen<withd>, n list<duration>)",
    );
    let mut cql = ks_session(&db);
    for (k, l, p, u) in [
        (1, "[1s, 2s]", "(1, 2s)", "{i: 1, d: 2s}"),
        (2, "[2s, 3s]", "(1, 3s)", "{i: 1, d: 3s}"),
    ] {
        cql.execute(&format!(
            "INSERT INTO t (k, l, p, u) VALUES ({k}, {l}, {p}, {u})"
        ))
        .unwrap();
    }
    for (q, want) in [
        ("l = [1s, 2s]", vec!["1"]),
        ("p = (1, 3s)", vec!["2"]),
        ("u = {i: 1, d: 2s}", vec!["1"]),
        ("l IN ([2s, 3s], [9s])", vec!["2"]),
        ("p != (1, 3s)", vec!["1"]),
    ] {
        let q = format!("SELECT k FROM t WHERE {q} ALLOW FILTERING");
        assert_eq!(shown(&mut cql, &q), want, "{q}");
    }
    for (q, says) in [
        (
            "l > [1s]",
            "Slice restrictions are not supported on collections containing durations",
        ),
        (
            "n <= [1s]",
            "Slice restrictions are not supported on collections containing durations",
        ),
        (
            "p >= (1, 2s)",
            "Slice restrictions are not supported on tuples containing durations",
        ),
        (
            "u < {i: 1, d: 2s}",
            "Slice restrictions are not supported on UDTs containing durations",
        ),
    ] {
        let q = format!("SELECT k FROM t WHERE {q} ALLOW FILTERING");
        assert_eq!(refused(&mut cql, &q), says, "{q}");
    }
}

#[test]
fn a_comparison_with_null_asks_for_filtering_first() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (a int, b int, c int, s int static, PRIMARY KEY (a, b))",
    );
    let mut cql = ks_session(&db);
    for q in ["c = null", "c > null", "s > null"] {
        let plain = format!("SELECT * FROM t WHERE {q}");
        assert_eq!(refused(&mut cql, &plain), FILTERING, "{plain}");
        let filtering = format!("{plain} ALLOW FILTERING");
        let e = refused(&mut cql, &filtering);
        assert!(
            e.starts_with("Unsupported null value for column"),
            "{filtering}: {e}"
        );
    }
}
