//! How `nodetool` prints each answer: the JSON a server (or the data directory) gave, in
//! Cassandra's nodetool shapes — aligned tables, its headings, its units. Nothing here asks
//! anything of a server or a database.

use serde_json::Value;

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// Bytes as nodetool prints them (`1.21 MiB`).
fn bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    match unit {
        0 => format!("{b} bytes"),
        _ => format!("{v:.2} {}", UNITS[unit]),
    }
}

pub(super) fn status(v: &Value) -> String {
    let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
    format!(
        "Datacenter: {dc}\n{rule}\nStatus=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n\
         --  Address    Load        Tokens  Owns (effective)  Host ID                               Rack\n\
         {state}  {addr:<9}  {load:<10}  {tokens:<6}  {owns:<16}  {id:<36}  {rack}\n",
        dc = s("datacenter"),
        rule = "=".repeat(12 + s("datacenter").len()),
        state = s("state"),
        addr = s("address"),
        load = bytes(n(&v["load_bytes"])),
        tokens = n(&v["tokens"]),
        owns = "100.0%",
        id = s("host_id"),
        rack = s("rack"),
    )
}

pub(super) fn info(v: &Value) -> String {
    let cache = &v["key_cache"];
    format!(
        "ID                     : {}\nGossip active          : false\nNative Transport active: {}\n\
         Load                   : {}\nUptime (seconds)       : {}\n\
         Key Cache              : entries {}, hits {}, requests {}\n\
         Data Center            : {}\nRack                   : {}\n",
        v["id"].as_str().unwrap_or(""),
        v["native_transport"].is_string(),
        bytes(n(&v["load_bytes"])),
        n(&v["uptime_seconds"]),
        n(&cache["entries"]),
        n(&cache["hits"]),
        n(&cache["requests"]),
        v["datacenter"].as_str().unwrap_or(""),
        v["rack"].as_str().unwrap_or(""),
    )
}

/// A latency in milliseconds, `NaN ms` without operations (as nodetool prints it).
fn millis(l: &Value) -> String {
    match n(&l["count"]) {
        0 => "NaN ms".into(),
        _ => format!("{:.3} ms", n(&l["p50_us"]) as f64 / 1000.0),
    }
}

pub(super) fn tablestats(v: &Value) -> String {
    let tables = v.as_array().cloned().unwrap_or_default();
    let mut out = format!(
        "Total number of tables: {}\n----------------\n",
        tables.len()
    );
    let mut keyspace = None;
    for t in &tables {
        let ks = t["keyspace"].as_str().unwrap_or("");
        if keyspace != Some(ks) {
            let of_ks = tables.iter().filter(|x| x["keyspace"] == t["keyspace"]);
            let (reads, writes) = of_ks.fold((0, 0), |(r, w), x| {
                (r + n(&x["reads"]["count"]), w + n(&x["writes"]["count"]))
            });
            out += &format!("Keyspace : {ks}\n\tRead Count: {reads}\n\tWrite Count: {writes}\n");
            keyspace = Some(ks);
        }
        let checks = n(&t["bloom_filter_checks"]);
        let false_positives = n(&t["bloom_filter_false_positives"]);
        let hits = n(&t["key_cache_hits"]);
        let requests = hits + n(&t["key_cache_misses"]);
        let ratio = |a: u64, b: u64| match b {
            0 => "NaN".to_string(),
            _ => format!("{:.5}", a as f64 / b as f64),
        };
        out += &format!(
            "\t\tTable: {}\n\t\tSSTable count: {}\n\t\tSpace used (live): {}\n\
             \t\tSpace used (total): {}\n\t\tMemtable data size: {}\n\
             \t\tMemtable cell count: {}\n\t\tLocal read count: {}\n\
             \t\tLocal read latency: {}\n\t\tLocal write count: {}\n\
             \t\tLocal write latency: {}\n\t\tPending compactions: {}\n\
             \t\tBloom filter false positives: {}\n\t\tBloom filter false ratio: {}\n\
             \t\tKey cache hit rate: {}\n\t\tBlock cache hits: {}\n\t\tBlock cache misses: {}\n\n",
            t["table"].as_str().unwrap_or(""),
            n(&t["sstables"]),
            n(&t["space_used_live"]),
            n(&t["space_used_total"]),
            n(&t["memtable_bytes"]),
            n(&t["memtable_operations"]),
            n(&t["reads"]["count"]),
            millis(&t["reads"]),
            n(&t["writes"]["count"]),
            millis(&t["writes"]),
            n(&t["pending_compactions"]),
            false_positives,
            ratio(false_positives, checks),
            ratio(hits, requests),
            n(&t["block_cache_hits"]),
            n(&t["block_cache_misses"]),
        );
    }
    out + "----------------\n"
}

pub(super) fn compactionstats(v: &Value) -> String {
    let pending = v["pending"].as_array().cloned().unwrap_or_default();
    let total: u64 = pending.iter().map(|p| n(&p["pending"])).sum();
    let mut out = format!("pending tasks: {total}\n");
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    for p in &pending {
        out += &format!(
            "- {}.{}: {}\n",
            text(&p["keyspace"]),
            text(&p["table"]),
            n(&p["pending"])
        );
    }
    let running = v["running"].as_array().cloned().unwrap_or_default();
    if running.is_empty() {
        return out;
    }
    let rows: Vec<Vec<String>> = running
        .iter()
        .map(|r| {
            let (done, total) = (n(&r["completed"]), n(&r["total"]));
            let ratio = if total == 0 {
                1.0
            } else {
                done as f64 / total as f64
            };
            vec![
                text(&r["id"]),
                "Compaction".into(),
                text(&r["keyspace"]),
                text(&r["table"]),
                done.to_string(),
                total.to_string(),
                text(&r["unit"]),
                format!("{:.2}%", ratio * 100.0),
            ]
        })
        .collect();
    let header = [
        "id",
        "compaction type",
        "keyspace",
        "table",
        "completed",
        "total",
        "unit",
        "progress",
    ];
    out += "\n";
    out += &aligned(&header, &rows);
    // Cassandra estimates it from the compaction throughput limit; there is none here.
    out + "Active compaction remaining time :        n/a\n"
}

/// `[ks1, ks2]` as nodetool names the keyspaces a command covers.
pub(super) fn which_keyspaces(keyspaces: &[String]) -> String {
    if keyspaces.is_empty() {
        "all keyspaces".into()
    } else {
        keyspaces.join(", ")
    }
}

pub(super) fn snapshot_taken(v: &Value, keyspaces: &[String]) -> String {
    let tag = v[0]["tag"].as_str().unwrap_or("");
    format!(
        "Requested creating snapshot(s) for [{}] with snapshot name [{tag}] and options {{skipFlush=false}}\nSnapshot directory: {tag}\n",
        which_keyspaces(keyspaces)
    )
}

/// Per snapshot, keyspace and table: its files' size (a table's files are `<table>-<n>-Data.db`).
pub(super) fn listsnapshots(v: &Value) -> String {
    let snaps = v.as_array().cloned().unwrap_or_default();
    if snaps.is_empty() {
        return "Snapshot Details: \nThere are no snapshots\n".into();
    }
    let mut rows = Vec::new();
    let mut total = 0;
    for s in &snaps {
        let files: Vec<&str> = s["files"]
            .as_array()
            .map(|f| f.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut tables: Vec<&str> = files
            .iter()
            .filter_map(|f| f.strip_suffix("-Data.db")?.rsplit_once('-').map(|(t, _)| t))
            .collect();
        tables.dedup();
        total += n(&s["bytes"]);
        rows.push(vec![
            s["tag"].as_str().unwrap_or("").to_string(),
            s["keyspace"].as_str().unwrap_or("").to_string(),
            tables.join(", "),
            bytes(n(&s["bytes"])),
        ]);
    }
    let header = [
        "Snapshot name",
        "Keyspace name",
        "Column family name",
        "Size on disk",
    ];
    let mut out = String::from("Snapshot Details: \n");
    out += &aligned(&header, &rows);
    out + &format!("\nTotal size on disk: {}\n\n", bytes(total))
}

/// `rows` under `header`, each column as wide as its widest cell, one space between.
fn aligned(header: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].len())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| -> String {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("{}\n", padded.join(" ").trim_end())
    };
    let mut out = line(header.to_vec());
    for r in rows {
        out += &line(r.iter().map(String::as_str).collect());
    }
    out
}

/// `tpstats`: each pool's active, pending, completed and blocked tasks.
pub(super) fn tpstats(v: &Value) -> String {
    let rows: Vec<Vec<String>> = v
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let name = p["name"].as_str().unwrap_or("").to_string();
            let counts = [
                "active",
                "pending",
                "completed",
                "blocked",
                "blocked_all_time",
            ];
            std::iter::once(name)
                .chain(counts.iter().map(|c| n(&p[*c]).to_string()))
                .collect()
        })
        .collect();
    let header = [
        "Pool Name",
        "Active",
        "Pending",
        "Completed",
        "Blocked",
        "All time blocked",
    ];
    aligned(&header, &rows)
}

/// `clientstats`: the clients connected, counted per user; with `all`, each connection.
pub(super) fn clientstats(v: &Value, all: bool) -> String {
    let clients = v.as_array().cloned().unwrap_or_default();
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    let user = |c: &Value| c["user"].as_str().unwrap_or("anonymous").to_string();
    if all {
        let rows: Vec<Vec<String>> = clients
            .iter()
            .map(|c| {
                vec![
                    format!("/{}:{}", text(&c["address"]), n(&c["port"])),
                    "false".into(),
                    "undefined".into(),
                    "undefined".into(),
                    n(&c["protocol_version"]).to_string(),
                    user(c),
                    n(&c["requests"]).to_string(),
                    text(&c["driver_name"]),
                    text(&c["driver_version"]),
                ]
            })
            .collect();
        let header = [
            "Address",
            "SSL",
            "Cipher",
            "Protocol",
            "Version",
            "User",
            "Requests",
            "Driver-Name",
            "Driver-Version",
        ];
        return aligned(&header, &rows);
    }
    let mut per_user: std::collections::BTreeMap<String, u64> = Default::default();
    for c in &clients {
        *per_user.entry(user(c)).or_default() += 1;
    }
    let mut out = format!("Total connected clients: {}\n", clients.len());
    if !per_user.is_empty() {
        let rows: Vec<Vec<String>> = per_user
            .into_iter()
            .map(|(u, k)| vec![u, k.to_string()])
            .collect();
        out += "\n";
        out += &aligned(&["User", "Connections"], &rows);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tpstats_and_clientstats_print_in_nodetools_columns() {
        let pools = json!([{"name": "CompactionExecutor", "active": 0, "pending": 2,
                            "completed": 7, "blocked": 0, "blocked_all_time": 1}]);
        let out = tpstats(&pools);
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines[0].starts_with("Pool Name          Active Pending Completed"),
            "{out}"
        );
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            ["CompactionExecutor", "0", "2", "7", "0", "1"]
        );
        let clients = json!([
            {"address": "127.0.0.1", "port": 5000, "protocol_version": 4, "requests": 9,
             "driver_name": "d", "driver_version": "1"},
            {"address": "127.0.0.1", "port": 5001, "protocol_version": 4, "requests": 1,
             "user": "ann"},
        ]);
        let out = clientstats(&clients, false);
        assert_eq!(
            out,
            "Total connected clients: 2\n\nUser      Connections\nann       1\nanonymous 1\n"
        );
        let out = clientstats(&clients, true);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            [
                "/127.0.0.1:5000",
                "false",
                "undefined",
                "undefined",
                "4",
                "anonymous",
                "9",
                "d",
                "1"
            ]
        );
        assert_eq!(
            clientstats(&json!([]), false),
            "Total connected clients: 0\n"
        );
    }

    #[test]
    fn compactionstats_prints_running_compactions_in_nodetools_columns() {
        let v = json!({
            "pending": [{"keyspace": "ks", "table": "t", "pending": 2}],
            "running": [{"id": "0b0a6f1e-3c55-11ef-8000-000000000001", "keyspace": "ks",
                         "table": "t", "completed": 250, "total": 1000, "unit": "keys"}],
        });
        let out = compactionstats(&v);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[..3], ["pending tasks: 2", "- ks.t: 2", ""]);
        assert!(
            lines[3].starts_with("id                                   compaction type keyspace")
        );
        assert_eq!(
            lines[4].split_whitespace().collect::<Vec<_>>(),
            [
                "0b0a6f1e-3c55-11ef-8000-000000000001",
                "Compaction",
                "ks",
                "t",
                "250",
                "1000",
                "keys",
                "25.00%"
            ]
        );
        assert_eq!(
            compactionstats(&json!({"pending": []})),
            "pending tasks: 0\n"
        );
    }
}
