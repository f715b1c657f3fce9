//! Secondary indexes through CQL: `CREATE INDEX` (and Cassandra 5's storage-attached index),
//! queries on the indexed column alone and with key, clustering and filtered restrictions,
//! paged and limited, each answer checked against a full scan with `ALLOW FILTERING` under
//! overwrites, deletes at every level, TTL expiry, flushes, compactions and reopens; then
//! the schema (`DROP INDEX`, `system_schema.indexes`, `DESCRIBE`) and Cassandra's refusals.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{ks_session, open_cql, open_cql_with, paged, refused, shown, T0};
use supercolumn::{Database, ManualClock, Options};
use supercolumn_cql::{CqlResult, Session};

const SCHEMA: &str = "CREATE TABLE t (k int, c int, v text, w int, PRIMARY KEY (k, c))";

/// Every indexed query of `cases` answers what filtering every row of the table answers,
/// whole and paged.
fn agree(cql: &mut Session<'_>, when: &str) {
    let cases = [
        "v = 'a'",
        "v = 'b'",
        "v = 'zz'",
        "v = 'a' AND k = 3",
        "v = 'b' AND c > 2 AND k = 1",
        "v = 'a' AND c >= 4 ALLOW FILTERING",
        "v = 'b' AND w = 1 ALLOW FILTERING",
    ];
    for f in cases {
        let q = format!("SELECT k, c, v, w FROM t WHERE {f}");
        let via_index = shown(cql, &q);
        let scanned = scan_rows(cql, f);
        assert_eq!(via_index, scanned, "{when}: {q}");
        for size in [1, 3] {
            assert_eq!(
                paged(cql, &q, size),
                via_index,
                "{when}: {q} paged by {size}"
            );
        }
    }
}

/// The rows a whole-table read finds for filter `f`, by filtering here.
fn scan_rows(cql: &mut Session<'_>, f: &str) -> Vec<String> {
    let all = cql.query("SELECT k, c, v, w FROM t").unwrap().displayed();
    let mut want_v = None;
    let mut want_k = None;
    let mut c_gt = None;
    let mut c_ge = None;
    let mut want_w = None;
    for part in f.trim_end_matches(" ALLOW FILTERING").split(" AND ") {
        let (col, rest) = part.split_once(' ').unwrap();
        let (op, val) = rest.split_once(' ').unwrap();
        let val = val.trim_matches('\'').to_string();
        match (col, op) {
            ("v", "=") => want_v = Some(val),
            ("k", "=") => want_k = Some(val),
            ("c", ">") => c_gt = Some(val.parse::<i32>().unwrap()),
            ("c", ">=") => c_ge = Some(val.parse::<i32>().unwrap()),
            ("w", "=") => want_w = Some(val),
            _ => panic!("{part}"),
        }
    }
    all.into_iter()
        .filter(|r| want_v.as_ref().is_none_or(|v| &r[2] == v))
        .filter(|r| want_k.as_ref().is_none_or(|k| &r[0] == k))
        .filter(|r| c_gt.is_none_or(|g| r[1].parse::<i32>().unwrap() > g))
        .filter(|r| c_ge.is_none_or(|g| r[1].parse::<i32>().unwrap() >= g))
        .filter(|r| want_w.as_ref().is_none_or(|w| &r[3] == w))
        .map(|r| r.join("|"))
        .collect()
}

fn fill(cql: &mut Session<'_>) {
    for k in 0..6 {
        for c in 0..8 {
            let v = ["a", "b", "c"][(k * 8 + c) % 3];
            cql.execute(&format!(
                "INSERT INTO t (k, c, v, w) VALUES ({k}, {c}, '{v}', {})",
                (k + c) % 2
            ))
            .unwrap();
        }
    }
}

#[test]
fn an_indexed_query_answers_what_a_scan_answers_as_rows_change() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let options = || Options::default().with_clock(clock.clone());
    let db = open_cql_with(dir.path(), options(), SCHEMA);
    let mut cql = ks_session(&db);
    fill(&mut cql);
    // Built over the rows already there.
    cql.execute("CREATE INDEX ON t (v)").unwrap();
    agree(&mut cql, "built");
    // Overwrites, a cell delete, a row delete, a partition delete, a value put back.
    cql.execute("UPDATE t SET v = 'b' WHERE k = 0 AND c = 0")
        .unwrap();
    cql.execute("DELETE v FROM t WHERE k = 0 AND c = 3")
        .unwrap();
    cql.execute("DELETE FROM t WHERE k = 1 AND c = 1").unwrap();
    cql.execute("DELETE FROM t WHERE k = 2").unwrap();
    cql.execute("UPDATE t SET v = 'c' WHERE k = 3 AND c = 0")
        .unwrap();
    cql.execute("UPDATE t SET v = 'a' WHERE k = 3 AND c = 0")
        .unwrap();
    agree(&mut cql, "changed");
    db.flush("ks", None).unwrap();
    // A TTL: the row leaves the answer as it expires.
    cql.execute("INSERT INTO t (k, c, v, w) VALUES (5, 100, 'a', 0) USING TTL 10")
        .unwrap();
    assert!(shown(&mut cql, "SELECT c FROM t WHERE v = 'a' AND k = 5").contains(&"100".to_string()));
    clock.advance_seconds(11);
    assert!(
        !shown(&mut cql, "SELECT c FROM t WHERE v = 'a' AND k = 5").contains(&"100".to_string())
    );
    agree(&mut cql, "expired");
    db.compact("ks", Some("t")).unwrap();
    agree(&mut cql, "compacted");
    // LIMIT and COUNT over the index.
    let all_a = shown(&mut cql, "SELECT k, c FROM t WHERE v = 'a'");
    assert_eq!(
        shown(&mut cql, "SELECT k, c FROM t WHERE v = 'a' LIMIT 4"),
        all_a[..4].to_vec()
    );
    assert_eq!(
        shown(&mut cql, "SELECT count(*) FROM t WHERE v = 'a'"),
        vec![all_a.len().to_string()]
    );
    drop(cql);
    db.close().unwrap();
    // Reopened: from SSTables and the commit log.
    let db = Database::open(dir.path(), options()).unwrap();
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, c, v, w) VALUES (4, 50, 'b', 1)")
        .unwrap();
    agree(&mut cql, "reopened");
}

#[test]
fn index_schema_statements_and_their_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    cql.execute(
        "CREATE TABLE u (k int PRIMARY KEY, a int, l list<int>, f frozen<list<int>>, s int)",
    )
    .unwrap();
    cql.execute("CREATE INDEX v_by ON t (v)").unwrap();
    cql.execute("CREATE INDEX IF NOT EXISTS v_by ON t (v)")
        .unwrap();
    let e = refused(&mut cql, "CREATE INDEX v_by ON u (a)");
    assert!(e.contains("already exists"), "{e}");
    let e = refused(&mut cql, "CREATE INDEX other ON t (v)");
    assert!(e.contains("duplicate of existing index v_by"), "{e}");
    // A storage-attached index beside the legacy one is another definition, as in Cassandra 5;
    // a second of its kind is a duplicate.
    cql.execute("CREATE CUSTOM INDEX v_sai ON t (v) USING 'StorageAttachedIndex'")
        .unwrap();
    let e = refused(
        &mut cql,
        "CREATE CUSTOM INDEX v_sai2 ON t (v) USING 'StorageAttachedIndex'",
    );
    assert!(e.contains("duplicate of existing index v_sai"), "{e}");
    cql.execute("INSERT INTO t (k, c, v) VALUES (1, 1, 'x')")
        .unwrap();
    assert_eq!(shown(&mut cql, "SELECT k FROM t WHERE v = 'x'"), ["1"]);
    cql.execute("DROP INDEX v_sai").unwrap();
    assert_eq!(shown(&mut cql, "SELECT k FROM t WHERE v = 'x'"), ["1"]);
    let e = refused(&mut cql, "CREATE INDEX ON t (nope)");
    assert!(e.contains("Column 'nope' doesn't exist"), "{e}");
    let e = refused(&mut cql, "CREATE INDEX ON u (k)");
    assert!(e.contains("only partition key column k"), "{e}");
    let e = refused(&mut cql, "CREATE INDEX ON u (f)");
    assert!(e.contains("full(f)"), "{e}");
    let e = refused(&mut cql, "CREATE INDEX ON u (keys(a))");
    assert!(
        e.contains("Non-collection columns only support simple indexes"),
        "{e}"
    );
    let e = refused(
        &mut cql,
        "CREATE CUSTOM INDEX ON u (a) USING 'com.example.Nope'",
    );
    assert!(e.contains("Unable to find custom indexer class"), "{e}");
    // Defaults and a storage-attached index (Cassandra 5).
    cql.execute("CREATE INDEX ON u (full(f))").unwrap();
    cql.execute("CREATE CUSTOM INDEX ON u (a) USING 'StorageAttachedIndex'")
        .unwrap();
    cql.execute("INSERT INTO u (k, a, f) VALUES (1, 7, [1, 2])")
        .unwrap();
    cql.execute("INSERT INTO u (k, a, f) VALUES (2, 7, [3])")
        .unwrap();
    assert_eq!(shown(&mut cql, "SELECT k FROM u WHERE a = 7").len(), 2);
    assert_eq!(shown(&mut cql, "SELECT k FROM u WHERE f = [3]"), vec!["2"]);
    // A storage-attached index serves ranges of a number without ALLOW FILTERING, as
    // Cassandra 5's does; a legacy index does not.
    cql.execute("INSERT INTO u (k, a, f) VALUES (3, 9, [3])")
        .unwrap();
    let mut ks = shown(&mut cql, "SELECT k FROM u WHERE a > 7");
    assert_eq!(ks, vec!["3"]);
    ks = shown(&mut cql, "SELECT k FROM u WHERE a >= 7 AND a < 9");
    ks.sort();
    assert_eq!(ks, vec!["1", "2"]);
    // Beside a legacy index's equality, the range is a filter like any other.
    let e = refused(&mut cql, "SELECT k FROM u WHERE a >= 7 AND f = [3]");
    assert!(e.contains("ALLOW FILTERING"), "{e}");
    assert_eq!(
        shown(&mut cql, "SELECT k FROM u WHERE k = 3 AND a <= 9"),
        vec!["3"]
    );
    let e = refused(&mut cql, "SELECT k FROM u WHERE f > [1]");
    assert!(e.contains("ALLOW FILTERING"), "{e}");
    cql.execute("DELETE FROM u WHERE k = 3").unwrap();
    let rows = shown(
        &mut cql,
        "SELECT table_name, index_name, kind, options FROM system_schema.indexes WHERE keyspace_name = 'ks'",
    );
    assert_eq!(
        rows,
        vec![
            "t|v_by|COMPOSITES|{'target': 'v'}",
            "u|u_a_idx|CUSTOM|{'class_name': 'org.apache.cassandra.index.sai.StorageAttachedIndex', 'target': 'a'}",
            "u|u_f_idx|COMPOSITES|{'target': 'full(f)'}",
        ]
    );
    let described = shown(&mut cql, "DESCRIBE TABLE t").join("\n");
    assert!(
        described.contains("CREATE INDEX v_by ON ks.t (v);"),
        "{described}"
    );
    // A query on an unindexed column still needs ALLOW FILTERING; ORDER BY is refused.
    let e = refused(&mut cql, "SELECT * FROM t WHERE v = 'a' AND w = 1");
    assert!(e.contains("ALLOW FILTERING"), "{e}");
    let e = refused(&mut cql, "SELECT * FROM t WHERE v = 'a' ORDER BY c DESC");
    assert!(
        e.contains("ORDER BY with 2ndary indexes is not supported."),
        "{e}"
    );
    // An indexed column cannot be dropped; the index can.
    let e = refused(&mut cql, "ALTER TABLE t DROP v");
    assert!(e.contains("dependent secondary indexes (v_by)"), "{e}");
    cql.execute("DROP INDEX v_by").unwrap();
    cql.execute("DROP INDEX IF EXISTS v_by").unwrap();
    let e = refused(&mut cql, "DROP INDEX ks.v_by");
    assert!(e.contains("doesn't exist"), "{e}");
    let e = refused(&mut cql, "SELECT * FROM t WHERE v = 'a'");
    assert!(e.contains("ALLOW FILTERING"), "{e}");
    // TRUNCATE keeps the index, empty.
    cql.execute("TRUNCATE u").unwrap();
    cql.execute("INSERT INTO u (k, a) VALUES (9, 7)").unwrap();
    assert_eq!(shown(&mut cql, "SELECT k FROM u WHERE a = 7"), vec!["9"]);
    // A table without clustering columns, paged.
    for k in 0..20 {
        cql.execute(&format!("INSERT INTO u (k, a) VALUES ({k}, {})", k % 2))
            .unwrap();
    }
    let all = shown(&mut cql, "SELECT k FROM u WHERE a = 1");
    assert_eq!(all.len(), 10);
    assert_eq!(paged(&mut cql, "SELECT k FROM u WHERE a = 1", 3), all);
}

#[test]
fn a_statement_prepared_before_an_index_change_is_prepared_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    fill(&mut cql);
    let q = "SELECT k, c FROM t WHERE v = 'a' AND k = 1 ALLOW FILTERING";
    let before = cql.prepare(q).unwrap();
    let rows = shown(&mut cql, q);
    cql.execute("CREATE INDEX v_idx ON t (v)").unwrap();
    // Prepared against the table without the index: stale, as Cassandra's UNPREPARED.
    assert!(matches!(
        cql.execute_prepared(&before, &[]),
        Err(supercolumn_cql::CqlError::Stale(_))
    ));
    let by_index = cql.prepare("SELECT k, c FROM t WHERE v = 'a'").unwrap();
    let CqlResult::Rows(found) = cql.execute_prepared(&by_index, &[]).unwrap() else {
        panic!("not rows")
    };
    assert_eq!(found.len(), 16);
    cql.execute("DROP INDEX v_idx").unwrap();
    assert!(matches!(
        cql.execute_prepared(&by_index, &[]),
        Err(supercolumn_cql::CqlError::Stale(_))
    ));
    assert_eq!(shown(&mut cql, q), rows);
}

#[test]
fn collection_indexes_answer_contains_as_filtering_does() {
    let dir = tempfile::tempdir().unwrap();
    // The same writes to two tables; only `ix` is indexed, `raw` is filtered.
    let db = open_cql(
        dir.path(),
        "CREATE TABLE ix (k int, c int, l list<int>, s set<text>, m map<text, int>, PRIMARY KEY (k, c));
         CREATE TABLE raw (k int, c int, l list<int>, s set<text>, m map<text, int>, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    cql.execute("CREATE INDEX ON ix (l)").unwrap();
    cql.execute("CREATE INDEX ON ix (values(s))").unwrap();
    cql.execute("CREATE INDEX ON ix (m)").unwrap();
    cql.execute("CREATE INDEX mk ON ix (keys(m))").unwrap();
    cql.execute("CREATE INDEX me ON ix (entries(m))").unwrap();
    let e = refused(&mut cql, "CREATE INDEX ON ix (keys(l))");
    assert!(e.contains("non-map"), "{e}");
    let writes = [
        "INSERT INTO {t} (k, c, l, s, m) VALUES (1, 1, [1, 2], {'a', 'b'}, {'x': 1, 'y': 2})",
        "INSERT INTO {t} (k, c, l, s, m) VALUES (1, 2, [2, 3], {'b'}, {'y': 3})",
        "INSERT INTO {t} (k, c, l, s, m) VALUES (2, 1, [3], {'c'}, {'x': 2})",
        "UPDATE {t} SET l = l + [4], s = s + {'d'}, m['z'] = 4 WHERE k = 2 AND c = 1",
        "UPDATE {t} SET l = l - [2], s = s - {'b'} WHERE k = 1 AND c = 1",
        "DELETE m['y'] FROM {t} WHERE k = 1 AND c = 2",
        "UPDATE {t} SET l = [9], m = {'w': 9} WHERE k = 1 AND c = 2",
        "INSERT INTO {t} (k, c, l, s, m) VALUES (3, 1, [1], {'a'}, {'x': 1}) USING TTL 1000",
        "DELETE FROM {t} WHERE k = 3",
    ];
    let queries = [
        "l CONTAINS 1",
        "l CONTAINS 2",
        "l CONTAINS 4",
        "l CONTAINS 9",
        "s CONTAINS 'a'",
        "s CONTAINS 'b'",
        "s CONTAINS 'd'",
        "m CONTAINS 1",
        "m CONTAINS 3",
        "m CONTAINS 9",
        "m CONTAINS KEY 'x'",
        "m CONTAINS KEY 'y'",
        "m CONTAINS KEY 'z'",
        "l CONTAINS 3 AND k = 2",
        // Through the index of entries: the key and the value together.
        "m['x'] = 1",
        "m['x'] = 2",
        "m['y'] = 3",
        "m['z'] = 4",
        "m['w'] = 9",
        "m['y'] = 2 AND k = 1",
    ];
    for (i, w) in writes.iter().enumerate() {
        for t in ["ix", "raw"] {
            cql.execute(&w.replace("{t}", t)).unwrap();
        }
        if i == 4 {
            db.flush("ks", None).unwrap();
        }
        for q in queries {
            let indexed = shown(&mut cql, &format!("SELECT k, c FROM ix WHERE {q}"));
            let filtered = shown(
                &mut cql,
                &format!("SELECT k, c FROM raw WHERE {q} ALLOW FILTERING"),
            );
            assert_eq!(indexed, filtered, "after {w}: {q}");
            assert_eq!(
                paged(&mut cql, &format!("SELECT k, c FROM ix WHERE {q}"), 1),
                filtered,
                "after {w}: {q} paged"
            );
        }
    }
    let rows = shown(
        &mut cql,
        "SELECT index_name, options FROM system_schema.indexes WHERE keyspace_name = 'ks'",
    );
    assert_eq!(
        rows,
        vec![
            "ix_l_idx|{'target': 'values(l)'}",
            "ix_m_idx|{'target': 'values(m)'}",
            "ix_s_idx|{'target': 'values(s)'}",
            "me|{'target': 'entries(m)'}",
            "mk|{'target': 'keys(m)'}",
        ]
    );
}

#[test]
fn a_static_column_index_answers_as_filtering_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE ix (k int, c int, s text static, v int, PRIMARY KEY (k, c));
         CREATE TABLE raw (k int, c int, s text static, v int, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    cql.execute("CREATE INDEX ON ix (s)").unwrap();
    let writes = [
        "INSERT INTO {t} (k, c, s, v) VALUES (1, 1, 'a', 1)",
        "INSERT INTO {t} (k, c, v) VALUES (1, 2, 2)",
        "INSERT INTO {t} (k, c, s, v) VALUES (2, 1, 'a', 1)",
        "INSERT INTO {t} (k, s) VALUES (3, 'a')",
        "INSERT INTO {t} (k, c, s, v) VALUES (4, 1, 'b', 3)",
        "UPDATE {t} SET s = 'b' WHERE k = 2",
        "DELETE s FROM {t} WHERE k = 4",
        "UPDATE {t} SET s = 'a' WHERE k = 4",
        "DELETE FROM {t} WHERE k = 1 AND c = 1",
        "DELETE FROM {t} WHERE k = 3",
    ];
    let queries = [
        "s = 'a'",
        "s = 'b'",
        "s = 'a' AND c >= 2 ALLOW FILTERING",
        "s = 'a' AND v = 3 ALLOW FILTERING",
    ];
    for (i, w) in writes.iter().enumerate() {
        for t in ["ix", "raw"] {
            cql.execute(&w.replace("{t}", t)).unwrap();
        }
        if i == 5 {
            db.flush("ks", None).unwrap();
        }
        for q in queries {
            let filtered = shown(
                &mut cql,
                &format!(
                    "SELECT k, c, s, v FROM raw WHERE {} ALLOW FILTERING",
                    q.trim_end_matches(" ALLOW FILTERING")
                ),
            );
            let q = format!("SELECT k, c, s, v FROM ix WHERE {q}");
            assert_eq!(shown(&mut cql, &q), filtered, "after {w}: {q}");
            for size in [1, 2] {
                assert_eq!(
                    paged(&mut cql, &q, size),
                    filtered,
                    "after {w}: {q} by {size}"
                );
            }
        }
    }
}

#[test]
fn indexes_of_key_columns_answer_as_filtering_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE ix (k1 int, k2 int, c1 int, c2 text, v int, PRIMARY KEY ((k1, k2), c1, c2));
         CREATE TABLE raw (k1 int, k2 int, c1 int, c2 text, v int, PRIMARY KEY ((k1, k2), c1, c2))",
    );
    let mut cql = ks_session(&db);
    cql.execute("CREATE INDEX ON ix (c2)").unwrap();
    cql.execute("CREATE INDEX ON ix (k2)").unwrap();
    cql.execute("CREATE INDEX ON ix (c1)").unwrap();
    let e = refused(&mut cql, "CREATE INDEX ON ix (keys(c1))");
    assert!(e.contains("only support simple indexes"), "{e}");
    let mut writes: Vec<String> = Vec::new();
    for n in 0..24 {
        writes.push(format!(
            "INSERT INTO {{t}} (k1, k2, c1, c2, v) VALUES ({}, {}, {}, '{}', {n})",
            n % 2,
            n % 3,
            n % 4,
            ["a", "b"][(n % 2) ^ (n / 5 % 2)]
        ));
    }
    writes.push("UPDATE {t} SET v = 99 WHERE k1 = 5 AND k2 = 5 AND c1 = 5 AND c2 = 'a'".into());
    writes.push("DELETE FROM {t} WHERE k1 = 0 AND k2 = 0".into());
    writes.push("DELETE FROM {t} WHERE k1 = 1 AND k2 = 1 AND c1 = 1 AND c2 = 'b'".into());
    writes.push("DELETE v FROM {t} WHERE k1 = 1 AND k2 = 2 AND c1 = 1 AND c2 = 'a'".into());
    for w in &writes {
        for t in ["ix", "raw"] {
            cql.execute(&w.replace("{t}", t)).unwrap();
        }
    }
    db.flush("ks", None).unwrap();
    let queries = [
        "c2 = 'a'",
        "c2 = 'b' AND c1 > 1 ALLOW FILTERING",
        "k2 = 2",
        "k2 = 1 AND c2 = 'a' ALLOW FILTERING",
        "c1 = 3",
        "c1 = 1 AND k1 = 1 ALLOW FILTERING",
        "c2 = 'a' AND v > 5 ALLOW FILTERING",
        "k2 = 5",
    ];
    for q in queries {
        let filtered = shown(
            &mut cql,
            &format!(
                "SELECT k1, k2, c1, c2, v FROM raw WHERE {} ALLOW FILTERING",
                q.trim_end_matches(" ALLOW FILTERING")
            ),
        );
        let q = format!("SELECT k1, k2, c1, c2, v FROM ix WHERE {q}");
        assert_eq!(shown(&mut cql, &q), filtered, "{q}");
        assert_eq!(paged(&mut cql, &q, 2), filtered, "{q} paged");
    }
    // Cassandra filters with every restriction beside the indexed one that does not narrow
    // the read (a partition key named in part, a clustering column without the whole
    // partition key): no one index serves both, so each needs ALLOW FILTERING.
    for q in [
        "c2 = 'a' AND v = 1",
        "c2 = 'b' AND c1 > 1",
        "k2 = 1 AND c2 = 'a'",
        "c1 = 1 AND k1 = 1",
    ] {
        let e = refused(&mut cql, &format!("SELECT * FROM ix WHERE {q}"));
        assert!(e.contains("ALLOW FILTERING"), "{q}: {e}");
    }
}
