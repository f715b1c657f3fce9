//! The five ways acknowledged data was lost when the tools were tried as an adversary would, each
//! now refused with an error naming the problem, and the data still there:
//! a missing `MANIFEST.db`, a missing `SCHEMA.db`, gaps and damage in the commit log, a path
//! with too many names (in `tools/tests/shell.rs`), and a deleted lock file.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::*;
use supercolumn::io::FaultFs;
use supercolumn::{ColumnPath, CommitLogSync, Database, Error, ManualClock, Options, WriteOptions};

const KS: &str = "Keyspace1";

/// Every file under `dir`, relative to it.
fn files(dir: &Path) -> BTreeSet<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(p.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

fn put(db: &Database, key: &str, col: &str, value: &str) {
    db.insert(
        KS,
        key,
        &ColumnPath::new("Standard1").column(col),
        value,
        WriteOptions::now(),
    )
    .unwrap();
}

fn rows_present(db: &Database, n: usize) -> usize {
    (0..n)
        .filter(|i| !whole_row(db, KS, format!("row{i}"), "Standard1").is_empty())
        .count()
}

/// A database with flushed SSTables, unflushed writes, and two files of the user's own in the
/// keyspace folder.
fn populated() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path(), Options::default()).unwrap();
        for i in 0..50 {
            put(&db, &format!("row{i}"), "c", "flushed");
        }
        db.flush(KS, None).unwrap();
        for i in 50..60 {
            put(&db, &format!("row{i}"), "c", "logged");
        }
        db.close().unwrap();
    }
    std::fs::write(dir.path().join(KS).join("README.txt"), "my notes").unwrap();
    std::fs::write(dir.path().join(KS).join("Standard1-backup.db"), "my backup").unwrap();
    dir
}

/// Removes `file` from a populated database and opens it: refused with an error naming the
/// file, and the folder exactly as it was.
fn refused_without(file: &str) {
    let dir = populated();
    std::fs::remove_file(dir.path().join(file)).unwrap();
    let before = files(dir.path());
    let e = Database::open(dir.path(), Options::default()).unwrap_err();
    assert!(matches!(e, Error::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains(file), "{e}");
    assert_eq!(files(dir.path()), before, "open changed nothing");
}

#[test]
fn a_missing_manifest_is_refused_and_nothing_is_deleted() {
    refused_without("MANIFEST.db");
}

#[test]
fn a_missing_schema_is_refused_and_nothing_is_deleted_or_written() {
    refused_without("SCHEMA.db");
}

#[test]
fn a_new_folder_with_only_foreign_files_opens_as_new() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    put(&db, "k", "c", "v");
    drop(db);
    assert!(dir.path().join("notes.txt").exists());
}

#[test]
fn foreign_files_in_a_keyspace_folder_are_left_alone() {
    let dir = populated();
    for _ in 0..2 {
        let db = Database::open(dir.path(), Options::default()).unwrap();
        assert_eq!(rows_present(&db, 60), 60);
        db.compact(KS, None).unwrap();
        db.close().unwrap();
    }
    let ks = dir.path().join(KS);
    assert_eq!(std::fs::read(ks.join("README.txt")).unwrap(), b"my notes");
    assert_eq!(
        std::fs::read(ks.join("Standard1-backup.db")).unwrap(),
        b"my backup"
    );
}

// ---- the commit log ----

fn batch_options(ffs: &FaultFs) -> Options {
    let mut o = Options::default().with_clock(Arc::new(ManualClock::new(T0)));
    o.commit_log_sync = CommitLogSync::Batch { window_ms: 1.0 };
    o.commit_log_segment_size_mb = 1;
    o.file_system = Arc::new(ffs.clone());
    o
}

/// Batch mode, 1 MiB segments: 30 acknowledged writes of 100 KiB each, then the process dies
/// (the power goes off before the database is dropped, so nothing is flushed at close). Returns
/// the data directory and its segments, oldest first.
fn thirty_acknowledged_writes(root: &Path) -> (PathBuf, FaultFs, Vec<PathBuf>) {
    let dir = root.join("db");
    let ffs = FaultFs::new(root.join("park")).unwrap();
    let db = Database::open(&dir, batch_options(&ffs)).unwrap();
    let value = "v".repeat(100 << 10);
    for i in 0..30 {
        put(&db, &format!("row{i}"), "c", &value);
    }
    ffs.lose_power().unwrap();
    drop(db);
    ffs.power_on();
    let mut segs: Vec<PathBuf> = std::fs::read_dir(dir.join("commit-log"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    segs.sort();
    // The segments holding records (a fresh, empty one may follow).
    segs.retain(|p| std::fs::metadata(p).unwrap().len() > 64);
    assert!(segs.len() >= 3, "{segs:?}");
    (dir, ffs, segs)
}

fn expect_corrupt(dir: &Path, ffs: &FaultFs, naming: &Path) {
    match Database::open(dir, batch_options(ffs)) {
        Ok(db) => panic!(
            "opened with {} of 30 acknowledged writes",
            rows_present(&db, 30)
        ),
        Err(Error::Corrupt { path, reason, .. }) => {
            assert_eq!(path, naming, "{reason}");
        }
        Err(e) => panic!("expected a corruption error, got {e}"),
    }
}

#[test]
fn an_intact_log_replays_all_thirty() {
    let root = tempfile::tempdir().unwrap();
    let (dir, ffs, _) = thirty_acknowledged_writes(root.path());
    let db = Database::open(&dir, batch_options(&ffs)).unwrap();
    assert_eq!(rows_present(&db, 30), 30);
}

#[test]
fn a_missing_middle_segment_is_corruption() {
    let root = tempfile::tempdir().unwrap();
    let (dir, ffs, segs) = thirty_acknowledged_writes(root.path());
    std::fs::remove_file(&segs[1]).unwrap();
    expect_corrupt(&dir, &ffs, &segs[1]);
}

#[test]
fn a_missing_newest_segment_is_corruption() {
    let root = tempfile::tempdir().unwrap();
    let (dir, ffs, segs) = thirty_acknowledged_writes(root.path());
    let last = segs.last().unwrap();
    std::fs::remove_file(last).unwrap();
    expect_corrupt(&dir, &ffs, last);
}

#[test]
fn a_missing_oldest_segment_is_corruption() {
    let root = tempfile::tempdir().unwrap();
    let (dir, ffs, segs) = thirty_acknowledged_writes(root.path());
    std::fs::remove_file(&segs[0]).unwrap();
    expect_corrupt(&dir, &ffs, &segs[0]);
}

#[test]
fn a_deleted_commit_log_folder_is_corruption() {
    let root = tempfile::tempdir().unwrap();
    let (dir, ffs, segs) = thirty_acknowledged_writes(root.path());
    std::fs::remove_dir_all(dir.join("commit-log")).unwrap();
    expect_corrupt(&dir, &ffs, &segs[0]);
}

#[test]
fn a_cut_short_older_segment_is_corruption() {
    let root = tempfile::tempdir().unwrap();
    let (dir, ffs, segs) = thirty_acknowledged_writes(root.path());
    let len = std::fs::metadata(&segs[0]).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&segs[0])
        .unwrap();
    // Into the middle of the last row's record.
    f.set_len(len - 50_000).unwrap();
    drop(f);
    expect_corrupt(&dir, &ffs, &segs[0]);
}

#[test]
fn a_flipped_byte_in_the_last_record_of_an_older_segment_is_corruption() {
    let root = tempfile::tempdir().unwrap();
    let (dir, ffs, segs) = thirty_acknowledged_writes(root.path());
    let mut bytes = std::fs::read(&segs[0]).unwrap();
    let at = bytes.len() - 50_000;
    bytes[at] ^= 0x40;
    std::fs::write(&segs[0], &bytes).unwrap();
    expect_corrupt(&dir, &ffs, &segs[0]);
}

#[test]
fn replay_errors_can_be_ignored_on_request_and_are_reported() {
    let root = tempfile::tempdir().unwrap();
    let (dir, ffs, segs) = thirty_acknowledged_writes(root.path());
    std::fs::remove_file(&segs[1]).unwrap();
    let mut o = batch_options(&ffs);
    o.commit_log_ignore_replay_errors = true;
    let db = Database::open(&dir, o).unwrap();
    let n = rows_present(&db, 30);
    assert!((15..30).contains(&n), "{n} of 30");
    let report = db.replay_report();
    assert!(
        report
            .iter()
            .any(|l| l.contains(&*segs[1].to_string_lossy())),
        "{report:?}"
    );
    // Once opened that way, the database is whole again: the next open needs no option.
    drop(db);
    let db = Database::open(&dir, batch_options(&ffs)).unwrap();
    assert_eq!(rows_present(&db, 30), n);
}

// ---- the lock ----

#[test]
fn the_lock_holds_after_its_file_is_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let a = Database::open(dir.path(), Options::default()).unwrap();
    put(&a, "k", "c", "one");
    let _ = std::fs::remove_file(dir.path().join("db.lock"));
    let b = Database::open(dir.path(), Options::default());
    assert!(
        matches!(b, Err(Error::Locked { .. })),
        "a second open of a locked folder was not refused"
    );
    drop(b);
    put(&a, "k", "d", "two");
    drop(a);
    let db = Database::open(dir.path(), Options::default()).unwrap();
    assert_eq!(whole_row(&db, KS, "k", "Standard1").len(), 2);
}
