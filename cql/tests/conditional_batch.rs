//! A `BATCH` holding conditional writes is one transaction on one partition of one table: it
//! applies whole when every condition holds and not at all otherwise, answering as
//! Cassandra does (`[applied]` alone, or a row per existing row checked with its key columns and
//! the conditioned ones); what such a batch may not do is refused before anything is written.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session as session, open_cql};
use supercolumn::Database;
use supercolumn_cql::{CqlResult, Rows, Session};

fn open(dir: &std::path::Path) -> Database {
    open_cql(
        dir,
        "CREATE TABLE t (k int, c int, v text, w int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC);
         CREATE TABLE u (k int PRIMARY KEY, v text)",
    )
}

/// A statement's answer as cqlsh prints it: the column names, then each row.
fn shown(result: CqlResult) -> Vec<Vec<String>> {
    let CqlResult::Rows(r) = result else {
        panic!("no rows: {result:?}");
    };
    let names = r.columns().iter().map(|(n, _)| n.clone()).collect();
    std::iter::once(names).chain(r.displayed()).collect()
}

fn run(cql: &mut Session<'_>, text: &str) -> Vec<Vec<String>> {
    let out = cql.execute(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    shown(out.into_iter().last().unwrap())
}

fn rows(cql: &mut Session<'_>) -> Rows {
    cql.query("SELECT c, v, w FROM t WHERE k = 1").unwrap()
}

fn table(v: &[&[&str]]) -> Vec<Vec<String>> {
    v.iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect()
}

#[test]
fn a_conditional_batch_applies_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    let batch = "BEGIN BATCH
        INSERT INTO t (k, c, v, w) VALUES (1, 1, 'one', 1) IF NOT EXISTS;
        INSERT INTO t (k, c, v, w) VALUES (1, 2, 'two', 2);
        APPLY BATCH";
    assert_eq!(run(&mut cql, batch), table(&[&["[applied]"], &["True"]]));
    let written = rows(&mut cql).displayed();
    assert_eq!(written, table(&[&["2", "two", "2"], &["1", "one", "1"]]));
    // Again: row 1 exists, so nothing is written, not even the plain statement's row; the
    // answer shows the row that decided it, every column (IF NOT EXISTS asks of them all).
    let again = "BEGIN BATCH
        INSERT INTO t (k, c, v, w) VALUES (1, 1, 'uno', 10) IF NOT EXISTS;
        UPDATE t SET v = 'dos' WHERE k = 1 AND c = 2;
        APPLY BATCH";
    let want = table(&[
        &["[applied]", "k", "c", "v", "w"],
        &["False", "1", "1", "one", "1"],
    ]);
    assert_eq!(run(&mut cql, again), want);
    assert_eq!(rows(&mut cql).displayed(), written);
}

#[test]
fn every_condition_must_hold_and_a_failure_shows_each_row_checked() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    cql.execute(
        "INSERT INTO t (k, c, v, w) VALUES (1, 1, 'x', 5);
         INSERT INTO t (k, c, v, w) VALUES (1, 2, 'y', 6)",
    )
    .unwrap();
    let both = |w: i32| {
        format!(
            "BEGIN BATCH
             UPDATE t SET v = 'a' WHERE k = 1 AND c = 1 IF v = 'x';
             UPDATE t SET v = 'b' WHERE k = 1 AND c = 2 IF w = {w};
             DELETE FROM t WHERE k = 1 AND c = 3 IF EXISTS;
             APPLY BATCH"
        )
    };
    // One condition fails (row 3 does not exist): nothing applies. The answer has a row per
    // existing row checked, in clustering order (DESC here), with the key columns and the
    // conditioned ones; IF EXISTS asks of every column.
    let want = table(&[
        &["[applied]", "k", "c", "v", "w"],
        &["False", "1", "2", "y", "6"],
        &["False", "1", "1", "x", "5"],
    ]);
    assert_eq!(run(&mut cql, &both(6)), want);
    let before = table(&[&["2", "y", "6"], &["1", "x", "5"]]);
    assert_eq!(rows(&mut cql).displayed(), before);
    // Without the IF EXISTS and with both conditions holding, both updates apply.
    let holds = "BEGIN BATCH
        UPDATE t SET v = 'a' WHERE k = 1 AND c = 1 IF v = 'x';
        UPDATE t SET v = 'b' WHERE k = 1 AND c = 2 IF w = 6 AND v = 'y';
        APPLY BATCH";
    assert_eq!(run(&mut cql, holds), table(&[&["[applied]"], &["True"]]));
    let after = table(&[&["2", "b", "6"], &["1", "a", "5"]]);
    assert_eq!(rows(&mut cql).displayed(), after);
    // A failing column condition alone shows only the key and conditioned columns.
    let fails = "BEGIN BATCH UPDATE t SET w = 0 WHERE k = 1 AND c = 1 IF w = 99 APPLY BATCH";
    let want = table(&[&["[applied]", "k", "c", "w"], &["False", "1", "1", "5"]]);
    assert_eq!(run(&mut cql, fails), want);
}

#[test]
fn what_a_conditional_batch_may_not_do_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    for bad in [
        // Two partitions.
        "BEGIN BATCH INSERT INTO t (k, c, v) VALUES (1, 1, 'a') IF NOT EXISTS;
         INSERT INTO t (k, c, v) VALUES (2, 1, 'b') APPLY BATCH",
        // Two tables.
        "BEGIN BATCH INSERT INTO t (k, c, v) VALUES (1, 1, 'a') IF NOT EXISTS;
         INSERT INTO u (k, v) VALUES (1, 'b') APPLY BATCH",
        // Custom timestamps, on the batch or on a statement.
        "BEGIN BATCH USING TIMESTAMP 5 INSERT INTO t (k, c, v) VALUES (1, 1, 'a') IF NOT EXISTS APPLY BATCH",
        "BEGIN BATCH INSERT INTO t (k, c, v) VALUES (1, 1, 'a') IF NOT EXISTS;
         INSERT INTO t (k, c, v) VALUES (1, 2, 'b') USING TIMESTAMP 5 APPLY BATCH",
        // A condition on a row not named whole, or on a key column.
        "BEGIN BATCH UPDATE t SET v = 'a' WHERE k = 1 AND c IN (1, 2) IF v = 'x' APPLY BATCH",
        "BEGIN BATCH UPDATE t SET v = 'a' WHERE k = 1 AND c = 1 IF c = 1 APPLY BATCH",
        // A value of the wrong type in a condition.
        "BEGIN BATCH UPDATE t SET v = 'a' WHERE k = 1 AND c = 1 IF w = 'x' APPLY BATCH",
    ] {
        assert!(cql.execute(bad).is_err(), "{bad}");
    }
    assert!(rows(&mut cql).to_vecs().is_empty());
    assert!(cql.query("SELECT * FROM u").unwrap().to_vecs().is_empty());
}

#[test]
fn a_prepared_conditional_batch_answers_with_its_applied_rows() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    let insert = cql
        .prepare("INSERT INTO t (k, c, v) VALUES (?, ?, ?) IF NOT EXISTS")
        .unwrap();
    let plain = cql
        .prepare("UPDATE t SET w = ? WHERE k = ? AND c = ?")
        .unwrap();
    let (one, two, seven) = (1i32.to_be_bytes(), 2i32.to_be_bytes(), 7i32.to_be_bytes());
    let first: [Option<&[u8]>; 3] = [Some(&one), Some(&one), Some(b"a")];
    let second: [Option<&[u8]>; 3] = [Some(&seven), Some(&one), Some(&two)];
    let items = [(&insert, &first[..]), (&plain, &second[..])];
    let answer = shown(cql.execute_batch_of(&items).unwrap());
    assert_eq!(answer, table(&[&["[applied]"], &["True"]]));
    let again = shown(cql.execute_batch_of(&items).unwrap());
    assert_eq!(again[0], ["[applied]", "k", "c", "v", "w"]);
    assert_eq!(again[1][0], "False");
    let want = table(&[&["2", "null", "7"], &["1", "a", "null"]]);
    assert_eq!(rows(&mut cql).displayed(), want);
}

#[test]
fn of_racing_conditional_batches_for_one_row_exactly_one_applies() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let applied = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for n in 0..8 {
            let (db, applied) = (&db, &applied);
            s.spawn(move || {
                let mut cql = session(db);
                let text = format!(
                    "BEGIN BATCH INSERT INTO t (k, c, v) VALUES (1, 1, 'w{n}') IF NOT EXISTS;
                     INSERT INTO t (k, c, v) VALUES (1, {}, 'w{n}') APPLY BATCH",
                    n + 10
                );
                if run(&mut cql, &text)[1][0] == "True" {
                    applied.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
    });
    assert_eq!(applied.into_inner(), 1);
    let mut cql = session(&db);
    // The winner's two rows, and no loser's.
    assert_eq!(rows(&mut cql).to_vecs().len(), 2);
}

#[test]
fn every_statement_is_checked_even_when_a_condition_fails() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    cql.execute("INSERT INTO t (k, c, v) VALUES (1, 1, 'x')")
        .unwrap();
    for bad in [
        // The condition fails (the row exists), and the other statement is no valid write.
        "BEGIN BATCH INSERT INTO t (k, c, v) VALUES (1, 1, 'y') IF NOT EXISTS;
         UPDATE t SET nosuch = 1 WHERE k = 1 AND c = 2 APPLY BATCH",
        "UPDATE t SET nosuch = 1 WHERE k = 1 AND c = 1 IF v = 'zz'",
        // IF NOT EXISTS mixes with no other condition on the same row.
        "BEGIN BATCH INSERT INTO t (k, c, v) VALUES (1, 5, 'a') IF NOT EXISTS;
         UPDATE t SET w = 2 WHERE k = 1 AND c = 5 IF v = null APPLY BATCH",
        "BEGIN BATCH INSERT INTO t (k, c, v) VALUES (1, 5, 'a') IF NOT EXISTS;
         DELETE FROM t WHERE k = 1 AND c = 5 IF EXISTS APPLY BATCH",
    ] {
        assert!(cql.execute(bad).is_err(), "{bad}");
    }
    let want = table(&[&["1", "x", "null"]]);
    assert_eq!(rows(&mut cql).displayed(), want);
    // The conditioned columns of a failure come in the order the conditions name them.
    let fails =
        "BEGIN BATCH UPDATE t SET v = 'n' WHERE k = 1 AND c = 1 IF w = 99 AND v = 'zz' APPLY BATCH";
    let want = table(&[
        &["[applied]", "k", "c", "w", "v"],
        &["False", "1", "1", "null", "x"],
    ]);
    assert_eq!(run(&mut cql, fails), want);
}

#[test]
fn a_prepared_conditional_batch_keeps_its_table_and_answers_through_execute_batch() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = session(&db);
    let insert = cql
        .prepare("INSERT INTO t (k, c, v) VALUES (?, ?, ?) IF NOT EXISTS")
        .unwrap();
    let one = 1i32.to_be_bytes();
    let row: [Option<&[u8]>; 3] = [Some(&one), Some(&one), Some(b"a")];
    let first = shown(cql.execute_batch(&insert, &[&row[..]]).unwrap());
    assert_eq!(first, table(&[&["[applied]"], &["True"]]));
    let again = shown(cql.execute_batch(&insert, &[&row[..]]).unwrap());
    assert_eq!(again[1][0], "False", "{again:?}");
    // A key column renamed since: the statement still writes the table it was prepared for.
    cql.execute("ALTER TABLE t RENAME k TO id").unwrap();
    let two = 2i32.to_be_bytes();
    let other: [Option<&[u8]>; 3] = [Some(&one), Some(&two), Some(b"b")];
    let applied = shown(cql.execute_batch_of(&[(&insert, &other[..])]).unwrap());
    assert_eq!(applied, table(&[&["[applied]"], &["True"]]));
    let got = cql
        .query("SELECT c, v FROM t WHERE id = 1")
        .unwrap()
        .displayed();
    assert_eq!(got, table(&[&["2", "b"], &["1", "a"]]));
}
