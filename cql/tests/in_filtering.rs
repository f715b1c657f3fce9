//! `IN` as a filter, as Cassandra 4.0 on takes it with `ALLOW FILTERING`: on a regular, a
//! static and a counter column, on part of a composite partition key, and on a clustering
//! column after one left unrestricted; each answer checked against the rows themselves, on a
//! scan and in a partition, prepared and paged; refused without `ALLOW FILTERING`, and on what
//! no value compares with, in Cassandra's words.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, paged, refused, shown};

fn sorted(mut rows: Vec<String>) -> Vec<String> {
    rows.sort();
    rows
}

#[test]
fn in_filters_rows_as_the_rows_say() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (p1 int, p2 int, c1 int, c2 int, v int, s int static, t text,
             PRIMARY KEY ((p1, p2), c1, c2));
         CREATE TABLE n (k int PRIMARY KEY, hits counter)",
    );
    let mut cql = ks_session(&db);
    let mut all = Vec::new();
    for p1 in 0..3 {
        for p2 in 0..2 {
            cql.execute(&format!(
                "UPDATE t SET s = {} WHERE p1 = {p1} AND p2 = {p2}",
                p1 * 10 + p2
            ))
            .unwrap();
            for c1 in 0..2 {
                for c2 in 0..3 {
                    let v = (p1 + p2 + c1 + c2) % 4;
                    cql.execute(&format!(
                        "INSERT INTO t (p1, p2, c1, c2, v, t) VALUES ({p1}, {p2}, {c1}, {c2}, {v}, 'x{v}')"
                    ))
                    .unwrap();
                    all.push((p1, p2, c1, c2, v, p1 * 10 + p2));
                }
            }
        }
    }
    type Keep = fn(&(i32, i32, i32, i32, i32, i32)) -> bool;
    let cases: Vec<(&str, Keep)> = vec![
        ("v IN (1, 3)", |r| [1, 3].contains(&r.4)),
        ("v IN (2, 2)", |r| r.4 == 2),
        ("t IN ('x0', 'x3', 'y')", |r| [0, 3].contains(&r.4)),
        ("s IN (1, 20, 99)", |r| [1, 20].contains(&r.5)),
        ("p2 IN (1)", |r| r.1 == 1),
        ("p1 IN (0, 2)", |r| [0, 2].contains(&r.0)),
        ("c2 IN (0, 2)", |r| [0, 2].contains(&r.3)),
        ("c2 IN (0, 2) AND v IN (0, 1)", |r| {
            [0, 2].contains(&r.3) && [0, 1].contains(&r.4)
        }),
        ("p1 = 1 AND p2 = 0 AND c2 IN (1, 2)", |r| {
            (r.0, r.1) == (1, 0) && [1, 2].contains(&r.3)
        }),
        ("p1 = 2 AND p2 = 1 AND c1 = 1 AND v IN (0, 2)", |r| {
            (r.0, r.1, r.2) == (2, 1, 1) && [0, 2].contains(&r.4)
        }),
        ("v IN ()", |_| false),
    ];
    for (relation, keep) in cases {
        let q = format!("SELECT p1, p2, c1, c2, v, s FROM t WHERE {relation} ALLOW FILTERING");
        let want: Vec<String> = all
            .iter()
            .filter(|r| keep(r))
            .map(|r| format!("{}|{}|{}|{}|{}|{}", r.0, r.1, r.2, r.3, r.4, r.5))
            .collect();
        assert_eq!(sorted(shown(&mut cql, &q)), sorted(want.clone()), "{q}");
        assert_eq!(sorted(paged(&mut cql, &q, 4)), sorted(want), "{q} by 4");
    }
    // Bound values, each marker its own.
    let p = cql
        .prepare(
            "SELECT c2 FROM t WHERE p1 = 0 AND p2 = 0 AND c1 = 0 AND v IN (?, ?) ALLOW FILTERING",
        )
        .unwrap();
    let (a, b) = (0i32.to_be_bytes(), 2i32.to_be_bytes());
    let supercolumn_cql::CqlResult::Rows(rows) =
        cql.execute_prepared(&p, &[Some(&a), Some(&b)]).unwrap()
    else {
        panic!("not rows")
    };
    assert_eq!(rows.displayed().concat(), ["0", "2"]);
    // A counter column filters as any other.
    cql.execute("UPDATE n SET hits = hits + 3 WHERE k = 1")
        .unwrap();
    cql.execute("UPDATE n SET hits = hits + 5 WHERE k = 2")
        .unwrap();
    assert_eq!(
        shown(
            &mut cql,
            "SELECT k FROM n WHERE hits IN (5, 7) ALLOW FILTERING"
        ),
        ["2"]
    );
}

#[test]
fn in_as_a_filter_is_refused_where_cassandra_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (p1 int, p2 int, c1 int, c2 int, v int, l list<int>, m map<int, int>,
             PRIMARY KEY ((p1, p2), c1, c2))",
    );
    let mut cql = ks_session(&db);
    let filtering = "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING";
    for (q, says) in [
        ("SELECT * FROM t WHERE v IN (1, 2)", filtering),
        ("SELECT * FROM t WHERE p1 IN (1, 2)", filtering),
        (
            "SELECT * FROM t WHERE p1 = 1 AND p2 = 1 AND c2 IN (1, 2)",
            "PRIMARY KEY column \"c2\" cannot be restricted as preceding column \"c1\" is not restricted",
        ),
        (
            "SELECT * FROM t WHERE l IN ([1]) ALLOW FILTERING",
            "Collection column 'l' (list<int>) cannot be restricted by a 'IN' relation",
        ),
        (
            "SELECT * FROM t WHERE v IN (1, null) ALLOW FILTERING",
            "Invalid null value in condition for column v",
        ),
    ] {
        assert_eq!(refused(&mut cql, q), says, "{q}");
    }
}
