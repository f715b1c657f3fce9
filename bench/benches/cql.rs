//! Each CQL operation `stress` prices (issue 15's item 4) beside the same operation through the
//! Thrift-era API, through the very engines `stress` drives: the first and last 10 CQL rows of
//! a wide partition, a point read, and a point insert. `cells` writes and reads the very cells
//! CQL does (row markers and values under composite names) through the Thrift-era API;
//! `supercolumn` keeps the Thrift-era model (one cell per value). Every side holds its data
//! flushed and compacted into one SSTable, with the block cache warm.
//!
//! `cargo bench -p supercolumn-bench --bench cql`

// A benchmark stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use supercolumn_bench::engine::{self, Durability, Engine, EngineConfig};
use supercolumn_bench::workload::{key, value, wide_column, wide_key};
use supercolumn_bench::KeyStream;

const POINT_ROWS: u64 = 20_000;
const WIDE_ROWS: u64 = 20;
const WIDE_COLUMNS: u64 = 1000;

fn open(name: &str) -> (tempfile::TempDir, Box<dyn Engine>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = EngineConfig {
        durability: Durability::Periodic,
        block_cache_bytes: 64 << 20,
        memtable_bytes: None,
        order_preserving: false,
        index_values: false,
        scrape_ms: None,
    };
    let e = engine::open(name, dir.path(), config).expect("open");
    for i in 0..POINT_ROWS {
        e.put(&key(i), b"v", &value(i, 0)).expect("put");
    }
    for r in 0..WIDE_ROWS {
        for chunk in (0..WIDE_COLUMNS).collect::<Vec<_>>().chunks(100) {
            let cells: Vec<([u8; 8], Vec<u8>)> = chunk
                .iter()
                .map(|&c| (wide_column(c), value(c, r)))
                .collect();
            e.put_wide(&wide_key(r), &cells).expect("put_wide");
        }
    }
    e.flush().expect("flush");
    e.compact().expect("compact");
    (dir, e)
}

fn cql_against_thrift(c: &mut Criterion) {
    let mut g = c.benchmark_group("cql_vs_thrift");
    for name in ["supercolumn", "cells", "cql"] {
        let (_dir, e) = open(name);
        let mut ks = KeyStream::new(7);
        for (label, reversed) in [("slice_first_10", false), ("slice_last_10", true)] {
            g.bench_function(format!("{label}/{name}"), |b| {
                b.iter(|| {
                    let row = wide_key(ks.next().unwrap_or(0) % WIDE_ROWS);
                    let n = e.slice(&row, 10, reversed).expect("slice");
                    assert_eq!(n, 10);
                })
            });
        }
        g.bench_function(format!("point_read/{name}"), |b| {
            b.iter(|| {
                let k = key(ks.next().unwrap_or(0) % POINT_ROWS);
                assert!(e.get(&k, b"v").expect("get"));
            })
        });
        let v = value(1, 1);
        let mut i = POINT_ROWS;
        g.bench_function(format!("point_insert/{name}"), |b| {
            b.iter(|| {
                i += 1;
                e.put(black_box(&key(i)), b"v", &v).expect("put");
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = cql_against_thrift
}
criterion_main!(benches);
