//! `stress`: db_bench/cassandra-stress style workloads, phase by phase, with a progress bar and a
//! table per phase — ops/s, latency p50/p99/p99.9/max, bytes written, write amplification, disk
//! space, SSTable count, peak memory. With no argument it runs a default workload on supercolumn
//! in a fresh temporary data directory (the default Keyspace1 schema) in under a minute.
//!
//! With the cargo feature `peers`, `--engine supercolumn,rocksdb,fjall` runs the same workload —
//! the same seed gives the same keys and values — on every engine, each round of each engine in
//! its own child process (rounds alternate the order), and prints one table of medians with the
//! ratio supercolumn ÷ peer.
//!
//! `cargo run --release --bin stress [-- --help]`
//!
//! Long because it is the whole benchmark binary: its options, its phases and its report.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use supercolumn_bench::engine::{self, Durability, Engine, EngineConfig, ENGINES};
use supercolumn_bench::graph::{self, GraphRun};
use supercolumn_bench::process::{bytes_written, disk_usage, peak_memory};
use supercolumn_bench::report::{scaling, table, PhaseResult};
use supercolumn_bench::timing::{stopping, timed, Timing, STOP};
use supercolumn_bench::workload::{key, missing_key, value, wide_column, wide_key};
use supercolumn_bench::KeyStream;

const ALL: &str = "fillseq,fillrandom,overwrite,readrandom,readmissing,readhot,fillwide,slicehead,slicetail,rangescan,mixed,compact,settledmissing";

/// Columns per `fillwide` operation (one batch).
const WIDE_BATCH: u64 = 100;

#[derive(Parser, Clone, Debug)]
#[command(
    name = "stress",
    about = "Benchmark workloads against supercolumn (and, with the peers feature, RocksDB and fjall)"
)]
struct Args {
    /// Phases to run, in order: fillseq, fillrandom, overwrite, readrandom, readmissing,
    /// readhot, fillwide, slicehead (first 10 columns of a wide row), slicetail (last 10,
    /// reversed), rangescan (100 rows), mixed (half reads, half writes), compact (major),
    /// settledmissing (readmissing again, meant after `compact`: every row in one file).
    #[arg(long, default_value = ALL)]
    workloads: String,
    /// Engines, comma-separated: supercolumn, rocksdb, fjall (the two need --features peers),
    /// cql (CQL tables through prepared statements), cells (the cells CQL writes, through the
    /// Thrift-era API), server (CQL through the native protocol; needs --features server).
    #[arg(long, default_value = "supercolumn")]
    engine: String,
    /// Point rows written by the fills (and read by the reads).
    #[arg(long, default_value_t = 200_000)]
    rows: u64,
    /// Wide rows for `fillwide` and the slices.
    #[arg(long, default_value_t = 20)]
    wide_rows: u64,
    /// Columns per wide row.
    #[arg(long, default_value_t = 10_000)]
    columns_per_row: u64,
    /// Value size of point rows (bytes; the default matches db_bench's 100, half random).
    #[arg(long, default_value_t = 100)]
    value_size: usize,
    /// Client threads; a comma-separated list (`1,4,16`) runs the whole race at each count, one
    /// table each, then ops/s by thread count.
    #[arg(long = "threads", default_value = "1", value_name = "N[,N...]")]
    thread_counts: String,
    /// The thread count of the race being run (one of `--threads`).
    #[arg(skip)]
    threads: usize,
    /// Durability: periodic (log, no fsync per write) or batch (fsync before acknowledging).
    #[arg(long, default_value = "periodic")]
    sync: String,
    /// Block cache budget of every engine, MiB.
    #[arg(long, default_value_t = 32)]
    cache_mb: u64,
    /// Budget of all memtables together, MiB (supercolumn and RocksDB; default: each engine's).
    #[arg(long)]
    memtable_mb: Option<u64>,
    /// `--engine cql`: index the point table's value column (`CREATE INDEX … (v)`), so every
    /// point write also writes its index entry.
    #[arg(long)]
    cql_index: bool,
    /// supercolumn: render its Prometheus metrics (`serve --admin`'s `/metrics`) every MS
    /// milliseconds while the phases run, as a scraper would: the cost of metrics.
    #[arg(long, value_name = "MS")]
    scrape_ms: Option<u64>,
    /// supercolumn's partitioner: random (rows in token order, Cassandra's default) or opp
    /// (order-preserving: rows in key order, as the peers store them).
    #[arg(long, default_value = "random")]
    partitioner: String,
    /// Seed of the key and value streams.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Runs of the whole workload (the table shows medians).
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// Keep the data under this directory (for sstable-dump) instead of a temporary one.
    #[arg(long)]
    data: Option<PathBuf>,
    /// Print results as JSON lines.
    #[arg(long)]
    json: bool,
    /// Also write the run to this HTML page: per phase, throughput and p50/p99/p99.9 latency
    /// over time for every engine, and the summary table. An existing page keeps its runs and
    /// gets this one added, so runs sit side by side.
    #[arg(long, value_name = "FILE.html")]
    graph: Option<PathBuf>,
    /// The name of this run on the --graph page (a revision, a setting) [default: the engines
    /// and the time].
    #[arg(long)]
    title: Option<String>,
    /// Sampling interval of the figures over time, milliseconds.
    #[arg(long, default_value_t = 100)]
    interval_ms: u64,
    /// Log what the engines do (flushes, compactions, slow operations) to stderr: -v for info,
    /// -vv for debug. `RUST_LOG` does the same.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Instead of the workloads: a self-checking soak of supercolumn for this long (`30m`, `2h`,
    /// `90s`): mixed reads, writes, overwrites, deletions and TTLs with flushes and compactions
    /// running, every acknowledged write recorded and a sample read back continuously; a
    /// mismatch stops the run with the key, the expected and the found value.
    #[arg(long, value_name = "DURATION")]
    soak: Option<String>,
    /// Internal: run round N of a single engine and report JSON lines (the parent's children).
    #[arg(long, hide = true)]
    child_round: Option<usize>,
}

/// One round of the workload on one engine.
struct Round<'a> {
    engine: Box<dyn Engine>,
    engine_name: &'a str,
    dir: PathBuf,
    args: &'a Args,
    round: usize,
    /// The key order of the random phases: a permutation-like stream of row numbers.
    order: Vec<u64>,
}

impl Round<'_> {
    fn value(&self, i: u64, version: u64) -> Vec<u8> {
        let mut v = value(i, version);
        v.resize(self.args.value_size, b'x');
        v
    }

    fn put_point(&self, i: u64, version: u64) -> anyhow::Result<u64> {
        let (k, v) = (key(i), self.value(i, version));
        self.engine.put(&k, b"v", &v)?;
        Ok((k.len() + 1 + v.len()) as u64)
    }

    fn get_point(&self, k: &[u8]) -> anyhow::Result<bool> {
        self.engine.get(k, b"v")
    }

    fn slice(&self, i: u64, reversed: bool) -> anyhow::Result<()> {
        let a = self.args;
        let row = wide_key(self.order[i as usize % self.order.len()] % a.wide_rows.max(1));
        let got = self.engine.slice(&row, 10, reversed)?;
        if got != 10.min(a.columns_per_row as usize) {
            bail!("slice of {}: {got} columns", String::from_utf8_lossy(&row));
        }
        Ok(())
    }

    // Long because it is one match with an arm per workload phase, each a few lines naming what the
    // phase does to the engine.
    fn phase(&self, name: &str) -> anyhow::Result<PhaseResult> {
        let a = self.args;
        let n = a.rows;
        let quiet = a.json || a.child_round.is_some();
        let every = Duration::from_millis(a.interval_ms.max(1));
        let order = &self.order;
        let user = std::sync::atomic::AtomicU64::new(0);
        let wrote = |bytes: u64| {
            user.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
        };
        let written_before = bytes_written();
        let (planned, timing) = match name {
            "fillseq" => (
                n,
                timed(name, n, a.threads, every, quiet, |i| {
                    wrote(self.put_point(i, 0)?);
                    Ok(())
                })?,
            ),
            "fillrandom" => (
                n,
                timed(name, n, a.threads, every, quiet, |i| {
                    wrote(self.put_point(order[i as usize], 1)?);
                    Ok(())
                })?,
            ),
            "overwrite" => (
                n,
                timed(name, n, a.threads, every, quiet, |i| {
                    wrote(self.put_point(order[(n - 1 - i) as usize], 2)?);
                    Ok(())
                })?,
            ),
            "readrandom" => (
                n,
                timed(name, n, a.threads, every, quiet, |i| {
                    if !self.get_point(&key(order[i as usize]))? {
                        bail!("readrandom: a written row is missing");
                    }
                    Ok(())
                })?,
            ),
            "readmissing" | "settledmissing" => (
                n,
                timed(name, n, a.threads, every, quiet, |i| {
                    if self.get_point(&missing_key(order[i as usize]))? {
                        bail!("readmissing: found a row never written");
                    }
                    Ok(())
                })?,
            ),
            "readhot" => {
                let hot = (n / 100).max(1);
                (
                    n,
                    timed(name, n, a.threads, every, quiet, |i| {
                        self.get_point(&key(order[i as usize] % hot)).map(|_| ())
                    })?,
                )
            }
            "fillwide" => {
                // Each operation writes one batch of WIDE_BATCH adjacent columns of a wide row.
                let per_row = a.columns_per_row.div_ceil(WIDE_BATCH);
                let batches = a.wide_rows * per_row;
                let timing = timed(name, batches, a.threads, every, quiet, |i| {
                    let (r, b) = (i / per_row, i % per_row);
                    let row = wide_key(r);
                    let end = ((b + 1) * WIDE_BATCH).min(a.columns_per_row);
                    let cells: Vec<([u8; 8], Vec<u8>)> = (b * WIDE_BATCH..end)
                        .map(|c| (wide_column(c), vec![b'w'; 8]))
                        .collect();
                    wrote(cells.len() as u64 * (row.len() + 16) as u64);
                    self.engine.put_wide(&row, &cells)
                })?;
                // The slices read tables, not memtables, on every engine.
                self.engine.flush()?;
                (batches, timing)
            }
            "slicehead" | "slicetail" => {
                if a.wide_rows == 0 || a.columns_per_row == 0 {
                    bail!("{name} needs wide rows (--wide-rows, --columns-per-row)");
                }
                let slices = (a.wide_rows * 1000).max(1);
                let reversed = name == "slicetail";
                (
                    slices,
                    timed(name, slices, a.threads, every, quiet, |i| {
                        self.slice(i, reversed)
                    })?,
                )
            }
            "rangescan" => {
                let scans = (n / 100).max(1);
                (
                    scans,
                    timed(name, scans, a.threads, every, quiet, |i| {
                        std::hint::black_box(self.engine.scan(&key(order[i as usize]), 100)?);
                        Ok(())
                    })?,
                )
            }
            "mixed" => (
                n,
                timed(name, n, a.threads, every, quiet, |i| {
                    let k = order[i as usize];
                    if i % 10 < 5 {
                        self.get_point(&key(k)).map(|_| ())
                    } else {
                        wrote(self.put_point(k, 3)?);
                        Ok(())
                    }
                })?,
            ),
            "compact" => (
                1,
                timed(name, 1, 1, every, quiet, |_| self.engine.compact())?,
            ),
            other => bail!("unknown workload '{other}' (known: {ALL})"),
        };
        let written = bytes_written().saturating_sub(written_before);
        let user = user.into_inner();
        let Timing {
            secs,
            histogram: h,
            samples,
            stopped,
        } = timing;
        // What ran: all `planned` operations unless a stop request cut the phase short.
        let ops = if stopped { h.len() } else { planned };
        Ok(PhaseResult {
            engine: self.engine_name.to_string(),
            round: self.round,
            phase: name.to_string(),
            ops,
            secs,
            ops_per_sec: ops as f64 / secs.max(1e-9),
            p50_us: h.value_at_quantile(0.5),
            p99_us: h.value_at_quantile(0.99),
            p999_us: h.value_at_quantile(0.999),
            max_us: h.max(),
            bytes_written: written,
            user_bytes: user,
            write_amplification: if user == 0 {
                0.0
            } else {
                written as f64 / user as f64
            },
            disk_bytes: disk_usage(&self.dir),
            tables: self.engine.tables(),
            peak_memory: peak_memory(),
            samples,
            stopped,
        })
    }
}

fn phases(args: &Args) -> Vec<String> {
    args.workloads
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Runs round `round` of every phase on `engine_name`, in this process.
fn run_round(
    args: &Args,
    engine_name: &str,
    round: usize,
    mut report: impl FnMut(PhaseResult),
) -> anyhow::Result<()> {
    let temp = tempfile::tempdir()?;
    let dir = match &args.data {
        Some(d) => d.join(engine_name).join(format!("round-{round}")),
        None => temp.path().to_path_buf(),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let config = EngineConfig {
        durability: Durability::parse(&args.sync)?,
        block_cache_bytes: args.cache_mb << 20,
        memtable_bytes: args.memtable_mb.map(|m| m << 20),
        order_preserving: match args.partitioner.as_str() {
            "random" => false,
            "opp" => true,
            other => bail!("--partitioner is random or opp, not '{other}'"),
        },
        index_values: args.cql_index,
        scrape_ms: args.scrape_ms,
    };
    let engine = engine::open(engine_name, &dir, config)?;
    let mut stream = KeyStream::new(args.seed ^ round as u64);
    let order = (0..args.rows)
        .map(|_| stream.next().unwrap_or(0) % args.rows)
        .collect();
    let r = Round {
        engine,
        engine_name,
        dir,
        args,
        round,
        order,
    };
    for name in phases(args) {
        if stopping() {
            break;
        }
        report(
            r.phase(&name)
                .with_context(|| format!("{engine_name}, phase {name}"))?,
        );
    }
    // Closing is timed too: a user waits for it (and the next open for what it left).
    let Round { engine, dir, .. } = r;
    let started = Instant::now();
    engine.close()?;
    let secs = started.elapsed().as_secs_f64();
    let us = (secs * 1e6) as u64;
    report(PhaseResult {
        engine: engine_name.to_string(),
        round,
        phase: "close".to_string(),
        ops: 1,
        secs,
        ops_per_sec: 1.0 / secs.max(1e-9),
        p50_us: us,
        p99_us: us,
        p999_us: us,
        max_us: us,
        bytes_written: 0,
        user_bytes: 0,
        write_amplification: 0.0,
        disk_bytes: disk_usage(&dir),
        tables: 0,
        peak_memory: peak_memory(),
        samples: Vec::new(),
        stopped: false,
    });
    Ok(())
}

/// Runs round `round` on `engine_name` in a child process and collects what it reports.
fn run_child(args: &Args, engine_name: &str, round: usize) -> anyhow::Result<Vec<PhaseResult>> {
    let exe = std::env::current_exe().context("finding the stress binary")?;
    let mut cmd = Command::new(exe);
    cmd.args(["--engine", engine_name, "--workloads", &args.workloads])
        .args(["--rows", &args.rows.to_string()])
        .args(["--wide-rows", &args.wide_rows.to_string()])
        .args(["--columns-per-row", &args.columns_per_row.to_string()])
        .args(["--value-size", &args.value_size.to_string()])
        .args(["--threads", &args.threads.to_string()])
        .args(["--sync", &args.sync])
        .args(["--cache-mb", &args.cache_mb.to_string()])
        .args(["--partitioner", &args.partitioner])
        .args(["--seed", &args.seed.to_string()])
        .args(["--interval-ms", &args.interval_ms.to_string()])
        .args(args.scrape_ms.map(|ms| format!("--scrape-ms={ms}")))
        .args(["--child-round", &round.to_string()]);
    if let Some(d) = &args.data {
        cmd.arg("--data").arg(d);
    }
    if args.cql_index {
        cmd.arg("--cql-index");
    }
    if let Some(m) = args.memtable_mb {
        cmd.args(["--memtable-mb", &m.to_string()]);
    }
    if args.verbose > 0 {
        cmd.arg(format!("-{}", "v".repeat(args.verbose.into())));
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting the {engine_name} child"))?;
    let mut results = Vec::new();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines() {
            let line = line?;
            results.push(
                PhaseResult::from_json(&line)
                    .with_context(|| format!("reading the {engine_name} child's report"))?,
            );
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("the {engine_name} child failed in round {round} ({status})");
    }
    Ok(results)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("stress: {e:#}");
        std::process::exit(1);
    }
}

/// Ctrl-C: the running phase stops at its next operation and the table of what ran is
/// printed (children in the same process group get the signal too and report their part). A
/// second Ctrl-C exits at once.
fn on_ctrl_c() -> anyhow::Result<()> {
    ctrlc::set_handler(|| {
        if STOP.swap(true, std::sync::atomic::Ordering::SeqCst) {
            std::process::exit(130);
        }
    })
    .context("installing the Ctrl-C handler")
}

/// `--threads`: one count or several, each at least 1.
fn thread_counts(list: &str) -> anyhow::Result<Vec<usize>> {
    let counts = list
        .split(',')
        .map(|t| match t.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => bail!("--threads takes counts of at least 1, comma-separated (got '{t}')"),
        })
        .collect::<anyhow::Result<Vec<usize>>>()?;
    Ok(counts)
}

fn run() -> anyhow::Result<()> {
    let mut args = Args::parse();
    supercolumn_tools::logging::init(args.verbose);
    on_ctrl_c()?;
    let counts = thread_counts(&args.thread_counts)?;
    args.threads = counts[0];
    if args.rows == 0 || args.rounds == 0 {
        bail!("--rows and --rounds must be at least 1");
    }
    if counts.len() > 1 && (args.soak.is_some() || args.child_round.is_some()) {
        bail!("--soak runs at one thread count: give --threads one number");
    }
    Durability::parse(&args.sync)?;
    if let Some(d) = &args.soak {
        let duration = supercolumn_bench::soak::parse_duration(d)?;
        let temp = tempfile::tempdir()?;
        let dir = args
            .data
            .clone()
            .unwrap_or_else(|| temp.path().to_path_buf());
        return supercolumn_bench::soak::soak(&dir, duration, args.seed, args.threads);
    }
    let engines: Vec<String> = args
        .engine
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if engines.is_empty() {
        bail!("--engine names no engine (known: {})", ENGINES.join(", "));
    }
    if let Some(round) = args.child_round {
        return run_round(&args, &engines[0], round, |r| println!("{}", r.to_json()));
    }
    if let Some(path) = &args.graph {
        graph::check_writable(path).with_context(|| format!("--graph {}", path.display()))?;
    }
    let started = Instant::now();
    let mut by_threads = Vec::new();
    for &threads in &counts {
        if stopping() {
            break;
        }
        args.threads = threads;
        let results = race(&args, &engines)?;
        report(&args, &engines, &results, counts.len() > 1)?;
        by_threads.push((threads, results));
    }
    if !args.json {
        if by_threads.len() > 1 {
            println!("ops/s by thread count (medians):");
            print!("{}", scaling(&by_threads, &engines));
        }
        println!("total time: {:.1} s", started.elapsed().as_secs_f64());
    }
    Ok(())
}

/// Every round of every engine at `args.threads` threads.
fn race(args: &Args, engines: &[String]) -> anyhow::Result<Vec<PhaseResult>> {
    let mut results = Vec::new();
    if engines.len() == 1 {
        for round in 0..args.rounds {
            if stopping() {
                break;
            }
            run_round(args, &engines[0], round, |r| {
                if args.json {
                    println!("{}", r.to_json());
                }
                results.push(r);
            })?;
        }
    } else {
        let bar = if args.json {
            ProgressBar::hidden()
        } else {
            ProgressBar::new((args.rounds * engines.len()) as u64)
        };
        bar.set_style(
            ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} runs, {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix("engines");
        bar.enable_steady_tick(std::time::Duration::from_millis(500));
        for round in 0..args.rounds {
            // Alternate who goes first, so no engine always runs on a warmer or cooler machine.
            for k in 0..engines.len() {
                if stopping() {
                    break;
                }
                let name = &engines[(round + k) % engines.len()];
                bar.set_message(format!("round {}: {name}", round + 1));
                for r in run_child(args, name, round)? {
                    if args.json {
                        println!("{}", r.to_json());
                    }
                    results.push(r);
                }
                bar.inc(1);
            }
        }
        bar.finish_and_clear();
    }
    Ok(results)
}

/// The table of one thread count (and its run on the --graph page).
fn report(
    args: &Args,
    engines: &[String],
    results: &[PhaseResult],
    several_counts: bool,
) -> anyhow::Result<()> {
    let settings = format!(
        "{}: {} rows, {} wide rows x {} columns, value {} B, {} thread(s), {} sync, cache {} MiB, memtables {}, {} partitioner, seed {}, {} round(s) (medians)",
            engines.join(" vs "),
            args.rows,
            args.wide_rows,
            args.columns_per_row,
            args.value_size,
            args.threads,
            args.sync,
            args.cache_mb,
            args.memtable_mb
                .map_or("default".to_string(), |m| format!("{m} MiB")),
            args.partitioner,
            args.seed,
            args.rounds
    );
    if let Some(path) = &args.graph {
        let title = args.title.clone().unwrap_or_else(|| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            format!("{} @ {now}", engines.join(","))
        });
        let title = if several_counts {
            format!("{title}, {} thread(s)", args.threads)
        } else {
            title
        };
        let run = GraphRun {
            title,
            settings: settings.clone(),
            engines: engines.to_vec(),
            results: results.to_vec(),
        };
        graph::append(path, run).with_context(|| format!("writing {}", path.display()))?;
    }
    if !args.json {
        println!("{settings}");
        print!("{}", table(results, engines));
    }
    Ok(())
}
