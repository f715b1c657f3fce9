//! CQL's `tuple<…>` as Cassandra defines it: always frozen, written whole from a literal
//! (`(1, 'a', null)`, fewer elements than the type's leaving the rest null, more refused) or a
//! bound value, read back whole, in a list or as a map's value too; shown as Cassandra shows it
//! (`frozen<tuple<int, text>>` in `DESCRIBE` and `system_schema`); and, ordered as Cassandra
//! orders tuples (element by element, a null first, a shorter tuple first), a partition key,
//! a clustering column in either order and with ranges, a set's element and a map's key.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused, shown};

const SCHEMA: &str = "CREATE TABLE t (k int PRIMARY KEY, p tuple<int, text, boolean>, \
                      l list<frozen<tuple<int, text>>>, m map<text, tuple<double, date>>)";

#[test]
fn a_tuple_is_written_whole_and_read_back_as_cassandra_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    cql.execute(
        "INSERT INTO t (k, p, l, m) VALUES (1, (7, 'it''s', true), [(1, 'a'), (2, null)], \
         {'x': (1.5, '2024-02-29')}); \
         INSERT INTO t (k, p) VALUES (2, (3))",
    )
    .unwrap();
    db.flush_all().unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT p, l, m FROM t WHERE k = 1"),
        ["(7, 'it''s', True)|[(1, 'a'), (2, null)]|{'x': (1.5, 2024-02-29)}"]
    );
    // Fewer elements than the type's: the rest are null.
    assert_eq!(
        shown(&mut cql, "SELECT p FROM t WHERE k = 2"),
        ["(3, null, null)"]
    );
    cql.execute("UPDATE t SET p = (8, 'b', false), l = l + [(3, 'c')] WHERE k = 2")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT p, l FROM t WHERE k = 2"),
        ["(8, 'b', False)|[(3, 'c')]"]
    );
    // Bound: the serialized tuple, checked.
    let p = cql.prepare("UPDATE t SET p = ? WHERE k = ?").unwrap();
    let mut v = Vec::new();
    v.extend_from_slice(&4i32.to_be_bytes());
    v.extend_from_slice(&9i32.to_be_bytes());
    let k = 3i32.to_be_bytes();
    cql.execute_prepared(&p, &[Some(&v), Some(&k)]).unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT p FROM t WHERE k = 3"),
        ["(9, null, null)"]
    );
    let bad = [0u8, 0, 0, 2, 0, 1];
    assert!(cql.execute_prepared(&p, &[Some(&bad), Some(&k)]).is_err());
    let described = shown(&mut cql, "DESCRIBE TABLE t").join("");
    assert!(
        described.contains("p frozen<tuple<int, text, boolean>>"),
        "{described}"
    );
}

#[test]
fn what_a_tuple_cannot_be_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    let m = refused(
        &mut cql,
        "INSERT INTO t (k, p) VALUES (1, (1, 'a', true, 4))",
    );
    assert_eq!(
        m,
        "Invalid tuple literal for p: too many elements. Type frozen<tuple<int, text, boolean>> expects 3 but got 4"
    );
    let m = refused(
        &mut cql,
        "CREATE TABLE n (k int PRIMARY KEY, t tuple<int, list<int>>)",
    );
    assert_eq!(
        m,
        "Non-frozen collections are not allowed inside tuples: frozen<tuple<int, list<int>>>"
    );
    refused(&mut cql, "INSERT INTO t (k, p) VALUES (1, ('x'))");
}

#[test]
fn a_tuple_is_a_key_a_clustering_column_and_a_set_element_in_cassandras_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE k (p frozen<tuple<text, int>>, c tuple<int, text>, v int, \
         s set<frozen<tuple<int, int>>>, PRIMARY KEY (p, c)) WITH CLUSTERING ORDER BY (c DESC)",
    );
    let mut cql = ks_session(&db);
    for (c, v) in ["(1, 'b')", "(1, 'a')", "(2, null)", "(1, null)", "(0, 'z')"]
        .iter()
        .zip(1..)
    {
        cql.execute(&format!(
            "INSERT INTO k (p, c, v, s) VALUES (('x', 1), {c}, {v}, {{(2, 1), (1, 9), (1, 2)}})"
        ))
        .unwrap();
    }
    db.flush_all().unwrap();
    // Descending: (2, null), (1, 'b'), (1, 'a'), (1, null), (0, 'z').
    assert_eq!(
        shown(&mut cql, "SELECT c, v FROM k WHERE p = ('x', 1)"),
        [
            "(2, null)|3",
            "(1, 'b')|1",
            "(1, 'a')|2",
            "(1, null)|4",
            "(0, 'z')|5"
        ]
    );
    assert_eq!(
        shown(
            &mut cql,
            "SELECT v FROM k WHERE p = ('x', 1) AND c >= (1, 'a') AND c < (2, null)"
        ),
        ["1", "2"]
    );
    assert_eq!(
        shown(
            &mut cql,
            "SELECT s FROM k WHERE p = ('x', 1) AND c = (0, 'z')"
        ),
        ["{(1, 2), (1, 9), (2, 1)}"]
    );
    assert!(shown(&mut cql, "SELECT v FROM k WHERE p = ('x', 2)").is_empty());
}

#[test]
fn the_string_form_of_a_tuple_and_wrong_components_as_cassandra_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE s (k int, c int, t frozen<tuple<int, text>>, PRIMARY KEY (k, c));
         CREATE TABLE n (k int PRIMARY KEY, t frozen<tuple<int, tuple<int, text, double>>>,
             v tuple<int, int>)",
    );
    let mut cql = ks_session(&db);
    // `:` between fields, `\:` a colon inside one, `@` a null (Cassandra's `fromString`).
    for (c, text) in [(0, "0:0"), (1, "1"), (2, "1:1\\:1"), (3, "@:1")] {
        cql.execute(&format!(
            "INSERT INTO s (k, c, t) VALUES (0, {c}, '{text}')"
        ))
        .unwrap();
    }
    assert_eq!(
        shown(&mut cql, "SELECT t FROM s WHERE k = 0"),
        ["(0, '0')", "(1, null)", "(1, '1:1')", "(null, '1')"]
    );
    for (q, words) in [
        (
            "INSERT INTO s (k, c, t) VALUES (1, 0, '1:2:3')",
            "Invalid tuple literal: too many elements. Type frozen<tuple<int, text>> expects 2 \
             but got 3",
        ),
        (
            "INSERT INTO n (k, t) VALUES (0, (1, (1, '1', 1.0, 1)))",
            "Invalid tuple literal for t: component 1 is not of type \
             frozen<tuple<int, text, double>>",
        ),
        (
            "INSERT INTO n (k, t) VALUES (0, ('a', (1, '1', 1.0)))",
            "Invalid tuple literal for t: component 0 is not of type int",
        ),
        (
            "UPDATE n SET v += (1, 1) WHERE k = 0",
            "Invalid operation (v = v + (1, 1)) for tuple column v",
        ),
    ] {
        assert_eq!(refused(&mut cql, q), words, "{q}");
    }
}
