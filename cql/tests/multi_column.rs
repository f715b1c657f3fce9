//! Multi-column relations on clustering columns, checked against the rows themselves:
//! `(a, b) = (…)`, `(a, b) IN ((…), (…))` with and without a later column's range, and the
//! slices `>`, `>=`, `<`, `<=` and both ends, compared in value order, on tables whose
//! clustering columns are all ascending or all descending, prepared with bound tuples, and
//! paged at every page size; on mixed orders (ASC and DESC) a range is cut into the slices
//! each order needs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, paged, refused, shown};
use supercolumn_cql::CqlResult;

#[test]
fn multi_column_relations_select_what_the_rows_say() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE up (k int, a int, b int, c int, v int, PRIMARY KEY (k, a, b, c));
         CREATE TABLE down (k int, a int, b int, c int, v int, PRIMARY KEY (k, a, b, c))
             WITH CLUSTERING ORDER BY (a DESC, b DESC, c ASC);
         CREATE TABLE mixed (k int, a int, b int, c int, v int, PRIMARY KEY (k, a, b, c))
             WITH CLUSTERING ORDER BY (a ASC, b DESC, c ASC);
         CREATE TABLE zigzag (k int, a int, b int, c int, v int, PRIMARY KEY (k, a, b, c))
             WITH CLUSTERING ORDER BY (a DESC, b ASC, c DESC)",
    );
    let mut cql = ks_session(&db);
    for t in ["up", "down", "mixed", "zigzag"] {
        for a in 0..4 {
            for b in 0..3 {
                for c in 0..2 {
                    cql.execute(&format!(
                        "INSERT INTO {t} (k, a, b, c, v) VALUES (1, {a}, {b}, {c}, {})",
                        a * 100 + b * 10 + c
                    ))
                    .unwrap();
                }
            }
        }
    }
    type Keep = fn(i64, i64, i64) -> bool;
    let cases: Vec<(&str, Keep)> = vec![
        ("(a, b) = (2, 1)", |a, b, _| (a, b) == (2, 1)),
        ("(a, b) IN ((3, 0), (1, 2), (3, 0))", |a, b, _| {
            [(3, 0), (1, 2)].contains(&(a, b))
        }),
        ("(a, b) IN ((3, 0), (1, 2)) AND c > 0", |a, b, c| {
            [(3, 0), (1, 2)].contains(&(a, b)) && c > 0
        }),
        ("(a, b) > (1, 1)", |a, b, _| (a, b) > (1, 1)),
        ("(a, b) >= (1, 1)", |a, b, _| (a, b) >= (1, 1)),
        ("(a, b) < (2, 1)", |a, b, _| (a, b) < (2, 1)),
        ("(a, b) <= (2, 1)", |a, b, _| (a, b) <= (2, 1)),
        ("(a, b) > (0, 2) AND (a, b) <= (2, 0)", |a, b, _| {
            (a, b) > (0, 2) && (a, b) <= (2, 0)
        }),
        ("(a, b, c) >= (1, 2, 1)", |a, b, c| (a, b, c) >= (1, 2, 1)),
        (
            "(a, b, c) > (1, 1, 0) AND (a, b, c) < (2, 2, 1)",
            |a, b, c| (a, b, c) > (1, 1, 0) && (a, b, c) < (2, 2, 1),
        ),
        (
            "(a, b, c) >= (1, 1, 1) AND (a, b, c) <= (1, 2, 0)",
            |a, b, c| (a, b, c) >= (1, 1, 1) && (a, b, c) <= (1, 2, 0),
        ),
        ("(a, b) > (1, 0) AND (a, b) <= (3, 1)", |a, b, _| {
            (a, b) > (1, 0) && (a, b) <= (3, 1)
        }),
        ("(a, b) >= (2, 2) AND (a, b) < (2, 2)", |_, _, _| false),
        ("(a, b, c) < (0, 1, 1)", |a, b, c| (a, b, c) < (0, 1, 1)),
        ("(a) > (2)", |a, _, _| a > 2),
        // Bounds of different widths sharing a prefix: the shorter one's last value holds.
        ("(a, b) >= (1, 1) AND (a, b, c) < (1, 1, 1)", |a, b, c| {
            (a, b) >= (1, 1) && (a, b, c) < (1, 1, 1)
        }),
        ("(a, b, c) > (1, 1, 0) AND (a, b) <= (1, 2)", |a, b, c| {
            (a, b, c) > (1, 1, 0) && (a, b) <= (1, 2)
        }),
        ("(a) >= (2) AND (a, b, c) <= (2, 0, 0)", |a, b, c| {
            a >= 2 && (a, b, c) <= (2, 0, 0)
        }),
        ("(a, b) > (3, 5)", |_, _, _| false),
        ("(a, b) IN ()", |_, _, _| false),
    ];
    for t in ["up", "down", "mixed", "zigzag"] {
        let all: Vec<(i64, i64, i64)> =
            shown(&mut cql, &format!("SELECT a, b, c FROM {t} WHERE k = 1"))
                .iter()
                .map(|r| {
                    let v: Vec<i64> = r.split('|').map(|x| x.parse().unwrap()).collect();
                    (v[0], v[1], v[2])
                })
                .collect();
        for (relation, keep) in &cases {
            let q = format!("SELECT a, b, c FROM {t} WHERE k = 1 AND {relation}");
            let want: Vec<String> = all
                .iter()
                .filter(|(a, b, c)| keep(*a, *b, *c))
                .map(|(a, b, c)| format!("{a}|{b}|{c}"))
                .collect();
            assert_eq!(shown(&mut cql, &q), want, "{q}");
            for size in [1, 2, 5] {
                assert_eq!(paged(&mut cql, &q, size), want, "{q} by {size}");
            }
            // Read backwards, the slices come last first.
            let backwards = match t {
                "up" => "a DESC, b DESC, c DESC",
                "down" => "a ASC, b ASC, c DESC",
                "mixed" => "a DESC, b ASC, c DESC",
                _ => "a ASC, b DESC, c ASC",
            };
            let q = format!("{q} ORDER BY {backwards}");
            let back: Vec<String> = want.iter().rev().cloned().collect();
            assert_eq!(shown(&mut cql, &q), back, "{q}");
            assert_eq!(paged(&mut cql, &q, 2), back, "{q} by 2");
        }
    }
    // Bound tuples take the columns' tuple type.
    let p = cql
        .prepare("SELECT v FROM up WHERE k = 1 AND (a, b) > ? AND (a, b) < ?")
        .unwrap();
    let tuple = |a: i32, b: i32| {
        let mut t = 4i32.to_be_bytes().to_vec();
        t.extend(a.to_be_bytes());
        t.extend(4i32.to_be_bytes());
        t.extend(b.to_be_bytes());
        t
    };
    let (lo, hi) = (tuple(1, 2), tuple(2, 1));
    let CqlResult::Rows(rows) = cql.execute_prepared(&p, &[Some(&lo), Some(&hi)]).unwrap() else {
        panic!("not rows")
    };
    let got: Vec<String> = rows.displayed().concat();
    assert_eq!(got, ["200", "201"]);
}

#[test]
fn multi_column_relations_refuse_what_cassandra_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, a int, b int, v int, PRIMARY KEY (k, a, b))",
    );
    let mut cql = ks_session(&db);
    assert_eq!(
        refused(&mut cql, "SELECT * FROM t WHERE k = 1 AND (a, v) = (1, 2)"),
        "Multi-column relations can only be applied to clustering columns but was applied to: v"
    );
    assert_eq!(
        refused(&mut cql, "SELECT * FROM t WHERE k = 1 AND (b, a) = (1, 2)"),
        "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: (b, a) = (1, 2)"
    );
    let e = refused(&mut cql, "SELECT * FROM t WHERE k = 1 AND (a, b) = (1)");
    assert!(
        e.starts_with("Expected 2 elements in value tuple, but got 1"),
        "{e}"
    );
    for (q, says) in [
        (
            "SELECT * FROM t WHERE k = 1 AND (a, b) > (1, 1) AND a > 0",
            "More than one restriction was found for the start bound on a",
        ),
        (
            "SELECT * FROM t WHERE k = 1 AND (a, b) > (1, 1) AND b < 3",
            "Column \"b\" cannot be restricted by two inequalities not starting with the same column",
        ),
        (
            "SELECT * FROM t WHERE k = 1 AND (a) > (1) AND b < 3",
            "Clustering column \"b\" cannot be restricted (preceding column \"a\" is restricted by a non-EQ relation)",
        ),
        (
            "SELECT * FROM t WHERE k = 1 AND (a, b) > (1, 1) AND a = 2",
            "Column \"a\" cannot be restricted by both an equality and an inequality relation",
        ),
    ] {
        assert_eq!(refused(&mut cql, q), says, "{q}");
    }
    let e = refused(
        &mut cql,
        "SELECT * FROM t WHERE k = 1 AND (a, b) = (1, null)",
    );
    assert!(e.contains("null"), "{e}");
    // A write names rows by them (`writes_name_rows_by_multi_column_equalities_and_in`).
}

#[test]
fn a_tuple_of_markers_binds_each_column_on_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, a int, b text, v int, PRIMARY KEY (k, a, b))",
    );
    let mut cql = ks_session(&db);
    for a in 0..3 {
        for b in ["x", "y"] {
            cql.execute(&format!(
                "INSERT INTO t (k, a, b, v) VALUES (1, {a}, '{b}', {a})"
            ))
            .unwrap();
        }
    }
    let int = |v: i32| v.to_be_bytes().to_vec();
    let slice = cql
        .prepare("SELECT a, b FROM t WHERE k = ? AND (a, b) > (?, ?) AND (a, b) <= (2, 'x')")
        .unwrap();
    let names: Vec<(String, String)> = slice
        .bind_columns()
        .into_iter()
        .map(|(n, ty)| (n, ty.to_string()))
        .collect();
    let want = [("k", "int"), ("a", "int"), ("b", "text")];
    assert_eq!(
        names,
        want.map(|(n, t)| (n.to_string(), t.to_string())),
        "each marker takes its column's name and type"
    );
    let (one, a0, y) = (int(1), int(0), b"y".to_vec());
    let CqlResult::Rows(rows) = cql
        .execute_prepared(&slice, &[Some(&one), Some(&a0), Some(&y)])
        .unwrap()
    else {
        panic!("not rows");
    };
    assert_eq!(rows.displayed(), [["1", "x"], ["1", "y"], ["2", "x"]]);
    let listed = cql
        .prepare("SELECT a, b FROM t WHERE k = 1 AND (a, b) IN ((?, ?), (0, 'y'))")
        .unwrap();
    let (a2, x) = (int(2), b"x".to_vec());
    let CqlResult::Rows(rows) = cql
        .execute_prepared(&listed, &[Some(&a2), Some(&x)])
        .unwrap()
    else {
        panic!("not rows");
    };
    assert_eq!(rows.displayed(), [["0", "y"], ["2", "x"]]);
    // A range deletion takes them too; a null among them is refused.
    let delete = cql
        .prepare("DELETE FROM t WHERE k = 1 AND (a, b) >= (?, ?)")
        .unwrap();
    let e = cql
        .execute_prepared(&delete, &[Some(&a2), None])
        .unwrap_err();
    assert!(e.to_string().contains("null"), "{e}");
    cql.execute_prepared(&delete, &[Some(&int(1)), Some(&y)])
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT a, b FROM t WHERE k = 1"),
        ["0|x", "0|y", "1|x"]
    );
    let e = refused(
        &mut cql,
        "SELECT a FROM t WHERE k = 1 AND (a, b) > (1, 'x', 3)",
    );
    assert!(e.contains("Expected 2 elements"), "{e}");
}

#[test]
fn writes_name_rows_by_multi_column_equalities_and_in() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, a int, b int, c int, v int, PRIMARY KEY (k, a, b, c))",
    );
    let mut cql = ks_session(&db);
    for (a, b, c) in [(1, 1, 0), (1, 2, 0), (1, 2, 1), (2, 1, 0)] {
        cql.execute(&format!(
            "INSERT INTO t (k, a, b, c, v) VALUES (0, {a}, {b}, {c}, 0)"
        ))
        .unwrap();
    }
    // Each tuple names its own rows, not every combination of the tuples' values: (2, 2)
    // and (1, 1) stay apart from (1, 2) and (2, 1).
    cql.execute("UPDATE t SET v = 1 WHERE k = 0 AND (a, b) IN ((1, 2), (2, 1)) AND c = 0")
        .unwrap();
    let p = cql
        .prepare("UPDATE t SET v = 2 WHERE k = 0 AND (a, b, c) = (?, ?, ?)")
        .unwrap();
    let int = |v: i32| v.to_be_bytes().to_vec();
    cql.execute_prepared(&p, &[Some(&int(1)), Some(&int(2)), Some(&int(1))])
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT a, b, c, v FROM t WHERE k = 0"),
        ["1|1|0|0", "1|2|0|1", "1|2|1|2", "2|1|0|1"]
    );
    // A column deletion names whole rows through them; a row deletion a prefix.
    cql.execute("DELETE v FROM t WHERE k = 0 AND (a, b, c) = (1, 2, 0)")
        .unwrap();
    cql.execute("DELETE FROM t WHERE k = 0 AND (a) = (2)")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT a, b, c, v FROM t WHERE k = 0"),
        ["1|1|0|0", "1|2|0|null", "1|2|1|2"]
    );
    let e = refused(
        &mut cql,
        "UPDATE t SET v = 3 WHERE k = 0 AND (a, b) > (1, 1) AND c = 0",
    );
    assert!(
        e.contains(
            "Slice restrictions are not supported on the clustering columns in UPDATE statements"
        ),
        "{e}"
    );
    let e = refused(
        &mut cql,
        "UPDATE t SET v = 3 WHERE k = 0 AND (a, b) = (1, 1) AND a = 1 AND c = 0",
    );
    assert!(e.contains("both a multi-column and a single-column"), "{e}");
    let e = refused(&mut cql, "DELETE v FROM t WHERE k = 0 AND (a, b) = (1, 1)");
    assert!(
        e.contains("Range deletions are not supported for specific columns"),
        "{e}"
    );
}

#[test]
fn ranges_of_different_widths_and_a_first_column_range_meet() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c int, d int, PRIMARY KEY (k, c, d));
         CREATE TABLE r (k int, c int, d int, PRIMARY KEY (k, c, d)) \
         WITH CLUSTERING ORDER BY (c DESC, d ASC)",
    );
    let mut cql = ks_session(&db);
    for t in ["t", "r"] {
        for (c, d) in [(0, 0), (1, 1), (2, 2), (3, 3), (3, 4)] {
            cql.execute(&format!("INSERT INTO {t} (k, c, d) VALUES (0, {c}, {d})"))
                .unwrap();
        }
    }
    for (q, t_rows, r_rows) in [
        (
            "(c) >= (1) AND c < 3",
            vec!["1|1", "2|2"],
            vec!["2|2", "1|1"],
        ),
        (
            "c > 1 AND (c, d) < (3, 4)",
            vec!["2|2", "3|3"],
            vec!["3|3", "2|2"],
        ),
        (
            "(c) > (0) AND (c, d) <= (3, 3)",
            vec!["1|1", "2|2", "3|3"],
            vec!["3|3", "2|2", "1|1"],
        ),
    ] {
        for (table, want) in [("t", t_rows), ("r", r_rows)] {
            let q = format!("SELECT c, d FROM {table} WHERE k = 0 AND {q}");
            assert_eq!(shown(&mut cql, &q), want, "{q}");
        }
    }
}
