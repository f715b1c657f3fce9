//! A `DELETE` of whole rows may name them by a prefix of their clustering values: every row
//! under it goes, as under Cassandra's range tombstone, including rows written later with an
//! older timestamp; rows outside the prefix stay. What such a delete cannot name is refused.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use supercolumn::{Database, Options};
use supercolumn_cql::{CqlType, Session};

fn rows(cql: &mut Session<'_>) -> Vec<(i32, i32, String)> {
    let int = |v: &Option<Vec<u8>>| i32::from_be_bytes(v.as_deref().unwrap().try_into().unwrap());
    cql.query("SELECT a, b, v FROM t WHERE k = 1")
        .unwrap()
        .to_vecs()
        .iter()
        .map(|r| {
            let v = String::from_utf8(r[2].clone().unwrap_or_default()).unwrap();
            (int(&r[0]), int(&r[1]), v)
        })
        .collect()
}

#[test]
fn a_clustering_prefix_deletes_every_row_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut cql = Session::new(&db);
    cql.execute(
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; USE ks;
         CREATE TABLE t (k int, a int, b int, v text, PRIMARY KEY (k, a, b));
         INSERT INTO t (k, a, b, v) VALUES (1, 1, 1, 'x') USING TIMESTAMP 10;
         INSERT INTO t (k, a, b, v) VALUES (1, 1, 2, 'y') USING TIMESTAMP 10;
         INSERT INTO t (k, a, b, v) VALUES (1, 2, 1, 'z') USING TIMESTAMP 10;
         INSERT INTO t (k, a, b, v) VALUES (1, 3, 1, 'w') USING TIMESTAMP 10;
         INSERT INTO t (k, a, b, v) VALUES (2, 1, 1, 'other partition') USING TIMESTAMP 10",
    )
    .unwrap();
    db.flush_all().unwrap();
    cql.execute("DELETE FROM t USING TIMESTAMP 100 WHERE k = 1 AND a = 1")
        .unwrap();
    assert_eq!(rows(&mut cql), [(2, 1, "z".into()), (3, 1, "w".into())]);
    // Older than the deletion: deleted as it lands; newer: there.
    cql.execute(
        "INSERT INTO t (k, a, b, v) VALUES (1, 1, 5, 'late') USING TIMESTAMP 50;
         INSERT INTO t (k, a, b, v) VALUES (1, 1, 6, 'new') USING TIMESTAMP 150",
    )
    .unwrap();
    let want = [(1, 6, "new".into()), (2, 1, "z".into()), (3, 1, "w".into())];
    assert_eq!(rows(&mut cql), want);
    // IN names several prefixes; the deletion survives a flush and a compaction.
    cql.execute("DELETE FROM t USING TIMESTAMP 200 WHERE k = 1 AND a IN (2, 3)")
        .unwrap();
    db.flush_all().unwrap();
    db.compact("ks", Some("t")).unwrap();
    assert_eq!(rows(&mut cql), [(1, 6, "new".into())]);
    let other = cql.query("SELECT v FROM t WHERE k = 2").unwrap().to_vecs();
    assert_eq!(other, [vec![Some(b"other partition".to_vec())]]);
    for bad in [
        // Columns are deleted from rows named whole.
        "DELETE v FROM t WHERE k = 1 AND a = 1",
        // A later clustering column without the ones before it.
        "DELETE FROM t WHERE k = 1 AND b = 1",
        // Columns of a range of rows.
        "DELETE v FROM t WHERE k = 1 AND a > 1",
    ] {
        assert!(cql.execute(bad).is_err(), "{bad}");
    }
    assert_eq!(rows(&mut cql), [(1, 6, "new".into())]);
}

#[test]
fn index_deletions_of_one_list_apply_in_turn() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut cql = Session::new(&db);
    cql.execute(
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; USE ks;
         CREATE TABLE l (k int PRIMARY KEY, l list<int>, m list<int>);
         INSERT INTO l (k, l, m) VALUES (0, [1, 2, 9, 4], [5, 6, 7])",
    )
    .unwrap();
    // Before, both named the element at index 2 of the list as it was: [1, 2, 4].
    cql.execute("DELETE l[2], m[0], l[2] FROM l WHERE k = 0")
        .unwrap();
    let got = cql.query("SELECT l, m FROM l WHERE k = 0").unwrap();
    let list = |i: usize| CqlType::List(Box::new(CqlType::Int)).display(got.row(0).get(i).unwrap());
    assert_eq!(
        (list(0), list(1)),
        ("[1, 2]".to_string(), "[6, 7]".to_string())
    );
    // Past the end after the ones before: refused, nothing deleted.
    assert!(cql.execute("DELETE l[1], l[1] FROM l WHERE k = 0").is_err());
    let got = cql.query("SELECT l FROM l WHERE k = 0").unwrap();
    assert_eq!(
        CqlType::List(Box::new(CqlType::Int)).display(got.row(0).get(0).unwrap()),
        "[1, 2]"
    );
}
