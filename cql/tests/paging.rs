//! A SELECT paged as a client pages it returns, page after page, exactly the rows it returns
//! unpaged: at every page size, for partition-key equalities and IN lists, scans, reversed
//! order, clustering ranges and IN, LIMIT and PER PARTITION LIMIT, DISTINCT and filtering; and a
//! page resumes after the last row returned, so rows deleted meanwhile shift nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql};
use supercolumn_cql::{CqlResult, PageRequest, Position, Rows, Session};

fn rows_of(r: CqlResult) -> Rows {
    match r {
        CqlResult::Rows(r) => r,
        other => panic!("not rows: {other:?}"),
    }
}

type Values = Vec<Vec<Option<Vec<u8>>>>;

fn values(rows: &Rows) -> Values {
    rows.iter()
        .map(|r| {
            (0..rows.width())
                .map(|i| r.get(i).map(<[u8]>::to_vec))
                .collect()
        })
        .collect()
}

/// Every page of `q`, `size` rows at a time, prepared when `prepared`.
fn paged(cql: &mut Session<'_>, q: &str, size: usize, prepared: bool) -> (Values, usize) {
    let p = cql.prepare(q).unwrap();
    let (mut all, mut pages, mut after) = (Vec::new(), 0, None::<Position>);
    loop {
        cql.set_page(Some(PageRequest {
            size,
            after: after.take(),
        }));
        let r = if prepared {
            cql.execute_prepared(&p, &[]).unwrap()
        } else {
            cql.execute(q).unwrap().pop().unwrap()
        };
        let rows = values(&rows_of(r));
        assert!(rows.len() <= size, "{q}: a page of {} rows", rows.len());
        all.extend(rows);
        pages += 1;
        // Through its bytes, as a server hands it to a client and back.
        match cql.page_end() {
            Some(end) => after = Some(Position::from_bytes(&end.to_bytes()).unwrap()),
            None => return (all, pages),
        }
        assert!(pages < 10_000, "{q}: never ends");
    }
}

#[test]
fn every_page_size_returns_the_unpaged_rows() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c int, d text, v int, PRIMARY KEY (k, c, d)) WITH CLUSTERING ORDER BY (c DESC, d ASC);
         CREATE TABLE one (k int PRIMARY KEY, v int)",
    );
    let mut cql = ks_session(&db);
    for k in 0..7 {
        for c in 0..(k * 3) {
            for d in ["a", "b"] {
                cql.execute(&format!(
                    "INSERT INTO t (k, c, d, v) VALUES ({k}, {c}, '{d}', {})",
                    (k * 31 + c) % 5
                ))
                .unwrap();
            }
        }
        cql.execute(&format!("INSERT INTO one (k, v) VALUES ({k}, {k})"))
            .unwrap();
    }
    db.flush_all().unwrap();
    // Some rows in the memtable over the flushed ones, and a deleted one.
    cql.execute("INSERT INTO t (k, c, d, v) VALUES (3, 4, 'c', 9)")
        .unwrap();
    cql.execute("DELETE FROM t WHERE k = 4 AND c = 2 AND d = 'a'")
        .unwrap();
    let queries = [
        "SELECT * FROM t",
        "SELECT * FROM t WHERE k = 5",
        "SELECT * FROM t WHERE k = 5 ORDER BY c ASC, d DESC",
        "SELECT * FROM t WHERE k IN (2, 5, 3)",
        "SELECT * FROM t WHERE k = 6 AND c >= 3 AND c < 11",
        "SELECT * FROM t WHERE k = 6 AND c IN (1, 9, 4)",
        "SELECT * FROM t WHERE k = 6 AND c = 7 AND d > 'a'",
        "SELECT * FROM t LIMIT 17",
        "SELECT * FROM t WHERE k = 6 LIMIT 5",
        "SELECT * FROM t PER PARTITION LIMIT 3",
        "SELECT * FROM t WHERE k IN (4, 6) PER PARTITION LIMIT 4 LIMIT 6",
        "SELECT DISTINCT k FROM t",
        "SELECT * FROM t WHERE v = 2 ALLOW FILTERING",
        "SELECT k, v FROM one",
        "SELECT * FROM one WHERE k IN (1, 3, 5)",
        "SELECT count(*) FROM t",
    ];
    for q in queries {
        let whole = values(&cql.query(q).unwrap());
        for size in [1, 2, 3, 7, 100, 5000] {
            for prepared in [false, true] {
                let (pages, n) = paged(&mut cql, q, size, prepared);
                assert_eq!(pages, whole, "{q} by {size}, prepared {prepared}");
                if !q.contains("count") {
                    assert!(n >= whole.len().div_ceil(size), "{q} by {size}: {n} pages");
                }
            }
        }
    }
}

#[test]
fn a_page_resumes_after_its_last_row_whatever_was_deleted_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE w (k int, c int, v int, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    for c in 0..20 {
        cql.execute(&format!("INSERT INTO w (k, c, v) VALUES (1, {c}, {c})"))
            .unwrap();
    }
    cql.set_page(Some(PageRequest {
        size: 5,
        after: None,
    }));
    let first = values(&cql.query("SELECT c FROM w WHERE k = 1").unwrap());
    let end = cql.page_end().unwrap();
    assert_eq!(first.len(), 5);
    // Rows of the first page deleted meanwhile: an offset would now skip rows 5..8.
    cql.execute("DELETE FROM w WHERE k = 1 AND c IN (0, 1, 2)")
        .unwrap();
    cql.set_page(Some(PageRequest {
        size: 5,
        after: Some(end),
    }));
    let second = values(&cql.query("SELECT c FROM w WHERE k = 1").unwrap());
    let cs: Vec<i32> = second
        .iter()
        .map(|r| i32::from_be_bytes(r[0].as_deref().unwrap().try_into().unwrap()))
        .collect();
    assert_eq!(cs, vec![5, 6, 7, 8, 9]);
}

fn ints(rows: &Rows) -> Vec<Vec<i32>> {
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|v| i32::from_be_bytes(v.unwrap().try_into().unwrap()))
                .collect()
        })
        .collect()
}

#[test]
fn in_on_the_partition_key_returns_partitions_in_key_order_and_order_by_merges_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE o (k int, c int, PRIMARY KEY (k, c));
         CREATE TABLE d (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)",
    );
    let mut cql = ks_session(&db);
    for (k, c) in [(1, 1), (2, 3), (3, 2), (1, 5), (-1, 4), (0, 0)] {
        for t in ["o", "d"] {
            cql.execute(&format!("INSERT INTO {t} (k, c) VALUES ({k}, {c})"))
                .unwrap();
        }
    }
    let q = |cql: &mut Session<'_>, q: &str| ints(&cql.query(q).unwrap());
    // Partitions in key order, whatever the IN list's order; each once.
    assert_eq!(
        q(&mut cql, "SELECT k, c FROM o WHERE k IN (3, 1, -1, 0, 1)"),
        vec![vec![-1, 4], vec![0, 0], vec![1, 1], vec![1, 5], vec![3, 2]]
    );
    for t in ["o", "d"] {
        let c = |q: Vec<Vec<i32>>| q.into_iter().map(|r| r[0]).collect::<Vec<_>>();
        let base = format!("SELECT c FROM {t} WHERE k IN (1, 2, 3)");
        assert_eq!(
            c(q(&mut cql, &format!("{base} ORDER BY c"))),
            vec![1, 2, 3, 5],
            "{t}"
        );
        assert_eq!(
            c(q(&mut cql, &format!("{base} ORDER BY c DESC"))),
            vec![5, 3, 2, 1],
            "{t}"
        );
        assert_eq!(
            c(q(&mut cql, &format!("{base} ORDER BY c LIMIT 2"))),
            vec![1, 2],
            "{t}"
        );
        assert_eq!(
            c(q(
                &mut cql,
                &format!("{base} ORDER BY c DESC PER PARTITION LIMIT 1")
            )),
            vec![5, 3, 2],
            "{t}"
        );
    }
    // Paged past its LIMIT, it is refused with Cassandra's message; a LIMIT within one page
    // is not paged.
    cql.set_page(Some(PageRequest {
        size: 2,
        after: None,
    }));
    let e = cql
        .query("SELECT c FROM o WHERE k IN (1, 2) ORDER BY c")
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("Cannot page queries with both ORDER BY and a IN restriction"),
        "{e}"
    );
    cql.set_page(Some(PageRequest {
        size: 2,
        after: None,
    }));
    let r = q(
        &mut cql,
        "SELECT c FROM o WHERE k IN (1, 2) ORDER BY c LIMIT 2",
    );
    assert_eq!(r, vec![vec![1], vec![3]]);
    assert!(cql.page_end().is_none());
}
