//! Request tracing through the public API: while a thread traces, a read notes the memtables it
//! merged, the SSTables a bloom filter skipped, key cache hits, index searches and blocks read
//! or found cached, and a write its commit log append and the memtables it went to; a thread
//! that does not trace notes nothing.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use supercolumn::trace;
use supercolumn::{ColumnPath, Database, Options, WriteOptions};

const KS: &str = "Keyspace1";

fn traced_get(db: &Database, key: &str) -> Vec<String> {
    trace::begin();
    db.get(KS, key, &ColumnPath::new("Standard1").column("c"))
        .unwrap();
    let (events, _) = trace::end();
    events.into_iter().map(|e| e.activity).collect()
}

#[test]
fn a_traced_read_notes_what_the_engine_did() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let path = ColumnPath::new("Standard1").column("c");
    for (i, k) in ["a", "b"].iter().enumerate() {
        db.insert(KS, *k, &path, "v", WriteOptions::default())
            .unwrap();
        db.flush(KS, Some("Standard1")).unwrap();
        assert_eq!(
            db.column_family_stats(KS, "Standard1").unwrap().sstables,
            i + 1
        );
    }
    // `a` is in the first SSTable only: the second's bloom filter skips it.
    let first = traced_get(&db, "a");
    let has = |events: &[String], prefix: &str| events.iter().any(|e| e.starts_with(prefix));
    assert!(has(&first, "Merging memtable contents (0 of"), "{first:#?}");
    assert!(
        has(&first, "Bloom filter allows skipping sstable"),
        "{first:#?}"
    );
    assert!(
        has(&first, "Partition index found the row in sstable"),
        "{first:#?}"
    );
    assert!(has(&first, "Read block 0 of sstable"), "{first:#?}");
    // Read again: the key cache and the block cache answer.
    let again = traced_get(&db, "a");
    assert!(has(&again, "Key cache hit for sstable"), "{again:#?}");
    assert!(has(&again, "Block 0 of sstable"), "{again:#?}");
    // A key no file holds: every filter rules it out.
    let none = traced_get(&db, "zzz");
    assert!(
        none.iter()
            .any(|e| e.contains("the bloom filters of all 2 sstables rule it out"))
            || has(&none, "Partition index: the row is not in sstable"),
        "{none:#?}"
    );
    // Untraced, nothing is collected (and the next trace starts empty).
    db.get(KS, "b", &path).unwrap();
    assert!(trace::end().0.is_empty());
}

#[test]
fn a_traced_write_notes_its_commit_log_append_and_memtables() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.commit_log_sync = supercolumn::CommitLogSync::Batch { window_ms: 1.0 };
    let db = Database::open(dir.path(), o).unwrap();
    let path = ColumnPath::new("Standard1").column("c");
    trace::begin();
    db.insert(KS, "k", &path, "v", WriteOptions::default())
        .unwrap();
    let (events, _) = trace::end();
    let acts: Vec<String> = events.into_iter().map(|e| e.activity).collect();
    let at = |prefix: &str| {
        acts.iter()
            .position(|a| a.starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix}: {acts:#?}"))
    };
    let appended = at("Appended 1 records (");
    assert!(
        acts[appended].ends_with("to the commitlog, synced"),
        "{acts:#?}"
    );
    assert!(at("Appending to commitlog") < appended);
    assert!(appended < at("Adding to Standard1 memtable"));
    db.insert(KS, "k2", &path, "v", WriteOptions::default())
        .unwrap();
    let (events, _) = trace::end();
    assert!(events.is_empty(), "an untraced write notes nothing");
}
