//! Running a phase's operations on client threads and measuring them: one latency histogram
//! for the phase, and the same figures per interval of wall time (throughput and p50/p99/p99.9
//! over the run, for `stress --graph`). A stop request (Ctrl-C) ends the phase early; what ran
//! is still measured. How the figures are reported is `report`'s business.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};

/// Set when the user asks the run to stop (Ctrl-C): running phases end at their next
/// operation and no new one starts.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Whether a stop was requested.
pub fn stopping() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// The highest latency recorded, µs (a minute); slower operations count as this.
const MAX_US: u64 = 60_000_000;

/// The figures of one interval of a phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds from the phase's start to the end of the interval.
    pub at_secs: f64,
    /// Operations finished in the interval.
    pub ops: u64,
    /// Their rate over the interval.
    pub ops_per_sec: f64,
    pub p50_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
}

/// What a timed phase measured.
#[derive(Debug)]
pub struct Timing {
    /// Wall time of the phase.
    pub secs: f64,
    /// Every operation's latency, µs.
    pub histogram: Histogram<u64>,
    /// The same per interval, in order (intervals with no finished operation are absent).
    pub samples: Vec<Sample>,
    /// Whether a stop request cut the phase short.
    pub stopped: bool,
}

/// One interval's latencies, sparse: (interval number, [(latency µs, count)]).
type SparseInterval = (u64, Vec<(u64, u64)>);

/// One thread's interval histograms, kept sparse so a long phase stays small.
struct Intervals {
    every: Duration,
    current: u64,
    histogram: Histogram<u64>,
    done: Vec<SparseInterval>,
}

impl Intervals {
    fn new(every: Duration) -> anyhow::Result<Self> {
        Ok(Intervals {
            every,
            current: 0,
            // Two significant digits: plenty for a plot, a tenth of the memory of three.
            histogram: Histogram::new_with_bounds(1, MAX_US, 2)?,
            done: Vec::new(),
        })
    }

    fn record(&mut self, since_start: Duration, us: u64) {
        let index = (since_start.as_nanos() / self.every.as_nanos().max(1)) as u64;
        if index != self.current {
            self.close();
            self.current = index;
        }
        self.histogram.saturating_record(us);
    }

    fn close(&mut self) {
        if self.histogram.is_empty() {
            return;
        }
        let sparse = self
            .histogram
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect();
        self.done.push((self.current, sparse));
        self.histogram.reset();
    }
}

/// Merges the threads' intervals into samples; the last interval ends at `secs`.
fn samples(
    threads: Vec<Vec<SparseInterval>>,
    every: Duration,
    secs: f64,
) -> anyhow::Result<Vec<Sample>> {
    let mut by_index: std::collections::BTreeMap<u64, Histogram<u64>> = Default::default();
    for (index, sparse) in threads.into_iter().flatten() {
        let h = match by_index.entry(index) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(Histogram::new_with_bounds(1, MAX_US, 2)?)
            }
        };
        for (value, count) in sparse {
            h.saturating_record_n(value, count);
        }
    }
    let step = every.as_secs_f64();
    Ok(by_index
        .into_iter()
        .map(|(index, h)| {
            let start = index as f64 * step;
            let end = ((index + 1) as f64 * step).min(secs.max(start + 1e-6));
            Sample {
                at_secs: end,
                ops: h.len(),
                ops_per_sec: h.len() as f64 / (end - start).max(1e-6),
                p50_us: h.value_at_quantile(0.5),
                p99_us: h.value_at_quantile(0.99),
                p999_us: h.value_at_quantile(0.999),
            }
        })
        .collect())
}

/// Runs `ops` operations split over `threads` (thread `t` does a contiguous share); `op(i)` does
/// operation `i`. `every` is the sampling interval. With `quiet` no progress bar is drawn.
pub fn timed(
    name: &str,
    ops: u64,
    threads: usize,
    every: Duration,
    quiet: bool,
    op: impl Fn(u64) -> anyhow::Result<()> + Sync,
) -> anyhow::Result<Timing> {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(ops)
    };
    bar.set_style(
        // The rate is indicatif's moving average; the ETA follows from it.
        ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} {per_sec}, ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix(name.to_string());
    let threads = threads.max(1);
    let started = Instant::now();
    let per = ops.div_ceil(threads as u64);
    type PerThread = (Histogram<u64>, Vec<SparseInterval>);
    let results: Vec<anyhow::Result<PerThread>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads as u64)
            .map(|t| {
                let (op, bar) = (&op, &bar);
                s.spawn(move || -> anyhow::Result<PerThread> {
                    let mut h = Histogram::<u64>::new_with_bounds(1, MAX_US, 3)?;
                    let mut intervals = Intervals::new(every)?;
                    let (from, to) = (t * per, ((t + 1) * per).min(ops));
                    for i in from..to {
                        if stopping() {
                            break;
                        }
                        let t0 = Instant::now();
                        op(i)?;
                        let now = Instant::now();
                        let us = (now - t0).as_micros().max(1) as u64;
                        h.saturating_record(us);
                        intervals.record(now - started, us);
                        if i % 1024 == 0 {
                            bar.inc(1024.min(to - i));
                        }
                    }
                    intervals.close();
                    Ok((h, intervals.done))
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
    let mut histogram = Histogram::<u64>::new_with_bounds(1, MAX_US, 3)?;
    let mut per_thread = Vec::with_capacity(threads);
    for r in results {
        let (h, intervals) = r?;
        histogram.add(h)?;
        per_thread.push(intervals);
    }
    Ok(Timing {
        secs,
        samples: samples(per_thread, every, secs)?,
        stopped: stopping() && histogram.len() < ops,
        histogram,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_merge_across_threads_into_one_sample_each() {
        let every = Duration::from_millis(100);
        let mut a = Intervals::new(every).unwrap();
        let mut b = Intervals::new(every).unwrap();
        for us in [10, 20, 30] {
            a.record(Duration::from_millis(50), us);
        }
        a.record(Duration::from_millis(150), 200);
        b.record(Duration::from_millis(60), 40);
        b.record(Duration::from_millis(250), 7);
        a.close();
        b.close();
        let s = samples(vec![a.done, b.done], every, 0.27).unwrap();
        let got: Vec<(u64, u64)> = s.iter().map(|s| (s.ops, s.p99_us)).collect();
        assert_eq!(got, vec![(4, 40), (1, 200), (1, 7)]);
        assert!((s[0].at_secs - 0.1).abs() < 1e-9 && (s[0].ops_per_sec - 40.0).abs() < 1e-6);
        // The last interval ends with the phase: 7 ms long, not 100.
        assert!((s[2].at_secs - 0.27).abs() < 1e-9);
        assert!((s[2].ops_per_sec - 1.0 / 0.07).abs() < 1e-6);
    }

    #[test]
    fn every_operation_is_counted_once() {
        let t = timed("t", 1000, 3, Duration::from_millis(1), true, |_| Ok(())).unwrap();
        assert_eq!(t.histogram.len(), 1000);
        assert_eq!(t.samples.iter().map(|s| s.ops).sum::<u64>(), 1000);
        assert!(!t.stopped);
    }
}
