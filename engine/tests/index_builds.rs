//! Index builds in the background: over rows already written while writes go on, stopped by a
//! close or a SIGKILL in the middle and done again at the next open, reads through the index
//! refused as not yet available until the build ends, then answering what a full scan does.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use supercolumn::schema::IndexDef;
use supercolumn::{
    BatchMutation, ColumnParent, ColumnPath, Database, Error, IndexClause, IndexExpression,
    Options, SlicePredicate, WriteOptions,
};

const KS: &str = "Keyspace1";
const CF: &str = "Standard1";
const INDEX: &str = "state_idx";
const STATES: [&str; 5] = ["UT", "TX", "CA", "NY", "WA"];
/// Rows written before the index: enough that its build takes a while.
const ROWS: usize = 20_000;
const CHILD_DIR: &str = "SC_INDEX_BUILD_CHILD_DIR";

/// Writes rows `k0`… `k{ROWS - 1}`, each with a `state`, at timestamp 1, and flushes them.
fn fill(db: &Database) {
    for chunk in (0..ROWS).collect::<Vec<_>>().chunks(500) {
        let mut batch = BatchMutation::new();
        for i in chunk {
            let key = format!("k{i}");
            let path = ColumnPath::new(CF).column("state");
            batch.insert(key.as_str(), &path, STATES[i % 5], WriteOptions::at(1));
        }
        db.batch_mutate(KS, &batch).unwrap();
    }
    db.flush(KS, Some(CF)).unwrap();
}

fn create(db: &Database) {
    db.create_index(KS, CF, IndexDef::new(INDEX, b"state".to_vec(), 0))
        .unwrap();
}

fn wait_built(db: &Database) {
    let built = db.wait_for_index(KS, INDEX, Duration::from_secs(300));
    assert!(built.unwrap(), "the build did not end in five minutes");
}

/// The keys the index finds for `state = value`, or why it could not.
fn indexed(db: &Database, value: &str) -> Result<Vec<String>, Error> {
    let clause = IndexClause {
        expressions: vec![IndexExpression::eq("state", value)],
        start_key: Vec::new(),
        count: 1_000_000,
    };
    let rows = db.get_indexed_slices(
        KS,
        &ColumnParent::new(CF),
        &clause,
        &SlicePredicate::everything(),
    )?;
    Ok(rows
        .into_iter()
        .map(|r| String::from_utf8(r.key).unwrap())
        .collect())
}

/// The keys a full scan finds with `state = value`, in the same order.
fn scanned(db: &Database, value: &str) -> Vec<String> {
    common::scanned_keys(db, KS, CF, "state", value)
}

/// Either the read is refused as not yet available, or it answers what a scan answers.
fn refused_or_right(db: &Database, value: &str) -> bool {
    match indexed(db, value) {
        Err(Error::IndexNotBuilt { index, .. }) => {
            assert_eq!(index, INDEX);
            true
        }
        Err(e) => panic!("a read through a building index failed otherwise: {e}"),
        Ok(found) => {
            assert_eq!(found, scanned(db, value), "state = {value}");
            false
        }
    }
}

fn agree(db: &Database, when: &str) {
    for v in STATES {
        assert_eq!(
            indexed(db, v).unwrap(),
            scanned(db, v),
            "{when}: state = {v}"
        );
    }
}

#[test]
fn a_build_runs_in_the_background_while_writes_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    fill(&db);
    create(&db);
    let mut refused = 0;
    for i in 0..3_000usize {
        let key = format!("k{}", i * 7 % ROWS);
        let path = ColumnPath::new(CF).column("state");
        let ts = 2 + i as i64;
        if i % 10 == 0 {
            db.remove(KS, &key, &ColumnPath::new(CF), Some(ts)).unwrap();
        } else {
            db.insert(KS, &key, &path, STATES[(i + 1) % 5], WriteOptions::at(ts))
                .unwrap();
        }
        if i % 500 == 0 && refused_or_right(&db, "TX") {
            refused += 1;
        }
    }
    wait_built(&db);
    agree(
        &db,
        &format!("built ({refused} reads refused while building)"),
    );
}

#[test]
fn a_close_in_the_middle_of_a_build_leaves_it_to_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    fill(&db);
    create(&db);
    // The last handle stops the build and closes the database on this thread: it opens again
    // at once, and builds the index again there.
    drop(db);
    let db = Database::open(dir.path(), Options::default()).unwrap();
    refused_or_right(&db, "CA");
    wait_built(&db);
    agree(&db, "reopened");
    drop(db);
    let db = Database::open(dir.path(), Options::default()).unwrap();
    agree(&db, "reopened once built");
}

#[test]
fn an_index_dropped_and_created_again_while_it_builds_is_built_once_more() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    fill(&db);
    create(&db);
    assert_eq!(db.drop_index(KS, INDEX).unwrap(), CF);
    create(&db);
    wait_built(&db);
    agree(&db, "created again");
}

/// The child: fills the rows, creates the index, says so, and waits to be killed in the
/// middle of the build.
fn child(dir: &Path) -> ! {
    let db = Database::open(dir, common::crash_options(1.0)).expect("child open");
    fill(&db);
    let mut out = std::io::stdout().lock();
    writeln!(out, "ack filled").unwrap();
    create(&db);
    writeln!(out, "ack building").unwrap();
    out.flush().unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[test]
fn a_build_a_kill_interrupts_is_done_again_at_the_next_open() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        child(Path::new(&dir));
    }
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let (mut child, mut out) = common::spawn_child(
        "a_build_a_kill_interrupts_is_done_again_at_the_next_open",
        CHILD_DIR,
        &dir,
    );
    let (seen, _) = common::read_acks(&mut out, 2);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(seen, 2, "the child stopped early");
    let db = Database::open(&dir, common::crash_options(1.0)).unwrap();
    assert_eq!(
        db.describe_keyspace(KS)
            .unwrap()
            .column_family(CF)
            .unwrap()
            .indexes
            .len(),
        1
    );
    refused_or_right(&db, "NY");
    wait_built(&db);
    agree(&db, "after the kill");
}
