//! Compaction throughput: a major compaction of four SSTables of 25,000 rows each (a 16-byte key,
//! one column `v` of 100 bytes, half random), reported as input bytes merged per second.
//!
//! `cargo bench -p supercolumn-bench --bench compaction`

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use supercolumn::{Database, Options};
use supercolumn_bench::workload::{load, value};
use supercolumn_bench::KeyStream;

const TABLES: u64 = 4;
const ROWS_PER_TABLE: u64 = 25_000;

/// A database with `TABLES` SSTables of distinct random keys; returns it with the input bytes.
fn build() -> (tempfile::TempDir, Database, u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut o = Options::default();
    o.min_compaction_threshold = 0; // nothing compacts but the benchmark
    let db = Database::open(dir.path(), o).expect("open");
    let mut keys = KeyStream::new(42);
    for t in 0..TABLES {
        let cells = (0..ROWS_PER_TABLE).map(|i| {
            let k = keys.next().unwrap_or(i).to_be_bytes();
            let key: Vec<u8> = k.iter().chain(k.iter()).copied().collect();
            (key, b"v".to_vec(), value(t * ROWS_PER_TABLE + i, 0))
        });
        load(&db, cells, 1000).expect("write");
        db.flush("Keyspace1", Some("Standard1")).expect("flush");
    }
    let bytes = db
        .column_family_stats("Keyspace1", "Standard1")
        .expect("stats")
        .sstable_bytes;
    (dir, db, bytes)
}

fn compaction(c: &mut Criterion) {
    let (_d, _db, bytes) = build();
    eprintln!("input: {TABLES} SSTables, {bytes} bytes");
    let mut g = c.benchmark_group("compaction");
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(10);
    g.bench_function("major_4x25k_rows", |b| {
        b.iter_batched(
            build,
            |(dir, db, _)| {
                db.compact("Keyspace1", Some("Standard1")).expect("compact");
                (dir, db)
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, compaction);
criterion_main!(benches);
