//! `stress`: db_bench/cassandra-stress style workloads against supercolumn, phase by phase, with a
//! progress bar and a table per phase — ops/s, latency p50/p99/p99.9/max, bytes written, write
//! amplification, disk space, SSTable count, peak memory. With no argument it runs a default
//! workload on a fresh temporary data directory (the default Keyspace1 schema) in under a minute.
//!
//! `cargo run --release --bin stress [-- --help]`

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Parser;
use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressStyle};
use supercolumn::{
    BatchMutation, ColumnParent, ColumnPath, CommitLogSync, Database, KeyRange, Options,
    SlicePredicate, SliceRange, WriteOptions,
};
use supercolumn_bench::workload::{key, missing_key, value, wide_column, wide_key};
use supercolumn_bench::KeyStream;

const KS: &str = "Keyspace1";
const CF: &str = "Standard1";
const ALL: &str =
    "fillseq,fillrandom,overwrite,readrandom,readmissing,readhot,slice,rangescan,mixed";

#[derive(Parser, Clone)]
#[command(name = "stress", about = "Benchmark workloads against supercolumn")]
struct Args {
    /// Phases to run, in order.
    #[arg(long, default_value = ALL)]
    workloads: String,
    /// Point rows written by the fills (and read by the reads).
    #[arg(long, default_value_t = 200_000)]
    rows: u64,
    /// Wide rows for `slice`.
    #[arg(long, default_value_t = 20)]
    wide_rows: u64,
    /// Columns per wide row.
    #[arg(long, default_value_t = 10_000)]
    columns_per_row: u64,
    /// Value size of point rows (bytes; the default matches db_bench's 100).
    #[arg(long, default_value_t = 100)]
    value_size: usize,
    /// Client threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Commit log sync: periodic or batch.
    #[arg(long, default_value = "periodic")]
    sync: String,
    /// Seed of the key and value streams.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Runs of the whole workload (the table shows medians).
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// Keep the data in this directory (for sstable-dump) instead of a temporary one.
    #[arg(long)]
    data: Option<PathBuf>,
    /// Print results as JSON lines.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Debug, Default)]
struct PhaseResult {
    phase: String,
    ops: u64,
    secs: f64,
    p50: u64,
    p99: u64,
    p999: u64,
    max: u64,
    bytes_written: u64,
    write_amp: f64,
    disk: u64,
    sstables: usize,
    peak_mem: u64,
}

impl PhaseResult {
    fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.secs.max(1e-9)
    }
}

fn peak_memory() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn disk_usage(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => stack.push(e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

/// Runs `ops` operations split over `threads`; `op(thread, i)` does one and reports success.
fn timed(
    name: &str,
    ops: u64,
    threads: usize,
    quiet: bool,
    op: impl Fn(usize, u64) -> anyhow::Result<()> + Sync,
) -> anyhow::Result<(f64, Histogram<u64>)> {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(ops)
    };
    bar.set_style(
        ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} {per_sec}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix(name.to_string());
    let started = Instant::now();
    let per = ops.div_ceil(threads as u64);
    let hists: Vec<anyhow::Result<Histogram<u64>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (op, bar) = (&op, &bar);
                s.spawn(move || -> anyhow::Result<Histogram<u64>> {
                    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3)?;
                    let (from, to) = (t as u64 * per, ((t as u64 + 1) * per).min(ops));
                    for i in from..to {
                        let t0 = Instant::now();
                        op(t, i)?;
                        h.saturating_record(t0.elapsed().as_micros().max(1) as u64);
                        if i % 1024 == 0 {
                            bar.inc(1024.min(to - i));
                        }
                    }
                    Ok(h)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a client thread panicked")))
            })
            .collect()
    });
    let secs = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let mut all = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3)?;
    for h in hists {
        all.add(h?)?;
    }
    Ok((secs, all))
}

struct Bench {
    db: Database,
    dir: PathBuf,
    args: Args,
}

impl Bench {
    fn put(&self, k: &[u8], col: &[u8], v: &[u8]) -> anyhow::Result<()> {
        let mut b = BatchMutation::new();
        b.insert(k, ColumnPath::new(CF).column(col), v, WriteOptions::now());
        self.db.batch_mutate(KS, &b).context("write")
    }

    fn get(&self, k: &[u8]) -> anyhow::Result<bool> {
        Ok(self
            .db
            .get(KS, k, &ColumnPath::new(CF).column("v"))?
            .is_some())
    }

    fn phase(&self, name: &str, round: u64) -> anyhow::Result<PhaseResult> {
        let a = &self.args;
        let n = a.rows;
        let quiet = a.json;
        let mut rng = KeyStream::new(a.seed ^ round);
        let order: Vec<u64> = (0..n).map(|_| rng.next().unwrap_or(0) % n).collect();
        let before = self.db.column_family_stats(KS, CF)?;
        let value_of = |i: u64, r: u64| {
            let mut v = value(i, r);
            v.resize(a.value_size, b'x');
            v
        };
        let (ops, (secs, h)) = match name {
            "fillseq" => (
                n,
                timed(name, n, a.threads, quiet, |_, i| {
                    self.put(&key(i), b"v", &value_of(i, 0))
                })?,
            ),
            "fillrandom" => (
                n,
                timed(name, n, a.threads, quiet, |_, i| {
                    let k = order[i as usize];
                    self.put(&key(k), b"v", &value_of(k, 1))
                })?,
            ),
            "overwrite" => (
                n,
                timed(name, n, a.threads, quiet, |_, i| {
                    let k = order[(n - 1 - i) as usize];
                    self.put(&key(k), b"v", &value_of(k, 2))
                })?,
            ),
            "readrandom" => (
                n,
                timed(name, n, a.threads, quiet, |_, i| {
                    if !self.get(&key(order[i as usize]))? {
                        bail!("readrandom: a written row is missing");
                    }
                    Ok(())
                })?,
            ),
            "readmissing" => (
                n,
                timed(name, n, a.threads, quiet, |_, i| {
                    if self.get(&missing_key(order[i as usize]))? {
                        bail!("readmissing: found a row never written");
                    }
                    Ok(())
                })?,
            ),
            "readhot" => {
                let hot = (n / 100).max(1);
                (
                    n,
                    timed(name, n, a.threads, quiet, |_, i| {
                        self.get(&key(order[i as usize] % hot)).map(|_| ())
                    })?,
                )
            }
            "slice" => {
                // Fill the wide rows (not timed), then read first/last 10 columns, both ways.
                let mut b = BatchMutation::new();
                for r in 0..a.wide_rows {
                    for c in 0..a.columns_per_row {
                        b.insert(
                            wide_key(r),
                            ColumnPath::new(CF).column(wide_column(c)),
                            [b'w'; 8],
                            WriteOptions::now(),
                        );
                        if b.len() == 5000 {
                            self.db.batch_mutate(KS, &b)?;
                            b = BatchMutation::new();
                        }
                    }
                }
                self.db.batch_mutate(KS, &b)?;
                self.db.flush(KS, Some(CF))?;
                let slices = (a.wide_rows * 1000).max(1);
                (
                    slices,
                    timed(name, slices, a.threads, quiet, |_, i| {
                        let r = wide_key(order[i as usize % order.len()] % a.wide_rows.max(1));
                        let range = if i % 2 == 0 {
                            SliceRange::all().reversed().count(10)
                        } else {
                            SliceRange::all().count(10)
                        };
                        let got =
                            self.db
                                .get_slice(KS, &r, &ColumnParent::new(CF), &range.into())?;
                        if got.len() != 10.min(a.columns_per_row as usize) {
                            bail!("slice: {} columns", got.len());
                        }
                        Ok(())
                    })?,
                )
            }
            "rangescan" => {
                let scans = (n / 100).max(1);
                (
                    scans,
                    timed(name, scans, a.threads, quiet, |_, i| {
                        let start = key(order[i as usize]);
                        let got = self.db.get_range_slices(
                            KS,
                            &ColumnParent::new(CF),
                            &SlicePredicate::everything(),
                            &KeyRange::keys(start, b"").count(100),
                        )?;
                        std::hint::black_box(got);
                        Ok(())
                    })?,
                )
            }
            "mixed" => (
                n,
                timed(name, n, a.threads, quiet, |_, i| {
                    let k = order[i as usize];
                    if i % 10 < 5 {
                        self.get(&key(k)).map(|_| ())
                    } else {
                        self.put(&key(k), b"v", &value_of(k, 3))
                    }
                })?,
            ),
            other => bail!("unknown workload '{other}' (known: {ALL})"),
        };
        let after = self.db.column_family_stats(KS, CF)?;
        let client = after.client_bytes - before.client_bytes;
        let written = (after.sstable_bytes_written - before.sstable_bytes_written)
            + (after.commitlog_bytes - before.commitlog_bytes);
        Ok(PhaseResult {
            phase: name.to_string(),
            ops,
            secs,
            p50: h.value_at_quantile(0.5),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
            bytes_written: written,
            write_amp: if client == 0 {
                0.0
            } else {
                written as f64 / client as f64
            },
            disk: disk_usage(&self.dir),
            sstables: after.sstables,
            peak_mem: peak_memory(),
        })
    }
}

fn median(v: &mut [PhaseResult]) -> PhaseResult {
    v.sort_by(|a, b| a.ops_per_sec().total_cmp(&b.ops_per_sec()));
    v[v.len() / 2].clone()
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.threads == 0 || args.rows == 0 || args.rounds == 0 {
        bail!("--threads, --rows and --rounds must be at least 1");
    }
    let sync = match args.sync.as_str() {
        "periodic" => CommitLogSync::Periodic { period_ms: 10_000 },
        "batch" => CommitLogSync::Batch { window_ms: 1.0 },
        other => bail!("--sync is periodic or batch, not '{other}'"),
    };
    let phases: Vec<String> = args
        .workloads
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let started = Instant::now();
    let mut results: Vec<Vec<PhaseResult>> = vec![Vec::new(); phases.len()];
    for round in 0..args.rounds {
        let temp = tempfile::tempdir()?;
        let dir = match &args.data {
            Some(d) if args.rounds == 1 => d.clone(),
            Some(d) => d.join(format!("round-{round}")),
            None => temp.path().to_path_buf(),
        };
        let mut o = Options::default();
        o.commit_log_sync = sync;
        let db = Database::open(&dir, o).with_context(|| format!("opening {}", dir.display()))?;
        let bench = Bench {
            db,
            dir: dir.clone(),
            args: args.clone(),
        };
        for (p, name) in phases.iter().enumerate() {
            let r = bench.phase(name, round as u64)?;
            if args.json {
                println!(
                    "{{\"engine\":\"supercolumn\",\"round\":{round},\"phase\":\"{}\",\"ops\":{},\"secs\":{:.3},\"ops_per_sec\":{:.0},\"p50_us\":{},\"p99_us\":{},\"p999_us\":{},\"max_us\":{},\"bytes_written\":{},\"write_amplification\":{:.2},\"disk_bytes\":{},\"sstables\":{},\"peak_memory\":{}}}",
                    r.phase, r.ops, r.secs, r.ops_per_sec(), r.p50, r.p99, r.p999, r.max, r.bytes_written, r.write_amp, r.disk, r.sstables, r.peak_mem
                );
            }
            results[p].push(r);
        }
        bench.db.close()?;
        drop(Arc::new(temp));
    }
    if !args.json {
        println!(
            "supercolumn: {} rows, value {} B, {} thread(s), {} sync, seed {}, {} round(s) (medians)",
            args.rows, args.value_size, args.threads, args.sync, args.seed, args.rounds
        );
        println!(
            "{:<12} {:>10} {:>11} {:>8} {:>8} {:>9} {:>9} {:>12} {:>6} {:>12} {:>5} {:>10}",
            "phase",
            "ops",
            "ops/s",
            "p50 us",
            "p99 us",
            "p99.9 us",
            "max us",
            "written B",
            "WA",
            "disk B",
            "SSTs",
            "peak MiB"
        );
        for mut rs in results {
            let r = median(&mut rs);
            println!(
                "{:<12} {:>10} {:>11.0} {:>8} {:>8} {:>9} {:>9} {:>12} {:>6.2} {:>12} {:>5} {:>10.1}",
                r.phase, r.ops, r.ops_per_sec(), r.p50, r.p99, r.p999, r.max, r.bytes_written, r.write_amp, r.disk, r.sstables, r.peak_mem as f64 / (1 << 20) as f64
            );
        }
        println!("total time: {:.1} s", started.elapsed().as_secs_f64());
    }
    Ok(())
}
