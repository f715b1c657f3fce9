//! Counters per column family: what the caches, bloom filters and disk did. Tests assert them,
//! benchmarks report them, and `Database::column_family_stats` shows them.
//!
//! Every read and write updates them, from every thread at once, so nothing here is one shared
//! word: each thread adds to its own stripe (a cache line of its own, and a histogram of its
//! own), and a snapshot sums the stripes. One shared counter bounced its cache line between
//! cores on every operation and stopped reads scaling past a few threads.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;
use parking_lot::Mutex;

/// Stripes of counters per column family: enough that 16 threads rarely share one; a stripe is
/// a few hundred bytes.
const STRIPES: usize = 16;
/// Stripes of latency histograms: fewer, since each holds about 24 KB once a thread uses it.
const HISTOGRAM_STRIPES: usize = 8;

/// This thread's stripe number: threads take numbers in turn as they first count something.
fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static MINE: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    MINE.with(|m| {
        if m.get() == usize::MAX {
            m.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        m.get()
    })
}

/// One stripe's histogram, made when a thread of that stripe first records.
type Stripe = CachePadded<Mutex<Option<Histogram<u64>>>>;

/// Latencies in microseconds, 1 µs to 10 minutes, 2 significant digits; one histogram per
/// stripe.
#[derive(Debug)]
pub struct Latency(Box<[Stripe]>);

impl Default for Latency {
    fn default() -> Self {
        Latency(
            (0..HISTOGRAM_STRIPES)
                .map(|_| CachePadded::new(Mutex::new(None)))
                .collect(),
        )
    }
}

fn new_histogram() -> Option<Histogram<u64>> {
    Histogram::new_with_bounds(1, 600_000_000, 2).ok()
}

impl Latency {
    /// Records the time since `start`.
    pub fn record_since(&self, start: Instant) {
        self.record(start.elapsed());
    }

    /// Records one operation's time.
    pub fn record(&self, took: std::time::Duration) {
        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX).max(1);
        let mut h = self.0[stripe() % HISTOGRAM_STRIPES].lock();
        if h.is_none() {
            *h = new_histogram();
        }
        if let Some(h) = h.as_mut() {
            h.saturating_record(us);
        }
    }

    /// (count, p50, p99, p99.9, max) in microseconds, over every stripe.
    pub fn summary(&self) -> LatencySummary {
        let mut all: Option<Histogram<u64>> = None;
        for s in self.0.iter() {
            if let Some(h) = s.lock().as_ref() {
                match all.as_mut() {
                    None => all = Some(h.clone()),
                    Some(a) => {
                        // Same bounds on every stripe: adding cannot fail.
                        let _ = a.add(h);
                    }
                }
            }
        }
        match all {
            Some(h) if !h.is_empty() => LatencySummary {
                count: h.len(),
                p50_us: h.value_at_quantile(0.5),
                p99_us: h.value_at_quantile(0.99),
                p999_us: h.value_at_quantile(0.999),
                max_us: h.max(),
                // The mean is of each value's bucket midpoint: within the histogram's 1%.
                sum_us: (h.mean() * h.len() as f64) as u64,
                at_most: LATENCY_BOUNDS_US.map(|b| h.count_between(0, b)),
            },
            _ => LatencySummary::default(),
        }
    }
}

/// The upper bounds, in microseconds, of the buckets [`LatencySummary::at_most`] counts (a
/// Prometheus histogram's `le`): 50 µs to 10 s, about three to a factor of ten.
pub const LATENCY_BOUNDS_US: [u64; 16] = [
    50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 10_000_000,
];

/// Operation count and latency percentiles, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LatencySummary {
    /// Operations recorded.
    pub count: u64,
    /// Median.
    pub p50_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// 99.9th percentile.
    pub p999_us: u64,
    /// Slowest.
    pub max_us: u64,
    /// All the operations' times added up.
    pub sum_us: u64,
    /// Operations that took at most each of [`LATENCY_BOUNDS_US`] (cumulative, as a
    /// Prometheus histogram's buckets; a time is counted by its bucket in a histogram of two
    /// significant digits, so near a bound it may fall on either side).
    pub at_most: [u64; LATENCY_BOUNDS_US.len()],
}

/// One stripe of a column family's counters.
#[derive(Debug, Default)]
pub struct Slots {
    pub(crate) bloom_checks: AtomicU64,
    pub(crate) bloom_negatives: AtomicU64,
    pub(crate) bloom_false_positives: AtomicU64,
    pub(crate) key_cache_hits: AtomicU64,
    pub(crate) key_cache_misses: AtomicU64,
    pub(crate) key_cache_evictions: AtomicU64,
    pub(crate) block_cache_hits: AtomicU64,
    pub(crate) block_cache_misses: AtomicU64,
    pub(crate) block_cache_evictions: AtomicU64,
    pub(crate) index_searches: AtomicU64,
    pub(crate) sstables_skipped: AtomicU64,
    pub(crate) blocks_read: AtomicU64,
    pub(crate) flushes: AtomicU64,
    pub(crate) compactions: AtomicU64,
    pub(crate) bytes_compacted: AtomicU64,
    pub(crate) tombstones_purged: AtomicU64,
    /// Bytes clients wrote: row key + name + value of each write.
    pub(crate) client_bytes: AtomicU64,
    /// Bytes written to SSTables by flushes and compactions.
    pub(crate) sstable_bytes_written: AtomicU64,
    /// Bytes of commit log records carrying this CF's writes.
    pub(crate) commitlog_bytes: AtomicU64,
}

/// Live counters, updated by reads and writes: one [`Slots`] per stripe.
#[derive(Debug)]
pub struct Counters {
    stripes: Box<[CachePadded<Slots>]>,
    /// Bytes of replaced SSTables still on disk (a reader holds them).
    pub(crate) obsolete_bytes: Arc<AtomicU64>,
    pub(crate) reads: Latency,
    pub(crate) writes: Latency,
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            stripes: (0..STRIPES).map(|_| CachePadded::default()).collect(),
            obsolete_bytes: Arc::default(),
            reads: Latency::default(),
            writes: Latency::default(),
        }
    }
}

impl Counters {
    /// This thread's stripe, to add to.
    pub(crate) fn local(&self) -> &Slots {
        &self.stripes[stripe() % STRIPES]
    }

    /// A counter summed over the stripes.
    fn sum(&self, f: impl Fn(&Slots) -> &AtomicU64) -> u64 {
        self.stripes
            .iter()
            .map(|s| f(s).load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add)
    }
}

/// Adds one to a counter.
pub(crate) fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// A snapshot of one column family's counters and sizes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ColumnFamilyStats {
    /// Live SSTables.
    pub sstables: usize,
    /// Bytes of the live SSTables.
    pub sstable_bytes: u64,
    /// Bytes on disk: live SSTables plus replaced ones not yet deleted (a reader holds them).
    pub total_bytes: u64,
    /// Minor compactions waiting (full size-tiered buckets).
    pub pending_compactions: usize,
    /// Reads (get, slices, counts, range scans) and their latencies.
    pub reads: LatencySummary,
    /// Writes (batches touching this CF) and their latencies.
    pub writes: LatencySummary,
    /// Bytes clients wrote to this CF (row key + name + value of each write).
    pub client_bytes: u64,
    /// Bytes written to SSTables (flushes and compactions).
    pub sstable_bytes_written: u64,
    /// Bytes of commit log records carrying this CF's writes.
    pub commitlog_bytes: u64,
    /// Bytes held by memtables (approximate).
    pub memtable_bytes: usize,
    /// Column writes in the active memtable.
    pub memtable_operations: u64,
    /// Memtables flushed since open.
    pub flushes: u64,
    /// Compactions completed since open.
    pub compactions: u64,
    /// Bytes read by compactions since open.
    pub bytes_compacted: u64,
    /// Tombstones purged by compactions since open.
    pub tombstones_purged: u64,
    /// Bloom filter checks of row keys.
    pub bloom_checks: u64,
    /// Checks the filter answered "absent".
    pub bloom_negatives: u64,
    /// Checks the filter answered "maybe" for a row that was not there.
    pub bloom_false_positives: u64,
    /// Key cache hits.
    pub key_cache_hits: u64,
    /// Key cache misses.
    pub key_cache_misses: u64,
    /// Key cache entries evicted to make room.
    pub key_cache_evictions: u64,
    /// Key cache capacity in entries.
    pub key_cache_capacity: usize,
    /// Key cache entries held.
    pub key_cache_size: usize,
    /// Block cache hits for this CF's blocks.
    pub block_cache_hits: u64,
    /// Block cache misses for this CF's blocks.
    pub block_cache_misses: u64,
    /// Blocks evicted from the block cache by this CF's inserts.
    pub block_cache_evictions: u64,
    /// Block index searches.
    pub index_searches: u64,
    /// SSTables a read of named columns skipped: everything they hold is older than what newer
    /// sources already answered.
    pub sstables_skipped: u64,
    /// Data blocks read from disk (decompressed and decoded).
    pub blocks_read: u64,
}

impl Counters {
    /// A snapshot of the counters (sizes are filled in by the caller).
    pub(crate) fn snapshot(&self) -> ColumnFamilyStats {
        ColumnFamilyStats {
            flushes: self.sum(|s| &s.flushes),
            compactions: self.sum(|s| &s.compactions),
            bytes_compacted: self.sum(|s| &s.bytes_compacted),
            tombstones_purged: self.sum(|s| &s.tombstones_purged),
            bloom_checks: self.sum(|s| &s.bloom_checks),
            bloom_negatives: self.sum(|s| &s.bloom_negatives),
            bloom_false_positives: self.sum(|s| &s.bloom_false_positives),
            key_cache_hits: self.sum(|s| &s.key_cache_hits),
            key_cache_misses: self.sum(|s| &s.key_cache_misses),
            key_cache_evictions: self.sum(|s| &s.key_cache_evictions),
            block_cache_hits: self.sum(|s| &s.block_cache_hits),
            block_cache_misses: self.sum(|s| &s.block_cache_misses),
            block_cache_evictions: self.sum(|s| &s.block_cache_evictions),
            index_searches: self.sum(|s| &s.index_searches),
            sstables_skipped: self.sum(|s| &s.sstables_skipped),
            blocks_read: self.sum(|s| &s.blocks_read),
            reads: self.reads.summary(),
            writes: self.writes.summary(),
            client_bytes: self.sum(|s| &s.client_bytes),
            sstable_bytes_written: self.sum(|s| &s.sstable_bytes_written),
            commitlog_bytes: self.sum(|s| &s.commitlog_bytes),
            total_bytes: self.obsolete_bytes.load(Ordering::Relaxed),
            ..ColumnFamilyStats::default()
        }
    }
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

impl ColumnFamilyStats {
    /// Key cache hits ÷ lookups.
    pub fn key_cache_hit_rate(&self) -> Option<f64> {
        ratio(
            self.key_cache_hits,
            self.key_cache_hits + self.key_cache_misses,
        )
    }

    /// Block cache hits ÷ lookups.
    pub fn block_cache_hit_rate(&self) -> Option<f64> {
        ratio(
            self.block_cache_hits,
            self.block_cache_hits + self.block_cache_misses,
        )
    }

    /// Bloom filter false positives ÷ checks of absent rows (the measured false-positive rate).
    pub fn bloom_false_positive_ratio(&self) -> Option<f64> {
        ratio(
            self.bloom_false_positives,
            self.bloom_false_positives + self.bloom_negatives,
        )
    }

    /// (Bytes written to SSTables + commit log bytes) ÷ bytes written by clients.
    pub fn write_amplification(&self) -> Option<f64> {
        ratio(
            self.sstable_bytes_written + self.commitlog_bytes,
            self.client_bytes,
        )
    }
}

/// A byte count as people read it in a log line: `512 B`, `4.0 KiB`, `1.5 MiB`, `2.25 GiB`.
#[derive(Clone, Copy, Debug)]
pub struct Bytes(pub u64);

impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
        if self.0 < 1024 {
            return write!(f, "{} B", self.0);
        }
        let mut v = self.0 as f64 / 1024.0;
        let mut unit = 0;
        while v >= 1024.0 && unit + 1 < UNITS.len() {
            v /= 1024.0;
            unit += 1;
        }
        write!(f, "{v:.1} {}", UNITS[unit])
    }
}

/// A compaction running now, as `nodetool compactionstats` and `system_views.sstable_tasks`
/// show it: its progress counts the input rows merged so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactionTask {
    /// The keyspace.
    pub keyspace: String,
    /// The column family (an index's is `table.index`).
    pub column_family: String,
    /// A time UUID naming this compaction.
    pub id: [u8; 16],
    /// Every SSTable is an input (`nodetool compact`), not a size-tiered bucket.
    pub major: bool,
    /// Input rows merged so far.
    pub rows_done: u64,
    /// Input rows in all.
    pub rows_total: u64,
}

/// One background pool's counts, as `system_views.thread_pools` shows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadPoolStats {
    /// Cassandra's name for the pool (`MemtableFlushWriter`, `CompactionExecutor`, …).
    pub name: String,
    /// Tasks running now.
    pub active: u64,
    /// How many may run at once.
    pub active_limit: u64,
    /// Tasks queued, not yet running.
    pub pending: u64,
    /// Tasks finished since the process started.
    pub completed: u64,
    /// Tasks turned away since the process started because the pool was full.
    pub blocked_all_time: u64,
}

/// What a pool counts as its tasks queue, run and finish, or are turned away.
#[derive(Debug, Default)]
pub struct TaskCounts {
    pending: AtomicU64,
    active: AtomicU64,
    completed: AtomicU64,
    blocked: AtomicU64,
}

impl TaskCounts {
    /// A task was queued.
    pub fn queued(&self) {
        self.pending.fetch_add(1, Ordering::Relaxed);
    }

    /// A queued task will not run (its queue was closed).
    pub fn dropped(&self) {
        self.pending.fetch_sub(1, Ordering::Relaxed);
    }

    /// A queued task was turned away: the pool stayed full past its wait.
    pub fn turned_away(&self) {
        self.pending.fetch_sub(1, Ordering::Relaxed);
        self.blocked.fetch_add(1, Ordering::Relaxed);
    }

    /// A queued task started.
    pub fn started(&self) {
        self.pending.fetch_sub(1, Ordering::Relaxed);
        self.active.fetch_add(1, Ordering::Relaxed);
    }

    /// A running task finished.
    pub fn finished(&self) {
        self.active.fetch_sub(1, Ordering::Relaxed);
        self.completed.fetch_add(1, Ordering::Relaxed);
    }

    /// The counts now, under `name`, with at most `active_limit` running at once.
    pub fn snapshot(&self, name: &str, active_limit: u64) -> ThreadPoolStats {
        ThreadPoolStats {
            name: name.to_string(),
            active: self.active.load(Ordering::Relaxed),
            active_limit,
            pending: self.pending.load(Ordering::Relaxed),
            completed: self.completed.load(Ordering::Relaxed),
            blocked_all_time: self.blocked.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod bytes_tests {
    use super::Bytes;

    #[test]
    fn byte_counts_read_in_the_unit_that_fits() {
        assert_eq!(Bytes(0).to_string(), "0 B");
        assert_eq!(Bytes(1023).to_string(), "1023 B");
        assert_eq!(Bytes(1024).to_string(), "1.0 KiB");
        assert_eq!(Bytes(3 << 19).to_string(), "1.5 MiB");
        assert_eq!(Bytes(5 << 30).to_string(), "5.0 GiB");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_summary_counts_each_time_into_the_buckets_at_or_above_it() {
        let l = Latency::default();
        for us in [10, 60, 60, 3_000, 20_000_000] {
            l.record(Duration::from_micros(us));
        }
        let s = l.summary();
        assert_eq!(s.count, 5);
        assert_eq!(&s.at_most[..3], [1, 3, 3]);
        // 3 ms is under the 5 ms bound, not the 2.5 ms one; 20 s is past every bound.
        assert_eq!((s.at_most[5], s.at_most[6]), (3, 4));
        assert_eq!(s.at_most[LATENCY_BOUNDS_US.len() - 1], 4);
        let sum = 10 + 60 + 60 + 3_000 + 20_000_000u64;
        assert!(s.sum_us.abs_diff(sum) < sum / 100, "{}", s.sum_us);
    }
}
