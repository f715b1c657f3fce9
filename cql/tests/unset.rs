//! Unset bound values (native protocol v4) mean what they mean in Cassandra: a column value left
//! unset leaves the column as it was (a null would delete it), an unset `USING TTL`,
//! `TIMESTAMP`, `LIMIT` or list index to delete is as if absent, and an unset key, restriction,
//! map key, list index to set or condition value is refused in Cassandra's words.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use supercolumn::{Database, Options};
use supercolumn_cql::{CqlError, CqlResult, Prepared, Session};

/// A bound value as a v4 client sends it.
#[derive(Clone, Copy)]
enum V<'a> {
    Set(&'a [u8]),
    Unset,
}
use V::{Set, Unset};

fn int(v: i32) -> Vec<u8> {
    v.to_be_bytes().to_vec()
}

fn open(dir: &std::path::Path) -> Database {
    let db = Database::open(dir, Options::default()).unwrap();
    Session::new(&db)
        .execute(
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; USE ks;
             CREATE TABLE t (k int, c int, s text, i int, m map<text, int>, l list<text>, st set<int>,
                             PRIMARY KEY (k, c));
             CREATE TABLE d (k int PRIMARY KEY, i int) WITH default_time_to_live = 600",
        )
        .unwrap();
    db
}

/// Runs `p` with `values` as the server does: the parts the unset ones fill left out.
fn run(cql: &mut Session<'_>, p: &Prepared, values: &[V<'_>]) -> Result<CqlResult, CqlError> {
    let unset: Vec<bool> = values.iter().map(|v| matches!(v, Unset)).collect();
    let bytes: Vec<Option<&[u8]>> = values
        .iter()
        .map(|v| match v {
            Set(b) => Some(*b),
            Unset => None,
        })
        .collect();
    match p.without_unset(&unset)? {
        Some(q) => cql.execute_prepared(&q, &bytes),
        None => Ok(CqlResult::Void),
    }
}

fn invalid(r: Result<CqlResult, CqlError>) -> String {
    match r {
        Err(CqlError::Invalid(m)) => m,
        other => panic!("expected Invalid, got {other:?}"),
    }
}

fn text(cql: &mut Session<'_>, q: &str) -> String {
    format!("{:?}", cql.query(q).unwrap().to_vecs())
}

fn session(db: &Database) -> Session<'_> {
    let mut cql = Session::new(db);
    cql.execute("USE ks").unwrap();
    cql
}

#[test]
fn an_unset_column_keeps_its_value_and_an_unset_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    cql.execute("INSERT INTO t (k, c, s, i, m) VALUES (1, 1, 'text', 10, {'a': 1})")
        .unwrap();
    let before = text(&mut cql, "SELECT s, i, m FROM t WHERE k = 1 AND c = 1");
    let ins = cql
        .prepare("INSERT INTO t (k, c, s, i, m) VALUES (?, ?, ?, ?, ?)")
        .unwrap();
    let (one, ten) = (int(1), int(10));
    run(&mut cql, &ins, &[Set(&one), Set(&one), Unset, Unset, Unset]).unwrap();
    assert_eq!(
        text(&mut cql, "SELECT s, i, m FROM t WHERE k = 1 AND c = 1"),
        before
    );
    // Only the key is set: the row exists, its columns null (the row marker is written).
    run(&mut cql, &ins, &[Set(&one), Set(&ten), Unset, Unset, Unset]).unwrap();
    assert_eq!(
        cql.query("SELECT s, i FROM t WHERE k = 1 AND c = 10")
            .unwrap()
            .to_vecs(),
        vec![vec![None, None]]
    );
    let m = invalid(run(
        &mut cql,
        &ins,
        &[Unset, Set(&one), Unset, Unset, Unset],
    ));
    assert_eq!(m, "Invalid unset value for column k");
    let m = invalid(run(
        &mut cql,
        &ins,
        &[Set(&one), Unset, Unset, Unset, Unset],
    ));
    assert_eq!(m, "Invalid unset value for column c");

    let upd = cql
        .prepare("UPDATE t SET s = ?, i = ? WHERE k = ? AND c = ?")
        .unwrap();
    let five = int(5);
    run(&mut cql, &upd, &[Unset, Set(&five), Set(&one), Set(&one)]).unwrap();
    assert_eq!(
        text(&mut cql, "SELECT s, i FROM t WHERE k = 1 AND c = 1"),
        format!(
            "{:?}",
            vec![vec![Some(b"text".to_vec()), Some(five.clone())]]
        )
    );
    // Nothing left to set: nothing is written.
    run(&mut cql, &upd, &[Unset, Unset, Set(&one), Set(&int(99))]).unwrap();
    assert!(cql
        .query("SELECT * FROM t WHERE k = 1 AND c = 99")
        .unwrap()
        .to_vecs()
        .is_empty());
    let m = invalid(run(&mut cql, &upd, &[Set(b"x"), Unset, Unset, Set(&one)]));
    assert_eq!(m, "Invalid unset value for column k");
    let del = cql.prepare("DELETE FROM t WHERE k = ? AND c = ?").unwrap();
    let m = invalid(run(&mut cql, &del, &[Unset, Set(&one)]));
    assert_eq!(m, "Invalid unset value for column k");
}

#[test]
fn unset_collection_operations_do_nothing_and_unset_keys_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    cql.execute("INSERT INTO t (k, c, m, l, st) VALUES (1, 1, {'a': 1}, ['x', 'y'], {7})")
        .unwrap();
    let q = "SELECT m, l, st FROM t WHERE k = 1 AND c = 1";
    let before = text(&mut cql, q);
    for stmt in [
        "UPDATE t SET m['a'] = ? WHERE k = 1 AND c = 1",
        "UPDATE t SET l[1] = ? WHERE k = 1 AND c = 1",
        "UPDATE t SET l = l - ? WHERE k = 1 AND c = 1",
        "UPDATE t SET l = ? + l WHERE k = 1 AND c = 1",
        "UPDATE t SET st = st + ? WHERE k = 1 AND c = 1",
        "UPDATE t SET m = ? WHERE k = 1 AND c = 1",
        "DELETE l[?] FROM t WHERE k = 1 AND c = 1",
        "INSERT INTO t (k, c, l) VALUES (1, 1, ?)",
    ] {
        let p = cql.prepare(stmt).unwrap();
        run(&mut cql, &p, &[Unset]).unwrap();
        assert_eq!(text(&mut cql, q), before, "{stmt}");
    }
    let p = cql
        .prepare("UPDATE t SET m[?] = 2 WHERE k = 1 AND c = 1")
        .unwrap();
    assert_eq!(
        invalid(run(&mut cql, &p, &[Unset])),
        "Invalid unset map key"
    );
    let p = cql
        .prepare("DELETE m[?] FROM t WHERE k = 1 AND c = 1")
        .unwrap();
    assert_eq!(
        invalid(run(&mut cql, &p, &[Unset])),
        "Invalid unset map key"
    );
    let p = cql
        .prepare("UPDATE t SET l[?] = 'z' WHERE k = 1 AND c = 1")
        .unwrap();
    assert_eq!(
        invalid(run(&mut cql, &p, &[Unset])),
        "Invalid unset value for list index"
    );
    // A DELETE of one element among other columns keeps the others' deletion.
    let p = cql
        .prepare("DELETE l[?], st FROM t WHERE k = 1 AND c = 1")
        .unwrap();
    run(&mut cql, &p, &[Unset]).unwrap();
    let st = cql.query(q).unwrap().to_vecs();
    assert!(st[0][2].is_none() && st[0][1].is_some(), "{st:?}");
}

#[test]
fn unset_ttl_timestamp_and_limits_are_absent_and_unset_restrictions_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    let ins = cql
        .prepare("INSERT INTO d (k, i) VALUES (?, ?) USING TTL ? AND TIMESTAMP ?")
        .unwrap();
    let (one, two) = (int(1), int(2));
    run(&mut cql, &ins, &[Set(&one), Set(&one), Unset, Unset]).unwrap();
    // The table's default TTL applies, and the write gets the session's timestamp.
    let r = cql
        .query("SELECT ttl(i), writetime(i) FROM d WHERE k = 1")
        .unwrap()
        .to_vecs();
    let ttl = i32::from_be_bytes(r[0][0].clone().unwrap().try_into().unwrap());
    let wt = i64::from_be_bytes(r[0][1].clone().unwrap().try_into().unwrap());
    assert!((590..=600).contains(&ttl), "ttl {ttl}");
    assert!(wt > 1_500_000_000_000_000, "writetime {wt}");
    run(&mut cql, &ins, &[Set(&two), Set(&one), Unset, Unset]).unwrap();

    let sel = cql.prepare("SELECT k FROM d LIMIT ?").unwrap();
    let CqlResult::Rows(r) = run(&mut cql, &sel, &[Unset]).unwrap() else {
        panic!("rows")
    };
    assert_eq!(r.to_vecs().len(), 2);
    let sel = cql.prepare("SELECT k FROM d WHERE k IN (?, ?)").unwrap();
    assert_eq!(
        invalid(run(&mut cql, &sel, &[Set(&one), Unset])),
        "Invalid unset value for column k"
    );
    let cond = cql
        .prepare("UPDATE d SET i = 3 WHERE k = 1 IF i = ?")
        .unwrap();
    assert_eq!(
        invalid(run(&mut cql, &cond, &[Unset])),
        "Invalid 'unset' value in condition"
    );
}

#[test]
fn a_batch_leaves_out_what_is_unset_in_each_statement() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    cql.execute("INSERT INTO t (k, c, s, i) VALUES (1, 1, 'keep', 1)")
        .unwrap();
    let b = cql
        .prepare(
            "BEGIN BATCH INSERT INTO t (k, c, s, i) VALUES (1, 1, ?, ?); \
             UPDATE t SET m[?] = ? WHERE k = 1 AND c = 2; \
             DELETE l[?] FROM t WHERE k = 1 AND c = 1 APPLY BATCH",
        )
        .unwrap();
    let (two, key) = (int(2), b"a".to_vec());
    run(
        &mut cql,
        &b,
        &[Unset, Set(&two), Set(&key), Set(&two), Unset],
    )
    .unwrap();
    assert_eq!(
        cql.query("SELECT c, s, i, m FROM t WHERE k = 1")
            .unwrap()
            .to_vecs(),
        vec![
            vec![Some(int(1)), Some(b"keep".to_vec()), Some(int(2)), None],
            vec![Some(int(2)), None, None, Some(map_a2())],
        ]
    );
}

/// `{'a': 2}` as a `map<text, int>` serializes (protocol v3+).
fn map_a2() -> Vec<u8> {
    let mut v = 1i32.to_be_bytes().to_vec();
    v.extend_from_slice(&1i32.to_be_bytes());
    v.push(b'a');
    v.extend_from_slice(&4i32.to_be_bytes());
    v.extend_from_slice(&2i32.to_be_bytes());
    v
}
