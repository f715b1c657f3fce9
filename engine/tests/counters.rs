//! Counters: increments from many threads add up exactly, and an acknowledged increment is
//! counted exactly once through crashes (SIGKILL of a real process, with flushes and
//! compactions going on) and power cuts (the FaultFs test file system forgets everything not
//! fsynced): the commit log replays totals, never increments, so a replay cannot count one
//! twice. The number of crash rounds comes from `SC_COUNTER_ROUNDS` (default 4).

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use common::T0;
use supercolumn::io::FaultFs;
use supercolumn::{
    ColumnPath, CommitLogSync, Database, Increment, ManualClock, Options, WriteOptions,
};

const KS: &str = "Keyspace1";
const CHILD_DIR: &str = "SC_COUNTER_CHILD_DIR";

fn inc(key: &str, column: &str, delta: i64) -> Increment {
    Increment {
        key: key.as_bytes().to_vec(),
        path: ColumnPath::new("Standard1").column(column),
        delta,
    }
}

fn count(db: &Database, key: &str, column: &str) -> Option<i64> {
    db.get(KS, key, &ColumnPath::new("Standard1").column(column))
        .unwrap()
        .map(|c| i64::from_be_bytes(c.as_column().unwrap().value.clone().try_into().unwrap()))
}

#[test]
fn increments_from_many_threads_add_up_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Database::open(dir.path(), Options::default()).unwrap());
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..500i64 {
                    // Every thread on the shared column, and on a column of its own; two
                    // increments of one column in one call both count.
                    db.add_counters(
                        KS,
                        &[
                            inc("r", "shared", 1),
                            inc("r", &format!("own{t}"), i),
                            inc("r", "shared", -3),
                        ],
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(count(&db, "r", "shared"), Some(-2 * 8 * 500));
    for t in 0..8 {
        assert_eq!(count(&db, "r", &format!("own{t}")), Some(499 * 500 / 2));
    }
}

#[test]
fn a_deleted_counter_stays_deleted_and_a_non_count_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    db.add_counters(KS, &[inc("r", "c", 5)]).unwrap();
    // A counter's tombstone outranks every later total (the caller deletes at the top).
    db.remove(
        KS,
        "r",
        &ColumnPath::new("Standard1").column("c"),
        Some(i64::MAX),
    )
    .unwrap();
    db.add_counters(KS, &[inc("r", "c", 7)]).unwrap();
    assert_eq!(count(&db, "r", "c"), None);
    db.insert(
        KS,
        "r",
        &ColumnPath::new("Standard1").column("text"),
        "abc",
        WriteOptions::now(),
    )
    .unwrap();
    let e = db.add_counters(KS, &[inc("r", "text", 1)]).unwrap_err();
    assert!(e.to_string().contains("text"), "{e}");
}

fn crash_options() -> Options {
    common::crash_options(0.001)
}

/// The child: increments `a` by 1 and `b` by 3 in one call, forever, reporting each
/// acknowledgement.
fn child(dir: &Path) -> ! {
    let db = Database::open(dir, crash_options()).expect("child open");
    let mut out = std::io::stdout().lock();
    for n in 0u64.. {
        db.add_counters(KS, &[inc("r", "a", 1), inc("r", "b", 3)])
            .expect("child increment");
        if n % 500 == 499 {
            db.compact(KS, Some("Standard1")).expect("child compact");
        }
        writeln!(out, "ack").unwrap();
        out.flush().unwrap();
    }
    unreachable!()
}

#[test]
fn an_acknowledged_increment_counts_once_through_kills() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        child(Path::new(&dir));
    }
    let rounds: usize = std::env::var("SC_COUNTER_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(4);
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let mut acked: i64 = 0;
    let mut seed = 0x9e37_79b9_u64;
    for round in 0..rounds {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let want = 50 + (seed >> 33) % 400;
        let (mut child, mut out) = common::spawn_child(
            "an_acknowledged_increment_counts_once_through_kills",
            CHILD_DIR,
            &dir,
        );
        let (seen, _) = common::read_acks(&mut out, want);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(seen, want, "round {round}: the child stopped early");
        // The child went on between the last ack read and the kill: the acks it wrote
        // meanwhile are in the pipe, acknowledged all the same.
        let (late, _) = common::read_acks(&mut out, u64::MAX);
        acked += (seen + late) as i64;
        let db = Database::open(&dir, crash_options()).unwrap();
        let a = count(&db, "r", "a").unwrap();
        let b = count(&db, "r", "b").unwrap();
        // Every acknowledged increment, once; at most one more (in flight at the kill),
        // never half of one, never one twice.
        assert!(
            a == acked || a == acked + 1,
            "round {round}: {acked} acknowledged, the count is {a}"
        );
        assert_eq!(
            b,
            3 * a,
            "round {round}: the two columns of one call disagree"
        );
        acked = a;
        drop(db);
    }
    println!("{rounds} kill rounds, {acked} increments, final count exact");
}

#[test]
fn an_acknowledged_increment_counts_once_through_power_cuts() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let ffs = FaultFs::new(root.path().join("park")).unwrap();
    let options = || {
        let mut o = Options::default().with_clock(Arc::new(ManualClock::new(T0)));
        o.commit_log_sync = CommitLogSync::Batch { window_ms: 1.0 };
        o.memtable_operations_millions = 0.0005;
        o.file_system = Arc::new(ffs.clone());
        o
    };
    let mut acked = 0i64;
    for round in 0..20 {
        let db = common::open_when_unlocked(&dir, options);
        assert_eq!(
            count(&db, "r", "c").unwrap_or(0),
            acked,
            "round {round}: after the power cut"
        );
        for _ in 0..(37 + round * 11) {
            db.add_counters(KS, &[inc("r", "c", 2)]).unwrap();
            acked += 2;
        }
        ffs.lose_power().unwrap();
        drop(db);
        ffs.power_on();
    }
    let db = common::open_when_unlocked(&dir, options);
    assert_eq!(count(&db, "r", "c"), Some(acked));
}
