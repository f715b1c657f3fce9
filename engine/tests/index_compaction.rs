//! Stale secondary index entries and compaction: an overwrite, a delete or an expiry leaves its
//! row's old entry behind (reads check it against the row); a major compaction of the index
//! asks the row once more and drops the entries it no longer makes, and only those.

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

#[test]
fn a_major_compaction_drops_the_entries_rows_no_longer_make_and_keeps_the_rest() {
    let t = common::open_default();
    let db = &t.db;
    db.create_index(KS, CF, IndexDef::new(INDEX, b"state".to_vec(), 0))
        .unwrap();
    assert!(db
        .wait_for_index(KS, INDEX, Duration::from_secs(60))
        .unwrap());
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
    let before: Vec<usize> = STATES.iter().map(|s| entries(db, s).len()).collect();
    assert_eq!(before, [200; 4], "every state's entries, stale ones too");
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
