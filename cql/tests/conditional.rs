//! Conditional writes (lightweight transactions) answer as Cassandra's do: a row whose
//! `[applied]` column says whether the write was made and, when not, the values that decided
//! it; a write whose condition fails leaves the data as it was; and of many `IF NOT EXISTS`
//! racing for one row, exactly one applies.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session as session, open_cql};
use supercolumn::{Database, Options};
use supercolumn_cql::{CqlResult, Session};

fn open(dir: &std::path::Path) -> Database {
    open_cql(
        dir,
        "CREATE TABLE t (k int, c int, v text, w int, PRIMARY KEY (k, c))",
    )
}

/// The one answer of a statement, as (column names, the row).
fn answer(cql: &mut Session<'_>, text: &str) -> (Vec<String>, Vec<Option<Vec<u8>>>) {
    let mut out = cql.execute(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    match out.pop() {
        Some(CqlResult::Rows(rows)) => {
            assert_eq!(rows.len(), 1, "{text}");
            (
                rows.columns().iter().map(|(n, _)| n.clone()).collect(),
                rows.row(0).to_vec(),
            )
        }
        other => panic!("{text}: {other:?}"),
    }
}

fn applied(cql: &mut Session<'_>, text: &str) -> bool {
    let (columns, row) = answer(cql, text);
    assert_eq!(columns[0], "[applied]", "{text}");
    row[0] == Some(vec![1])
}

fn rows(cql: &mut Session<'_>, text: &str) -> Vec<Vec<Option<Vec<u8>>>> {
    cql.query(text).unwrap().to_vecs()
}

fn text(s: &str) -> Option<Vec<u8>> {
    Some(s.as_bytes().to_vec())
}

fn int(n: i32) -> Option<Vec<u8>> {
    Some(n.to_be_bytes().to_vec())
}

#[test]
fn insert_if_not_exists_applies_once_and_then_shows_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    let first = "INSERT INTO t (k, c, v) VALUES (1, 2, 'a') IF NOT EXISTS";
    assert_eq!(
        answer(&mut cql, first),
        (vec!["[applied]".into()], vec![Some(vec![1])])
    );
    let (columns, row) = answer(
        &mut cql,
        "INSERT INTO t (k, c, v, w) VALUES (1, 2, 'b', 9) IF NOT EXISTS",
    );
    assert_eq!(columns, ["[applied]", "k", "c", "v", "w"]);
    assert_eq!(row, [Some(vec![0]), int(1), int(2), text("a"), None]);
    assert_eq!(
        rows(&mut cql, "SELECT v, w FROM t WHERE k = 1 AND c = 2"),
        [vec![text("a"), None]],
        "the write that did not apply wrote nothing"
    );
    // Another row of the same partition is another row.
    assert!(applied(
        &mut cql,
        "INSERT INTO t (k, c, v) VALUES (1, 3, 'c') IF NOT EXISTS"
    ));
    // A row deleted since can be inserted again.
    cql.execute("DELETE FROM t WHERE k = 1 AND c = 3").unwrap();
    assert!(applied(
        &mut cql,
        "INSERT INTO t (k, c, v) VALUES (1, 3, 'd') IF NOT EXISTS"
    ));
}

#[test]
fn update_and_delete_apply_only_when_their_condition_holds() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    // IF EXISTS on a row that is not there: nothing written, not even a marker-less cell.
    assert_eq!(
        answer(
            &mut cql,
            "UPDATE t SET v = 'x' WHERE k = 1 AND c = 1 IF EXISTS"
        ),
        (vec!["[applied]".into()], vec![Some(vec![0])])
    );
    assert!(rows(&mut cql, "SELECT * FROM t").is_empty());
    cql.execute("INSERT INTO t (k, c, v, w) VALUES (1, 1, 'x', 5)")
        .unwrap();
    assert!(applied(
        &mut cql,
        "UPDATE t SET w = 6 WHERE k = 1 AND c = 1 IF EXISTS"
    ));
    // A column comparison that fails answers with the column's value.
    let (columns, row) = answer(
        &mut cql,
        "UPDATE t SET v = 'y' WHERE k = 1 AND c = 1 IF v = 'nope' AND w > 1",
    );
    assert_eq!(columns, ["[applied]", "v", "w"]);
    assert_eq!(row, [Some(vec![0]), text("x"), int(6)]);
    assert!(applied(
        &mut cql,
        "UPDATE t SET v = 'y' WHERE k = 1 AND c = 1 IF v = 'x' AND w >= 6"
    ));
    assert_eq!(
        rows(&mut cql, "SELECT v, w FROM t WHERE k = 1 AND c = 1"),
        [vec![text("y"), int(6)]]
    );
    // A null compares equal to a missing value only.
    cql.execute("UPDATE t SET w = null WHERE k = 1 AND c = 1")
        .unwrap();
    assert!(applied(
        &mut cql,
        "UPDATE t SET v = 'z' WHERE k = 1 AND c = 1 IF w = null"
    ));
    assert!(!applied(
        &mut cql,
        "UPDATE t SET v = 'q' WHERE k = 1 AND c = 1 IF w = 3"
    ));
    assert!(!applied(
        &mut cql,
        "DELETE FROM t WHERE k = 1 AND c = 1 IF v = 'y'"
    ));
    assert!(applied(
        &mut cql,
        "DELETE FROM t WHERE k = 1 AND c = 1 IF v = 'z'"
    ));
    assert!(rows(&mut cql, "SELECT * FROM t").is_empty());
    assert!(!applied(
        &mut cql,
        "DELETE FROM t WHERE k = 1 AND c = 1 IF EXISTS"
    ));
}

#[test]
fn conditions_it_cannot_honour_are_refused_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    for bad in [
        "INSERT INTO t (k, c, v) VALUES (1, 1, 'a') IF NOT EXISTS USING TIMESTAMP 5",
        "UPDATE t SET v = 'a' WHERE k = 1 IF EXISTS",
        "UPDATE t SET v = 'a' WHERE k = 1 AND c IN (1, 2) IF EXISTS",
        "UPDATE t SET v = 'a' WHERE k = 1 AND c = 1 IF c = 1",
        "UPDATE t SET v = 'a' WHERE k = 1 AND c = 1 IF w > null",
        "UPDATE t SET v = 'a' WHERE k = 1 AND c = 1 IF w IN (1, 'x')",
    ] {
        assert!(cql.execute(bad).is_err(), "{bad}");
    }
    assert!(rows(&mut cql, "SELECT * FROM t").is_empty());
}

#[test]
fn a_prepared_condition_binds_its_markers() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    cql.execute("INSERT INTO t (k, c, v) VALUES (1, 1, 'a')")
        .unwrap();
    let p = cql
        .prepare("UPDATE t SET v = ? WHERE k = ? AND c = ? IF v = ?")
        .unwrap();
    let columns: Vec<String> = p.bind_columns().into_iter().map(|(c, _)| c).collect();
    assert_eq!(columns, ["v", "k", "c", "v"]);
    let (one, b) = (1i32.to_be_bytes(), b"b");
    let run = |cql: &mut Session<'_>, expect: &[u8]| match cql
        .execute_prepared(&p, &[Some(b), Some(&one), Some(&one), Some(expect)])
        .unwrap()
    {
        CqlResult::Rows(r) => r.to_vecs()[0][0] == Some(vec![1]),
        other => panic!("{other:?}"),
    };
    assert!(!run(&mut cql, b"zzz"));
    assert!(run(&mut cql, b"a"));
    assert_eq!(
        rows(&mut cql, "SELECT v FROM t WHERE k = 1 AND c = 1"),
        [vec![text("b")]]
    );
}

#[test]
fn a_condition_s_in_takes_a_whole_list_bound_to_one_marker() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    cql.execute("INSERT INTO t (k, c, v, w) VALUES (1, 1, 'a', 5)")
        .unwrap();
    let p = cql
        .prepare("UPDATE t SET w = 6 WHERE k = 1 AND c = 1 IF v IN ?")
        .unwrap();
    let bound: Vec<(String, String)> = p
        .bind_columns()
        .into_iter()
        .map(|(c, ty)| (c, ty.to_string()))
        .collect();
    assert_eq!(bound, [("in(v)".to_string(), "list<text>".to_string())]);
    // A list<text> as the protocol serializes it: a count, then each element with its length.
    let list = |items: &[&str]| {
        let mut b = (items.len() as i32).to_be_bytes().to_vec();
        for i in items {
            b.extend_from_slice(&(i.len() as i32).to_be_bytes());
            b.extend_from_slice(i.as_bytes());
        }
        b
    };
    let run = |cql: &mut Session<'_>, values: Option<&[u8]>| {
        cql.execute_prepared(&p, &[values]).map(|r| match r {
            CqlResult::Rows(r) => r.to_vecs()[0][0] == Some(vec![1]),
            other => panic!("{other:?}"),
        })
    };
    assert!(!run(&mut cql, Some(&list(&["x", "y"]))).unwrap());
    assert!(!run(&mut cql, Some(&list(&[]))).unwrap());
    assert!(run(&mut cql, None).is_err(), "a null list is refused");
    assert!(run(&mut cql, Some(&list(&["x", "a"]))).unwrap());
    assert_eq!(
        rows(&mut cql, "SELECT w FROM t WHERE k = 1 AND c = 1"),
        [vec![int(6)]]
    );
}

#[test]
fn of_racing_inserts_if_not_exists_exactly_one_applies() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    for round in 0..50 {
        let won: Vec<bool> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|n| {
                    let db = &db;
                    s.spawn(move || {
                        let mut cql = session(db);
                        applied(
                            &mut cql,
                            &format!(
                                "INSERT INTO t (k, c, w) VALUES ({round}, 0, {n}) IF NOT EXISTS"
                            ),
                        )
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(
            won.iter().filter(|w| **w).count(),
            1,
            "round {round}: {won:?}"
        );
        let winner = won.iter().position(|w| *w).unwrap() as i32;
        let mut cql = session(&db);
        assert_eq!(
            rows(
                &mut cql,
                &format!("SELECT w FROM t WHERE k = {round} AND c = 0")
            ),
            [vec![int(winner)]]
        );
    }
}

#[test]
fn conditional_writes_in_one_microsecond_do_not_shadow_each_other() {
    // A clock that never moves: every write falls in one microsecond.
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.clock = std::sync::Arc::new(supercolumn::ManualClock::new(1_700_000_000_000_000));
    let db = Database::open(dir.path(), options).unwrap();
    let mut cql = Session::new(&db);
    cql.execute(
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; USE ks;
         CREATE TABLE t (k int, c int, v text, w int, PRIMARY KEY (k, c))",
    )
    .unwrap();
    for n in 0..20 {
        let insert = format!("INSERT INTO t (k, c, w) VALUES (1, 1, {n}) IF NOT EXISTS");
        assert!(applied(&mut cql, &insert), "{n}");
        assert_eq!(
            rows(&mut cql, "SELECT w FROM t WHERE k = 1 AND c = 1"),
            [vec![int(n)]],
            "the insert that applied is there ({n})"
        );
        assert!(applied(
            &mut cql,
            "DELETE FROM t WHERE k = 1 AND c = 1 IF EXISTS"
        ));
        assert!(rows(&mut cql, "SELECT * FROM t").is_empty(), "{n}");
    }
}

#[test]
fn a_failed_condition_on_a_missing_row_answers_applied_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    assert_eq!(
        answer(
            &mut cql,
            "UPDATE t SET v = 'x' WHERE k = 9 AND c = 9 IF w = 4"
        ),
        (vec!["[applied]".into()], vec![Some(vec![0])])
    );
}

#[test]
fn an_empty_collection_in_a_condition_is_null_for_a_collection_not_frozen() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE l (k int PRIMARY KEY, l list<int>, s set<int>, fl frozen<list<int>>)",
    );
    let mut cql = session(&db);
    cql.execute("INSERT INTO l (k, fl) VALUES (0, [1])")
        .unwrap();
    assert!(applied(
        &mut cql,
        "UPDATE l SET l = null WHERE k = 0 IF l = []"
    ));
    assert!(applied(
        &mut cql,
        "UPDATE l SET s = {1} WHERE k = 0 IF s = {}"
    ));
    assert!(!applied(
        &mut cql,
        "UPDATE l SET s = {2} WHERE k = 0 IF s = {}"
    ));
    // A frozen collection's empty value is a value, not null.
    assert!(!applied(
        &mut cql,
        "UPDATE l SET fl = [2] WHERE k = 0 IF fl = []"
    ));
}

#[test]
fn conditions_name_elements_fields_and_in_lists() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TYPE pt (x int, y text);
         CREATE TABLE e (k int PRIMARY KEY, l list<text>, m map<text, int>, s set<int>,
             fm frozen<map<int, text>>, a pt, fa frozen<pt>, v int)",
    );
    let mut cql = session(&db);
    cql.execute(
        "INSERT INTO e (k, l, m, s, fm, a, fa, v) VALUES (1, ['x', 'y'], {'a': 1, 'b': 2}, {1},
             {3: 'three'}, {x: 1, y: 'p'}, {x: 2}, 7)",
    )
    .unwrap();
    for (q, holds) in [
        ("IF v IN (1, 7)", true),
        ("IF v IN (1, 2)", false),
        ("IF v IN ()", false),
        ("IF l[0] = 'x'", true),
        ("IF l[1] = 'x'", false),
        ("IF l[5] = null", true),
        ("IF l[1] > 'x'", true),
        ("IF m['a'] = 1", true),
        ("IF m['b'] IN (5, 2)", true),
        ("IF m['zz'] = null", true),
        ("IF m['zz'] != 1", true),
        ("IF m['a'] < 1", false),
        ("IF fm[3] = 'three'", true),
        ("IF a.y = 'p'", true),
        ("IF a.x > 1", false),
        ("IF fa.x = 2 AND fa.y = null", true),
        ("IF a.x = 1 AND m['a'] = 2", false),
    ] {
        let stmt = format!("UPDATE e SET v = 7 WHERE k = 1 {q}");
        assert_eq!(applied(&mut cql, &stmt), holds, "{stmt}");
    }
    // Not applied: the answer shows the whole column the comparison looked into.
    let (columns, row) = answer(&mut cql, "UPDATE e SET v = 8 WHERE k = 1 IF m['a'] = 5");
    assert_eq!(columns, ["[applied]", "m"]);
    assert_eq!(row[0], Some(vec![0]));
    // A missing row: every element and field is null.
    assert!(applied(
        &mut cql,
        "UPDATE e SET v = 1 WHERE k = 2 IF m['a'] = null AND a.x = null"
    ));
    // Bound: the element's key, then the value, each with its own type.
    let p = cql
        .prepare("UPDATE e SET v = ? WHERE k = ? IF m[?] = ? AND a.y IN (?, ?)")
        .unwrap();
    let named: Vec<String> = p.bind_columns().into_iter().map(|(c, _)| c).collect();
    assert_eq!(named, ["v", "k", "key(m)", "value(m)", "a.y", "a.y"]);
    let (one, nine) = (1i32.to_be_bytes(), 9i32.to_be_bytes());
    let run = |cql: &mut Session<'_>, key: &[u8]| match cql
        .execute_prepared(
            &p,
            &[
                Some(&nine),
                Some(&one),
                Some(key),
                Some(&1i32.to_be_bytes()),
                Some(b"q"),
                Some(b"p"),
            ],
        )
        .unwrap()
    {
        CqlResult::Rows(r) => r.to_vecs()[0][0] == Some(vec![1]),
        other => panic!("{other:?}"),
    };
    assert!(!run(&mut cql, b"b"));
    assert!(run(&mut cql, b"a"));
    assert_eq!(
        rows(&mut cql, "SELECT v FROM e WHERE k = 1"),
        [vec![int(9)]]
    );
    for (q, says) in [
        (
            "IF s[1] = true",
            "Invalid element access syntax for set column s",
        ),
        ("IF v[0] = 1", "non-collection column v"),
        ("IF a.z = 1", "Unknown field z for column a"),
        ("IF v.x = 1", "v of type int is not a user type"),
        ("IF m[null] = 1", "Invalid null value"),
        ("IF l[0] = 1", ""),
    ] {
        let stmt = format!("UPDATE e SET v = 0 WHERE k = 1 {q}");
        let e = common::refused(&mut cql, &stmt);
        assert!(e.contains(says), "{stmt}: {e}");
    }
    assert_eq!(
        rows(&mut cql, "SELECT v FROM e WHERE k = 1"),
        [vec![int(9)]]
    );
}

#[test]
fn contains_conditions_hold_of_the_collection_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE c (k int PRIMARY KEY, l list<int>, s set<text>, m map<text, int>,
         f frozen<list<int>>, v int)",
    );
    let mut cql = session(&db);
    cql.execute("INSERT INTO c (k, l, s, m, f, v) VALUES (1, [1, 2], {'a'}, {'x': 7}, [3], 0)")
        .unwrap();
    for (condition, holds) in [
        ("l CONTAINS 2", true),
        ("l CONTAINS 3", false),
        ("s CONTAINS 'a'", true),
        ("m CONTAINS 7", true),
        ("m CONTAINS KEY 'x'", true),
        ("m CONTAINS KEY 'y'", false),
        ("f CONTAINS 3", true),
        ("l CONTAINS 1 AND m CONTAINS KEY 'y'", false),
    ] {
        let q = format!("UPDATE c SET v = 1 WHERE k = 1 IF {condition}");
        assert_eq!(applied(&mut cql, &q), holds, "{q}");
    }
    // A row (or a collection) not there contains nothing.
    assert!(!applied(
        &mut cql,
        "UPDATE c SET v = 1 WHERE k = 2 IF l CONTAINS 1"
    ));
    // Markers take the element's type, and Cassandra's names.
    let p = cql
        .prepare("DELETE FROM c WHERE k = ? IF m CONTAINS KEY ? AND l CONTAINS ?")
        .unwrap();
    let names: Vec<(String, String)> = p
        .bind_columns()
        .into_iter()
        .map(|(n, t)| (n, t.to_string()))
        .collect();
    let want = [("k", "int"), ("key(m)", "text"), ("value(l)", "int")];
    assert_eq!(names, want.map(|(n, t)| (n.to_string(), t.to_string())));
    cql.execute_prepared(&p, &[int(1).as_deref(), Some(b"x"), int(2).as_deref()])
        .unwrap();
    assert!(rows(&mut cql, "SELECT k FROM c").is_empty());
    for (q, e) in [
        (
            "UPDATE c SET v = 1 WHERE k = 1 IF v CONTAINS 1",
            "Cannot use CONTAINS on non-collection column v",
        ),
        (
            "UPDATE c SET v = 1 WHERE k = 1 IF l CONTAINS KEY 1",
            "Cannot use CONTAINS KEY on non-map column l",
        ),
        (
            "UPDATE c SET v = 1 WHERE k = 1 IF l CONTAINS null",
            "Invalid comparison with null for operator \"CONTAINS\"",
        ),
    ] {
        let got = cql.execute(q).unwrap_err().to_string();
        assert!(got.contains(e), "{q}: {got}");
    }
}
