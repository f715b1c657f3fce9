//! `aggregates`: how long CQL aggregates take and how much memory they hold, over a table of
//! many partitions and over one wide partition. It fills (through prepared CQL batches)
//! `big`, `--rows` rows as partitions of 1,000, and `wide`, one partition of
//! `--partition-rows` rows under two clustering columns; closes and reopens the database (the
//! rows are read from SSTables); then runs `count(*)`, `sum`, and a `GROUP BY` over each,
//! three times, and prints each query's median time and the most heap it held above what was
//! in use when it started (counted by this binary's allocator: the SSTables' mapped pages,
//! which the kernel counts as resident, are not the query's). Aggregation streams rows through
//! its state, so that stays flat however many rows are aggregated: run it at two `--rows` to
//! see. (The block cache, 32 MiB by default, fills on the first reads.)

// The counting allocator is the one unsafe thing here: it forwards to the system allocator.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use supercolumn::{Database, Options};
use supercolumn_cql::{CqlResult, Session};

/// Heap bytes in use, and the most in use since the last [`reset_peak`].
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

struct Counting;

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call forwards to `System` with the caller's own arguments, so the contract
// `GlobalAlloc` asks of its callers is the one `System` is given; counting touches only two
// atomics, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        grew(new_size);
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Starts a new peak from the bytes in use now; returns them.
fn reset_peak() -> usize {
    let live = LIVE.load(Ordering::Relaxed);
    PEAK.store(live, Ordering::Relaxed);
    live
}

#[derive(Parser)]
struct Args {
    /// Rows of the many-partition table (partitions of 1,000 rows).
    #[arg(long, default_value_t = 1_000_000)]
    rows: u64,
    /// Rows of the one wide partition.
    #[arg(long, default_value_t = 100_000)]
    partition_rows: u64,
    /// Where the database goes (default: a temporary directory).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
}

const BATCH: u64 = 500;

fn fill(
    cql: &mut Session<'_>,
    insert: &str,
    rows: u64,
    values: impl Fn(u64) -> [i32; 3],
) -> anyhow::Result<()> {
    let p = cql.prepare(insert)?;
    let mut n = 0;
    while n < rows {
        let end = (n + BATCH).min(rows);
        let bytes: Vec<[[u8; 4]; 3]> = (n..end).map(|i| values(i).map(i32::to_be_bytes)).collect();
        let rows_of: Vec<Vec<Option<&[u8]>>> = bytes
            .iter()
            .map(|r| r.iter().map(|v| Some(&v[..])).collect())
            .collect();
        let slices: Vec<&[Option<&[u8]>]> = rows_of.iter().map(Vec::as_slice).collect();
        cql.execute_batch(&p, &slices)?;
        n = end;
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let tmp = tempfile::tempdir()?;
    let dir = args.dir.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    {
        let db = Database::open(&dir, Options::default())?;
        let mut cql = Session::new(&db);
        cql.execute(
            "CREATE KEYSPACE IF NOT EXISTS bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
             USE bench;
             CREATE TABLE IF NOT EXISTS big (k int, c int, v int, PRIMARY KEY (k, c));
             CREATE TABLE IF NOT EXISTS wide (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1, c2))",
        )?;
        let started = Instant::now();
        fill(
            &mut cql,
            "INSERT INTO big (k, c, v) VALUES (?, ?, ?)",
            args.rows,
            |i| [(i / 1000) as i32, (i % 1000) as i32, (i % 997) as i32],
        )?;
        let wide = "INSERT INTO wide (c1, c2, v, k) VALUES (?, ?, ?, 0)";
        fill(&mut cql, wide, args.partition_rows, |i| {
            [(i / 100) as i32, (i % 100) as i32, (i % 991) as i32]
        })?;
        eprintln!("filled in {:.1} s", started.elapsed().as_secs_f64());
        drop(cql);
        db.close()?;
    }
    let db = Database::open(&dir, Options::default())?;
    let mut cql = Session::new(&db);
    cql.execute("USE bench").context("USE bench")?;
    println!(
        "{:<52} {:>10} {:>10} {:>14}",
        "query", "rows", "ms", "heap held"
    );
    let queries = [
        ("SELECT count(*) FROM big", args.rows),
        ("SELECT sum(v) FROM big", args.rows),
        ("SELECT k, count(*), sum(v) FROM big GROUP BY k", args.rows),
        ("SELECT count(*) FROM wide WHERE k = 0", args.partition_rows),
        (
            "SELECT sum(v), avg(v) FROM wide WHERE k = 0",
            args.partition_rows,
        ),
        (
            "SELECT c1, max(v) FROM wide WHERE k = 0 GROUP BY c1",
            args.partition_rows,
        ),
    ];
    for (q, rows) in queries {
        let mut times = Vec::new();
        let mut answer = 0;
        let mut growth = 0;
        for _ in 0..3 {
            let before = reset_peak();
            let t = Instant::now();
            let r = cql.execute(q)?.pop();
            times.push(t.elapsed().as_secs_f64() * 1e3);
            growth = PEAK.load(Ordering::Relaxed).saturating_sub(before);
            if let Some(CqlResult::Rows(r)) = r {
                answer = r.len();
            }
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{q:<52} {rows:>10} {:>10.1} {:>10} KiB   ({answer} result rows; heap of the last run)",
            times[1],
            growth / 1024
        );
    }
    Ok(())
}
