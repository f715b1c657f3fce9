//! Statements Cassandra refuses are refused here too, with Cassandra's words where it has
//! them, instead of being accepted and answered some other way.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused};
use supercolumn_cql::CqlError;

#[test]
fn what_cassandra_refuses_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c int, v int, l list<int>, fl frozen<list<int>>, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    for (q, says) in [
        (
            "INSERT INTO t (k, c, fl) VALUES (0, 0, ['a'])",
            "Invalid list literal for fl: value 'a' is not of type int",
        ),
        (
            "ALTER TABLE t DROP COMPACT STORAGE",
            "DROP COMPACT STORAGE is disabled. Enable in cassandra.yaml to use.",
        ),
        (
            "CREATE TABLE ct (k int PRIMARY KEY, v int) WITH COMPACT STORAGE",
            "Compact tables are not allowed in Cassandra starting with 4.0 version.",
        ),
        (
            "SELECT * FROM t ORDER BY c DESC",
            "ORDER BY is only supported when the partition key is restricted by an EQ or an IN.",
        ),
        (
            "SELECT count(*) FROM t PER PARTITION LIMIT 1",
            "PER PARTITION LIMIT is not allowed with aggregate queries.",
        ),
        (
            "SELECT DISTINCT k FROM t PER PARTITION LIMIT 1",
            "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries",
        ),
        (
            "SELECT DISTINCT k FROM t WHERE c >= 8 ALLOW FILTERING",
            "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.",
        ),
        (
            "SELECT DISTINCT k FROM t WHERE k IN (1, 2) AND v = 10 ALLOW FILTERING",
            "SELECT DISTINCT with WHERE clause only supports restriction by partition key and/or static columns.",
        ),
        (
            "SELECT ttl(l[0]) FROM t WHERE k = 1",
            "Element selection is only allowed on sets and maps, but l is a list",
        ),
        (
            "SELECT writetime(c) FROM t WHERE k = 1",
            "Cannot use selection function writeTime on PRIMARY KEY part c",
        ),
        (
            "INSERT INTO t (k, c, v) VALUES (1, 1, 1) USING TIMESTAMP -9223372036854775808",
            "Out of bound timestamp, must be in [-9223372036854775807, 9223372036854775807]",
        ),
    ] {
        let e = cql.execute(q).unwrap_err();
        assert!(matches!(e, CqlError::Invalid(_)), "{q}: {e:?}");
        assert!(e.to_string().contains(says), "{q}: {e}");
        // Prepared, the same refusal.
        if q.starts_with("SELECT") {
            let e = cql.prepare(q).unwrap_err();
            assert!(e.to_string().contains(says), "PREPARE {q}: {e}");
        }
    }
    // A null where a value is compared: refused when it runs, as Cassandra refuses it.
    for (q, says) in [
        (
            "SELECT * FROM t WHERE v = null ALLOW FILTERING",
            "Unsupported null value for column v",
        ),
        (
            "SELECT * FROM t WHERE k = null",
            "Invalid null value for partition key part k",
        ),
        (
            "SELECT * FROM t WHERE k = 0 AND c = null",
            "Invalid null value for clustering key part c",
        ),
    ] {
        let e = cql.execute(q).unwrap_err();
        assert_eq!(e.to_string(), format!("InvalidRequest: {says}"), "{q}");
    }
    // A frozen collection is one cell: it has a write time.
    cql.execute("SELECT writetime(fl) FROM t WHERE k = 1")
        .unwrap();
    for q in [
        "CREATE KEYSPACE WITH WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE select (k int PRIMARY KEY)",
        "CREATE TABLE x (from int PRIMARY KEY)",
        "CREATE TABLE _x (k int PRIMARY KEY)",
        "SELECT _k FROM t",
    ] {
        let e = cql.execute(q).unwrap_err();
        assert!(matches!(e, CqlError::Syntax { .. }), "{q}: {e:?}");
    }
    assert!(!db.keyspaces().contains(&"with".to_string()));
    // Cassandra 4 creates no compact table, in these words.
    let e = cql
        .execute("CREATE TABLE c (k int PRIMARY KEY, v int) WITH COMPACT STORAGE")
        .unwrap_err();
    assert!(
        matches!(&e, CqlError::Invalid(m)
            if m == "Compact tables are not allowed in Cassandra starting with 4.0 version."),
        "{e:?}"
    );
    // Quoted, reserved words and leading underscores are names.
    cql.execute("CREATE TABLE \"select\" (\"from\" int PRIMARY KEY, \"_v\" int)")
        .unwrap();
    cql.execute("INSERT INTO \"select\" (\"from\", \"_v\") VALUES (1, 2)")
        .unwrap();
}

#[test]
fn counter_columns_only_where_cassandra_allows_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), "CREATE TABLE plain (k int PRIMARY KEY, v int)");
    let mut cql = ks_session(&db);
    // Counters are the regular columns of a table of counters only, never in keys or
    // collections (counters.rs has the writes).
    for q in [
        "CREATE TABLE c (k int PRIMARY KEY, n counter, v int)",
        "CREATE TABLE c (k counter PRIMARY KEY, v int)",
        "CREATE TABLE c (k int PRIMARY KEY, l list<counter>)",
    ] {
        let e = cql.execute(q).unwrap_err();
        assert!(matches!(e, CqlError::Invalid(_)), "{q}: {e:?}");
        assert!(e.to_string().contains("counter"), "{q}: {e}");
    }
}

#[test]
fn messages_say_what_cassandra_says() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    for (q, says) in [
        ("USE ?", "Bind variables cannot be used for keyspace names"),
        (
            "SELECT * FROM ?.t",
            "Bind variables cannot be used for keyspace names",
        ),
        (
            "SELECT * FROM ks.?",
            "Bind variables cannot be used for table names",
        ),
        (
            "SELECT * FROM :t",
            "Bind variables cannot be used for table names",
        ),
        (
            "INSERT INTO t (k, c, v, v) VALUES (1, 1, 1, 2)",
            "The column names contains duplicates",
        ),
        (
            "CREATE MATERIALIZED VIEW mv AS SELECT * FROM t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k)",
            "Materialized views are disabled. Enable in cassandra.yaml to use.",
        ),
        (
            "CREATE CUSTOM INDEX ON t (v) USING 'org.apache.cassandra.index.sasi.SASIIndex'",
            "SASI indexes are disabled. Enable in cassandra.yaml to use.",
        ),
        (
            "INSERT INTO t (c, v) VALUES (1, 1)",
            "Some partition key parts are missing: k",
        ),
        (
            "INSERT INTO t (k, v) VALUES (1, 1)",
            "Some clustering keys are missing: c",
        ),
        (
            "INSERT INTO t (k, c, v) VALUES (null, 1, 1)",
            "Invalid null value for partition key part k",
        ),
        (
            "INSERT INTO t (k, c, v) VALUES (1, null, 1)",
            "Invalid null value for clustering key part c",
        ),
        (
            "INSERT INTO t (k, c, v) VALUES (1, 1, 1) USING TTL -5",
            "A TTL must be greater or equal to 0, but was -5",
        ),
        (
            "UPDATE t USING TTL 630720001 SET v = 1 WHERE k = 1 AND c = 1",
            "ttl is too large. requested (630720001) maximum (630720000)",
        ),
        (
            "SELECT * FROM t WHERE k = 1 PER PARTITION LIMIT 0",
            "PER PARTITION LIMIT must be strictly positive",
        ),
        (
            "UPDATE t SET v = 1 WHERE k = 1 AND c = 1 IF v > null",
            "Invalid comparison with null for operator \">\"",
        ),
    ] {
        let e = match cql.prepare(q) {
            Err(e) => e,
            Ok(p) => cql.execute_prepared(&p, &[]).unwrap_err(),
        };
        assert!(e.to_string().contains(says), "{q}: {e}");
    }
}

#[test]
fn a_clustering_value_or_element_of_65535_bytes_is_taken_as_cassandra_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE w (k int, c text, v int, s set<text>, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    let long = "x".repeat(65_535);
    // Before: the whole cell name (the value, its framing and the column name) passed the
    // engine's 65,535-byte name limit and was refused.
    cql.execute(&format!(
        "INSERT INTO w (k, c, v, s) VALUES (1, '{long}', 7, {{'{long}'}})"
    ))
    .unwrap();
    db.flush_all().unwrap();
    let got = cql
        .query(&format!("SELECT v FROM w WHERE k = 1 AND c = '{long}'"))
        .unwrap();
    assert_eq!(got.row(0).get(0), Some(&7i32.to_be_bytes()[..]));
    let all = cql.query("SELECT c, s FROM w WHERE k = 1").unwrap();
    assert_eq!(all.row(0).get(0).map(<[u8]>::len), Some(65_535));
    // One byte more is refused, as Cassandra refuses it.
    let longer = "x".repeat(65_536);
    let e = cql
        .execute(&format!(
            "INSERT INTO w (k, c, v) VALUES (1, '{longer}', 7)"
        ))
        .unwrap_err();
    assert!(matches!(e, CqlError::Invalid(_)), "{e:?}");
    // A read names no row by it: no rows, as Cassandra answers.
    for q in [
        format!("SELECT v FROM w WHERE k = 1 AND c = '{longer}'"),
        format!("SELECT c FROM w WHERE k = 1 AND c IN ('{longer}', 'y')"),
    ] {
        assert_eq!(cql.query(&q).unwrap().len(), 0, "{}", &q[..60]);
    }
}

#[test]
fn order_by_follows_cassandras_rules() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE ob (k int, a int, b int, c int, v int, PRIMARY KEY (k, a, b, c))",
    );
    let mut cql = ks_session(&db);
    for (a, b, v) in [(1, 1, 1), (1, 2, 2), (1, 3, 3), (2, 1, 4)] {
        cql.execute(&format!(
            "INSERT INTO ob (k, a, b, c, v) VALUES (0, {a}, {b}, 1, {v})"
        ))
        .unwrap();
    }
    let shown = |cql: &mut supercolumn_cql::Session<'_>, q: &str| -> Vec<String> {
        let Some(supercolumn_cql::CqlResult::Rows(r)) = cql.execute(q).unwrap().pop() else {
            panic!("{q}: no rows");
        };
        r.displayed().into_iter().map(|row| row.join("|")).collect()
    };
    // A column fixed by `=` may be left out of ORDER BY (Cassandra's rule).
    for q in [
        "SELECT v FROM ob WHERE k = 0 AND a = 1 ORDER BY b DESC",
        "SELECT v FROM ob WHERE k = 0 AND a = 1 ORDER BY b DESC, c DESC",
        "SELECT v FROM ob WHERE k IN (0, 1) AND a = 1 ORDER BY b DESC",
    ] {
        assert_eq!(shown(&mut cql, q), ["3", "2", "1"], "{q}");
    }
    for (q, says) in [
        (
            "SELECT v FROM ob WHERE k = 0 ORDER BY b DESC",
            "Order by currently only supports the ordering of columns following their declared \
             order in the PRIMARY KEY",
        ),
        (
            "SELECT v FROM ob WHERE k = 0 ORDER BY v",
            "Order by is currently only supported on the clustered columns of the PRIMARY KEY, \
             got v",
        ),
        (
            "SELECT v FROM ob WHERE k = 0 ORDER BY a DESC, b ASC",
            "Unsupported order by relation",
        ),
        (
            "SELECT v FROM ob WHERE k = 0 ORDER BY nope",
            "Undefined column name nope in table ks.ob",
        ),
    ] {
        let e = cql.execute(q).unwrap_err();
        assert_eq!(e.to_string(), format!("InvalidRequest: {says}"), "{q}");
    }
}

#[test]
fn a_column_restricted_twice_is_refused_in_cassandras_words() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE rt (a text, b int, c int, d int, s set<int>, PRIMARY KEY ((a, b), c, d));
         CREATE TABLE rd (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1, c2))",
    );
    let mut cql = ks_session(&db);
    let key = "a = 'x' AND b = 1";
    for (q, says) in [
        (
            format!("SELECT * FROM rt WHERE {key} AND c > 6 AND c = 7"),
            "Column \"c\" cannot be restricted by both an equality and an inequality relation",
        ),
        (
            format!("SELECT * FROM rt WHERE {key} AND c = 6 AND c > 7"),
            "c cannot be restricted by more than one relation if it includes an Equal",
        ),
        (
            format!("SELECT * FROM rt WHERE {key} AND c > 6 AND c > 3"),
            "More than one restriction was found for the start bound on c",
        ),
        (
            format!("SELECT * FROM rt WHERE {key} AND c < 6 AND c <= 3"),
            "More than one restriction was found for the end bound on c",
        ),
        (
            "SELECT * FROM rt WHERE a = 'x' AND b IN (2, 2) AND b = 3".to_string(),
            "b cannot be restricted by more than one relation if it includes a IN",
        ),
        (
            "SELECT * FROM rt WHERE a = 'x' AND b = 2 AND b IN (2, 3)".to_string(),
            "b cannot be restricted by more than one relation if it includes an Equal",
        ),
        (
            format!("SELECT * FROM rt WHERE {key} AND c = 0 AND s IN ({{0}})"),
            "Collection column 's' (set<int>) cannot be restricted by a 'IN' relation",
        ),
        (
            format!("SELECT * FROM rt WHERE {key} AND d = 1"),
            "PRIMARY KEY column \"d\" cannot be restricted as preceding column \"c\" is not \
             restricted",
        ),
        (
            format!("SELECT * FROM rt WHERE {key} AND c > 1 AND d = 1"),
            "Clustering column \"d\" cannot be restricted (preceding column \"c\" is restricted \
             by a non-EQ relation)",
        ),
        (
            format!("SELECT * FROM rt WHERE {key} AND c IN (1, null)"),
            "Invalid null value in condition for column c",
        ),
        (
            "DELETE FROM rd WHERE k = 0 AND c2 = 1".to_string(),
            "PRIMARY KEY column \"c2\" cannot be restricted as preceding column \"c1\" is not \
             restricted",
        ),
    ] {
        assert_eq!(refused(&mut cql, &q), says, "{q}");
    }
}
