//! The `WHERE` of an `UPDATE` or a `DELETE` refused as Cassandra refuses it, in its order (the
//! partition key, then the clustering columns, then the other columns) and its words; and a
//! column set twice in one `SET` refused as Cassandra's parser refuses it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused};
use supercolumn_cql::CqlError;

const SCHEMA: &str = "CREATE TABLE t (pk1 int, pk2 int, c1 int, c2 int, v int, w int, \
                      s set<int>, st int static, PRIMARY KEY ((pk1, pk2), c1, c2))";

#[test]
fn a_write_where_is_refused_in_cassandras_order_and_words() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    let row = "pk1 = 0 AND pk2 = 0 AND c1 = 0 AND c2 = 0";
    for (q, says) in [
        (
            "UPDATE t SET v = 1 WHERE c1 = 0 AND c2 = 0".to_string(),
            "Some partition key parts are missing: pk1, pk2",
        ),
        (
            "UPDATE t SET v = 1 WHERE pk2 = 0 AND v = 1 AND c1 > 0".to_string(),
            "Some partition key parts are missing: pk1",
        ),
        (
            "UPDATE t SET v = 1 WHERE pk1 = 0 AND pk2 = 0".to_string(),
            "Some clustering keys are missing: c1, c2",
        ),
        (
            "UPDATE t SET v = 1 WHERE pk1 = 0 AND pk2 = 0 AND c1 = 0 AND v = 1".to_string(),
            "Some clustering keys are missing: c2",
        ),
        (
            "UPDATE t SET v = 1 WHERE token(pk1, pk2) > 0 AND c1 = 0 AND c2 = 0".to_string(),
            "The token function cannot be used in WHERE clauses for UPDATE statements",
        ),
        (
            "DELETE FROM t WHERE token(pk1, pk2) < 0".to_string(),
            "The token function cannot be used in WHERE clauses for DELETE statements",
        ),
        (
            "UPDATE t SET v = 1 WHERE pk1 > 0 AND pk2 = 0 AND c1 = 0 AND c2 = 0".to_string(),
            "Only EQ and IN relation are supported on the partition key (unless you use the \
             token() function) for UPDATE statements",
        ),
        (
            "DELETE FROM t WHERE pk1 = 0 AND pk2 < 0".to_string(),
            "Only EQ and IN relation are supported on the partition key (unless you use the \
             token() function) for DELETE statements",
        ),
        (
            "UPDATE t SET v = 1 WHERE pk1 = 0 AND pk2 = 0 AND c1 > 0 AND v = 1".to_string(),
            "Slice restrictions are not supported on the clustering columns in UPDATE statements",
        ),
        (
            format!("UPDATE t SET v = 1 WHERE {row} AND w = 1 AND v = 1 AND s CONTAINS 1"),
            "Non PRIMARY KEY columns found in where clause: s, v, w ",
        ),
        (
            format!("DELETE FROM t WHERE {row} AND v = 1"),
            "Non PRIMARY KEY columns found in where clause: v ",
        ),
        (
            format!("UPDATE t SET v = 1 WHERE {row} AND c1 = 1"),
            "c1 cannot be restricted by more than one relation if it includes an Equal",
        ),
        (
            format!("UPDATE t SET v = 1 WHERE pk1 IN (0, 1) AND {row}"),
            "pk1 cannot be restricted by more than one relation if it includes a IN",
        ),
        (
            "UPDATE t SET v = 1 WHERE pk1 CONTAINS 0 AND pk2 = 0 AND c1 = 0 AND c2 = 0".to_string(),
            "Cannot use CONTAINS on non-collection column pk1",
        ),
        (
            "DELETE FROM t WHERE pk1 = 0 AND pk2 = 0 AND c1 CONTAINS KEY 0".to_string(),
            "Cannot use CONTAINS KEY on non-map column c1",
        ),
    ] {
        assert_eq!(refused(&mut cql, &q), says, "{q}");
    }
    // Nothing was written by any of them.
    let CqlError::Invalid(_) = cql.execute("SELECT * FROM t WHERE v = 1").unwrap_err() else {
        panic!("a filter on v needs ALLOW FILTERING");
    };
    assert!(common::shown(&mut cql, "SELECT * FROM t").is_empty());
}

#[test]
fn a_column_set_twice_is_a_syntax_error_unless_both_change_its_elements() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    let row = "pk1 = 0 AND pk2 = 0 AND c1 = 0 AND c2 = 0";
    for q in [
        format!("UPDATE t SET v = 1, v = 2 WHERE {row}"),
        format!("UPDATE t SET s = s + {{1}}, s = {{2}} WHERE {row}"),
        format!("UPDATE t SET s = {{2}}, s = s - {{1}} WHERE {row}"),
    ] {
        match cql.execute(&q) {
            Err(CqlError::Syntax { message, .. }) => {
                assert!(
                    message.starts_with("Multiple incompatible setting of column "),
                    "{q}: {message}"
                )
            }
            other => panic!("{q}: expected a syntax error, got {other:?}"),
        }
    }
    cql.execute(&format!(
        "UPDATE t SET s = s + {{1, 2}}, s = s - {{1}} WHERE {row}"
    ))
    .unwrap();
    assert_eq!(
        common::shown(&mut cql, "SELECT s FROM t"),
        vec!["{2}".to_string()]
    );
}
