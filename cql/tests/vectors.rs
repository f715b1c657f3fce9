//! Cassandra 5's `vector<T, n>`: one cell holding the `n` elements as Cassandra serializes them
//! (a fixed-size type's bytes one after another, a variable-size type's each after its length),
//! written from a list literal or a bound value whose element count and sizes are checked, read
//! back and shown as Cassandra shows it. Not yet: vectors of collections or tuples, vectors in
//! keys, and the similarity functions (they need the query issue's function calls); each is
//! refused.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused, shown};

const SCHEMA: &str = "CREATE TABLE v (k int PRIMARY KEY, e vector<float, 3>, \
                      ids vector<bigint, 2>, words vector<text, 2>)";

#[test]
fn a_vector_is_written_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    cql.execute(
        "INSERT INTO v (k, e, ids, words) VALUES (1, [0.5, -1, 2.25], [7, 8], ['it''s', ''])",
    )
    .unwrap();
    db.flush_all().unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT e, ids, words FROM v WHERE k = 1"),
        ["[0.5, -1, 2.25]|[7, 8]|['it''s', '']"]
    );
    let p = cql.prepare("UPDATE v SET e = ? WHERE k = ?").unwrap();
    let k = 1i32.to_be_bytes();
    let mut e = Vec::new();
    for f in [1.0f32, 2.0, 3.0] {
        e.extend_from_slice(&f.to_be_bytes());
    }
    cql.execute_prepared(&p, &[Some(&e), Some(&k)]).unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT e FROM v WHERE k = 1"),
        ["[1, 2, 3]"]
    );
    // Two floats where three are needed.
    assert!(cql
        .execute_prepared(&p, &[Some(&e[..8]), Some(&k)])
        .is_err());
    let described = shown(&mut cql, "DESCRIBE TABLE v").join("");
    assert!(described.contains("e vector<float, 3>"), "{described}");
}

#[test]
fn what_a_vector_cannot_be_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    assert_eq!(
        refused(&mut cql, "INSERT INTO v (k, e) VALUES (1, [1, 2])"),
        "Invalid vector literal for e of type vector<float, 3>; expected 3 elements, but given 2"
    );
    for q in [
        "CREATE TABLE n (k int PRIMARY KEY, e vector<float, 0>)",
        "CREATE TABLE n (k int PRIMARY KEY, e vector<list<int>, 2>)",
        "CREATE TABLE n (k vector<float, 2> PRIMARY KEY, v int)",
        "INSERT INTO v (k, e) VALUES (1, [1, null, 2])",
    ] {
        refused(&mut cql, q);
    }
}
