//! What `nodetool`'s commands report, as JSON built from a [`Database`]: the admin server
//! answers with it, and `nodetool` run on a data directory no server holds builds the same
//! from the database it opens. One function per command; printing it is `nodetool.rs`'s.

use serde_json::{json, Value};
use supercolumn::stats::{ColumnFamilyStats, LatencySummary};
use supercolumn::Database;
use supercolumn_cql::{ServerState, Session};

/// The tables `targets` names (`ks` or `ks.table`; none: every table), in keyspace order.
pub fn tables(db: &Database, targets: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for ks in db.keyspaces() {
        let def = db.describe_keyspace(&ks)?;
        for cf in &def.column_families {
            let wanted = targets.is_empty()
                || targets
                    .iter()
                    .any(|t| *t == ks || *t == format!("{ks}.{}", cf.name));
            if wanted {
                out.push((ks.clone(), cf.name.clone()));
            }
        }
    }
    for t in targets {
        let (ks, table) = t.split_once('.').unwrap_or((t, ""));
        let known = out
            .iter()
            .any(|(k, c)| k == ks && (table.is_empty() || c == table));
        anyhow::ensure!(known, "unknown keyspace or table '{t}'");
    }
    Ok(out)
}

fn latency(l: &LatencySummary) -> Value {
    json!({ "count": l.count, "p50_us": l.p50_us, "p99_us": l.p99_us, "max_us": l.max_us })
}

fn table(ks: &str, name: &str, s: &ColumnFamilyStats) -> Value {
    json!({
        "keyspace": ks,
        "table": name,
        "sstables": s.sstables,
        "space_used_live": s.sstable_bytes,
        "space_used_total": s.total_bytes,
        "memtable_bytes": s.memtable_bytes,
        "memtable_operations": s.memtable_operations,
        "reads": latency(&s.reads),
        "writes": latency(&s.writes),
        "bloom_filter_checks": s.bloom_checks,
        "bloom_filter_false_positives": s.bloom_false_positives,
        "key_cache_hits": s.key_cache_hits,
        "key_cache_misses": s.key_cache_misses,
        "block_cache_hits": s.block_cache_hits,
        "block_cache_misses": s.block_cache_misses,
        "pending_compactions": s.pending_compactions,
        "compactions": s.compactions,
        "bytes_compacted": s.bytes_compacted,
        "flushes": s.flushes,
    })
}

/// `tablestats`: each table's counters and sizes.
pub fn tablestats(db: &Database, targets: &[String]) -> anyhow::Result<Value> {
    let mut out = Vec::new();
    for (ks, cf) in tables(db, targets)? {
        out.push(table(&ks, &cf, &db.column_family_stats(&ks, &cf)?));
    }
    Ok(Value::Array(out))
}

/// `compactionstats`: the compactions due, per table, and those running with their progress
/// (in input rows: Cassandra's `keys` unit).
pub fn compactionstats(db: &Database) -> anyhow::Result<Value> {
    let mut pending = Vec::new();
    for (ks, cf) in tables(db, &[])? {
        let n = db.column_family_stats(&ks, &cf)?.pending_compactions;
        if n > 0 {
            pending.push(json!({ "keyspace": ks, "table": cf, "pending": n }));
        }
    }
    let running: Vec<Value> = db
        .running_compactions()
        .into_iter()
        .map(|t| {
            json!({
                "id": uuid::Uuid::from_bytes(t.id).to_string(),
                "keyspace": t.keyspace,
                "table": t.column_family,
                "major": t.major,
                "completed": t.rows_done,
                "total": t.rows_total,
                "unit": "keys",
            })
        })
        .collect();
    Ok(json!({ "pending": pending, "running": running }))
}

/// `tpstats`: the engine's pools, and the server's when one serves.
pub fn tpstats(db: &Database, server: Option<&dyn ServerState>) -> Value {
    let mut pools = db.thread_pools();
    pools.extend(server.map(|s| s.thread_pools()).unwrap_or_default());
    pools.sort_by(|a, b| a.name.cmp(&b.name));
    let pools: Vec<Value> = pools
        .into_iter()
        .map(|p| {
            json!({
                "name": p.name,
                "active": p.active,
                "active_limit": p.active_limit,
                "pending": p.pending,
                "completed": p.completed,
                "blocked": 0,
                "blocked_all_time": p.blocked_all_time,
            })
        })
        .collect();
    Value::Array(pools)
}

/// `clientstats`: each client connected to the server.
pub fn clientstats(server: &dyn ServerState) -> Value {
    let clients: Vec<Value> = server
        .clients()
        .into_iter()
        .map(|c| {
            json!({
                "address": c.address.to_string(),
                "port": c.port,
                "stage": c.stage,
                "protocol_version": c.protocol_version,
                "user": c.username,
                "requests": c.requests,
                "driver_name": c.options.get("DRIVER_NAME"),
                "driver_version": c.options.get("DRIVER_VERSION"),
            })
        })
        .collect();
    Value::Array(clients)
}

/// The node's host ID, as `system.local` shows it.
fn host_id(db: &Database) -> String {
    Session::new(db)
        .query("SELECT host_id FROM system.local")
        .ok()
        .and_then(|r| r.to_vecs().pop())
        .and_then(|r| r.into_iter().next().flatten())
        .and_then(|b| uuid::Uuid::from_slice(&b).ok())
        .map_or_else(String::new, |u| u.to_string())
}

/// Bytes of every table's SSTables.
fn load(db: &Database) -> anyhow::Result<u64> {
    let mut bytes = 0;
    for (ks, cf) in tables(db, &[])? {
        bytes += db.column_family_stats(&ks, &cf)?.total_bytes;
    }
    Ok(bytes)
}

/// `status`: this node, its address, state and load. `native` is the CQL address when a
/// server answers.
pub fn status(db: &Database, native: Option<&str>) -> anyhow::Result<Value> {
    Ok(json!({
        "state": if native.is_some() { "UN" } else { "DN" },
        "address": native.map_or("127.0.0.1", |a| a.rsplit_once(':').map_or(a, |(h, _)| h)),
        "load_bytes": load(db)?,
        "tokens": 1,
        "owns": 100.0,
        "host_id": host_id(db),
        "rack": "rack1",
        "datacenter": "datacenter1",
    }))
}

/// `info`: the node's identity, load, uptime and caches.
pub fn info(db: &Database, native: Option<&str>, uptime_seconds: u64) -> anyhow::Result<Value> {
    let (mut hits, mut misses, mut entries) = (0, 0, 0);
    for (ks, cf) in tables(db, &[])? {
        let s = db.column_family_stats(&ks, &cf)?;
        (hits, misses, entries) = (
            hits + s.key_cache_hits,
            misses + s.key_cache_misses,
            entries + s.key_cache_size,
        );
    }
    Ok(json!({
        "id": host_id(db),
        "native_transport": native,
        "load_bytes": load(db)?,
        "uptime_seconds": uptime_seconds,
        "data_directory": db.path().display().to_string(),
        "key_cache": { "entries": entries, "hits": hits, "requests": hits + misses },
        "datacenter": "datacenter1",
        "rack": "rack1",
    }))
}

/// A snapshot's parts as JSON: per keyspace, its tag, files and bytes.
fn snapshots(infos: &[supercolumn::SnapshotInfo]) -> Value {
    Value::Array(
        infos
            .iter()
            .map(|s| json!({ "tag": s.tag, "keyspace": s.keyspace, "files": s.files, "bytes": s.bytes }))
            .collect(),
    )
}

/// `snapshot`: takes `tag` (none: the time in milliseconds, as Cassandra names one) of
/// `keyspaces` (none: every keyspace).
pub fn snapshot(db: &Database, tag: Option<&str>, keyspaces: &[String]) -> anyhow::Result<Value> {
    let tag = match tag {
        Some(t) => t.to_string(),
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
            .to_string(),
    };
    Ok(snapshots(&db.snapshot(&tag, keyspaces)?))
}

/// `listsnapshots`: every snapshot.
pub fn listsnapshots(db: &Database) -> anyhow::Result<Value> {
    Ok(snapshots(&db.list_snapshots()?))
}

/// `clearsnapshot`: removes `tag` (`None`: every snapshot) of `keyspaces` (none: all).
pub fn clearsnapshot(
    db: &Database,
    tag: Option<&str>,
    keyspaces: &[String],
) -> anyhow::Result<Value> {
    Ok(json!({ "removed": db.clear_snapshot(tag, keyspaces)? }))
}
