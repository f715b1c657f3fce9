//! Multi-column relations that start after the first clustering column, as Cassandra takes
//! them: `b = 1 AND (c, d) > (0, 1)`, `b IN (…) AND (c, d) IN ((…), …)`, several multi-column
//! relations together (`(b) = (1) AND (c, d) = (0, 1)`, `(b, c) = (1, 0) AND (d) >= (1)`),
//! checked against the rows themselves on tables of every clustering order, paged and read
//! backwards; the refusals in Cassandra's words; and writes naming rows so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, paged, refused, shown};

type Keep = fn(i64, i64, i64) -> bool;

fn cases() -> Vec<(&'static str, Keep)> {
    vec![
        ("b = 1 AND (c, d) > (0, 1)", |b, c, d| {
            b == 1 && (c, d) > (0, 1)
        }),
        ("b = 2 AND (c, d) <= (1, 0)", |b, c, d| {
            b == 2 && (c, d) <= (1, 0)
        }),
        (
            "b IN (2, 0) AND (c, d) >= (1, 1) AND (c, d) < (2, 1)",
            |b, c, d| [0, 2].contains(&b) && (c, d) >= (1, 1) && (c, d) < (2, 1),
        ),
        ("b = 1 AND (c, d) IN ((2, 0), (0, 1), (9, 9))", |b, c, d| {
            b == 1 && [(2, 0), (0, 1)].contains(&(c, d))
        }),
        ("b IN (0, 1) AND (c, d) = (1, 1)", |b, c, d| {
            b <= 1 && (c, d) == (1, 1)
        }),
        ("b = 1 AND c = 2 AND (d) > (0)", |b, c, d| {
            (b, c) == (1, 2) && d > 0
        }),
        ("(b) = (1) AND (c, d) = (0, 1)", |b, c, d| {
            (b, c, d) == (1, 0, 1)
        }),
        (
            "(b) IN ((0), (2)) AND (c, d) > (0, 0) AND (c) <= (1)",
            |b, c, d| [0, 2].contains(&b) && (c, d) > (0, 0) && c <= 1,
        ),
        ("(b, c) = (1, 0) AND (d) >= (1)", |b, c, d| {
            (b, c) == (1, 0) && d >= 1
        }),
        ("(b, c) IN ((1, 0), (2, 1)) AND (d) = (0)", |b, c, d| {
            [(1, 0), (2, 1)].contains(&(b, c)) && d == 0
        }),
        ("b = 1 AND (c, d) > (2, 1)", |_, _, _| false),
    ]
}

#[test]
fn a_multi_column_relation_after_equalities_selects_what_the_rows_say() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE up (k int, b int, c int, d int, PRIMARY KEY (k, b, c, d));
         CREATE TABLE down (k int, b int, c int, d int, PRIMARY KEY (k, b, c, d))
             WITH CLUSTERING ORDER BY (b DESC, c ASC, d ASC);
         CREATE TABLE mixed (k int, b int, c int, d int, PRIMARY KEY (k, b, c, d))
             WITH CLUSTERING ORDER BY (b ASC, c DESC, d ASC);
         CREATE TABLE last (k int, b int, c int, d int, PRIMARY KEY (k, b, c, d))
             WITH CLUSTERING ORDER BY (b DESC, c DESC, d DESC)",
    );
    let mut cql = ks_session(&db);
    let tables = [
        ("up", "b DESC, c DESC, d DESC"),
        ("down", "b ASC, c DESC, d DESC"),
        ("mixed", "b DESC, c ASC, d DESC"),
        ("last", "b ASC, c ASC, d ASC"),
    ];
    for (t, _) in tables {
        for b in 0..3 {
            for c in 0..3 {
                for d in 0..2 {
                    cql.execute(&format!(
                        "INSERT INTO {t} (k, b, c, d) VALUES (1, {b}, {c}, {d})"
                    ))
                    .unwrap();
                }
            }
        }
    }
    for (t, backwards) in tables {
        let all: Vec<(i64, i64, i64)> =
            shown(&mut cql, &format!("SELECT b, c, d FROM {t} WHERE k = 1"))
                .iter()
                .map(|r| {
                    let v: Vec<i64> = r.split('|').map(|x| x.parse().unwrap()).collect();
                    (v[0], v[1], v[2])
                })
                .collect();
        assert_eq!(all.len(), 18);
        for (relation, keep) in cases() {
            let q = format!("SELECT b, c, d FROM {t} WHERE k = 1 AND {relation}");
            let want: Vec<String> = all
                .iter()
                .filter(|(b, c, d)| keep(*b, *c, *d))
                .map(|(b, c, d)| format!("{b}|{c}|{d}"))
                .collect();
            assert_eq!(shown(&mut cql, &q), want, "{q}");
            for size in [1, 2, 5] {
                assert_eq!(paged(&mut cql, &q, size), want, "{q} by {size}");
            }
            let q = format!("{q} ORDER BY {backwards}");
            let back: Vec<String> = want.iter().rev().cloned().collect();
            assert_eq!(shown(&mut cql, &q), back, "{q}");
        }
    }
}

#[test]
fn a_multi_column_relation_after_a_free_or_ranged_column_is_refused_in_cassandras_words() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (a int, b int, c int, d int, PRIMARY KEY (a, b, c, d))",
    );
    let mut cql = ks_session(&db);
    for (q, says) in [
        (
            "SELECT * FROM t WHERE a = 0 AND (c, d) = (0, 0)",
            "PRIMARY KEY column \"c\" cannot be restricted as preceding column \"b\" is not restricted",
        ),
        (
            "SELECT * FROM t WHERE a = 0 AND (c, d) > (0, 0)",
            "PRIMARY KEY column \"c\" cannot be restricted as preceding column \"b\" is not restricted",
        ),
        (
            "SELECT * FROM t WHERE a = 0 AND (c, d) > (0, 0) ALLOW FILTERING",
            "Multi-column slice restrictions cannot be used for filtering.",
        ),
        (
            "SELECT * FROM t WHERE a = 0 AND b > 0 AND (c, d) < (0, 0) ALLOW FILTERING",
            "Multi-column slice restrictions cannot be used for filtering.",
        ),
        (
            "SELECT * FROM t WHERE a = 0 AND b > 0 AND (c, d) IN ((0, 0))",
            "Clustering column \"c\" cannot be restricted (preceding column \"b\" is restricted by a non-EQ relation)",
        ),
        (
            "SELECT * FROM t WHERE a = 0 AND b > 0 AND (c, d) > (0, 0)",
            "Clustering column \"c\" cannot be restricted (preceding column \"b\" is restricted by a non-EQ relation)",
        ),
        (
            "SELECT * FROM t WHERE a = 0 AND (b, c) > (0, 0) AND (b) < (1) AND (c) < (1)",
            "Column \"c\" cannot be restricted by two inequalities not starting with the same column",
        ),
        (
            "SELECT * FROM t WHERE a = 0 AND b = 0 AND (d, c) = (0, 0)",
            "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: (d, c) = (0, 0)",
        ),
        (
            "SELECT * FROM t WHERE a = 0 AND (b, d) = (0, 0)",
            "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: (b, d) = (0, 0)",
        ),
        (
            "SELECT * FROM t WHERE a = 0 AND (b) = (0) AND (b) > (0)",
            "b cannot be restricted by more than one relation if it includes an Equal",
        ),
        (
            "SELECT * FROM t WHERE a = 0 AND (b, c) IN ((1, 0)) AND (b, c) > (0, 0)",
            "b, c cannot be restricted by more than one relation if it includes a IN",
        ),
        (
            "SELECT * FROM t WHERE a = 0 AND (b) > (0) AND (b) > (1)",
            "More than one restriction was found for the start bound on b",
        ),
        (
            "SELECT * FROM t WHERE a = 0 AND (b) != (0)",
            "Unsupported \"!=\" relation: (b) != (0)",
        ),
        (
            "SELECT * FROM t WHERE a = 0 AND b = 0 AND (c, d) > (0, 0) AND d = 1",
            "Clustering column \"d\" cannot be restricted (preceding column \"c\" is restricted by a non-EQ relation)",
        ),
    ] {
        assert_eq!(refused(&mut cql, q), says, "{q}");
    }
}

#[test]
fn writes_name_rows_by_a_multi_column_equality_after_an_equality() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (a int, b int, c int, d int, v int, PRIMARY KEY (a, b, c, d))",
    );
    let mut cql = ks_session(&db);
    for b in 0..2 {
        for c in 0..2 {
            for d in 0..2 {
                cql.execute(&format!(
                    "INSERT INTO t (a, b, c, d, v) VALUES (0, {b}, {c}, {d}, 0)"
                ))
                .unwrap();
            }
        }
    }
    cql.execute("UPDATE t SET v = 7 WHERE a = 0 AND b = 1 AND (c, d) = (0, 1)")
        .unwrap();
    cql.execute("DELETE FROM t WHERE a = 0 AND b IN (0, 1) AND (c, d) IN ((1, 1), (1, 0))")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT b, c, d, v FROM t WHERE a = 0"),
        ["0|0|0|0", "0|0|1|0", "1|0|0|0", "1|0|1|7"]
    );
    // A range deletion after the prefix.
    cql.execute("DELETE FROM t WHERE a = 0 AND b = 0 AND (c, d) > (0, 0)")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT b, c, d, v FROM t WHERE a = 0"),
        ["0|0|0|0", "1|0|0|0", "1|0|1|7"]
    );
    assert_eq!(
        refused(&mut cql, "DELETE FROM t WHERE a = 0 AND (c, d) = (0, 0)"),
        "PRIMARY KEY column \"c\" cannot be restricted as preceding column \"b\" is not restricted"
    );
    let e = refused(
        &mut cql,
        "UPDATE t SET v = 1 WHERE a = 0 AND (c, d) = (0, 0)",
    );
    assert!(e.starts_with("Some clustering keys are missing: b"), "{e}");
}

#[test]
fn an_index_serves_beside_a_multi_column_slice_and_a_one_column_equality() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (a int, b int, c int, d int, e int, f int, PRIMARY KEY ((a, b), c, d, e));
         CREATE INDEX ON t (f);
         CREATE TABLE u (a int, b int, c int, v int, PRIMARY KEY (a, b, c));
         CREATE INDEX ON u (b)",
    );
    let mut cql = ks_session(&db);
    for (c, d, e, f) in [(1, 1, 1, 5), (2, 0, 0, 5), (0, 3, 0, 5), (1, 1, 2, 6)] {
        cql.execute(&format!(
            "INSERT INTO t (a, b, c, d, e, f) VALUES (0, 0, {c}, {d}, {e}, {f})"
        ))
        .unwrap();
    }
    // The slice narrows the partition's read; the index finds the rows, no filtering asked.
    assert_eq!(
        shown(
            &mut cql,
            "SELECT c, d, e FROM t WHERE a = 0 AND b = 0 AND (c, d) >= (1, 1) AND f = 5"
        ),
        ["1|1|1", "2|0|0"]
    );
    for (b, c) in [(1, 0), (2, 0), (1, 1)] {
        cql.execute(&format!(
            "INSERT INTO u (a, b, c, v) VALUES (0, {b}, {c}, 0)"
        ))
        .unwrap();
    }
    assert_eq!(
        shown(&mut cql, "SELECT b, c FROM u WHERE (b) = (1)"),
        ["1|0", "1|1"]
    );
    // A tuple fixes its columns, so ORDER BY may skip them.
    assert_eq!(
        shown(
            &mut cql,
            "SELECT b, c FROM u WHERE a = 0 AND (b) IN ((1)) ORDER BY c DESC"
        ),
        ["1|1", "1|0"]
    );
    assert_eq!(
        shown(
            &mut cql,
            "SELECT b, c FROM u WHERE a = 0 AND (b, c) = (1, 1) ORDER BY c DESC"
        ),
        ["1|1"]
    );
}
