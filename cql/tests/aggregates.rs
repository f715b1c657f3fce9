//! Aggregates and GROUP BY as Cassandra answers them: `count`, `min`, `max`, `sum` and `avg`
//! over a partition, a scan and no row at all, a plain column beside them taking the first
//! row's value, LIMIT counting output rows, and GROUP BY partition key and clustering
//! prefixes, paged at every page size with the answer unpaged, each checked against the
//! rows themselves.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, paged, refused, shown};
use supercolumn_cql::Session;

/// The table's rows (k, c1, c2, v) in read order, as a plain SELECT returns them.
fn rows(cql: &mut Session<'_>, q: &str) -> Vec<Vec<i64>> {
    shown(cql, q)
        .into_iter()
        .map(|r| {
            r.split('|')
                .map(|x| x.parse().unwrap_or(i64::MIN))
                .collect()
        })
        .collect()
}

fn filled() -> (tempfile::TempDir, supercolumn::Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1, c2))",
    );
    let mut cql = ks_session(&db);
    for k in 0..6 {
        for c1 in 0..(k % 4 + 1) {
            for c2 in 0..3 {
                // Some values null, one near the int's top (a sum wraps as Java's does).
                let v = match (k * 7 + c1 * 3 + c2) % 5 {
                    0 => "null".to_string(),
                    4 => (i32::MAX - c2).to_string(),
                    x => (x * 10 - k).to_string(),
                };
                cql.execute(&format!(
                    "INSERT INTO t (k, c1, c2, v) VALUES ({k}, {c1}, {c2}, {v})"
                ))
                .unwrap();
            }
        }
    }
    drop(cql);
    (dir, db)
}

/// count(*), count(v), min, max, sum (wrapping), avg of the v column of `rows`, as text.
fn model(rows: &[Vec<i64>]) -> String {
    let vs: Vec<i64> = rows
        .iter()
        .map(|r| r[3])
        .filter(|v| *v != i64::MIN)
        .collect();
    let show = |v: Option<i64>| v.map_or("null".to_string(), |v| v.to_string());
    let sum = vs.iter().fold(0i32, |s, v| s.wrapping_add(*v as i32));
    let avg = if vs.is_empty() {
        0
    } else {
        (vs.iter().sum::<i64>() / vs.len() as i64) as i32
    };
    format!(
        "{}|{}|{}|{}|{sum}|{avg}",
        rows.len(),
        vs.len(),
        show(vs.iter().min().copied()),
        show(vs.iter().max().copied())
    )
}

const AGGS: &str = "count(*), count(v), min(v), max(v), sum(v), avg(v)";

#[test]
fn aggregates_over_a_partition_a_scan_and_nothing() {
    let (_dir, db) = filled();
    let mut cql = ks_session(&db);
    for k in 0..6 {
        let all = rows(
            &mut cql,
            &format!("SELECT k, c1, c2, v FROM t WHERE k = {k}"),
        );
        let q = format!("SELECT {AGGS} FROM t WHERE k = {k}");
        assert_eq!(shown(&mut cql, &q), [model(&all)], "{q}");
    }
    let all = rows(&mut cql, "SELECT k, c1, c2, v FROM t");
    assert_eq!(
        shown(&mut cql, &format!("SELECT {AGGS} FROM t")),
        [model(&all)]
    );
    // LIMIT counts the one output row, not the rows aggregated.
    assert_eq!(
        shown(&mut cql, "SELECT count(*) FROM t LIMIT 2"),
        [all.len().to_string()]
    );
    // No row: one row all the same, counts and sums 0, extremes null.
    assert_eq!(
        shown(&mut cql, &format!("SELECT {AGGS} FROM t WHERE k = 99")),
        ["0|0|null|null|0|0"]
    );
    let rows = cql
        .query(&format!("SELECT {AGGS}, max(v) AS top FROM t"))
        .unwrap();
    let names: Vec<String> = rows
        .columns()
        .iter()
        .map(|(n, t)| format!("{n}:{t}"))
        .collect();
    assert_eq!(
        names,
        [
            "count:bigint",
            "system.count(v):bigint",
            "system.min(v):int",
            "system.max(v):int",
            "system.sum(v):int",
            "system.avg(v):int",
            "top:int"
        ]
    );
    // A plain column beside an aggregate: the first row's value.
    assert_eq!(
        shown(&mut cql, "SELECT c1, c2, count(*) FROM t WHERE k = 3"),
        ["0|0|12"]
    );
    // An aggregate of a computed value, and a computed value of aggregates.
    let (min, max) = (
        shown(&mut cql, "SELECT min(v) FROM t WHERE k = 2")[0].clone(),
        shown(&mut cql, "SELECT max(v) FROM t WHERE k = 2")[0].clone(),
    );
    let spread = max.parse::<i64>().unwrap() - min.parse::<i64>().unwrap();
    assert_eq!(
        shown(
            &mut cql,
            "SELECT CAST(max(v) AS bigint) - min(v) FROM t WHERE k = 2"
        ),
        [spread.to_string()]
    );
    assert_eq!(
        shown(&mut cql, "SELECT max(c2 * 10) FROM t WHERE k = 2"),
        ["20"]
    );
}

#[test]
fn group_by_partition_and_clustering_prefixes_at_every_page_size() {
    let (_dir, db) = filled();
    let mut cql = ks_session(&db);
    let all = rows(&mut cql, "SELECT k, c1, c2, v FROM t");
    // The model: consecutive rows sharing their first `n` key columns are a group.
    let grouped = |n: usize| -> Vec<String> {
        let mut out: Vec<(Vec<i64>, Vec<Vec<i64>>)> = Vec::new();
        for r in &all {
            let key = r[..n].to_vec();
            match out.last_mut() {
                Some((k, rs)) if *k == key => rs.push(r.clone()),
                _ => out.push((key, vec![r.clone()])),
            }
        }
        out.iter()
            .map(|(k, rs)| {
                let keys: Vec<String> = k.iter().map(ToString::to_string).collect();
                format!("{}|{}", keys.join("|"), model(rs))
            })
            .collect()
    };
    let by_k = format!("SELECT k, {AGGS} FROM t GROUP BY k");
    let by_c1 = format!("SELECT k, c1, {AGGS} FROM t GROUP BY k, c1");
    assert_eq!(shown(&mut cql, &by_k), grouped(1));
    assert_eq!(shown(&mut cql, &by_c1), grouped(2));
    for size in 1..=7 {
        assert_eq!(paged(&mut cql, &by_k, size), grouped(1), "{by_k} by {size}");
        assert_eq!(
            paged(&mut cql, &by_c1, size),
            grouped(2),
            "{by_c1} by {size}"
        );
    }
    // LIMIT counts groups, across pages too.
    let limited = format!("{by_c1} LIMIT 5");
    assert_eq!(shown(&mut cql, &limited), grouped(2)[..5]);
    for size in 1..=4 {
        assert_eq!(
            paged(&mut cql, &limited, size),
            grouped(2)[..5],
            "{limited} by {size}"
        );
    }
    // Within a partition, by a clustering column; without aggregates, each group's first row.
    let in_3: Vec<String> = grouped(2)
        .into_iter()
        .filter(|g| g.starts_with("3|"))
        .map(|g| g.splitn(3, '|').take(2).collect::<Vec<_>>().join("|"))
        .collect();
    assert_eq!(
        shown(&mut cql, "SELECT k, c1 FROM t WHERE k = 3 GROUP BY c1"),
        in_3
    );
    assert_eq!(
        shown(&mut cql, "SELECT c1, c2 FROM t WHERE k = 3 GROUP BY c1")[1],
        "1|0"
    );
}

#[test]
fn group_by_and_aggregates_refuse_what_cassandra_refuses() {
    let (_dir, db) = filled();
    let mut cql = ks_session(&db);
    let e = refused(&mut cql, "SELECT count(*) FROM t GROUP BY v");
    assert_eq!(
        e,
        "Group by is currently only supported on the columns of the PRIMARY KEY, got v"
    );
    let e = refused(&mut cql, "SELECT count(*) FROM t GROUP BY c1");
    assert_eq!(
        e,
        "Group by currently only support groups of columns following their declared order in the PRIMARY KEY"
    );
    let e = refused(&mut cql, "SELECT count(*) FROM t WHERE k = 1 GROUP BY c2");
    assert!(e.contains("declared order"), "{e}");
    let e = refused(
        &mut cql,
        "SELECT count(*) FROM t WHERE k = 1 PER PARTITION LIMIT 1",
    );
    assert_eq!(
        e,
        "PER PARTITION LIMIT is not allowed with aggregate queries."
    );
    let e = refused(&mut cql, "SELECT sum(k, c1) FROM t");
    assert!(e.contains("1 required but 2 provided"), "{e}");
    let e = refused(&mut cql, "SELECT max(count(*)) FROM t");
    assert_eq!(
        e,
        "aggregate functions cannot be used as arguments of aggregate functions"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), "CREATE TABLE s (k int PRIMARY KEY, t text)");
    let mut cql = ks_session(&db);
    let e = refused(&mut cql, "SELECT sum(t) FROM s");
    assert!(e.contains("system.sum"), "{e}");
    cql.execute("INSERT INTO s (k, t) VALUES (1, 'b'); INSERT INTO s (k, t) VALUES (2, 'a')")
        .unwrap();
    assert_eq!(shown(&mut cql, "SELECT min(t), max(t) FROM s"), ["a|b"]);
}

/// Cassandra's `SelectGroupByTest` table, with a row and a partition deleted.
fn grouped() -> (tempfile::TempDir, supercolumn::Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE g (a int, b int, c int, d int, e int, PRIMARY KEY (a, b, c, d))",
    );
    let mut cql = ks_session(&db);
    for (a, b, c, d, e) in [
        (1, 2, 1, 3, 6),
        (1, 2, 2, 6, 12),
        (1, 3, 2, 12, 24),
        (1, 4, 2, 12, 24),
        (1, 4, 2, 6, 12),
        (2, 2, 3, 3, 6),
        (2, 4, 3, 6, 12),
        (3, 3, 2, 12, 24),
        (4, 8, 2, 12, 24),
    ] {
        cql.execute(&format!(
            "INSERT INTO g (a, b, c, d, e) VALUES ({a}, {b}, {c}, {d}, {e})"
        ))
        .unwrap();
    }
    cql.execute("DELETE FROM g WHERE a = 1 AND b = 3 AND c = 2 AND d = 12")
        .unwrap();
    cql.execute("DELETE FROM g WHERE a = 3").unwrap();
    drop(cql);
    (dir, db)
}

#[test]
fn per_partition_limit_counts_groups_and_order_by_merges_them() {
    let (_dir, db) = grouped();
    let mut cql = ks_session(&db);
    for (q, want) in [
        (
            "SELECT a, b, c, d FROM g GROUP BY a, b PER PARTITION LIMIT 1",
            vec!["1|2|1|3", "2|2|3|3", "4|8|2|12"],
        ),
        (
            "SELECT a, b, c, d FROM g GROUP BY a, b, c PER PARTITION LIMIT 2 LIMIT 3",
            vec!["1|2|1|3", "1|2|2|6", "2|2|3|3"],
        ),
        (
            "SELECT a, b, c, d FROM g WHERE a = 1 GROUP BY a, b PER PARTITION LIMIT 1",
            vec!["1|2|1|3"],
        ),
        (
            "SELECT a, b, e, count(b), max(e) FROM g GROUP BY a, b PER PARTITION LIMIT 1",
            vec!["1|2|6|2|12", "2|2|6|1|6", "4|8|24|1|24"],
        ),
        (
            "SELECT a, b, c, count(b), max(e) FROM g WHERE a IN (1, 2, 4) GROUP BY a, b ORDER BY b DESC, c DESC",
            vec!["4|8|2|1|24", "2|4|3|1|12", "1|4|2|2|24", "2|2|3|1|6", "1|2|2|2|12"],
        ),
        (
            "SELECT a, b, c, d FROM g WHERE a IN (1, 2, 4) GROUP BY a, b ORDER BY b DESC, c DESC LIMIT 3",
            vec!["4|8|2|12", "2|4|3|6", "1|4|2|12"],
        ),
    ] {
        assert_eq!(shown(&mut cql, q), want, "{q}");
    }
}

#[test]
fn distinct_aggregates_one_row_per_partition() {
    let (_dir, db) = grouped();
    let mut cql = ks_session(&db);
    cql.execute("ALTER TABLE g ADD s int static").unwrap();
    for (a, s) in [(1, 1), (2, 2), (4, 3)] {
        cql.execute(&format!("UPDATE g SET s = {s} WHERE a = {a}"))
            .unwrap();
    }
    for (q, want) in [
        (
            "SELECT DISTINCT a, count(a) FROM g GROUP BY a",
            vec!["1|1", "2|1", "4|1"],
        ),
        (
            "SELECT DISTINCT a, count(a) FROM g GROUP BY a LIMIT 2",
            vec!["1|1", "2|1"],
        ),
        (
            "SELECT DISTINCT a, count(a) FROM g WHERE a IN (1, 2, 4) GROUP BY a",
            vec!["1|1", "2|1", "4|1"],
        ),
        (
            "SELECT DISTINCT a, s, count(s) FROM g GROUP BY a",
            vec!["1|1|1", "2|2|1", "4|3|1"],
        ),
        ("SELECT DISTINCT a, count(a) FROM g", vec!["1|3"]),
    ] {
        assert_eq!(shown(&mut cql, q), want, "{q}");
    }
    for (q, says) in [
        (
            "SELECT DISTINCT a, count(a) FROM g GROUP BY a, b",
            "Grouping on clustering columns is not allowed for SELECT DISTINCT queries",
        ),
        (
            "SELECT DISTINCT a, max(e) FROM g",
            "SELECT DISTINCT queries must only request partition key columns and/or static columns (not e)",
        ),
    ] {
        assert_eq!(refused(&mut cql, q), says, "{q}");
    }
}
