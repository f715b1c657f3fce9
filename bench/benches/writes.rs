//! The write path through the public API: inserts (commit log + memtable) from 1 and 2
//! threads, the commit log in periodic and batch mode, and building an SSTable (a flush of
//! 20,000 rows). Rows are 16-byte keys with one column `v` of 100 bytes.
//!
//! `cargo bench -p supercolumn-bench --bench writes`

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use supercolumn::{BatchMutation, ColumnPath, CommitLogSync, Database, Options, WriteOptions};
use supercolumn_bench::workload::{key, value};

fn open(sync: CommitLogSync) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut o = Options::default();
    o.commit_log_sync = sync;
    let db = Database::open(dir.path(), o).expect("open");
    (dir, db)
}

fn put(db: &Database, i: u64) {
    db.insert(
        "Keyspace1",
        key(i),
        &ColumnPath::new("Standard1").column("v"),
        value(i, 0),
        WriteOptions::now(),
    )
    .expect("insert");
}

fn inserts(c: &mut Criterion) {
    let mut g = c.benchmark_group("insert");
    g.throughput(Throughput::Elements(1));
    let (_d, db) = open(CommitLogSync::Periodic { period_ms: 10_000 });
    let n = AtomicU64::new(0);
    g.bench_function("periodic_1_thread", |b| {
        b.iter(|| put(&db, n.fetch_add(1, Ordering::Relaxed)))
    });
    // Two long-lived writer threads, each doing half the iterations; the wall time is what
    // counts (spawning threads per iteration would measure the spawn).
    g.bench_function("periodic_2_threads", |b| {
        b.iter_custom(|iters| {
            let start = std::time::Instant::now();
            std::thread::scope(|s| {
                for t in 0..2 {
                    let (db, n) = (&db, &n);
                    s.spawn(move || {
                        for _ in 0..(iters / 2 + t % 2 * (iters % 2)) {
                            put(db, n.fetch_add(1, Ordering::Relaxed));
                        }
                    });
                }
            });
            start.elapsed()
        })
    });
    g.throughput(Throughput::Elements(1));
    let (_d2, batch) = open(CommitLogSync::Batch { window_ms: 1.0 });
    g.bench_function("batch_1_thread", |b| {
        b.iter(|| put(&batch, n.fetch_add(1, Ordering::Relaxed)))
    });
    g.finish();
}

fn sstable_build(c: &mut Criterion) {
    let mut g = c.benchmark_group("sstable_build");
    g.throughput(Throughput::Elements(20_000));
    g.sample_size(10);
    g.bench_function("flush_20k_rows", |b| {
        b.iter_batched(
            || {
                let (d, db) = open(CommitLogSync::Periodic { period_ms: 10_000 });
                let mut bm = BatchMutation::new();
                for i in 0..20_000 {
                    bm.insert(
                        key(i),
                        ColumnPath::new("Standard1").column("v"),
                        value(i, 0),
                        WriteOptions::at(1),
                    );
                }
                db.batch_mutate("Keyspace1", &bm).expect("write");
                (d, db)
            },
            |(d, db)| {
                db.flush("Keyspace1", Some("Standard1")).expect("flush");
                (d, db)
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = inserts, sstable_build
}
criterion_main!(benches);
