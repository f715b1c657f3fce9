//! `GET /metrics`: the database's counters in the Prometheus text format, encoded by
//! `prometheus-client`. Read from the engine's statistics at each scrape (nothing is kept
//! between scrapes): per table, reads and writes with their latency quantiles, bytes, SSTables,
//! pending compactions, cache hits and misses, bloom filter checks; and the process's uptime.

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use supercolumn::{ColumnFamilyStats, Database};

use super::report::tables;

type Labels = Vec<(String, String)>;

/// One metric family per name, registered as it is first met.
struct Families {
    registry: Registry,
    counters: Vec<(&'static str, Family<Labels, Counter>)>,
    gauges: Vec<(&'static str, Family<Labels, Gauge>)>,
}

impl Families {
    fn counter(&mut self, name: &'static str, help: &str, labels: &Labels, value: u64) {
        let family = match self.counters.iter().find(|(n, _)| *n == name) {
            Some((_, f)) => f.clone(),
            None => {
                let f = Family::<Labels, Counter>::default();
                self.registry.register(name, help, f.clone());
                self.counters.push((name, f.clone()));
                f
            }
        };
        family.get_or_create(labels).inc_by(value);
    }

    fn gauge(&mut self, name: &'static str, help: &str, labels: &Labels, value: u64) {
        let family = match self.gauges.iter().find(|(n, _)| *n == name) {
            Some((_, f)) => f.clone(),
            None => {
                let f = Family::<Labels, Gauge>::default();
                self.registry.register(name, help, f.clone());
                self.gauges.push((name, f.clone()));
                f
            }
        };
        family
            .get_or_create(labels)
            .set(i64::try_from(value).unwrap_or(i64::MAX));
    }
}

/// The text a scrape gets.
pub fn scrape(db: &Database, uptime_seconds: u64) -> anyhow::Result<String> {
    let mut f = Families {
        registry: Registry::with_prefix("supercolumn"),
        counters: Vec::new(),
        gauges: Vec::new(),
    };
    let uptime = Gauge::<i64>::default();
    uptime.set(i64::try_from(uptime_seconds).unwrap_or(i64::MAX));
    f.registry
        .register("uptime_seconds", "Seconds since the server started", uptime);
    for (ks, cf) in tables(db, &[])? {
        let s = db.column_family_stats(&ks, &cf)?;
        table(
            &mut f,
            vec![("keyspace".into(), ks), ("table".into(), cf)],
            &s,
        );
    }
    let mut out = String::new();
    encode(&mut out, &f.registry)?;
    Ok(out)
}

/// One table's metrics, labelled `l`.
fn table(f: &mut Families, l: Labels, s: &ColumnFamilyStats) {
    let counters: [(&'static str, &str, u64); 12] = [
        ("table_reads", "Reads of the table", s.reads.count),
        ("table_writes", "Writes to the table", s.writes.count),
        (
            "table_client_bytes",
            "Key, name and value bytes written by clients",
            s.client_bytes,
        ),
        ("table_compactions", "Compactions run", s.compactions),
        ("table_flushes", "Memtables flushed", s.flushes),
        ("table_key_cache_hits", "Key cache hits", s.key_cache_hits),
        (
            "table_key_cache_misses",
            "Key cache misses",
            s.key_cache_misses,
        ),
        (
            "table_block_cache_hits",
            "Block cache hits",
            s.block_cache_hits,
        ),
        (
            "table_block_cache_misses",
            "Block cache misses",
            s.block_cache_misses,
        ),
        (
            "table_bloom_filter_checks",
            "Bloom filter checks",
            s.bloom_checks,
        ),
        (
            "table_bloom_filter_false_positives",
            "Bloom filter false positives",
            s.bloom_false_positives,
        ),
        (
            "table_bytes_compacted",
            "Bytes compactions read",
            s.bytes_compacted,
        ),
    ];
    for (name, help, v) in counters {
        f.counter(name, help, &l, v);
    }
    table_gauges(f, &l, s);
}

/// One table's sizes and latency quantiles, labelled `l`.
fn table_gauges(f: &mut Families, l: &Labels, s: &ColumnFamilyStats) {
    let gauges: [(&'static str, &str, u64); 5] = [
        ("table_sstables", "Live SSTables", s.sstables as u64),
        (
            "table_live_bytes",
            "Bytes of the live SSTables",
            s.sstable_bytes,
        ),
        (
            "table_disk_bytes",
            "Bytes on disk, replaced SSTables not yet removed included",
            s.total_bytes,
        ),
        (
            "table_memtable_bytes",
            "Bytes of the memtable",
            s.memtable_bytes as u64,
        ),
        (
            "table_pending_compactions",
            "Compactions due",
            s.pending_compactions as u64,
        ),
    ];
    for (name, help, v) in gauges {
        f.gauge(name, help, l, v);
    }
    for (op, lat) in [("read", &s.reads), ("write", &s.writes)] {
        let quantiles = [
            ("0.5", lat.p50_us),
            ("0.99", lat.p99_us),
            ("0.999", lat.p999_us),
            ("1", lat.max_us),
        ];
        for (q, v) in quantiles {
            let mut ql = l.clone();
            ql.push(("operation".into(), op.into()));
            ql.push(("quantile".into(), q.into()));
            let help = "Read and write latency quantiles (1: the slowest)";
            f.gauge("table_latency_microseconds", help, &ql, v);
        }
    }
}
