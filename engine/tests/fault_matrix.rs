//! An I/O fault at every step: a scripted workload that crosses every stage of the engine
//! (commit-log appends and a segment roll, flushes, a minor and a major compaction and their
//! manifest swaps, a column family created and one dropped, close and reopen) runs once per
//! file-system call it makes, with that one call failing, in six modes: EIO and ENOSPC, each in
//! periodic mode, in batch mode, and in batch mode with a power cut right after the failure.
//! Whatever the call, the failing operation returns an error (never a panic), and after a reopen
//! with faults off (and the power cut, in those modes): every acknowledged
//! write is there, nothing acknowledged as deleted is back, a dropped column family stays
//! dropped, and every SSTable on disk passes `sstable-dump --verify`; and all of that still holds
//! after a power cut right after the reopen (what a reopen replays must be durable).

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::Path;
use std::sync::Arc;

use common::{wait_until, T0};
use supercolumn::inspect::SstableFile;
use supercolumn::io::{Fault, FaultFs};
use supercolumn::{
    ColumnFamilyDef, ColumnPath, CommitLogSync, Database, KeyspaceDef, ManualClock, Options,
    WriteOptions,
};

const KS: &str = "K";

fn options(ffs: &FaultFs, batch: bool) -> Options {
    let mut o = Options::default().with_clock(Arc::new(ManualClock::new(T0)));
    o.commit_log_sync = if batch {
        CommitLogSync::Batch { window_ms: 0.0 }
    } else {
        CommitLogSync::Periodic { period_ms: 600_000 }
    };
    o.commit_log_segment_size_mb = 1;
    o.file_system = Arc::new(ffs.clone());
    o.min_compaction_threshold = 0;
    // Column families named here are added at every open if missing: the ones the workload
    // creates and drops are not named.
    o.keyspaces = Some(vec![
        KeyspaceDef::new(KS).with_column_family(ColumnFamilyDef::standard("A"))
    ]);
    o
}

/// What the reads after the reopen must find: per (CF, row, column), the value of the last
/// acknowledged write (`None`: acknowledged deleted). Columns whose last operation failed are
/// left out: a failed write may or may not have reached the log.
#[derive(Default)]
struct Model {
    cells: BTreeMap<(String, String, String), Option<String>>,
    unsure: Vec<(String, String, String)>,
    dropped: bool,
}

impl Model {
    fn note(&mut self, ok: bool, cf: &str, row: &str, col: &str, v: Option<String>) {
        let k = (cf.to_string(), row.to_string(), col.to_string());
        if ok {
            self.unsure.retain(|u| *u != k);
            self.cells.insert(k, v);
        } else {
            self.cells.remove(&k);
            self.unsure.push(k);
        }
    }
}

/// The scripted workload; every step's error is tolerated (a fault may hit it), every success
/// recorded in `m`. Timestamps increase step by step, so the later acknowledged operation wins.
fn workload(db: &Database, m: &mut Model) {
    let mut ts = 0i64;
    let mut put = |m: &mut Model, cf: &str, row: &str, col: &str, value: String| {
        ts += 1;
        let p = ColumnPath::new(cf).column(col);
        let ok = db.insert(KS, row, &p, &value, WriteOptions::at(ts)).is_ok();
        m.note(ok, cf, row, col, Some(value));
    };
    let gone = db
        .create_column_family(KS, ColumnFamilyDef::standard("Gone"))
        .is_ok();
    // Past a 1 MiB segment: the log rolls.
    let big = "x".repeat(30 << 10);
    for i in 0..40 {
        put(
            m,
            "A",
            &format!("r{}", i % 4),
            &format!("c{i:02}"),
            format!("{i}{big}"),
        );
    }
    let _ = db.flush(KS, Some("A"));
    for i in 40..60 {
        put(
            m,
            "A",
            &format!("r{}", i % 4),
            &format!("c{i:02}"),
            format!("v{i}"),
        );
    }
    // Deletions of columns written before, flushed and not.
    for i in (0..60).step_by(7) {
        let (row, col) = (format!("r{}", i % 4), format!("c{i:02}"));
        let p = ColumnPath::new("A").column(col.as_str());
        let ok = db.remove(KS, &row, &p, Some(1_000 + i)).is_ok();
        m.note(ok, "A", &row, &col, None);
    }
    let _ = db.flush(KS, Some("A"));
    if gone {
        put(m, "Gone", "g", "c", "doomed".into());
        let _ = db.flush(KS, Some("Gone"));
    }
    let _ = db.flush(KS, Some("A"));
    // A minor compaction of two at a time, then a major one.
    let _ = db.compact_pending(KS, Some("A"));
    // A column family created and written, another dropped.
    if db
        .create_column_family(KS, ColumnFamilyDef::standard("New"))
        .is_ok()
    {
        for i in 0..5 {
            put_new(db, m, i);
        }
    }
    if gone {
        // A drop that failed may still have happened (its catalog may be in place while the
        // directory fsync failed): either way, Gone's cells are no longer the reads' to check.
        m.dropped = db.drop_column_family(KS, "Gone").is_ok();
        m.cells.retain(|(cf, _, _), _| cf != "Gone");
    }
    let _ = db.compact(KS, Some("A"));
    for i in 60..70 {
        put(m, "A", "r0", &format!("c{i:02}"), format!("v{i}"));
    }
}

fn put_new(db: &Database, m: &mut Model, i: i64) {
    let col = format!("n{i}");
    let p = ColumnPath::new("New").column(col.as_str());
    let ok = db
        .insert(KS, "n", &p, "new", WriteOptions::at(10_000 + i))
        .is_ok();
    m.note(ok, "New", "n", &col, Some("new".into()));
}

/// Everything the model says, read back; every SSTable verified.
fn check(db: &Database, dir: &Path, m: &Model, what: &str) {
    for ((cf, row, col), want) in &m.cells {
        let got = match db.get(KS, row, &ColumnPath::new(cf).column(col.as_str())) {
            Ok(c) => c.map(|c| String::from_utf8(c.as_column().unwrap().value.clone()).unwrap()),
            Err(e) => panic!("{what}: reading {cf}/{row}/{col}: {e}"),
        };
        assert_eq!(&got, want, "{what}: {cf}/{row}/{col}");
    }
    if m.dropped {
        assert!(
            db.describe_column_family(KS, "Gone").is_err(),
            "{what}: a dropped column family came back"
        );
    }
    // The keyspace's directory appears with its first SSTable.
    let Ok(files) = std::fs::read_dir(dir.join(KS)) else {
        return;
    };
    for entry in files {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with("-Data.db") {
            continue;
        }
        let cf = name.split('-').next().unwrap();
        // A file of a dropped column family is not the reader's to judge.
        let Ok(def) = db.describe_column_family(KS, cf) else {
            continue;
        };
        let file = SstableFile::open(&path, def, db.partitioner())
            .unwrap_or_else(|e| panic!("{what}: {name} does not open: {e}"));
        file.verify()
            .unwrap_or_else(|e| panic!("{what}: {name} fails verify: {e}"));
    }
}

/// One run of the workload with the `n`th call failing; returns whether the fault was reached.
fn point(n: u64, kind: ErrorKind, power_cut: bool, batch: bool) -> bool {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let ffs = FaultFs::new(root.path().join("park")).unwrap();
    ffs.fail_one(Fault {
        kind,
        ..Fault::eio(n)
    });
    let mut m = Model::default();
    match Database::open(&dir, options(&ffs, batch)) {
        Ok(db) => {
            workload(&db, &mut m);
            if power_cut {
                ffs.lose_power().unwrap();
                drop(db);
                ffs.power_on();
            } else {
                let _ = db.close();
            }
        }
        Err(e) => assert!(!e.to_string().is_empty(), "open failed with an empty error"),
    }
    let hit = ffs.hit();
    ffs.heal();
    let what = format!(
        "{kind:?} at call {n} ({:?}){}{}",
        hit,
        if batch {
            ", batch mode"
        } else {
            ", periodic mode"
        },
        if power_cut { ", then a power cut" } else { "" }
    );
    let db = Database::open(&dir, options(&ffs, batch))
        .unwrap_or_else(|e| panic!("{what}: the reopen failed: {e}"));
    // Background work after the reopen (a retried flush) must not change the answers either.
    check(&db, &dir, &m, &what);
    // What the reopen found must now be durable: a power cut right after it loses nothing.
    ffs.lose_power().unwrap();
    drop(db);
    ffs.power_on();
    let db = Database::open(&dir, options(&ffs, batch)).unwrap_or_else(|e| {
        panic!("{what}: the open after the reopen and a power cut failed: {e}")
    });
    check(
        &db,
        &dir,
        &m,
        &format!("{what}, reopened, then a power cut"),
    );
    // Background work after the reopen (a retried flush) must not change the answers either.
    assert!(wait_until(10, || db.flush_all().is_ok()), "{what}: flush");
    check(&db, &dir, &m, &what);
    db.close().unwrap();
    hit.is_some()
}

/// How many calls the workload makes with no fault.
fn calls(batch: bool) -> u64 {
    let root = tempfile::tempdir().unwrap();
    let ffs = FaultFs::new(root.path().join("park")).unwrap();
    let db = Database::open(root.path().join("db"), options(&ffs, batch)).unwrap();
    let mut m = Model::default();
    workload(&db, &mut m);
    db.close().unwrap();
    assert!(m.unsure.is_empty(), "nothing fails without a fault");
    ffs.calls()
}

/// Every point of one mode. A power cut loses what periodic mode has not synced yet (by
/// design), so the modes with a cut run in batch mode.
fn matrix(kind: ErrorKind, power_cut: bool, batch: bool) -> u64 {
    assert!(
        batch || !power_cut,
        "periodic mode loses unsynced writes in a power cut"
    );
    let total = calls(batch);
    assert!(total > 100, "the workload makes {total} calls");
    for n in 0..total {
        point(n, kind, power_cut, batch);
    }
    total
}

#[test]
fn an_eio_at_every_call_loses_no_acknowledged_write() {
    let n = matrix(ErrorKind::Other, false, false);
    eprintln!("EIO: {n} points");
}

#[test]
fn an_eio_at_every_call_in_batch_mode_loses_no_acknowledged_write() {
    let n = matrix(ErrorKind::Other, false, true);
    eprintln!("EIO, batch mode: {n} points");
}

#[test]
fn an_enospc_at_every_call_in_batch_mode_loses_no_acknowledged_write() {
    let n = matrix(ErrorKind::StorageFull, false, true);
    eprintln!("ENOSPC, batch mode: {n} points");
}

#[test]
fn an_enospc_at_every_call_then_a_power_cut_loses_no_acknowledged_write() {
    let n = matrix(ErrorKind::StorageFull, true, true);
    eprintln!("ENOSPC and a power cut: {n} points");
}

#[test]
fn an_enospc_at_every_call_loses_no_acknowledged_write() {
    let n = matrix(ErrorKind::StorageFull, false, false);
    eprintln!("ENOSPC: {n} points");
}

#[test]
fn an_eio_at_every_call_then_a_power_cut_loses_no_acknowledged_write() {
    let n = matrix(ErrorKind::Other, true, true);
    eprintln!("EIO and a power cut: {n} points");
}
