//! Cassandra 5's vectors in primary keys and restrictions, as its `CQLVectorTest` exercises
//! them: a vector partition key read by `=`, `IN`, `token()` (also of values, `token([1, 2])`)
//! and (filtering) a range; a vector
//! clustering column ordered element by element, each by its own type, in either order; sets
//! and map keys of vectors; `=` on a vector column with `ALLOW FILTERING`; elements written as
//! operations, type hints and bind markers (`[1, 1 + (int) ?]`), each marker named and typed as
//! Cassandra names it (`value(v)`).

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused, shown};
use supercolumn::{Database, Options};
use supercolumn_cql::{CqlResult, CqlType};

const SCHEMA: &str = "CREATE TABLE p (pk vector<int, 2> PRIMARY KEY);
     CREATE TABLE c (k int, c vector<text, 2>, v int, PRIMARY KEY (k, c));
     CREATE TABLE d (k int, c vector<float, 2>, v int, PRIMARY KEY (k, c))
         WITH CLUSTERING ORDER BY (c DESC);
     CREATE TABLE n (pk int PRIMARY KEY, value vector<int, 2>)";

#[test]
fn a_vector_partition_key_is_written_and_read_as_cassandra_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open_cql(dir.path(), SCHEMA);
        let mut cql = ks_session(&db);
        cql.execute("INSERT INTO p (pk) VALUES ([1, 1 + 1])")
            .unwrap();
        cql.execute("INSERT INTO p (pk) VALUES ([-3, 4])").unwrap();
        db.flush_all().unwrap();
    }
    // Reopened: the stored key type (`VectorType(Int32Type, 2)`) is read back.
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut cql = ks_session(&db);
    for q in [
        "SELECT * FROM p WHERE pk = [1, 2]",
        "SELECT * FROM p WHERE pk = [1, (int) 2]",
        "SELECT * FROM p WHERE pk IN ([1, 2], [1, 2])",
        "SELECT * FROM p WHERE pk > [0, 0] AND pk < [1, 3] ALLOW FILTERING",
        "SELECT * FROM p WHERE token(pk) = token([1, 2])",
    ] {
        assert_eq!(shown(&mut cql, q), ["[1, 2]"], "{q}");
    }
    // `token()` of values is the token of the key they make.
    let tokens = shown(
        &mut cql,
        "SELECT token(pk), token([1, 2]) FROM p WHERE pk = [1, 2]",
    );
    let (column, values) = tokens[0].split_once('|').unwrap();
    assert_eq!(column, values);
    assert_eq!(
        shown(
            &mut cql,
            "SELECT * FROM p WHERE pk <= [-3, 4] ALLOW FILTERING"
        ),
        ["[-3, 4]"]
    );
    assert_eq!(
        refused(&mut cql, "SELECT * FROM p WHERE pk > [0, 0]"),
        "Cannot execute this query as it might involve data filtering and thus may have \
         unpredictable performance. If you want to execute this query despite the performance \
         unpredictability, use ALLOW FILTERING"
    );
    let p = cql.prepare("SELECT * FROM p WHERE pk = ?").unwrap();
    let key: Vec<u8> = [1i32, 2].iter().flat_map(|i| i.to_be_bytes()).collect();
    let CqlResult::Rows(rows) = cql.execute_prepared(&p, &[Some(&key)]).unwrap() else {
        panic!("a SELECT returned no rows");
    };
    assert_eq!(rows.len(), 1);
}

#[test]
fn a_vector_clustering_column_orders_element_by_element() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    for (c, v) in [("['b', 'a']", 1), ("['a', 'zz']", 2), ("['ab', '']", 3)] {
        cql.execute(&format!("INSERT INTO c (k, c, v) VALUES (0, {c}, {v})"))
            .unwrap();
    }
    cql.execute("INSERT INTO d (k, c, v) VALUES (0, [1.5, -2], 1)")
        .unwrap();
    cql.execute("INSERT INTO d (k, c, v) VALUES (0, [-1.5, 2], 2)")
        .unwrap();
    db.flush_all().unwrap();
    cql.execute("INSERT INTO d (k, c, v) VALUES (0, [1.5, -3], 3)")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT c, v FROM c WHERE k = 0"),
        ["['a', 'zz']|2", "['ab', '']|3", "['b', 'a']|1"]
    );
    assert_eq!(
        shown(&mut cql, "SELECT v FROM c WHERE k = 0 AND c > ['a', 'zz']"),
        ["3", "1"]
    );
    assert_eq!(
        shown(&mut cql, "SELECT c FROM d WHERE k = 0"),
        ["[1.5, -2]", "[1.5, -3]", "[-1.5, 2]"]
    );
    let described = shown(&mut cql, "DESCRIBE TABLE d").join("");
    assert!(
        described.contains("WITH CLUSTERING ORDER BY (c DESC)"),
        "{described}"
    );
}

#[test]
fn vectors_stand_in_sets_map_keys_and_equality_filters() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    cql.execute(
        "CREATE TABLE s (k int PRIMARY KEY, s set<vector<int, 2>>, m map<vector<int, 2>, int>)",
    )
    .unwrap();
    cql.execute("INSERT INTO s (k, s, m) VALUES (0, {[3, 4], [1, 2]}, {[5, 6]: 1, [0, 0]: 2})")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT s, m FROM s"),
        ["{[1, 2], [3, 4]}|{[0, 0]: 2, [5, 6]: 1}"]
    );
    cql.execute("INSERT INTO n (pk, value) VALUES (0, [1, 2])")
        .unwrap();
    cql.execute("INSERT INTO n (pk, value) VALUES (1, [2, 1])")
        .unwrap();
    assert_eq!(
        shown(
            &mut cql,
            "SELECT * FROM n WHERE value = [1, 2] ALLOW FILTERING"
        ),
        ["0|[1, 2]"]
    );
    // An ANN index is not built here: refused rather than made an equality index.
    refused(
        &mut cql,
        "CREATE CUSTOM INDEX ON n (value) USING 'StorageAttachedIndex'",
    );
}

#[test]
fn elements_may_be_operations_hints_and_markers() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    let two = 2i32.to_be_bytes();
    let one = 1i32.to_be_bytes();
    for (q, bound) in [
        ("INSERT INTO n (pk, value) VALUES (0, [1, 1 + 1])", None),
        ("INSERT INTO n (pk, value) VALUES (0, [1, ?])", Some(&two)),
        (
            "INSERT INTO n (pk, value) VALUES (0, [1, (int) ?])",
            Some(&two),
        ),
        (
            "INSERT INTO n (pk, value) VALUES (0, [1, 1 + (int) ?])",
            Some(&one),
        ),
        ("UPDATE n SET value = [1, ?] WHERE pk = 0", Some(&two)),
    ] {
        cql.execute("TRUNCATE n").unwrap();
        let p = cql.prepare(q).unwrap();
        let values: Vec<Option<&[u8]>> = bound.iter().map(|b| Some(&b[..])).collect();
        cql.execute_prepared(&p, &values).unwrap();
        assert_eq!(shown(&mut cql, "SELECT * FROM n"), ["0|[1, 2]"], "{q}");
    }
    let p = cql
        .prepare("INSERT INTO n (pk, value) VALUES (0, [?, (int) ?])")
        .unwrap();
    assert_eq!(
        p.bind_columns(),
        [
            ("value(value)".to_string(), CqlType::Int),
            ("(int)?".to_string(), CqlType::Int)
        ]
    );
    let p = cql.prepare("SELECT * FROM p WHERE pk IN ([1, ?])").unwrap();
    assert_eq!(p.bind_columns(), [("value(pk)".to_string(), CqlType::Int)]);
    cql.execute("CREATE TABLE t (k int PRIMARY KEY, t tuple<int, text>, m map<text, int>)")
        .unwrap();
    let p = cql
        .prepare("INSERT INTO t (k, t, m) VALUES (0, (?, ?), {?: ?})")
        .unwrap();
    assert_eq!(
        p.bind_columns(),
        [
            ("t[0]".to_string(), CqlType::Int),
            ("t[1]".to_string(), CqlType::Text),
            ("key(m)".to_string(), CqlType::Text),
            ("value(m)".to_string(), CqlType::Int)
        ]
    );
}

#[test]
fn a_range_on_a_partition_key_filters_and_a_write_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE r (a int, b int, c int, v int, PRIMARY KEY ((a, b), c))",
    );
    let mut cql = ks_session(&db);
    for (a, b, v) in [(1, 1, 1), (1, 2, 2), (2, 2, 3), (3, 1, 4)] {
        cql.execute(&format!(
            "INSERT INTO r (a, b, c, v) VALUES ({a}, {b}, 0, {v})"
        ))
        .unwrap();
    }
    let mut sorted = |q: &str| {
        let mut rows = shown(&mut cql, q);
        rows.sort();
        rows
    };
    assert_eq!(
        sorted("SELECT v FROM r WHERE a > 1 ALLOW FILTERING"),
        ["3", "4"]
    );
    assert_eq!(
        sorted("SELECT v FROM r WHERE a = 1 AND b >= 2 ALLOW FILTERING"),
        ["2"]
    );
    assert_eq!(
        sorted("SELECT count(*) FROM r WHERE a >= 1 AND a <= 2 ALLOW FILTERING"),
        ["3"]
    );
    assert_eq!(
        refused(
            &mut cql,
            "SELECT v FROM r WHERE a = 1 AND a > 0 ALLOW FILTERING"
        ),
        "a cannot be restricted by more than one relation if it includes an Equal"
    );
    for (q, kind) in [
        (
            "UPDATE r SET v = 0 WHERE a > 0 AND b = 1 AND c = 0",
            "UPDATE",
        ),
        ("DELETE FROM r WHERE a > 0 AND b = 1", "DELETE"),
    ] {
        assert_eq!(
            refused(&mut cql, q),
            format!(
                "Only EQ and IN relation are supported on the partition key (unless you use \
                 the token() function) for {kind} statements"
            ),
            "{q}"
        );
    }
}
