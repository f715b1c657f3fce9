//! What a write that failed leaves behind, found by the differential runs against the model
//! (`engine/tests/model.rs`, the `model_ops` fuzz target). A failed write was never
//! acknowledged, so it may or may not have taken effect; these check that it takes effect whole
//! or not at all, and that whichever it is survives what follows: a reopen, a power cut, another
//! open.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;

use common::T0;
use supercolumn::io::{Fault, FaultFs, FsCall};
use supercolumn::{
    BatchMutation, ColumnPath, CommitLogSync, Database, ManualClock, Options, WriteOptions,
};

const KS: &str = "Keyspace1";

fn open(dir: &Path, ffs: &FaultFs) -> supercolumn::Result<Database> {
    let mut o = Options::default().with_clock(Arc::new(ManualClock::new(T0)));
    o.commit_log_sync = CommitLogSync::Batch { window_ms: 0.0 };
    o.file_system = Arc::new(ffs.clone());
    Database::open(dir, o)
}

fn setup() -> (tempfile::TempDir, FaultFs, std::path::PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let ffs = FaultFs::new(root.path().join("parked")).unwrap();
    let data = root.path().join("data");
    (root, ffs, data)
}

fn sync_fails_once(ffs: &FaultFs) {
    ffs.fail_one(Fault {
        call: Some(FsCall::Sync),
        ..Fault::eio(0)
    });
}

fn value(db: &Database, key: &str, path: &ColumnPath) -> Option<Vec<u8>> {
    db.get(KS, key, path)
        .unwrap()
        .map(|c| c.as_column().unwrap().value.clone())
}

fn cut_power_and_reopen(ffs: &FaultFs, db: Database, dir: &Path) -> Database {
    ffs.lose_power().unwrap();
    drop(db);
    ffs.power_on();
    open(dir, ffs).expect("open after the power cut")
}

/// A write whose fsync failed reached the log's page cache; the reopen replays it and names the
/// old segment's end in the new segment's header. Both must be durable before that header is:
/// the old code wrote the header first, and after a power cut every open failed with "cut
/// short: … segment 2 says they ran to offset …".
#[test]
fn a_write_replayed_after_its_fsync_failed_survives_a_power_cut_after_the_reopen() {
    let (_root, ffs, dir) = setup();
    let db = open(&dir, &ffs).unwrap();
    let c = ColumnPath::new("Standard1").column("c");
    sync_fails_once(&ffs);
    assert!(db.insert(KS, "k", &c, "v", WriteOptions::at(1)).is_err());
    drop(db);
    let db = open(&dir, &ffs).unwrap();
    let seen = value(&db, "k", &c);
    let db = cut_power_and_reopen(&ffs, db, &dir);
    assert_eq!(
        value(&db, "k", &c),
        seen,
        "what the reopen showed is what a power cut keeps"
    );
}

/// An open that failed writing its new segment's header leaves a segment without one. The next
/// open (faults off) starts the segment after it; every open after that met the headerless
/// segment followed by later ones and refused: "its header is cut short, yet later segments
/// follow". The later segment's header says the headerless one held nothing.
#[test]
fn an_open_that_failed_writing_its_segment_header_does_not_stop_later_opens() {
    let (_root, ffs, dir) = setup();
    let db = open(&dir, &ffs).unwrap();
    let c = ColumnPath::new("Standard1").column("c");
    db.insert(KS, "k", &c, "v", WriteOptions::at(1)).unwrap();
    drop(db);
    ffs.fail_one(Fault {
        call: Some(FsCall::Append),
        ..Fault::eio(0)
    });
    assert!(open(&dir, &ffs).is_err(), "the header's append fails");
    let db = open(&dir, &ffs).unwrap();
    drop(db);
    let db = open(&dir, &ffs).expect("a third open");
    assert_eq!(value(&db, "k", &c).unwrap(), b"v");
    let db = cut_power_and_reopen(&ffs, db, &dir);
    assert_eq!(value(&db, "k", &c).unwrap(), b"v");
}

/// A batch over two column families is one commit-log record. Its fsync failed, so no memtable
/// got it, but the record is in the log. Closing a poisoned database flushes its memtables, and
/// the flush claimed the log up to its end, so the next open replayed the record for the column
/// family that had nothing to flush and skipped it for the other: half a batch came back.
#[test]
fn a_batch_whose_fsync_failed_comes_back_whole_or_not_at_all() {
    let (_root, ffs, dir) = setup();
    let db = open(&dir, &ffs).unwrap();
    let std_c = ColumnPath::new("Standard1").column("c");
    let sup_c = ColumnPath::new("Super1").super_column("s").column("c");
    db.insert(KS, "k", &std_c, "old", WriteOptions::at(1))
        .unwrap();
    let mut b = BatchMutation::new();
    b.insert("k", std_c.clone(), "new", WriteOptions::at(2));
    b.insert("k", sup_c.clone(), "new", WriteOptions::at(2));
    sync_fails_once(&ffs);
    assert!(db.batch_mutate(KS, &b).is_err());
    drop(db);
    let db = open(&dir, &ffs).unwrap();
    let (s, p) = (value(&db, "k", &std_c), value(&db, "k", &sup_c));
    match p {
        Some(_) => assert_eq!(s.unwrap(), b"new", "the batch's other half is missing"),
        None => assert_eq!(s.unwrap(), b"old"),
    }
}
