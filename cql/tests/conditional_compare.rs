//! What a condition is compared against, as Cassandra compares it. Static columns: a write of the
//! statics alone (`INSERT … (k, s) … IF NOT EXISTS`, `UPDATE … SET s … WHERE k = ? IF s = ?`)
//! is checked against the statics only, whatever rows the partition holds; a condition naming
//! a static column of a row that does not exist compares the partition's statics (the row's
//! columns null); a batch's rows carry their statics, which answer on their own only when no
//! row was checked. A whole collection of many cells orders in a condition as its frozen value.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, shown};
use supercolumn_cql::{CqlResult, Session};

/// A statement's answer as cqlsh prints it: each row.
fn answer(cql: &mut Session<'_>, text: &str) -> Vec<String> {
    let out = cql.execute(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let Some(CqlResult::Rows(r)) = out.into_iter().last() else {
        panic!("{text}: no rows");
    };
    r.displayed().into_iter().map(|r| r.join("|")).collect()
}

#[test]
fn a_write_of_statics_alone_is_checked_against_the_statics() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (id int, k text, version int static, v text, PRIMARY KEY (id, k))",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (id, k, v) VALUES (1, 'foo', 'foo')")
        .unwrap();
    // The partition has a row but no statics: they do not exist yet.
    let q = "INSERT INTO t (id, version) VALUES (1, 1) IF NOT EXISTS";
    assert_eq!(answer(&mut cql, q), ["True"]);
    assert_eq!(shown(&mut cql, "SELECT * FROM t"), ["1|foo|1|foo"]);
    let q = "INSERT INTO t (id, version) VALUES (1, 2) IF NOT EXISTS";
    assert_eq!(answer(&mut cql, q), ["False|1|null|1|null"]);
    let q = "UPDATE t SET version = 3 WHERE id = 1 IF version = 1";
    assert_eq!(answer(&mut cql, q), ["True"]);
    let q = "UPDATE t SET version = 4 WHERE id = 1 IF version = 1";
    assert_eq!(answer(&mut cql, q), ["False|3"]);
}

#[test]
fn a_missing_row_compares_its_partitions_statics() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k text, s text static, i int, v text, PRIMARY KEY (k, i))",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, s) VALUES ('k', 's')")
        .unwrap();
    let q = "DELETE v FROM t WHERE k = 'k' AND i = 0 IF v = 'z' AND s = 'z'";
    assert_eq!(answer(&mut cql, q), ["False|null|s"]);
    let q = "UPDATE t SET v = 'a' WHERE k = 'k' AND i = 0 IF v = null AND s = 's'";
    assert_eq!(answer(&mut cql, q), ["True"]);
    assert_eq!(shown(&mut cql, "SELECT * FROM t"), ["k|0|s|a"]);
}

#[test]
fn a_batch_answers_its_rows_with_their_statics() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (id int, k text, version int static, v text, PRIMARY KEY (id, k))",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (id, k, version, v) VALUES (0, 'k1', 2, 'foobar')")
        .unwrap();
    cql.execute("INSERT INTO t (id, k, v) VALUES (0, 'k2', 'barfoo')")
        .unwrap();
    let statics_only = "BEGIN BATCH
        UPDATE t SET v = 'x' WHERE id = 0 AND k = 'k1';
        UPDATE t SET version = 3 WHERE id = 0 IF version = 1;
        APPLY BATCH";
    assert_eq!(answer(&mut cql, statics_only), ["False|0|null|2"]);
    let with_rows = "BEGIN BATCH
        UPDATE t SET version = 4 WHERE id = 0 IF version = 2;
        UPDATE t SET v = 'row1' WHERE id = 0 AND k = 'k1' IF v = 'foo';
        UPDATE t SET v = 'row2' WHERE id = 0 AND k = 'k2' IF v = 'bar';
        APPLY BATCH";
    assert_eq!(
        answer(&mut cql, with_rows),
        ["False|0|k1|2|foobar", "False|0|k2|2|barfoo"]
    );
}

#[test]
fn a_collection_of_many_cells_orders_in_a_condition_as_its_frozen_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int PRIMARY KEY, l list<text>, s set<text>, m map<text, text>)",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, l, s, m) VALUES (0, ['foo', 'bar'], {'a', 'b'}, {'a': 'b'})")
        .unwrap();
    for (q, want) in [
        (
            "UPDATE t SET l = ['x'] WHERE k = 0 IF l < ['a']",
            "False|['foo', 'bar']",
        ),
        (
            "UPDATE t SET l = ['x'] WHERE k = 0 IF l >= ['foo', 'bar']",
            "True",
        ),
        ("UPDATE t SET s = {'z'} WHERE k = 0 IF s > {'a'}", "True"),
        (
            "UPDATE t SET m = {'z': 'z'} WHERE k = 0 IF m <= {'a': 'a'}",
            "False|{'a': 'b'}",
        ),
        (
            "UPDATE t SET m = {'z': 'z'} WHERE k = 0 IF m > {'a': 'a'}",
            "True",
        ),
    ] {
        assert_eq!(answer(&mut cql, q), [want], "{q}");
    }
    assert_eq!(
        shown(&mut cql, "SELECT l, m, s FROM t"),
        ["['x']|{'z': 'z'}|{'z'}"]
    );
}

#[test]
fn conditions_and_list_elements_are_refused_in_cassandras_words() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c int, v text, l list<text>, fl frozen<list<text>>,
             m map<text, text>, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, c, v, l, fl) VALUES (0, 1, 'a', ['foo', 'bar'], ['x'])")
        .unwrap();
    cql.execute("INSERT INTO t (k, c) VALUES (0, 2)").unwrap();
    for (q, says) in [
        (
            "UPDATE t SET v = 'b' WHERE k = 0 AND c IN (1, 2) IF EXISTS",
            "IN on the clustering key columns is not supported with conditional updates",
        ),
        (
            "DELETE FROM t WHERE k = 0 AND c IN (1, 2) IF v = 'a'",
            "IN on the clustering key columns is not supported with conditional deletions",
        ),
        (
            "DELETE FROM t WHERE k = 0 AND c = 1 IF l[-2] = 'foo'",
            "Invalid negative list index -2",
        ),
        (
            "DELETE FROM t WHERE k = 0 AND c = 1 IF fl[-1] = 'x'",
            "Invalid negative list index -1",
        ),
        (
            "DELETE FROM t WHERE k = 0 AND c = 1 IF l[null] = 'foo'",
            "Invalid null value for list element access",
        ),
        (
            "DELETE FROM t WHERE k = 0 AND c = 1 IF m[null] = 'foo'",
            "Invalid null value for map element access",
        ),
        (
            "UPDATE t SET l[0] = 'v' WHERE k = 0 AND c = 2",
            "Attempted to set an element on a list which is null",
        ),
        (
            "DELETE l[0] FROM t WHERE k = 0 AND c = 2",
            "Attempted to delete an element from a list which is null",
        ),
        (
            "UPDATE t SET l[5] = 'v' WHERE k = 0 AND c = 1",
            "List index 5 out of bound, list has size 2",
        ),
    ] {
        assert_eq!(common::refused(&mut cql, q), says, "{q}");
    }
}
