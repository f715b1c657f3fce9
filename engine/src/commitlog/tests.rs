//! The commit log through its own API: records replay in order across segments, segments go
//! once every column family has flushed past them, an I/O failure poisons the log without losing
//! what was acknowledged, and concurrent batch writers are all durable.

use std::borrow::Cow;

use super::*;
use crate::io::{FaultFs, RealFs};
use crate::model::cell::{CellRef, CellValueRef, EntryRef};
use crate::mutation::RowUpdate;

fn mutation(i: u32, cf: u32) -> RowMutation<'static> {
    RowMutation {
        key: Cow::Owned(format!("key{i}").into_bytes()),
        updates: vec![(
            cf,
            RowUpdate {
                deletion: None,
                entries: vec![(
                    Cow::Borrowed(b"c"),
                    EntryRef::Cell(CellRef {
                        timestamp: i64::from(i),
                        value: CellValueRef::Live {
                            value: &[7; 100],
                            ttl: None,
                        },
                    }),
                )],
            },
        )],
    }
}

/// A new log in `dir` with 1 MiB segments, starting at segment 1.
fn fresh_log(dir: &Path, fs: Arc<dyn FileSystem>, sync: CommitLogSync) -> CommitLog {
    CommitLog::open(dir, fs, 1, sync, 1, 0, BTreeMap::new()).unwrap()
}

/// A mutation as the test compares it: its encoding.
fn encoded(m: &RowMutation<'_>) -> Vec<u8> {
    let mut w = crate::codec::Writer::default();
    record::encode(m, &mut w);
    w.buf
}

fn replayed(dir: &Path) -> Vec<(LogPosition, Vec<u8>)> {
    let mut out = Vec::new();
    replay::replay_log(
        &crate::io::RealFs,
        dir,
        replay::LogBounds::default(),
        false,
        &mut |p, m| {
            out.push((p, encoded(&m)));
            Ok(())
        },
    )
    .unwrap();
    out
}

#[test]
fn appended_records_replay_in_order_across_segments() {
    let dir = tempfile::tempdir().unwrap();
    let log = fresh_log(
        dir.path(),
        Arc::new(RealFs),
        CommitLogSync::Batch { window_ms: 1.0 },
    );
    let mut positions = Vec::new();
    for i in 0..12_000 {
        positions.push(log.append(&mutation(i, 1)).unwrap());
    }
    assert!(log.segment_paths().len() > 1, "1 MiB segments must roll");
    log.close().unwrap();
    let got = replayed(dir.path());
    assert_eq!(got.len(), 12_000);
    for (i, (p, m)) in got.iter().enumerate() {
        assert_eq!(*p, positions[i]);
        assert_eq!(*m, encoded(&mutation(i as u32, 1)));
    }
}

#[test]
fn segments_are_deleted_once_every_cf_has_flushed_past_them() {
    let dir = tempfile::tempdir().unwrap();
    let log = fresh_log(
        dir.path(),
        Arc::new(RealFs),
        CommitLogSync::Periodic { period_ms: 10 },
    );
    for i in 0..12_000 {
        log.append(&mutation(i, 1 + i % 2)).unwrap();
    }
    let segs = log.segment_paths().len();
    assert!(segs >= 2);
    let now = log.current_position();
    let r = log.release(1, now).unwrap();
    assert!(r.is_empty());
    assert_eq!(log.segment_paths().len(), segs, "CF 2 still needs them");
    let r = log.release(2, now).unwrap();
    assert_eq!(r.paths.len(), segs);
    log.delete(&r).unwrap();
    assert_eq!(log.segment_paths().len(), 1, "only the live segment stays");
    assert_eq!(
        replay::segments_in(&crate::io::RealFs, dir.path())
            .unwrap()
            .len(),
        1
    );
}

/// A column family written once, early, keeps the oldest segment; segments after it that every
/// column family has flushed must wait for it, or a crash leaves a gap replay refuses.
#[test]
fn a_clean_segment_after_a_needed_one_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = fresh_log(
        dir.path(),
        Arc::new(RealFs),
        CommitLogSync::Periodic { period_ms: 10 },
    );
    log.append(&mutation(0, 2)).unwrap();
    for i in 1..30_000 {
        log.append(&mutation(i, 1)).unwrap();
    }
    let segs = log.segment_paths().len();
    assert!(segs >= 3);
    let r = log.release(1, log.current_position()).unwrap();
    assert!(r.is_empty(), "CF 2 still needs the oldest: {:?}", r.paths);
    log.close().unwrap();
    // What a crash now leaves replays whole.
    assert_eq!(replayed(dir.path()).len(), 30_000);
}

#[test]
fn an_io_failure_poisons_the_log_and_nothing_acknowledged_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let ffs = FaultFs::new(dir.path().join("park")).unwrap();
    let logdir = dir.path().join("log");
    let log = fresh_log(
        &logdir,
        Arc::new(ffs.clone()),
        CommitLogSync::Batch { window_ms: 1.0 },
    );
    for i in 0..10 {
        log.append(&mutation(i, 1)).unwrap();
    }
    ffs.fail_from_now();
    let e = log.append(&mutation(10, 1)).unwrap_err();
    assert!(matches!(e, Error::ReadOnly(_)), "{e}");
    ffs.heal();
    // Still refused after the disk recovers: only a reopen clears it.
    assert!(matches!(
        log.append(&mutation(11, 1)),
        Err(Error::ReadOnly(_))
    ));
    drop(log);
    ffs.lose_power().unwrap();
    let got = replayed(&logdir);
    assert_eq!(
        got.len(),
        10,
        "all acknowledged writes survive; none after the failure"
    );
}

#[test]
fn concurrent_batch_writers_are_all_durable() {
    let dir = tempfile::tempdir().unwrap();
    let ffs = FaultFs::new(dir.path().join("park")).unwrap();
    let logdir = dir.path().join("log");
    let log = Arc::new(fresh_log(
        &logdir,
        Arc::new(ffs.clone()),
        CommitLogSync::Batch { window_ms: 1.0 },
    ));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let log = log.clone();
            std::thread::spawn(move || {
                for i in 0..200 {
                    log.append(&mutation(t * 1000 + i, 1)).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // Power fails without a close: batch mode already made every acknowledged record durable.
    std::mem::forget(Arc::try_unwrap(log).ok());
    ffs.lose_power().unwrap();
    assert_eq!(replayed(&logdir).len(), 800);
}
