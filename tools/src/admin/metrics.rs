//! `GET /metrics`: the database's and the server's counters in the Prometheus text format,
//! encoded by `prometheus-client`. Read from the engine's statistics and the server's traffic
//! at each scrape (nothing is kept between scrapes, nothing is added to the hot paths): per
//! table, reads and writes with their latency histograms and quantiles, bytes, SSTables,
//! pending compactions, cache hits and misses, bloom filter checks; per server, connections,
//! requests by opcode, errors by code, bytes in and out; and the process's uptime.

use std::sync::OnceLock;

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;
use supercolumn::stats::LATENCY_BOUNDS_US;
use supercolumn::{ColumnFamilyStats, Database, LatencySummary};
use supercolumn_cql::ServerState;

use super::report::tables;

type Labels = Vec<(String, String)>;

/// One metric family per name, registered as it is first met.
struct Families {
    registry: Registry,
    counters: Vec<(&'static str, Family<Labels, Counter>)>,
    gauges: Vec<(&'static str, Family<Labels, Gauge>)>,
    histograms: Vec<(&'static str, Family<Labels, Recorded>)>,
}

/// A histogram the engine recorded, shown as it stood at the scrape: prometheus-client's own
/// histogram takes observations one by one, and these were taken by the engine's.
#[derive(Debug, Default)]
struct Recorded(OnceLock<LatencySummary>);

impl TypedMetric for Recorded {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for Recorded {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let s = self.0.get().copied().unwrap_or_default();
        // The encoder takes each bucket's own count and adds them up; the last is +Inf.
        let mut below = 0;
        let mut buckets: Vec<(f64, u64)> = LATENCY_BOUNDS_US
            .iter()
            .zip(s.at_most)
            .map(|(&bound, at_most)| {
                let own = at_most.saturating_sub(below);
                below = at_most;
                (bound as f64 / 1e6, own)
            })
            .collect();
        buckets.push((f64::MAX, s.count.saturating_sub(below)));
        encoder.encode_histogram::<NoLabelSet>(s.sum_us as f64 / 1e6, s.count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

/// The family named `name` among `known`, registered in `registry` as it is first met.
fn family<M>(
    registry: &mut Registry,
    known: &mut Vec<(&'static str, Family<Labels, M>)>,
    (name, help): (&'static str, &str),
) -> Family<Labels, M>
where
    M: EncodeMetric + TypedMetric + Default + std::fmt::Debug + Send + Sync + 'static,
{
    if let Some((_, f)) = known.iter().find(|(n, _)| *n == name) {
        return f.clone();
    }
    let f = Family::<Labels, M>::default();
    registry.register(name, help, f.clone());
    known.push((name, f.clone()));
    f
}

impl Families {
    fn counter(&mut self, name: &'static str, help: &str, labels: &Labels, value: u64) {
        family(&mut self.registry, &mut self.counters, (name, help))
            .get_or_create(labels)
            .inc_by(value);
    }

    fn gauge(&mut self, name: &'static str, help: &str, labels: &Labels, value: u64) {
        family(&mut self.registry, &mut self.gauges, (name, help))
            .get_or_create(labels)
            .set(i64::try_from(value).unwrap_or(i64::MAX));
    }

    fn histogram(&mut self, name: &'static str, help: &str, labels: &Labels, s: LatencySummary) {
        let f = family(&mut self.registry, &mut self.histograms, (name, help));
        let _ = f.get_or_create(labels).0.set(s);
    }
}

/// The text a scrape gets; `server`: the CQL server's view of its traffic, when one runs.
pub fn scrape(
    db: &Database,
    uptime_seconds: u64,
    server: Option<&dyn ServerState>,
) -> anyhow::Result<String> {
    let mut f = Families {
        registry: Registry::with_prefix("supercolumn"),
        counters: Vec::new(),
        gauges: Vec::new(),
        histograms: Vec::new(),
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
    if let Some(server) = server {
        traffic(&mut f, server);
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
        let mut hl = l.clone();
        hl.push(("operation".into(), op.into()));
        let help = "Read and write latencies";
        f.histogram("table_latency_seconds", help, &hl, *lat);
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

/// The CQL server's connections, requests, errors and bytes.
fn traffic(f: &mut Families, server: &dyn ServerState) {
    let t = server.traffic();
    let open = Gauge::<i64>::default();
    open.set(i64::try_from(t.connections).unwrap_or(i64::MAX));
    f.registry
        .register("connections", "Client connections open", open);
    let counters: [(&'static str, &str, u64); 3] = [
        (
            "connections_accepted",
            "Client connections accepted",
            t.connections_total,
        ),
        (
            "received_bytes",
            "Bytes of frames read from clients",
            t.bytes_in,
        ),
        (
            "sent_bytes",
            "Bytes of frames written to clients",
            t.bytes_out,
        ),
    ];
    for (name, help, v) in counters {
        let c = Counter::<u64>::default();
        c.inc_by(v);
        f.registry.register(name, help, c);
    }
    for (opcode, n) in t.requests {
        let l = vec![("opcode".into(), opcode.into())];
        f.counter("requests", "Requests by opcode", &l, n);
    }
    for (code, n) in t.errors {
        let l = vec![("code".into(), code.into())];
        f.counter("errors", "Error answers by code", &l, n);
    }
}
