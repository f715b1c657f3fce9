//! Stale secondary index entries and compaction: an overwrite, a delete or an expiry leaves its
//! row's old entry behind (reads check it against the row); a compaction of the base, minor or
//! major, deletes the entries of the cells it discards; a major compaction of the index asks
//! the row once more and drops the entries it no longer makes, and only those.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use supercolumn::schema::IndexDef;
use supercolumn::{
    ColumnParent, ColumnPath, Database, IndexClause, IndexExpression, SlicePredicate, WriteOptions,
};

const KS: &str = "Keyspace1";
const CF: &str = "Standard1";
const INDEX: &str = "state_idx";
const STATES: [&str; 4] = ["UT", "TX", "CA", "NY"];

fn set(db: &Database, key: &str, value: &str, ts: i64, ttl: Option<u32>) {
    let w = WriteOptions {
        ttl,
        ..WriteOptions::at(ts)
    };
    db.insert(KS, key, &ColumnPath::new(CF).column("state"), value, w)
        .unwrap();
}

/// The keys of the entries the index holds under `value`, stale ones too.
fn entries(db: &Database, value: &str) -> Vec<String> {
    let found = db
        .index_entries(KS, CF, INDEX, value.as_bytes(), None, 100_000)
        .unwrap();
    found
        .into_iter()
        .map(|e| String::from_utf8(e.key).unwrap())
        .collect()
}

/// The keys the index answers for `state = value` (each checked against its row).
fn indexed(db: &Database, value: &str) -> Vec<String> {
    let clause = IndexClause {
        expressions: vec![IndexExpression::eq("state", value)],
        start_key: Vec::new(),
        count: 100_000,
    };
    let parent = ColumnParent::new(CF);
    let rows = db
        .get_indexed_slices(KS, &parent, &clause, &SlicePredicate::everything())
        .unwrap();
    rows.into_iter()
        .map(|r| String::from_utf8(r.key).unwrap())
        .collect()
}

/// A database whose `Standard1` has a built index of its `state` column.
fn indexed_db() -> common::TestDb {
    let t = common::open_default();
    t.db.create_index(KS, CF, IndexDef::new(INDEX, b"state".to_vec(), 0))
        .unwrap();
    assert!(t
        .db
        .wait_for_index(KS, INDEX, Duration::from_secs(60))
        .unwrap());
    t
}

#[test]
fn a_major_compaction_drops_the_entries_rows_no_longer_make_and_keeps_the_rest() {
    let t = indexed_db();
    let db = &t.db;
    // 200 rows, each moved through the four states (flushed between moves, so each state's
    // entry lands in an SSTable of its own), then: some deleted, some given a TTL that runs
    // out, some written back to an earlier state with an older timestamp (which loses).
    for (round, state) in STATES.iter().enumerate() {
        for r in 0..200 {
            set(db, &format!("k{r}"), state, 10 + round as i64, None);
        }
        db.flush(KS, Some(CF)).unwrap();
    }
    for r in 0..50 {
        db.remove(KS, format!("k{r}"), &ColumnPath::new(CF), Some(100))
            .unwrap();
    }
    for r in 50..80 {
        set(db, &format!("k{r}"), "WA", 200, Some(5));
    }
    for r in 80..100 {
        set(db, &format!("k{r}"), "UT", 1, None);
    }
    t.clock.advance_seconds(10);
    // A minor compaction of the four SSTables may have deleted the entries the overwrites
    // left (see the next test); the deletes, expiries and losing writes since are in the
    // memtable, so NY's entries for them are all still there.
    assert_eq!(entries(db, "NY").len(), 200, "NY's entries, stale ones too");
    let answers: Vec<Vec<String>> = STATES.iter().map(|s| indexed(db, s)).collect();
    assert_eq!(answers[3].len(), 120);

    db.compact(KS, Some(CF)).unwrap();
    for (s, answer) in STATES.iter().zip(&answers) {
        // What the index answers is unchanged, and it now holds only those rows' entries.
        assert_eq!(&indexed(db, s), answer, "state = {s}");
        assert_eq!(&entries(db, s), answer, "the entries of {s}");
    }
    assert!(entries(db, "WA").is_empty());
    // A later write makes its entry again, and the next major compaction keeps it.
    set(db, "k0", "UT", 300, None);
    set(db, "k199", "UT", 300, None);
    db.compact(KS, Some(CF)).unwrap();
    assert_eq!(indexed(db, "UT"), entries(db, "UT"));
    assert_eq!(entries(db, "UT").len(), 2);
    assert_eq!(entries(db, "NY").len(), 119);
}

#[test]
fn a_minor_compaction_of_the_base_deletes_the_entries_of_the_cells_it_discards() {
    let t = indexed_db();
    let db = &t.db;
    let keys = |r: std::ops::Range<usize>| r.map(|r| format!("k{r}")).collect::<Vec<_>>();
    // Four SSTables of the base, one size-tiered bucket: every row UT, then every row TX;
    // then k0..k49 deleted and k50..k79 given a TTL'd WA; then k80..k99 written back to UT
    // with an older timestamp (which loses).
    for (state, ts) in [("UT", 10), ("TX", 11)] {
        for k in keys(0..200) {
            set(db, &k, state, ts, None);
        }
        db.flush(KS, Some(CF)).unwrap();
    }
    for k in keys(0..50) {
        db.remove(KS, &k, &ColumnPath::new(CF), Some(100)).unwrap();
    }
    for k in keys(50..80) {
        set(db, &k, "WA", 200, Some(3600));
    }
    db.flush(KS, Some(CF)).unwrap();
    for k in keys(80..100) {
        set(db, &k, "UT", 1, None);
    }
    db.flush(KS, Some(CF)).unwrap();
    // The background compactor may have merged them already; this waits for it, or runs it.
    db.compact_pending(KS, Some(CF)).unwrap();
    let mut tx = keys(80..200);
    tx.sort();
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(sorted(indexed(db, "TX")), tx);
    // No major compaction ran: the discarded cells' entries went with the base's merge.
    assert_eq!(sorted(entries(db, "TX")), tx, "the entries of TX");
    assert!(entries(db, "UT").is_empty(), "{:?}", entries(db, "UT"));
    // A TTL'd value's entry expires with it, and is left to do so.
    assert_eq!(entries(db, "WA").len(), 30);
    assert_eq!(indexed(db, "WA").len(), 30);
}
