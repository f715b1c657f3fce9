//! The memtable alone (no commit log, schema or validation): inserting rows into a fresh
//! memtable, point lookups of present rows, and reading every row in order as a flush does,
//! each from 1 and 2 threads. Rows are 16-byte keys under the RandomPartitioner (sort keys
//! computed up front, as the write path does once per row) with one column `v` of 100 bytes.
//!
//! `cargo bench -p supercolumn-bench --bench memtable`

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use supercolumn::StandaloneMemtable;
use supercolumn_bench::workload::{key, value};

/// Rows per insert iteration (a fresh memtable each time) and in the memtable the lookups and
/// iterations read.
const ROWS: u64 = 100_000;
/// Lookups per lookup iteration.
const LOOKUPS: u64 = 20_000;

fn rows(n: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|i| (StandaloneMemtable::sort_key(&key(i)), value(i, 0)))
        .collect()
}

/// Runs `work(thread, threads)` on `threads` threads at once and returns the wall time.
fn on_threads(threads: u64, work: impl Fn(u64, u64) + Sync) -> Duration {
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let work = &work;
            s.spawn(move || work(t, threads));
        }
    });
    start.elapsed()
}

fn inserts(c: &mut Criterion) {
    let data = rows(ROWS);
    let mut g = c.benchmark_group("memtable_insert");
    g.throughput(Throughput::Elements(ROWS));
    g.sample_size(20);
    for threads in [1u64, 2] {
        g.bench_function(format!("{threads}_thread"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let mem = StandaloneMemtable::new(ROWS as usize);
                    total += on_threads(threads, |t, n| {
                        for (k, v) in data.iter().skip(t as usize).step_by(n as usize) {
                            mem.insert(k, b"v", v, 1);
                        }
                    });
                    // Freeing the arena is a flush's cost, not an insert's.
                    drop(mem);
                }
                total
            })
        });
    }
    g.finish();
}

fn lookups_and_iteration(c: &mut Criterion) {
    let data = rows(ROWS);
    let mem = StandaloneMemtable::new(ROWS as usize);
    for (k, v) in &data {
        mem.insert(k, b"v", v, 1);
    }
    // A fixed scatter over the rows (a multiplicative step coprime with ROWS).
    let probes: Vec<&[u8]> = (0..LOOKUPS)
        .map(|i| data[((i * 7_919) % ROWS) as usize].0.as_slice())
        .collect();
    let mut g = c.benchmark_group("memtable_lookup");
    g.throughput(Throughput::Elements(LOOKUPS));
    for threads in [1u64, 2] {
        g.bench_function(format!("{threads}_thread"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        on_threads(threads, |t, n| {
                            for k in probes.iter().skip(t as usize).step_by(n as usize) {
                                assert!(mem.contains(k, b"v"));
                            }
                        })
                    })
                    .sum()
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("memtable_iterate");
    g.sample_size(20);
    for threads in [1u64, 2] {
        // Each thread reads the whole memtable, as two flushes or scans at once would.
        g.throughput(Throughput::Elements(ROWS * threads));
        g.bench_function(format!("{threads}_thread"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        on_threads(threads, |_, _| {
                            assert_eq!(mem.iterate(), ROWS as usize);
                        })
                    })
                    .sum()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, inserts, lookups_and_iteration);
criterion_main!(benches);
