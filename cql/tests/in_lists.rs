//! `IN ?` (a whole list bound to one marker, as drivers bind a Python list) and `IN ()` (no
//! value at all), on partition keys and clustering columns, in reads and writes, as Cassandra
//! answers them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused, shown};
use supercolumn_cql::{CqlResult, Session};

/// A list of ints as the protocol serializes it.
fn int_list(values: &[i32]) -> Vec<u8> {
    let mut out = (values.len() as i32).to_be_bytes().to_vec();
    for v in values {
        out.extend(4i32.to_be_bytes());
        out.extend(v.to_be_bytes());
    }
    out
}

fn run(cql: &mut Session<'_>, q: &str, values: &[Option<&[u8]>]) -> Vec<String> {
    let p = cql.prepare(q).unwrap_or_else(|e| panic!("{q}: {e}"));
    match cql
        .execute_prepared(&p, values)
        .unwrap_or_else(|e| panic!("{q}: {e}"))
    {
        CqlResult::Rows(r) => r.displayed().into_iter().map(|r| r.join("|")).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn a_bound_list_restricts_as_its_values_listed_would() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    for k in 0..4 {
        for c in 0..4 {
            cql.execute(&format!(
                "INSERT INTO t (k, c, v) VALUES ({k}, {c}, {})",
                k * 10 + c
            ))
            .unwrap();
        }
    }
    let keys = int_list(&[3, 1, 3]);
    let cs = int_list(&[2, 0]);
    assert_eq!(
        run(
            &mut cql,
            "SELECT k, c, v FROM t WHERE k IN ? AND c IN ?",
            &[Some(&keys), Some(&cs)]
        ),
        shown(
            &mut cql,
            "SELECT k, c, v FROM t WHERE k IN (3, 1, 3) AND c IN (2, 0)"
        )
    );
    assert_eq!(
        run(
            &mut cql,
            "SELECT v FROM t WHERE k = 2 AND c IN :cs",
            &[Some(&cs)]
        ),
        ["20", "22"]
    );
    run(
        &mut cql,
        "UPDATE t SET v = 0 WHERE k IN ? AND c = 1",
        &[Some(&int_list(&[0, 2]))],
    );
    assert_eq!(
        shown(
            &mut cql,
            "SELECT k, v FROM t WHERE k IN (0, 1, 2) AND c = 1"
        ),
        ["0|0", "1|11", "2|0"]
    );
    run(
        &mut cql,
        "DELETE FROM t WHERE k IN ?",
        &[Some(&int_list(&[3]))],
    );
    assert!(shown(&mut cql, "SELECT * FROM t WHERE k = 3").is_empty());
    // An empty list names nothing.
    assert!(run(
        &mut cql,
        "SELECT * FROM t WHERE k IN ?",
        &[Some(&int_list(&[]))]
    )
    .is_empty());
    let p = cql.prepare("SELECT * FROM t WHERE k IN ?").unwrap();
    let e = cql.execute_prepared(&p, &[None]).unwrap_err();
    assert!(e.to_string().contains("null"), "{e}");
    let e = cql
        .execute_prepared(&p, &[Some(&[0, 0, 0, 1, 0, 0, 0, 2, 0, 1])])
        .unwrap_err();
    assert!(e.to_string().contains("invalid IN list for k"), "{e}");
}

#[test]
fn an_empty_in_names_no_row_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, c, v) VALUES (1, 1, 1)")
        .unwrap();
    assert!(shown(&mut cql, "SELECT * FROM t WHERE k IN ()").is_empty());
    assert!(shown(&mut cql, "SELECT * FROM t WHERE k = 1 AND c IN ()").is_empty());
    assert_eq!(
        shown(&mut cql, "SELECT count(*) FROM t WHERE k IN ()"),
        ["0"]
    );
    cql.execute("UPDATE t SET v = 5 WHERE k IN () AND c = 1")
        .unwrap();
    cql.execute("DELETE FROM t WHERE k = 1 AND c IN ()")
        .unwrap();
    assert_eq!(shown(&mut cql, "SELECT v FROM t WHERE k = 1"), ["1"]);
    let e = refused(&mut cql, "SELECT * FROM t WHERE k IN ?");
    assert!(e.contains("IN ? on k"), "{e}");
}

#[test]
fn bound_lists_are_bounded_as_listed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    let many: Vec<i32> = (0..200).collect();
    let list = int_list(&many);
    let p = cql
        .prepare("SELECT * FROM t WHERE k IN ? AND c IN ?")
        .unwrap();
    let e = cql
        .execute_prepared(&p, &[Some(&list), Some(&list)])
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("combinations of IN values (these make 40000)"),
        "{e}"
    );
    let few = int_list(&many[..100]);
    cql.execute_prepared(&p, &[Some(&few), Some(&few)]).unwrap();
}
