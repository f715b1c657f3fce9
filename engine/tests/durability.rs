//! Durability through the commit log: acknowledged writes survive reopening and simulated power
//! loss (the FaultFs test file system forgets everything not fsynced), a torn tail is quiet,
//! damage before it is an error naming the file and offset, and writes after a recovery go to a
//! fresh segment.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::*;
use supercolumn::io::FaultFs;
use supercolumn::{
    BatchMutation, ColumnPath, CommitLogSync, Database, Error, ManualClock, Options, Place,
    WriteOptions,
};

const KS: &str = "Keyspace1";

fn options(sync: CommitLogSync, ffs: Option<&FaultFs>) -> Options {
    let mut o = Options::default().with_clock(Arc::new(ManualClock::new(T0)));
    o.commit_log_sync = sync;
    if let Some(f) = ffs {
        o.file_system = Arc::new(f.clone());
    }
    o
}

const BATCH: CommitLogSync = CommitLogSync::Batch { window_ms: 1.0 };

fn row(db: &Database, key: &str) -> BTreeMap<String, String> {
    whole_row(db, KS, key, "Standard2")
        .into_iter()
        .map(|c| {
            let c = c.as_column().unwrap();
            (
                String::from_utf8(c.name.clone()).unwrap(),
                String::from_utf8(c.value.clone()).unwrap(),
            )
        })
        .collect()
}

fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("commit-log"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    v.sort();
    v
}

/// Nothing is flushed (the power goes before the database is closed, and a close would flush):
/// the writes and the deletion come back from the commit log alone. In batch mode each write is
/// durable when acknowledged; in periodic mode the syncer makes the log durable within about a
/// period, without a flush or a segment roll, and the test waits until it has.
#[test]
fn unflushed_writes_survive_a_power_cut_in_both_sync_modes() {
    for sync in [BATCH, CommitLogSync::Periodic { period_ms: 10 }] {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("db");
        let ffs = FaultFs::new(root.path().join("park")).unwrap();
        {
            let db = Database::open(&dir, options(sync, Some(&ffs))).unwrap();
            for i in 0..100 {
                let p = ColumnPath::new("Standard2").column(format!("c{i:03}"));
                db.insert(KS, "jsmith", &p, format!("v{i}"), WriteOptions::now())
                    .unwrap();
            }
            db.remove(
                KS,
                "jsmith",
                &ColumnPath::new("Standard2").column("c050"),
                None,
            )
            .unwrap();
            assert_eq!(db.column_family_stats(KS, "Standard2").unwrap().sstables, 0);
            if let CommitLogSync::Periodic { .. } = sync {
                let seg = segments(&dir).pop().unwrap();
                let len = std::fs::metadata(&seg).unwrap().len();
                assert!(
                    wait_until(10, || ffs.synced_len(&seg).is_some_and(|s| s >= len)),
                    "the periodic syncer never made {} durable",
                    seg.display()
                );
            }
            ffs.lose_power().unwrap();
            drop(db);
            ffs.power_on();
        }
        for _ in 0..3 {
            let db = Database::open(&dir, options(sync, Some(&ffs))).unwrap();
            let r = row(&db, "jsmith");
            assert_eq!(r.len(), 99, "{sync:?}");
            assert_eq!(r["c099"], "v99");
            assert!(!r.contains_key("c050"));
        }
    }
}

#[test]
fn a_dropped_column_family_does_not_get_its_data_back_on_replay() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path(), options(BATCH, None)).unwrap();
        let p = ColumnPath::new("Standard2").column("first");
        db.insert(KS, "jsmith", &p, "John", WriteOptions::now())
            .unwrap();
        db.drop_column_family(KS, "Standard2").unwrap();
        db.create_column_family(
            KS,
            supercolumn::ColumnFamilyDef::standard("Standard2")
                .with_comparator(supercolumn::comparator::Utf8Type),
        )
        .unwrap();
    }
    let db = Database::open(dir.path(), options(BATCH, None)).unwrap();
    assert!(row(&db, "jsmith").is_empty());
}

/// One simulated machine: a database directory on a FaultFs, and the model of what it must hold.
struct Machine {
    root: tempfile::TempDir,
    ffs: FaultFs,
    /// What every acknowledged (batch) or flushed (periodic) write left: row → column → value.
    durable: BTreeMap<String, BTreeMap<String, String>>,
    /// Writes acknowledged since the last point that made them durable (periodic mode only).
    pending: Vec<(String, BTreeMap<String, String>)>,
}

impl Machine {
    fn new() -> Machine {
        let root = tempfile::tempdir().unwrap();
        let ffs = FaultFs::new(root.path().join("park")).unwrap();
        Machine {
            root,
            ffs,
            durable: BTreeMap::new(),
            pending: Vec::new(),
        }
    }

    fn dir(&self) -> PathBuf {
        self.root.path().join("db")
    }
}

/// Runs `rounds` power cuts on one machine. Each round opens the database, checks it against the
/// model, then writes batches (three columns of one row at a time), flushes and compacts at
/// random until the file system fails after a random number of operations — a cut that can land
/// inside a commit log append, an SSTable write, a rename, a manifest swap or the removal of
/// compacted files — and the power goes out. (Minor compactions also run in the background.)
fn power_cuts(m: &mut Machine, sync: CommitLogSync, rounds: u64, rng: &mut Rng) {
    let batch = matches!(sync, CommitLogSync::Batch { .. });
    for round in 0..rounds {
        let db = match Database::open(m.dir(), options(sync, Some(&m.ffs))) {
            Ok(db) => db,
            Err(e) => panic!("round {round}: reopen failed: {e}"),
        };
        let mut expect = m.durable.clone();
        // In periodic mode, unsynced writes may or may not have survived; each row must hold
        // either its durable value or one of its later acknowledged values, never half of one.
        for (key, cols) in &expect {
            let got = row(&db, key);
            if batch {
                assert_eq!(&got, cols, "round {round}: row {key} after reopen");
            } else {
                for (c, v) in cols {
                    // Only a later write of this very column may stand in for its durable value:
                    // a missing column is never excused.
                    let later = m.pending.iter().any(|(k, p)| {
                        k == key && p.get(c).is_some_and(|pv| got.get(c) == Some(pv))
                    });
                    assert!(
                        got.get(c) == Some(v) || later,
                        "round {round}: {key}.{c} lost a flushed value"
                    );
                }
            }
        }
        for (key, cols) in &m.pending {
            let got = row(&db, key);
            let landed = cols.iter().all(|(c, v)| got.get(c) == Some(v));
            let none = cols.iter().all(|(c, v)| got.get(c) != Some(v));
            assert!(
                landed || none || !batch,
                "round {round}: half a row mutation visible"
            );
            if landed {
                expect.entry(key.clone()).or_default().extend(cols.clone());
            }
        }
        // What this open replayed and flushed is durable now.
        m.durable = expect
            .into_keys()
            .map(|k| (k.clone(), row(&db, &k)))
            .collect();
        m.pending.clear();
        m.ffs.fail_after(rng.below(60));
        for n in 0.. {
            if rng.below(25) == 0 {
                // A major compaction (flush, merge, manifest swap, old files removed).
                match db.compact(KS, Some("Standard2")) {
                    Ok(()) => {
                        for (key, cols) in m.pending.drain(..) {
                            m.durable.entry(key).or_default().extend(cols);
                        }
                    }
                    Err(Error::Io { .. }) | Err(Error::ReadOnly(_)) => break,
                    Err(e) => panic!("round {round}: compaction: unexpected {e}"),
                }
                continue;
            }
            if rng.below(10) == 0 {
                match db.flush(KS, Some("Standard2")) {
                    Ok(()) => {
                        for (key, cols) in m.pending.drain(..) {
                            m.durable.entry(key).or_default().extend(cols);
                        }
                    }
                    Err(Error::Io { .. }) | Err(Error::ReadOnly(_)) => break,
                    Err(e) => panic!("round {round}: flush: unexpected {e}"),
                }
                continue;
            }
            let key = format!("row{}", rng.below(8));
            let mut b = BatchMutation::new();
            let mut cols = BTreeMap::new();
            for c in 0..3 {
                let col = format!("c{}", rng.below(5) * 3 + c);
                let val = format!("r{round}n{n}");
                b.insert(
                    &key,
                    ColumnPath::new("Standard2").column(&col),
                    &val,
                    WriteOptions::at((round * 1000 + n) as i64),
                );
                cols.insert(col, val);
            }
            match db.batch_mutate(KS, &b) {
                Ok(()) if batch => m.durable.entry(key).or_default().extend(cols),
                Ok(()) => m.pending.push((key, cols)),
                Err(Error::ReadOnly(_)) | Err(Error::Io { .. }) => {
                    // In flight when the disk failed: it may land whole, or not at all.
                    m.pending.push((key, cols));
                    break;
                }
                Err(e) => panic!("round {round}: unexpected {e}"),
            }
        }
        m.ffs.lose_power().unwrap();
        drop(db);
        m.ffs.power_on();
    }
}

#[test]
fn batch_mode_keeps_every_acknowledged_write_through_a_thousand_power_cuts() {
    let mut rng = Rng(0x5eed);
    for _ in 0..50 {
        let mut m = Machine::new();
        power_cuts(&mut m, BATCH, 20, &mut rng);
        assert!(!m.durable.is_empty());
    }
}

#[test]
fn periodic_mode_loses_only_unsynced_writes_through_power_cuts() {
    let mut rng = Rng(0xfade);
    for _ in 0..10 {
        let mut m = Machine::new();
        // A period far longer than the test: only flushes and segment rolls make writes durable.
        power_cuts(
            &mut m,
            CommitLogSync::Periodic { period_ms: 600_000 },
            20,
            &mut rng,
        );
    }
}

/// Opens, writes with `f`, then "crashes": the power goes off before the database is dropped,
/// so nothing is flushed at close and the commit log is left as a crash leaves it.
fn crash_after(dir: &Path, ffs: &FaultFs, f: impl FnOnce(&Database)) {
    let db = Database::open(dir, options(BATCH, Some(ffs))).unwrap();
    f(&db);
    ffs.lose_power().unwrap();
    drop(db);
    ffs.power_on();
}

fn segment_seq(p: &Path) -> u64 {
    let name = p.file_name().unwrap().to_str().unwrap();
    name.trim_start_matches("CommitLog-")
        .trim_end_matches(".log")
        .parse()
        .unwrap()
}

#[test]
fn a_torn_tail_is_quiet_and_new_writes_go_to_a_fresh_segment() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let ffs = FaultFs::new(root.path().join("park")).unwrap();
    crash_after(&dir, &ffs, |db| {
        for i in 0..10 {
            let p = ColumnPath::new("Standard2").column(format!("c{i}"));
            db.insert(KS, "k", &p, "v", WriteOptions::now()).unwrap();
        }
    });
    let segs = segments(&dir);
    let last = segs.last().unwrap().clone();
    // Cut the last record short, as a crash mid-append would.
    let len = std::fs::metadata(&last).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&last).unwrap();
    f.set_len(len - 3).unwrap();
    drop(f);
    crash_after(&dir, &ffs, |db| {
        assert_eq!(
            row(db, "k").len(),
            9,
            "the torn record is gone, the rest are there"
        );
        let p = ColumnPath::new("Standard2").column("after");
        db.insert(KS, "k", &p, "v", WriteOptions::now()).unwrap();
    });
    let after = segments(&dir);
    assert!(
        after
            .iter()
            .all(|s| *s == last || segment_seq(s) > segment_seq(&last)),
        "new writes went to fresh segments: {after:?}"
    );
    // The torn segment is no longer the newest: the next one's header says where its intact
    // records end, so replaying it again is not mistaken for damage.
    let db = Database::open(&dir, options(BATCH, Some(&ffs))).unwrap();
    let r = row(&db, "k");
    assert_eq!(r.len(), 10);
    assert!(r.contains_key("after"));
    db.flush_all().unwrap();
    assert!(
        !segments(&dir).contains(&last),
        "the replayed segment went once its data was flushed"
    );
}

#[test]
fn damage_before_the_tail_is_an_error_naming_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path(), options(BATCH, None)).unwrap();
        for i in 0..10 {
            let p = ColumnPath::new("Standard2").column(format!("c{i}"));
            db.insert(KS, "k", &p, "some value", WriteOptions::now())
                .unwrap();
        }
    }
    let seg = segments(dir.path()).last().unwrap().clone();
    let mut bytes = std::fs::read(&seg).unwrap();
    // The close did not flush: the segment holds the ten records, and the byte flipped lies in
    // one of the middle ones, well before the tail (a damaged tail would read as torn).
    assert!(
        bytes.len() > 10 * 30,
        "{} bytes: the records are not in the log",
        bytes.len()
    );
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&seg, &bytes).unwrap();
    let e = Database::open(&dir, options(BATCH, None)).unwrap_err();
    match &e {
        Error::Corrupt { path, place, .. } => {
            assert_eq!(path, &seg);
            assert!(matches!(place, Place::Offset(_)), "{e}");
        }
        other => panic!("expected a corruption error, got {other}"),
    }
}

#[test]
fn a_failed_flush_keeps_the_memtable_and_log_and_succeeds_when_retried() {
    let failed_flush = |root: &Path| {
        let dir = root.join("db");
        let ffs = FaultFs::new(root.join("park")).unwrap();
        // 1 MiB segments and 2 MB of writes: older segments exist that a flush would retire.
        let mut o = options(BATCH, Some(&ffs));
        o.commit_log_segment_size_mb = 1;
        let db = Database::open(&dir, o).unwrap();
        let value = "v".repeat(40 << 10);
        for i in 0..50 {
            let p = ColumnPath::new("Standard2").column(format!("c{i:02}"));
            db.insert(KS, "k", &p, &value, WriteOptions::now()).unwrap();
        }
        assert!(segments(&dir).len() >= 2);
        // The disk fills up during the flush.
        ffs.fail_after(2);
        let e = db.flush(KS, Some("Standard2")).unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e}");
        ffs.heal();
        (dir, ffs, db)
    };
    // The power goes right after the failure: the log must still hold every write.
    let root = tempfile::tempdir().unwrap();
    let (dir, ffs, db) = failed_flush(root.path());
    ffs.lose_power().unwrap();
    drop(db);
    ffs.power_on();
    let db = Database::open(&dir, options(BATCH, Some(&ffs))).unwrap();
    assert_eq!(row(&db, "k").len(), 50, "the failed flush let the log go");
    drop(db);
    // Or the flush is retried.
    let root = tempfile::tempdir().unwrap();
    let (dir, ffs, db) = failed_flush(root.path());
    // Nothing was lost or hidden: the frozen memtable still answers reads.
    assert_eq!(row(&db, "k").len(), 50);
    assert_eq!(db.column_family_stats(KS, "Standard2").unwrap().sstables, 0);
    // Retried, the flush succeeds, and the data survives a power cut.
    db.flush(KS, Some("Standard2")).unwrap();
    assert_eq!(db.column_family_stats(KS, "Standard2").unwrap().sstables, 1);
    ffs.lose_power().unwrap();
    drop(db);
    ffs.power_on();
    let db = Database::open(&dir, options(BATCH, Some(&ffs))).unwrap();
    assert_eq!(row(&db, "k").len(), 50);
}

#[test]
fn an_idle_memtable_is_flushed_once_older_than_memtable_flush_after_minutes() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let mut o = options(BATCH, None).with_clock(clock.clone());
    o.memtable_flush_after_minutes = 60;
    let db = Database::open(dir.path(), o).unwrap();
    db.insert(
        KS,
        "k",
        &ColumnPath::new("Standard2").column("c"),
        "v",
        WriteOptions::now(),
    )
    .unwrap();
    let tables = || db.column_family_stats(KS, "Standard2").unwrap().sstables;
    clock.advance_seconds(59 * 60);
    // Give the flusher (it looks every half second) a few looks before saying it did nothing.
    std::thread::sleep(std::time::Duration::from_millis(1_600));
    assert_eq!(tables(), 0, "not yet an hour old");
    clock.advance_seconds(2 * 60);
    // The flusher looks every half second; wait for its flush, with a deadline.
    wait_until(30, || tables() > 0);
    assert_eq!(tables(), 1, "the idle memtable was flushed");
    assert_eq!(row(&db, "k").len(), 1);
}

#[test]
fn a_power_cut_at_every_step_of_a_compaction_loses_nothing_and_revives_nothing() {
    let mut steps = 0;
    for budget in 0.. {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("db");
        let ffs = FaultFs::new(root.path().join("park")).unwrap();
        let clock = Arc::new(ManualClock::new(T0));
        let mut o = options(BATCH, Some(&ffs)).with_clock(clock.clone());
        o.gc_grace_seconds = 60;
        o.min_compaction_threshold = 0; // only the major compaction under test
        let db = Database::open(&dir, o.clone()).unwrap();
        // Three SSTables: live data, then deletions of some of it (a column, a row), then more.
        for (i, step) in ["write", "delete", "more"].iter().enumerate() {
            for r in 0..20 {
                let key = format!("r{r}");
                match *step {
                    "write" => {
                        for c in 0..5 {
                            db.insert(
                                KS,
                                &key,
                                &ColumnPath::new("Standard2").column(format!("c{c}")),
                                "old",
                                WriteOptions::at(1),
                            )
                            .unwrap();
                        }
                    }
                    "delete" if r % 3 == 0 => db
                        .remove(KS, &key, &ColumnPath::new("Standard2"), Some(2))
                        .unwrap(),
                    "delete" => db
                        .remove(
                            KS,
                            &key,
                            &ColumnPath::new("Standard2").column("c0"),
                            Some(2),
                        )
                        .unwrap(),
                    _ => db
                        .insert(
                            KS,
                            &key,
                            &ColumnPath::new("Standard2").column("new"),
                            "v",
                            WriteOptions::at(3),
                        )
                        .unwrap(),
                }
            }
            db.flush(KS, Some("Standard2")).unwrap();
            assert_eq!(
                db.column_family_stats(KS, "Standard2").unwrap().sstables,
                i + 1
            );
        }
        let expect = |db: &Database| -> Vec<(String, BTreeMap<String, String>)> {
            (0..20)
                .map(|r| (format!("r{r}"), row(db, &format!("r{r}"))))
                .collect()
        };
        let before = expect(&db);
        // Past grace: the compaction purges the tombstones, and must take what they hid with them.
        clock.advance_seconds(120);
        ffs.fail_after(budget);
        let done = db.compact(KS, Some("Standard2")).is_ok();
        ffs.lose_power().unwrap();
        drop(db);
        ffs.power_on();
        let db = Database::open(&dir, o).unwrap();
        assert_eq!(
            expect(&db),
            before,
            "power cut after {budget} file-system steps of the compaction"
        );
        if done {
            steps = budget;
            break;
        }
    }
    assert!(steps > 5, "the compaction took {steps} steps");
}

/// Group commit under a power cut: 32 writers in batch mode, the power going out while they
/// write (and while memtables flush); after the restart every write any of them saw
/// acknowledged is there.
#[test]
fn thirty_two_batch_writers_keep_every_acknowledged_write_through_a_power_cut() {
    let mut rng = Rng(0xc0ffee);
    for trial in 0..8 {
        let root = tempfile::tempdir().unwrap();
        let ffs = FaultFs::new(root.path().join("park")).unwrap();
        let dir = root.path().join("db");
        let mut o = options(BATCH, Some(&ffs));
        // A flush every 500 writes: the cut also lands in SSTable writes and manifest swaps.
        o.memtable_operations_millions = 0.0005;
        let db = Database::open(&dir, o).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let count = std::sync::atomic::AtomicU64::new(0);
        let acked: Vec<Vec<u64>> = std::thread::scope(|s| {
            let writers: Vec<_> = (0..32)
                .map(|t| {
                    let (db, stop, count) = (&db, &stop, &count);
                    s.spawn(move || {
                        let mut acked = Vec::new();
                        for n in 0u64.. {
                            if stop.load(std::sync::atomic::Ordering::SeqCst) {
                                break;
                            }
                            let path = ColumnPath::new("Standard2").column(format!("{n:06}"));
                            match db.insert(KS, format!("w{t}"), &path, "v", WriteOptions::at(1)) {
                                Ok(()) => {
                                    acked.push(n);
                                    count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                                }
                                Err(Error::Io { .. }) | Err(Error::ReadOnly(_)) => break,
                                Err(e) => panic!("writer {t}: unexpected {e}"),
                            }
                        }
                        acked
                    })
                })
                .collect();
            // The cut comes after a random number of acknowledged writes, while all 32 write.
            let cut_after = 64 + rng.below(2000);
            while count.load(std::sync::atomic::Ordering::SeqCst) < cut_after {
                std::thread::yield_now();
            }
            ffs.lose_power().unwrap();
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
            writers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        drop(db);
        ffs.power_on();
        let total: usize = acked.iter().map(Vec::len).sum();
        assert!(
            total > 32,
            "trial {trial}: only {total} writes before the cut"
        );
        let db = Database::open(&dir, options(BATCH, Some(&ffs))).unwrap();
        for (t, mine) in acked.iter().enumerate() {
            let got: std::collections::BTreeSet<String> =
                row(&db, &format!("w{t}")).into_keys().collect();
            for n in mine {
                assert!(
                    got.contains(&format!("{n:06}")),
                    "trial {trial}: writer {t}'s acknowledged write {n} was lost ({} of {} \
                     acknowledged writes survive)",
                    got.len(),
                    mine.len()
                );
            }
        }
    }
}

/// A flush freezes the memtable at the commit log's position and, once written, tells replay to
/// skip everything before it. A write between its log append and its memtable apply when the
/// switch falls would be skipped at replay yet missing from the flushed memtable: the switch
/// lock keeps that window shut. Writers race a flush loop here, then the power goes; every
/// acknowledged write must come back.
#[test]
fn writes_racing_memtable_switches_survive_a_power_cut() {
    for trial in 0..6 {
        let root = tempfile::tempdir().unwrap();
        let ffs = FaultFs::new(root.path().join("park")).unwrap();
        let dir = root.path().join("db");
        let mut o = options(CommitLogSync::Batch { window_ms: 0.0 }, Some(&ffs));
        o.min_compaction_threshold = 0;
        let db = Database::open(&dir, o.clone()).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let acked: Vec<Vec<u64>> = std::thread::scope(|s| {
            let flusher = s.spawn(|| {
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    db.flush(KS, Some("Standard2")).unwrap();
                }
            });
            let writers: Vec<_> = (0..3)
                .map(|t| {
                    let db = &db;
                    s.spawn(move || {
                        (0..400u64)
                            .inspect(|n| {
                                let path = ColumnPath::new("Standard2").column(format!("{n:06}"));
                                db.insert(KS, format!("w{t}"), &path, "v", WriteOptions::at(1))
                                    .unwrap();
                            })
                            .collect()
                    })
                })
                .collect();
            let acked = writers.into_iter().map(|w| w.join().unwrap()).collect();
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
            flusher.join().unwrap();
            acked
        });
        ffs.lose_power().unwrap();
        drop(db);
        ffs.power_on();
        let db = Database::open(&dir, o).unwrap();
        for (t, ns) in acked.iter().enumerate() {
            let got = row(&db, &format!("w{t}"));
            let lost: Vec<&u64> = ns
                .iter()
                .filter(|n| !got.contains_key(&format!("{n:06}")))
                .collect();
            assert!(lost.is_empty(), "trial {trial}, writer {t}: lost {lost:?}");
        }
    }
}

/// A column family written once and never flushed pins every commit log segment after its write;
/// a close does not flush, and each open starts a segment. Without a bound, every crash would add
/// a segment that every later open replays again.
#[test]
fn replay_stays_bounded_across_repeated_crashes() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let ffs = FaultFs::new(root.path().join("park")).unwrap();
    for round in 0..20 {
        let db = Database::open(&dir, options(BATCH, Some(&ffs))).unwrap();
        if round == 0 {
            let p = ColumnPath::new("Standard2").column("once");
            db.insert(KS, "pin", &p, "v", WriteOptions::now()).unwrap();
        }
        let p = ColumnPath::new("Standard1").column(format!("c{round}"));
        db.insert(KS, "r", &p, "v", WriteOptions::now()).unwrap();
        ffs.lose_power().unwrap();
        drop(db);
        ffs.power_on();
        let n = segments(&dir).len();
        assert!(n <= 3, "after crash {round}: {n} segments to replay");
    }
    let db = Database::open(&dir, options(BATCH, Some(&ffs))).unwrap();
    assert_eq!(row(&db, "pin")["once"], "v");
    assert_eq!(whole_row(&db, KS, "r", "Standard1").len(), 20);
}
