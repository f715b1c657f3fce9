//! Many threads at once, while flushes and compactions run underneath: a row mutation is seen
//! wholly or not at all, a reader never sees a column go back to an older value, nothing errs,
//! and writers to different rows all land.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use common::*;
use supercolumn::{BatchMutation, ColumnPath, Database, Options, WriteOptions};

const KS: &str = "Keyspace1";
const ROWS: u64 = 8;
const WRITES_PER_WRITER: u64 = 2_000;

#[test]
fn readers_see_whole_row_mutations_and_never_go_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    // A flush every 300 column writes, and minor compactions whenever two SSTables are alike.
    o.memtable_operations_millions = 0.0003;
    o.min_compaction_threshold = 2;
    let db = Database::open(dir.path(), o).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    // Major compactions too, over and over, until the writers finish.
    let compactor = {
        let db = db.clone();
        let done = done.clone();
        thread::spawn(move || {
            let mut n = 0;
            while !done.load(Ordering::Relaxed) {
                db.compact(KS, Some("Standard1")).unwrap();
                n += 1;
            }
            n
        })
    };

    // Each writer owns two rows and writes (a, b, c) = (n, n, n) in one batch per row, with
    // timestamp n, for increasing n.
    let writers: Vec<_> = (0..4u64)
        .map(|w| {
            let db = db.clone();
            thread::spawn(move || {
                for n in 1..=WRITES_PER_WRITER {
                    let row = format!("row{}", w * 2 + n % 2);
                    let mut b = BatchMutation::new();
                    for col in ["a", "b", "c"] {
                        b.insert(
                            &row,
                            ColumnPath::new("Standard1").column(col),
                            n.to_be_bytes(),
                            WriteOptions::at(n as i64),
                        );
                    }
                    db.batch_mutate(KS, &b).unwrap();
                }
            })
        })
        .collect();

    let readers: Vec<_> = (0..4u64)
        .map(|r| {
            let db = db.clone();
            let done = done.clone();
            thread::spawn(move || {
                let mut last = vec![0u64; ROWS as usize];
                let mut reads = 0u64;
                while !done.load(Ordering::Relaxed) || reads < 100 {
                    let i = ((reads + r) % ROWS) as usize;
                    let cols = whole_row(&db, KS, format!("row{i}"), "Standard1");
                    reads += 1;
                    if cols.is_empty() {
                        assert_eq!(last[i], 0, "row{i} vanished after being seen");
                        continue;
                    }
                    assert_eq!(cols.len(), 3, "row{i}: half a mutation: {cols:?}");
                    let vals: Vec<u64> = values(&cols)
                        .into_iter()
                        .map(|v| u64::from_be_bytes(v.try_into().unwrap()))
                        .collect();
                    assert!(
                        vals.iter().all(|v| *v == vals[0]),
                        "row{i}: torn row {vals:?}"
                    );
                    assert!(
                        vals[0] >= last[i],
                        "row{i} went back from {} to {}",
                        last[i],
                        vals[0]
                    );
                    last[i] = vals[0];
                }
                reads
            })
        })
        .collect();

    for w in writers {
        w.join().unwrap();
    }
    done.store(true, Ordering::Relaxed);
    let reads: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(reads >= 400);
    let calls = compactor.join().unwrap();
    let s = db.column_family_stats(KS, "Standard1").unwrap();
    // Most major-compaction calls find at most one SSTable and do nothing; many did merge.
    assert!(calls > 0 && s.flushes > 10 && s.compactions > 10, "{s:?}");

    // Every writer's last write to each of its rows is what remains.
    for i in 0..ROWS {
        let cols = whole_row(&db, KS, format!("row{i}"), "Standard1");
        let last = if i % 2 == 0 {
            WRITES_PER_WRITER
        } else {
            WRITES_PER_WRITER - 1
        };
        let want = vec![last.to_be_bytes().to_vec(); 3];
        assert_eq!(values(&cols), want, "row{i}");
    }
}
