//! `stress --soak DURATION`: a long mixed run that checks itself. Reads, writes, overwrites of the
//! same keys, column and row deletions and TTL writes go to supercolumn in random order, with
//! small memtables so flushes and compactions run all the time. Every acknowledged operation is
//! recorded in a verification map (the model), and a sample of it is read back continuously: any
//! difference stops the run with the key, what was expected and what was found. A progress line
//! every few seconds gives ops/s, the p99 latency, SSTables and memory. With `--threads N`, N
//! threads each own a share of the rows and run this loop on it against the one database.
//!
//! Timestamps are the operation's sequence number, so the model's "last acknowledged write wins"
//! is exact; TTL cells are not checked within a second of their expiry (the engine counts TTLs
//! in whole seconds of the wall clock).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use hdrhistogram::Histogram;
use supercolumn::{ColumnPath, CommitLogSync, Database, Options, WriteOptions};

use crate::process::peak_memory;
use crate::KeyStream;

const KS: &str = "Keyspace1";
const CF: &str = "Standard1";
/// Rows and columns per row of the key space: small enough that keys are overwritten and
/// deleted often, large enough to need SSTables.
const ROWS: u64 = 20_000;
const COLUMNS: u64 = 8;

/// What a column must read as.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Expect {
    Value(Vec<u8>),
    /// A value that expires at this Unix second.
    Expiring(Vec<u8>, u64),
    Absent,
}

/// Parses a duration as `humantime` reads one (`30m`, `90s`, `1h30m`, `2days`), or a bare
/// number of seconds.
pub fn parse_duration(s: &str) -> anyhow::Result<Duration> {
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    humantime::parse_duration(s).with_context(|| format!("'{s}' is not a duration"))
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn sstables(db: &Database) -> usize {
    db.column_family_stats(KS, CF).map_or(0, |s| s.sstables)
}

/// Counters the workers share with the reporter.
struct Shared {
    ops: AtomicU64,
    checked: AtomicU64,
    /// Set by the first worker that fails (or when time is up): every worker stops.
    stop: AtomicBool,
    /// Each worker's latency histogram, merged and reset by the reporter.
    hists: Vec<Mutex<Histogram<u64>>>,
}

/// Runs the soak for `duration` in `dir` with `threads` writers; an error names the first
/// mismatch. Each thread owns the rows whose number modulo `threads` is its own, so its model
/// is exact while every thread's writes, flushes and compactions interleave in one database.
pub fn soak(dir: &Path, duration: Duration, seed: u64, threads: usize) -> anyhow::Result<()> {
    let threads = threads.max(1);
    let mut o = Options::default();
    o.commit_log_sync = CommitLogSync::Periodic { period_ms: 1_000 };
    // Small memtables: a flush every few thousand operations, compactions behind them.
    o.memtable_operations_millions = 0.005;
    let db = Database::open(dir, o).with_context(|| format!("opening {}", dir.display()))?;
    let shared = Shared {
        ops: AtomicU64::new(0),
        checked: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        hists: (0..threads)
            .map(|_| Histogram::new_with_bounds(1, 60_000_000, 3).map(Mutex::new))
            .collect::<Result<_, _>>()?,
    };
    let started = Instant::now();
    let results: Vec<anyhow::Result<()>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (db, shared) = (&db, &shared);
                scope.spawn(move || {
                    let r = worker(db, shared, t, threads, seed.wrapping_add(t as u64));
                    shared.stop.store(true, Ordering::SeqCst);
                    r
                })
            })
            .collect();
        report(&db, &shared, started, duration);
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a soak thread panicked")))
            })
            .collect()
    });
    for r in results {
        r?;
    }
    db.close()?;
    println!(
        "soak done: {} operations in {:.0} s on {threads} thread(s), {} reads checked, no mismatch",
        shared.ops.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64(),
        shared.checked.load(Ordering::Relaxed)
    );
    Ok(())
}

/// Prints a progress line every five seconds until time is up or a worker stops.
fn report(db: &Database, shared: &Shared, started: Instant, duration: Duration) {
    let mut last = (Instant::now(), 0u64);
    while !shared.stop.load(Ordering::SeqCst) {
        if started.elapsed() >= duration || crate::timing::stopping() {
            shared.stop.store(true, Ordering::SeqCst);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        if last.0.elapsed() < Duration::from_secs(5) {
            continue;
        }
        let mut merged = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).ok();
        for h in &shared.hists {
            let mut h = h.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(m) = merged.as_mut() {
                let _ = m.add(&*h);
            }
            h.reset();
        }
        let ops = shared.ops.load(Ordering::Relaxed);
        println!(
            "{:>6.0}s  {:>9.0} ops/s  p99 {:>6} us  {:>3} SSTables  peak {:>5} MiB  {} ops, {} checked",
            started.elapsed().as_secs_f64(),
            (ops - last.1) as f64 / last.0.elapsed().as_secs_f64(),
            merged.map_or(0, |m| m.value_at_quantile(0.99)),
            sstables(db),
            peak_memory() >> 20,
            ops,
            shared.checked.load(Ordering::Relaxed)
        );
        last = (Instant::now(), ops);
    }
}

/// One thread's share: the rows `t`, `t + threads`, `t + 2 × threads`, …
fn worker(
    db: &Database,
    shared: &Shared,
    t: usize,
    threads: usize,
    seed: u64,
) -> anyhow::Result<()> {
    let (t, threads) = (t as u64, threads as u64);
    let mut model: HashMap<(u64, u64), Expect> = HashMap::new();
    let mut rng = KeyStream::new(seed);
    // Timestamps are this thread's sequence numbers: its rows see no one else's writes.
    let mut ts: i64 = 0;
    while !shared.stop.load(Ordering::Relaxed) {
        let r = rng.next().unwrap_or(0);
        let row = ((r >> 8) % (ROWS / threads).max(1)) * threads + t;
        let col = (r >> 40) % COLUMNS;
        let key = format!("soak{row:05}");
        let path = ColumnPath::new(CF).column(format!("c{col}"));
        ts += 1;
        let started = Instant::now();
        match r % 100 {
            // Reads: any column, checked against the model.
            0..=39 => {
                check(db, &model, row, col)?;
                shared.checked.fetch_add(1, Ordering::Relaxed);
            }
            40..=79 => {
                let value = format!("{ts}:{row}:{col}").into_bytes();
                db.insert(KS, &key, &path, &value, WriteOptions::at(ts))?;
                model.insert((row, col), Expect::Value(value));
            }
            80..=87 => {
                let ttl = 1 + (r >> 20) % 30;
                let value = format!("{ts}:ttl").into_bytes();
                db.insert(
                    KS,
                    &key,
                    &path,
                    &value,
                    WriteOptions::at(ts).with_ttl(ttl as u32),
                )?;
                model.insert((row, col), Expect::Expiring(value, now_secs() + ttl));
            }
            88..=96 => {
                db.remove(KS, &key, &path, Some(ts))?;
                model.insert((row, col), Expect::Absent);
            }
            _ => {
                db.remove(KS, &key, &ColumnPath::new(CF), Some(ts))?;
                for c in 0..COLUMNS {
                    model.insert((row, c), Expect::Absent);
                }
            }
        }
        shared.hists[t as usize]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .record(started.elapsed().as_micros().max(1) as u64)?;
        shared.ops.fetch_add(1, Ordering::Relaxed);
    }
    // A last pass over everything this thread's model knows.
    let mut rows: Vec<_> = model.keys().copied().collect();
    rows.sort_unstable();
    for (row, col) in rows {
        check(db, &model, row, col)?;
        shared.checked.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

fn check(
    db: &Database,
    model: &HashMap<(u64, u64), Expect>,
    row: u64,
    col: u64,
) -> anyhow::Result<()> {
    let key = format!("soak{row:05}");
    let path = ColumnPath::new(CF).column(format!("c{col}"));
    let found = db
        .get(KS, &key, &path)?
        .and_then(|c| c.as_column().map(|c| c.value.clone()));
    let want = model.get(&(row, col)).cloned().unwrap_or(Expect::Absent);
    let ok = match (&want, &found) {
        (Expect::Value(v), Some(f)) => v == f,
        (Expect::Absent, None) => true,
        (Expect::Expiring(v, at), f) => {
            let now = now_secs();
            if now + 1 < *at {
                f.as_ref() == Some(v)
            } else if now > *at + 1 {
                f.is_none()
            } else {
                true
            }
        }
        _ => false,
    };
    if !ok {
        bail!(
            "mismatch at {key}/c{col}: expected {want:?}, found {:?}",
            found.map(|f| String::from_utf8_lossy(&f).into_owned())
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("1h 30m").unwrap(), Duration::from_secs(5400));
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("m").is_err());
    }

    #[test]
    fn a_short_soak_finds_no_mismatch() {
        let dir = tempfile::tempdir().unwrap();
        soak(dir.path(), Duration::from_secs(2), 7, 1).unwrap();
    }

    #[test]
    fn a_short_soak_on_two_threads_finds_no_mismatch() {
        let dir = tempfile::tempdir().unwrap();
        soak(dir.path(), Duration::from_secs(2), 7, 2).unwrap();
    }
}
