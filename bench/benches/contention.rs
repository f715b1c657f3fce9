//! The paths many threads share, through the public API: a cached point read (20,000 rows in
//! one compacted SSTable, every block and key in the caches) and a point write (into the
//! memtable, periodic commit log), each run by 1, 2 and 4 threads at once. A figure is the
//! wall time for every thread to do one operation, so perfect scaling keeps it flat as threads
//! are added (up to the cores there are) and the elements per second grow with them. Shared
//! counters, histograms, cache locks and the store's view show up here as a time that grows
//! with the thread count.
//!
//! `cargo bench -p supercolumn-bench --bench contention`

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use supercolumn::{ColumnPath, Database, Options, WriteOptions};
use supercolumn_bench::workload::{key, load, point_row};
use supercolumn_bench::KeyStream;

const ROWS: u64 = 20_000;
const THREADS: [usize; 3] = [1, 2, 4];

/// Runs `op` `iters` times on each of `threads` threads at once; the wall time of the slowest.
fn on_threads(threads: usize, iters: u64, op: impl Fn(u64, &mut KeyStream) + Sync) -> Duration {
    let start = std::sync::Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (start, op) = (&start, &op);
                s.spawn(move || {
                    let mut ks = KeyStream::new(t as u64 + 1);
                    start.wait();
                    for i in 0..iters {
                        op(i, &mut ks);
                    }
                })
            })
            .collect();
        start.wait();
        let began = Instant::now();
        for h in handles {
            h.join().unwrap();
        }
        began.elapsed()
    })
}

fn cached_point_read(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.block_cache_size_mb = 256;
    let db = Database::open(dir.path(), o).unwrap();
    load(&db, (0..ROWS).map(point_row), 5000).unwrap();
    db.compact("Keyspace1", Some("Standard1")).unwrap();
    let path = ColumnPath::new("Standard1").column("v");
    // Twice over every key: the key cache admits a key on its second miss.
    for _ in 0..2 {
        for i in 0..ROWS {
            db.get("Keyspace1", key(i), &path).unwrap().unwrap();
        }
    }
    let mut g = c.benchmark_group("contended_cached_read");
    for threads in THREADS {
        g.throughput(Throughput::Elements(threads as u64));
        g.bench_with_input(BenchmarkId::from_parameter(threads), &threads, |b, &n| {
            b.iter_custom(|iters| {
                on_threads(n, iters, |_, ks| {
                    let k = key(ks.next().unwrap_or(0) % ROWS);
                    black_box(db.get("Keyspace1", k, &path).unwrap());
                })
            })
        });
    }
    g.finish();
}

fn point_write(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let path = ColumnPath::new("Standard1").column("v");
    let value = [7u8; 100];
    let mut g = c.benchmark_group("contended_write");
    for threads in THREADS {
        g.throughput(Throughput::Elements(threads as u64));
        g.bench_with_input(BenchmarkId::from_parameter(threads), &threads, |b, &n| {
            b.iter_custom(|iters| {
                on_threads(n, iters, |_, ks| {
                    let k = key(ks.next().unwrap_or(0) % 1_000_000);
                    db.insert("Keyspace1", k, &path, value, WriteOptions::now())
                        .unwrap();
                })
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = cached_point_read, point_write
}
criterion_main!(benches);
