//! Compaction through the public API: a deleted column's bytes leave the disk after its grace
//! period and a major compaction and never come back; a minor compaction keeps a tombstone whose
//! row still has older data in another SSTable (the memtable case is `cql/tests/compaction.rs`);
//! minor compactions keep the SSTable count bounded while everything reads back identical.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use common::*;
use supercolumn::{
    BatchMutation, ColumnParent, ColumnPath, CommitLogSync, Database, KeyRange, ManualClock,
    Options, SlicePredicate, WriteOptions,
};

const KS: &str = "Keyspace1";

fn opts(clock: &Arc<ManualClock>) -> Options {
    let mut o = Options::default().with_clock(clock.clone());
    o.commit_log_sync = CommitLogSync::Batch { window_ms: 1.0 };
    o.gc_grace_seconds = 3600;
    o
}

/// Whether any file under `dir` contains `needle`.
fn on_disk(dir: &Path, needle: &[u8]) -> bool {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p)
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle)
            {
                return true;
            }
        }
    }
    false
}

#[test]
fn a_deleted_columns_bytes_leave_the_disk_after_grace_and_a_major_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let secret = b"SECRET-VALUE-0123456789".as_slice();
    let path = ColumnPath::new("Standard1").column("c");
    {
        let db = Database::open(dir.path(), opts(&clock)).unwrap();
        db.insert(KS, "k", &path, secret, WriteOptions::now())
            .unwrap();
        db.insert(KS, "other", &path, "keep", WriteOptions::now())
            .unwrap();
        db.flush(KS, Some("Standard1")).unwrap();
        clock.advance_seconds(1);
        db.remove(KS, "k", &path, None).unwrap();
        db.flush(KS, Some("Standard1")).unwrap();
        assert!(
            on_disk(dir.path(), secret),
            "the value is still in the first SSTable"
        );
        // Within grace, a major compaction drops the shadowed value but keeps the tombstone.
        db.compact(KS, Some("Standard1")).unwrap();
        assert!(!on_disk(dir.path(), secret), "the shadowed value is gone");
        assert!(db.get(KS, "k", &path).unwrap().is_none());
        let s = db.column_family_stats(KS, "Standard1").unwrap();
        assert_eq!((s.sstables, s.tombstones_purged), (1, 0));
        // Past grace, the tombstone goes too.
        clock.advance_seconds(3601);
        db.compact(KS, Some("Standard1")).unwrap();
        let s = db.column_family_stats(KS, "Standard1").unwrap();
        assert_eq!(s.tombstones_purged, 1);
        assert!(db.get(KS, "k", &path).unwrap().is_none());
        assert_eq!(
            db.get(KS, "other", &path)
                .unwrap()
                .unwrap()
                .as_column()
                .unwrap()
                .value,
            b"keep"
        );
    }
    let db = Database::open(dir.path(), opts(&clock)).unwrap();
    assert!(
        db.get(KS, "k", &path).unwrap().is_none(),
        "never comes back"
    );
    assert!(!on_disk(dir.path(), secret));
}

/// A minor compaction merges the tombstone's SSTable, past its grace period, while an SSTable
/// outside the compaction still holds an older value of the row: the tombstone must stay, or the
/// old value comes back. (The files are all small, so they share one size bucket and the oldest
/// three of four are merged: the old value is written last, with an older timestamp, so that its
/// file is the one left out, and the output and it are too few to merge again.)
#[test]
fn a_minor_compaction_keeps_a_tombstone_whose_row_has_older_data_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let mut o = opts(&clock);
    o.min_compaction_threshold = 0;
    let db = Database::open(dir.path(), o).unwrap();
    let path = ColumnPath::new("Standard1").column("c");
    db.insert(KS, "x", &path, "unrelated", WriteOptions::now())
        .unwrap();
    db.flush(KS, Some("Standard1")).unwrap();
    db.remove(KS, "k", &path, Some(2)).unwrap();
    db.flush(KS, Some("Standard1")).unwrap();
    db.insert(KS, "y", &path, "unrelated", WriteOptions::now())
        .unwrap();
    db.flush(KS, Some("Standard1")).unwrap();
    clock.advance_seconds(10_000);
    let mut b = BatchMutation::new();
    b.insert("k", path.clone(), "old", WriteOptions::at(1));
    db.batch_mutate(KS, &b).unwrap();
    db.flush(KS, Some("Standard1")).unwrap();
    assert!(db.get(KS, "k", &path).unwrap().is_none());
    db.close().unwrap();
    // Now with minor compactions of three SSTables at a time: the three oldest are merged.
    let mut o = opts(&clock);
    o.min_compaction_threshold = 3;
    o.max_compaction_threshold = 3;
    let db = Database::open(dir.path(), o).unwrap();
    db.compact_pending(KS, Some("Standard1")).unwrap();
    assert!(
        wait_until(10, || {
            let s = db.column_family_stats(KS, "Standard1").unwrap();
            s.sstables == 2 && s.compactions == 1
        }),
        "one minor compaction of the three oldest SSTables ran: {:?}",
        db.column_family_stats(KS, "Standard1").unwrap()
    );
    let stats = db.column_family_stats(KS, "Standard1").unwrap();
    assert_eq!(stats.tombstones_purged, 0, "{stats:?}");
    assert!(
        db.get(KS, "k", &path).unwrap().is_none(),
        "the old value came back: the tombstone was purged while another SSTable held the row"
    );
    // A major compaction merges everything: the tombstone and what it shadows go together.
    db.compact(KS, Some("Standard1")).unwrap();
    assert!(db.get(KS, "k", &path).unwrap().is_none());
    assert_eq!(
        db.get(KS, "x", &path)
            .unwrap()
            .unwrap()
            .as_column()
            .unwrap()
            .value,
        b"unrelated"
    );
}

#[test]
fn minor_compactions_keep_the_sstable_count_bounded_and_data_identical() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let mut o = opts(&clock);
    o.memtable_operations_millions = 0.002; // a flush every 2,000 column writes
    let db = Database::open(dir.path(), o).unwrap();
    let mut model = BTreeMap::new();
    let mut x = 0x1234_5678u64;
    for n in 0..60_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let key = format!("row{}", x % 500);
        let col = format!("c{}", (x >> 20) % 40);
        let val = format!("v{n}");
        db.insert(
            KS,
            &key,
            &ColumnPath::new("Standard1").column(&col),
            &val,
            WriteOptions::at(n as i64),
        )
        .unwrap();
        model.insert((key, col), val);
    }
    db.flush(KS, Some("Standard1")).unwrap();
    let s = db.column_family_stats(KS, "Standard1").unwrap();
    assert!(s.flushes >= 25, "{} flushes", s.flushes);
    assert!(s.compactions > 0, "background compactions ran");
    // Size-tiered with threshold 4: far fewer SSTables than flushes.
    assert!(
        s.sstables <= 12,
        "{} SSTables after {} flushes",
        s.sstables,
        s.flushes
    );
    let rows = db
        .get_range_slices(
            KS,
            &ColumnParent::new("Standard1"),
            &SlicePredicate::everything(),
            &KeyRange::all().count(10_000),
        )
        .unwrap();
    let mut got = BTreeMap::new();
    for r in rows {
        for c in r.columns {
            let c = c.as_column().unwrap().clone();
            got.insert(
                (
                    String::from_utf8(r.key.clone()).unwrap(),
                    String::from_utf8(c.name).unwrap(),
                ),
                String::from_utf8(c.value).unwrap(),
            );
        }
    }
    assert_eq!(got, model);
}

#[test]
fn statistics_report_what_the_column_family_did() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let db = Database::open(dir.path(), opts(&clock)).unwrap();
    let mut written = 0u64;
    for i in 0..500u32 {
        let (key, val) = (format!("key{i:04}"), vec![b'v'; 100]);
        db.insert(
            KS,
            &key,
            &ColumnPath::new("Standard1").column("c"),
            &val,
            WriteOptions::now(),
        )
        .unwrap();
        written += (key.len() + 1 + val.len()) as u64;
        if i % 100 == 99 {
            db.flush(KS, Some("Standard1")).unwrap();
        }
    }
    for i in 0..50u32 {
        db.get(
            KS,
            format!("key{i:04}"),
            &ColumnPath::new("Standard1").column("c"),
        )
        .unwrap();
        db.get(
            KS,
            format!("nope{i}"),
            &ColumnPath::new("Standard1").column("c"),
        )
        .unwrap();
    }
    let s = db.column_family_stats(KS, "Standard1").unwrap();
    assert_eq!(
        s.client_bytes, written,
        "row key + name + value of each write"
    );
    assert_eq!(s.writes.count, 500);
    assert_eq!(s.reads.count, 100);
    assert!(s.reads.p50_us >= 1 && s.reads.max_us >= s.reads.p99_us);
    assert!(s.flushes >= 5 && s.sstable_bytes_written > 0 && s.commitlog_bytes > written);
    let wa = s.write_amplification().unwrap();
    assert!(wa > 1.0 && wa < 10.0, "write amplification {wa}");
    assert!(s.total_bytes >= s.sstable_bytes);
    let fp = s.bloom_false_positive_ratio().unwrap();
    assert!(fp < 0.2, "measured false-positive ratio {fp}");
    assert!(s.block_cache_hit_rate().is_some());
    // After a major compaction one SSTable is left, and nothing waits.
    db.compact(KS, Some("Standard1")).unwrap();
    let s = db.column_family_stats(KS, "Standard1").unwrap();
    assert_eq!((s.sstables, s.pending_compactions), (1, 0));
    assert!(s.bytes_compacted > 0 && s.compactions >= 1);
}

#[test]
fn two_million_random_columns_keep_sstables_bounded_and_read_back_identical() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let mut o = opts(&clock);
    o.commit_log_sync = CommitLogSync::Periodic { period_ms: 10_000 };
    o.memtable_operations_millions = 0.05; // a flush every 50,000 column writes
    let db = Database::open(dir.path(), o).unwrap();
    let mut model: std::collections::HashMap<(u32, u32), u32> = std::collections::HashMap::new();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut b = BatchMutation::new();
    for n in 0..2_000_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let (row, col) = ((x % 5000) as u32, ((x >> 32) % 1000) as u32);
        b.insert(
            row.to_be_bytes(),
            ColumnPath::new("Standard1").column(col.to_be_bytes()),
            n.to_be_bytes(),
            WriteOptions::at(i64::from(n)),
        );
        model.insert((row, col), n);
        if b.len() == 1000 {
            db.batch_mutate(KS, &b).unwrap();
            b = BatchMutation::new();
        }
    }
    db.batch_mutate(KS, &b).unwrap();
    db.flush(KS, Some("Standard1")).unwrap();
    // Let the background compactor catch up (a condition, with a deadline).
    wait_until(300, || {
        db.column_family_stats(KS, "Standard1")
            .unwrap()
            .pending_compactions
            == 0
    });
    let s = db.column_family_stats(KS, "Standard1").unwrap();
    println!(
        "2M columns: {} flushes, {} compactions, {} SSTables, {} bytes on disk, write amplification {:.2}",
        s.flushes,
        s.compactions,
        s.sstables,
        s.sstable_bytes,
        s.write_amplification().unwrap()
    );
    // Threshold 4 and ~40 flushes make about three size tiers.
    assert!(s.flushes >= 35, "{} flushes", s.flushes);
    assert!(s.sstables <= 16, "{} SSTables", s.sstables);
    let mut got = 0usize;
    let mut start = Vec::new();
    loop {
        let range = supercolumn::KeyRange::keys(&start, "").count(500);
        let rows = db
            .get_range_slices(
                KS,
                &ColumnParent::new("Standard1"),
                &SlicePredicate::everything(),
                &range,
            )
            .unwrap();
        let fresh: Vec<_> = rows.into_iter().filter(|r| r.key != start).collect();
        if fresh.is_empty() {
            break;
        }
        for r in &fresh {
            let row = u32::from_be_bytes(r.key.clone().try_into().unwrap());
            for c in &r.columns {
                let c = c.as_column().unwrap();
                let col = u32::from_be_bytes(c.name.clone().try_into().unwrap());
                let val = u32::from_be_bytes(c.value.clone().try_into().unwrap());
                assert_eq!(model.get(&(row, col)), Some(&val), "row {row} column {col}");
                got += 1;
            }
        }
        start = fresh.last().unwrap().key.clone();
    }
    assert_eq!(got, model.len(), "every column read back");
}

#[test]
fn pending_compactions_resume_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    {
        let mut o = opts(&clock);
        o.min_compaction_threshold = 0; // off while the SSTables pile up
        let db = Database::open(dir.path(), o).unwrap();
        for i in 0..6 {
            db.insert(
                KS,
                format!("k{i}"),
                &ColumnPath::new("Standard1").column("c"),
                "v",
                WriteOptions::now(),
            )
            .unwrap();
            db.flush(KS, Some("Standard1")).unwrap();
        }
        assert_eq!(db.column_family_stats(KS, "Standard1").unwrap().sstables, 6);
    }
    // Reopened with minor compaction on (the default threshold, given explicitly: otherwise the
    // database keeps the 0 it was created with): the full bucket is compacted without any new
    // write.
    let mut o = opts(&clock);
    o.mark_given("MinimumCompactionThreshold");
    let db = Database::open(dir.path(), o).unwrap();
    wait_until(30, || {
        db.column_family_stats(KS, "Standard1").unwrap().sstables <= 1
    });
    assert_eq!(db.column_family_stats(KS, "Standard1").unwrap().sstables, 1);
    for i in 0..6 {
        assert!(db
            .get(
                KS,
                format!("k{i}"),
                &ColumnPath::new("Standard1").column("c")
            )
            .unwrap()
            .is_some());
    }
}

#[test]
fn a_running_compaction_shows_its_progress_until_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let mut o = Options::default().with_clock(clock.clone());
    o.min_compaction_threshold = 0; // no minor compaction: only the major one below runs
    let db = Arc::new(Database::open(dir.path(), o).unwrap());
    let path = ColumnPath::new("Standard1").column("c");
    let (files, rows) = (3u64, 30_000u64);
    for f in 0..files {
        for i in 0..rows {
            let key = format!("k{f}-{i}");
            db.insert(KS, &key, &path, "v", WriteOptions::now())
                .unwrap();
        }
        db.flush(KS, Some("Standard1")).unwrap();
    }
    assert!(db.running_compactions().is_empty());
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (db, done) = (db.clone(), done.clone());
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                for t in db.running_compactions() {
                    if seen.last() != Some(&t) {
                        seen.push(t);
                    }
                }
            }
            seen
        })
    };
    db.compact(KS, Some("Standard1")).unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let seen = watcher.join().unwrap();
    assert!(
        !seen.is_empty(),
        "a compaction of 90,000 rows was seen running"
    );
    let id = seen[0].id;
    let mut last = 0;
    for t in &seen {
        assert_eq!(
            (t.keyspace.as_str(), t.column_family.as_str(), t.major, t.id),
            (KS, "Standard1", true, id)
        );
        assert_eq!(t.rows_total, files * rows);
        assert!(t.rows_done >= last && t.rows_done <= t.rows_total, "{t:?}");
        last = t.rows_done;
    }
    assert!(
        seen.iter()
            .any(|t| t.rows_done > 0 && t.rows_done < t.rows_total),
        "progress was seen midway"
    );
    assert!(
        db.running_compactions().is_empty(),
        "a finished compaction is no longer listed"
    );
}
