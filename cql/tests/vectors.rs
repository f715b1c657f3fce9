//! Cassandra 5's `vector<T, n>`: one cell holding the `n` elements as Cassandra serializes them
//! (a fixed-size type's bytes one after another, a variable-size type's each after its length),
//! written from a list literal or a bound value whose element count and sizes are checked, read
//! back and shown as Cassandra shows it; vectors of collections, tuples, user types and
//! vectors, their elements frozen. Vectors in keys: `vector_keys.rs`.

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
        "CREATE TABLE n (k int PRIMARY KEY, e vector<counter, 2>)",
        "INSERT INTO v (k, e) VALUES (1, [1, null, 2])",
    ] {
        refused(&mut cql, q);
    }
}

#[test]
fn a_vector_holds_frozen_collections_tuples_user_types_and_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    cql.execute("CREATE TYPE u (f int, g text)").unwrap();
    cql.execute(
        "CREATE TABLE n (k int PRIMARY KEY, l vector<list<int>, 2>, m vector<map<int, text>, 1>, \
         t vector<tuple<int, text>, 2>, u vector<u, 2>, d vector<vector<float, 2>, 2>, \
         w vector<vector<text, 1>, 2>)",
    )
    .unwrap();
    cql.execute(
        "INSERT INTO n (k, l, m, t, u, d, w) VALUES (1, [[1, 2], []], [{1: 'a'}], \
         [(1, 'it''s'), (2, null)], [{f: 1, g: 'x'}, {f: 2}], [[0.5, 1], [2, 3]], [['p'], ['q']])",
    )
    .unwrap();
    db.flush_all().unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT l, m, t, u, d, w FROM n"),
        [
            "[[1, 2], []]|[{1: 'a'}]|[(1, 'it''s'), (2, null)]|[{f: 1, g: 'x'}, {f: 2, g: null}]\
          |[[0.5, 1], [2, 3]]|[['p'], ['q']]"
        ]
    );
    assert_eq!(
        shown(&mut cql, "SELECT JSON l, d FROM n"),
        ["{\"l\": [[1, 2], []], \"d\": [[0.5, 1.0], [2.0, 3.0]]}"]
    );
    // A vector of fixed-size elements is fixed-size itself: 2 × 2 floats, no lengths.
    let p = cql.prepare("UPDATE n SET d = ? WHERE k = ?").unwrap();
    let floats: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|f| f.to_be_bytes())
        .collect();
    let k = 1i32.to_be_bytes();
    cql.execute_prepared(&p, &[Some(&floats), Some(&k)])
        .unwrap();
    assert_eq!(shown(&mut cql, "SELECT d FROM n"), ["[[1, 2], [3, 4]]"]);
    assert!(cql
        .execute_prepared(&p, &[Some(&floats[..12]), Some(&k)])
        .is_err());
    let described = shown(&mut cql, "DESCRIBE TABLE n").join("");
    for column in [
        "l vector<frozen<list<int>>, 2>",
        "t vector<frozen<tuple<int, text>>, 2>",
        "u vector<frozen<u>, 2>",
        "d vector<vector<float, 2>, 2>",
    ] {
        assert!(described.contains(column), "{described}");
    }
    assert_eq!(
        refused(&mut cql, "DROP TYPE u"),
        "Cannot drop user type 'ks.u' as it is still used by tables n"
    );
    assert_eq!(
        refused(&mut cql, "INSERT INTO n (k, l) VALUES (2, [[1]])"),
        "Invalid vector literal for l of type vector<frozen<list<int>>, 2>; expected 2 elements, \
         but given 1"
    );
}

#[test]
fn wrong_values_are_refused_in_cassandras_words() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE w (pk int PRIMARY KEY, value vector<int, 2>, t vector<text, 2>, \
         l list<int>, i int)",
    );
    let mut cql = ks_session(&db);
    for (q, words) in [
        (
            "INSERT INTO w (pk, value) VALUES (0, ['a', 'b'])",
            "Invalid vector literal for value: value 'a' is not of type int",
        ),
        (
            "INSERT INTO w (pk, t) VALUES (0, [1, 2])",
            "Invalid vector literal for t: value 1 is not of type text",
        ),
        (
            "INSERT INTO w (pk, value) VALUES (0, 0x)",
            "Invalid HEX constant (0x) for \"value\" of type vector<int, 2>",
        ),
        (
            "INSERT INTO w (pk, l) VALUES (0, ['a'])",
            "Invalid list literal for l: value 'a' is not of type int",
        ),
        (
            "INSERT INTO w (pk, i) VALUES (0, 'a')",
            "Invalid STRING constant (a) for \"i\" of type int",
        ),
        (
            "INSERT INTO w (pk, i) VALUES (0, 1.5)",
            "Invalid FLOAT constant (1.5) for \"i\" of type int",
        ),
        (
            "INSERT INTO w (pk, i) VALUES (0, [1])",
            "Invalid list literal for i of type int",
        ),
        (
            "INSERT INTO w (pk, l) VALUES (0, [1, null])",
            "null is not supported inside collections",
        ),
        (
            "SELECT * FROM w WHERE l = [1] ALLOW FILTERING",
            "Collection column 'l' (list<int>) cannot be restricted by a '=' relation",
        ),
    ] {
        assert_eq!(refused(&mut cql, q), words, "{q}");
    }
    // Bound values of the wrong size, as Cassandra's serializer words them.
    let ints = |v: &[i32]| v.iter().flat_map(|i| i.to_be_bytes()).collect::<Vec<u8>>();
    let p = cql
        .prepare("INSERT INTO w (pk, value) VALUES (0, ?)")
        .unwrap();
    let t = cql.prepare("INSERT INTO w (pk, t) VALUES (0, ?)").unwrap();
    for (p, bytes, words) in [
        (&p, ints(&[1]), "Not enough bytes to read a vector<int, 2>"),
        (
            &p,
            ints(&[1, 2, 3]),
            "Unexpected 4 extraneous bytes after vector<int, 2> value",
        ),
        (&p, Vec::new(), "Invalid empty vector value"),
        (
            &t,
            ints(&[1, 2]),
            "Unexpected 6 extraneous bytes after vector<text, 2> value",
        ),
    ] {
        let e = cql.execute_prepared(p, &[Some(&bytes)]).unwrap_err();
        assert!(e.to_string().contains(words), "{e}");
    }
}
