//! How the SSTable block size (`ColumnIndexSizeInKB`) trades point-read cost against file size.
//! Data: 200,000 rows, each a 16-byte key with one column `v` of 100 bytes (half random, as
//! db_bench makes values), flushed to SSTables. Reads: random existing keys, with the block
//! cache off (every read decodes a block) and on (warm).
//!
//! `cargo bench -p supercolumn-bench --bench block_size`

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use supercolumn::{ColumnPath, Database, Options};
use supercolumn_bench::workload::{key, load as load_cells, point_row};
use supercolumn_bench::KeyStream;

const ROWS: u64 = 200_000;

fn load(dir: &std::path::Path, kb: u32, cache_mb: u32) -> Database {
    let mut o = Options::default();
    o.column_index_size_kb = Some(kb);
    o.block_cache_size_mb = cache_mb;
    let db = Database::open(dir, o).expect("open");
    load_cells(&db, (0..ROWS).map(point_row), 1000).expect("write");
    db.flush("Keyspace1", Some("Standard1")).expect("flush");
    db
}

fn point_reads(c: &mut Criterion) {
    let mut g = c.benchmark_group("point_read_by_block_size");
    for cache_mb in [0u32, 32] {
        for kb in [1u32, 4, 16, 64] {
            let dir = tempfile::tempdir().expect("tempdir");
            let db = load(dir.path(), kb, cache_mb);
            let s = db
                .column_family_stats("Keyspace1", "Standard1")
                .expect("stats");
            eprintln!(
                "block {kb:>2} KiB: {} SSTables, {} bytes on disk",
                s.sstables, s.sstable_bytes
            );
            let path = ColumnPath::new("Standard1").column("v");
            let mut ks = KeyStream::new(7);
            let label = if cache_mb == 0 {
                "cache_off"
            } else {
                "cache_warm"
            };
            g.bench_with_input(BenchmarkId::new(label, kb), &kb, |b, _| {
                b.iter(|| {
                    let i = ks.next().unwrap_or(0) % ROWS;
                    black_box(db.get("Keyspace1", key(i), &path).expect("read"));
                })
            });
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(4));
    targets = point_reads
}
criterion_main!(benches);
