//! `indexes`: what a secondary index answers in, against a point read of the same table. It
//! fills `t (k int PRIMARY KEY, v int)` with `--rows` rows (through prepared CQL batches),
//! each value of `v` held by `--per-value` rows spread over the ring, with an index on `v`;
//! closes and reopens the database (the rows and the index are read from SSTables); then times
//! `--queries` point reads (`WHERE k = ?`) and as many indexed reads (`WHERE v = ?`, each
//! returning `--per-value` rows), interleaved, and prints each kind's p50, p99 and mean, and
//! those of reading the index's entries alone (the engine's part of an indexed read). The
//! fill ends with a major compaction of the table and its index, whose time it prints.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use supercolumn::{Database, Options};
use supercolumn_cql::{CqlResult, Prepared, Session};

#[derive(Parser)]
struct Args {
    /// Rows of the table.
    #[arg(long, default_value_t = 1_000_000)]
    rows: u64,
    /// Rows holding each value of the indexed column.
    #[arg(long, default_value_t = 10)]
    per_value: u64,
    /// Queries of each kind timed.
    #[arg(long, default_value_t = 20_000)]
    queries: u64,
    /// Where the database goes (default: a temporary directory).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
    /// Time the queries over what an earlier run with the same `--dir`, `--rows` and
    /// `--per-value` filled, without filling again (for profiling the reads alone).
    #[arg(long, requires = "dir")]
    reuse: bool,
}

const BATCH: u64 = 500;

/// A stream of numbers from `seed` (xorshift), for query order.
fn stream(mut seed: u64) -> impl Iterator<Item = u64> {
    std::iter::from_fn(move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        Some(seed)
    })
}

fn fill(db: &Database, args: &Args) -> anyhow::Result<()> {
    let mut cql = Session::new(db);
    cql.execute(
        "CREATE KEYSPACE IF NOT EXISTS bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
         USE bench;
         CREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY, v int);
         CREATE INDEX IF NOT EXISTS ON t (v)",
    )?;
    let values = (args.rows / args.per_value).max(1);
    let p = cql.prepare("INSERT INTO t (k, v) VALUES (?, ?)")?;
    let mut n = 0;
    while n < args.rows {
        let end = (n + BATCH).min(args.rows);
        let bytes: Vec<[[u8; 4]; 2]> = (n..end)
            .map(|i| [i as i32, (i % values) as i32].map(i32::to_be_bytes))
            .collect();
        let rows: Vec<Vec<Option<&[u8]>>> = bytes
            .iter()
            .map(|r| r.iter().map(|v| Some(&v[..])).collect())
            .collect();
        let slices: Vec<&[Option<&[u8]>]> = rows.iter().map(Vec::as_slice).collect();
        cql.execute_batch(&p, &slices)?;
        n = end;
    }
    db.flush_all()?;
    let started = Instant::now();
    db.compact("bench", Some("t"))?;
    println!(
        "major compaction of t and its index (each entry checked against its row): {:.2} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Runs `p` with `value` and checks it returned `want` rows; returns how long it took.
fn timed(cql: &mut Session<'_>, p: &Prepared, value: u64, want: usize) -> anyhow::Result<Duration> {
    let bytes = (value as i32).to_be_bytes();
    let started = Instant::now();
    let CqlResult::Rows(rows) = cql.execute_prepared(p, &[Some(&bytes)])? else {
        bail!("a SELECT returned no rows");
    };
    let took = started.elapsed();
    if rows.len() != want {
        bail!("value {value}: {} rows, {want} expected", rows.len());
    }
    Ok(took)
}

fn summary(name: &str, mut d: Vec<Duration>) {
    d.sort();
    let at = |q: f64| d[((d.len() - 1) as f64 * q) as usize];
    let mean = d.iter().sum::<Duration>() / d.len().max(1) as u32;
    println!(
        "{name:<28} p50 {:>8.1} µs   p99 {:>8.1} µs   mean {:>8.1} µs",
        at(0.5).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6,
        mean.as_secs_f64() * 1e6
    );
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.rows == 0 || args.per_value == 0 || args.queries == 0 {
        bail!("--rows, --per-value and --queries must be at least 1");
    }
    let tmp = tempfile::tempdir()?;
    let dir = args.dir.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let started = Instant::now();
    if !args.reuse {
        let db = Database::open(&dir, Options::default())
            .with_context(|| format!("opening {}", dir.display()))?;
        fill(&db, &args)?;
        db.close()?;
        println!(
            "filled {} rows in {:.1} s",
            args.rows,
            started.elapsed().as_secs_f64()
        );
    }
    let db = Database::open(&dir, Options::default())?;
    let mut cql = Session::new(&db);
    cql.execute("USE bench")?;
    let point = cql.prepare("SELECT k, v FROM t WHERE k = ?")?;
    let indexed = cql.prepare("SELECT k, v FROM t WHERE v = ?")?;
    let values = (args.rows / args.per_value).max(1);
    let (mut points, mut lookups, mut entries) = (Vec::new(), Vec::new(), Vec::new());
    for (i, r) in stream(0x9e37_79b9_7f4a_7c15)
        .take(args.queries as usize * 2)
        .enumerate()
    {
        if i % 2 == 0 {
            points.push(timed(&mut cql, &point, r % args.rows, 1)?);
        } else {
            let v = r % values;
            let want = args.rows / values + u64::from(v < args.rows % values);
            lookups.push(timed(&mut cql, &indexed, v, want as usize)?);
            // The index's own part: its entries for the value, from the engine.
            let bytes = (v as i32).to_be_bytes();
            let started = Instant::now();
            let found = db.index_entries("bench", "t", "t_v_idx", &bytes, None, 1_000)?;
            entries.push(started.elapsed());
            if found.len() != want as usize {
                bail!("value {v}: {} index entries, {want} expected", found.len());
            }
        }
    }
    summary("point read (k = ?)", points);
    summary(
        &format!("indexed read (v = ?, {} rows)", args.per_value),
        lookups,
    );
    summary("  of which index entries", entries);
    Ok(())
}
