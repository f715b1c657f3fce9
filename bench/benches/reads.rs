//! The read path through the public API, on 100,000 rows (16-byte key, one 100-byte column) and
//! 20 wide rows of 10,000 8-byte columns: point reads from the memtable, from SSTables with the
//! block cache cold (off) and warm, key-cache hits, bloom-filter misses; slices of a wide row
//! (first 10, last 10 reversed, 10 by name; first 10 of a row in the memtable, and of one in
//! the memtable and an SSTable); range slices of 100 rows.
//!
//! `cargo bench -p supercolumn-bench --bench reads`

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use supercolumn::{
    ColumnParent, ColumnPath, Database, KeyRange, Options, SlicePredicate, SliceRange,
};
use supercolumn_bench::workload::{
    key, load as load_cells, missing_key, point_row, wide_cell, wide_column, wide_key,
};
use supercolumn_bench::KeyStream;

const ROWS: u64 = 100_000;

fn load(cache_mb: u32, flush: bool) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut o = Options::default();
    o.block_cache_size_mb = cache_mb;
    let db = Database::open(dir.path(), o).expect("open");
    let wide = (0..20).flat_map(|r| (0..10_000).map(move |c| wide_cell(r, c)));
    load_cells(&db, (0..ROWS).map(point_row).chain(wide), 5000).expect("write");
    if flush {
        db.flush("Keyspace1", Some("Standard1")).expect("flush");
        db.compact("Keyspace1", Some("Standard1")).expect("compact");
    }
    (dir, db)
}

fn point_reads(c: &mut Criterion) {
    let path = ColumnPath::new("Standard1").column("v");
    let mut g = c.benchmark_group("point_read");
    for (name, cache, flush) in [("memtable", 32, false), ("sstable_cold", 0, true)] {
        let (_d, db) = load(cache, flush);
        let mut ks = KeyStream::new(3);
        g.bench_function(name, |b| {
            b.iter(|| {
                black_box(
                    db.get("Keyspace1", key(ks.next().unwrap_or(0) % ROWS), &path)
                        .expect("read"),
                )
            })
        });
    }
    let (_d, db) = load(256, true);
    let mut ks = KeyStream::new(3);
    g.bench_function("sstable_warm", |b| {
        b.iter(|| {
            black_box(
                db.get("Keyspace1", key(ks.next().unwrap_or(0) % ROWS), &path)
                    .expect("read"),
            )
        })
    });
    g.bench_function("key_cache_hit", |b| {
        b.iter(|| black_box(db.get("Keyspace1", key(42), &path).expect("read")))
    });
    let mut ks = KeyStream::new(4);
    g.bench_function("bloom_miss", |b| {
        b.iter(|| {
            black_box(
                db.get(
                    "Keyspace1",
                    missing_key(ks.next().unwrap_or(0) % ROWS),
                    &path,
                )
                .expect("read"),
            )
        })
    });
    g.finish();

    let parent = ColumnParent::new("Standard1");
    let mut g = c.benchmark_group("wide_row_slice");
    let mut ks = KeyStream::new(5);
    let first: SlicePredicate = SliceRange::all().count(10).into();
    let last: SlicePredicate = SliceRange::all().reversed().count(10).into();
    let by_name = SlicePredicate::names((0..10).map(|i| wide_column(i * 997)));
    for (label, p) in [
        ("first_10", &first),
        ("last_10_reversed", &last),
        ("10_by_name", &by_name),
    ] {
        g.bench_function(label, |b| {
            b.iter(|| {
                black_box(
                    db.get_slice(
                        "Keyspace1",
                        wide_key(ks.next().unwrap_or(0) % 20),
                        &parent,
                        p,
                    )
                    .expect("slice"),
                )
            })
        });
    }
    // The same first 10 of a row still in the memtable, and of a row in both the memtable
    // (every other column written again) and an SSTable: slices that merge or copy.
    let (_m, in_memory) = load(32, false);
    let (_b, both) = load(256, true);
    let again = (0..20).flat_map(|r| (0..10_000).step_by(2).map(move |c| wide_cell(r, c)));
    load_cells(&both, again, 5000).expect("write");
    for (label, db) in [
        ("first_10_memtable", &in_memory),
        ("first_10_two_sources", &both),
    ] {
        g.bench_function(label, |b| {
            b.iter(|| {
                let row = wide_key(ks.next().unwrap_or(0) % 20);
                black_box(
                    db.get_slice("Keyspace1", row, &parent, &first)
                        .expect("slice"),
                )
            })
        });
    }
    g.bench_function("range_100_rows", |b| {
        b.iter(|| {
            let start = key(ks.next().unwrap_or(0) % ROWS);
            black_box(
                db.get_range_slices(
                    "Keyspace1",
                    &parent,
                    &SlicePredicate::everything(),
                    &KeyRange::keys(start, b"").count(100),
                )
                .expect("range"),
            )
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = point_reads
}
criterion_main!(benches);
