//! Cassandra 4's virtual tables in `system_views`, answered from what the engine counts:
//! `settings` (the options in force), `caches` (the key and block caches), `disk_usage` (each
//! table's bytes on disk), `local_read_latency` and `local_write_latency` (each table's
//! operations and latency quantiles), `sstable_tasks` (compactions running, with progress),
//! `thread_pools` (the flusher, the compactor and the server's request pool) and `clients`
//! (from the server, `server.rs`); and `system_virtual_schema`'s listing of them, which is
//! where drivers and cqlsh learn they exist. Built whole on each read; nothing here writes.

use supercolumn::stats::LatencySummary;
use supercolumn::{CommitLogSync, Database};

use super::tables::{Content, Node};
use crate::types::{CqlType, Literal};

/// Each virtual table: its name, how many leading columns are its partition key and then its
/// clustering key, and the comment Cassandra gives it.
const VIEWS: &[(&str, usize, usize, &str)] = &[
    ("caches", 1, 0, "system caches"),
    ("clients", 1, 1, "currently connected clients"),
    ("disk_usage", 2, 0, "Disk usage per table (MiB)"),
    ("local_read_latency", 2, 0, "Local read latency"),
    ("local_write_latency", 2, 0, "Local write latency"),
    ("settings", 1, 0, "current settings"),
    ("sstable_tasks", 1, 2, "current sstable tasks"),
    ("thread_pools", 1, 0, ""),
];

fn s(v: impl Into<String>) -> Literal {
    Literal::Str(v.into())
}

fn n(v: impl ToString) -> Literal {
    Literal::Number(v.to_string())
}

/// The rows of `system_views.table`, if it is one this server answers.
pub fn content(db: &Database, node: &Node, table: &str) -> Option<Content> {
    Some(match table {
        "settings" => Content {
            columns: vec![("name", CqlType::Text), ("value", CqlType::Text)],
            rows: settings(db)
                .into_iter()
                .map(|(k, v)| vec![s(k), s(v)])
                .collect(),
        },
        "caches" => caches(db),
        "clients" => clients(node),
        "sstable_tasks" => sstable_tasks(db),
        "thread_pools" => thread_pools(db, node),
        "disk_usage" => Content {
            columns: vec![
                ("keyspace_name", CqlType::Text),
                ("table_name", CqlType::Text),
                ("mebibytes", CqlType::Bigint),
            ],
            rows: per_table(db, |ks, t, st| {
                vec![s(ks), s(t), n(st.total_bytes.div_ceil(1 << 20))]
            }),
        },
        "local_read_latency" | "local_write_latency" => Content {
            columns: vec![
                ("keyspace_name", CqlType::Text),
                ("table_name", CqlType::Text),
                ("count", CqlType::Bigint),
                ("max_ms", CqlType::Double),
                ("p50th_ms", CqlType::Double),
                ("p99th_ms", CqlType::Double),
            ],
            rows: per_table(db, |ks, t, st| {
                let l = if table == "local_read_latency" {
                    &st.reads
                } else {
                    &st.writes
                };
                latency_row(ks, t, l)
            }),
        },
        _ => return None,
    })
}

fn latency_row(ks: &str, t: &str, l: &LatencySummary) -> Vec<Literal> {
    let ms = |us: u64| n(format!("{:.3}", us as f64 / 1000.0));
    vec![
        s(ks),
        s(t),
        n(l.count),
        ms(l.max_us),
        ms(l.p50_us),
        ms(l.p99_us),
    ]
}

/// A row per table of every keyspace (the hidden index tables left out), by `row`.
fn per_table(
    db: &Database,
    row: impl Fn(&str, &str, &supercolumn::stats::ColumnFamilyStats) -> Vec<Literal>,
) -> Vec<Vec<Literal>> {
    let mut out = Vec::new();
    for ks in db.keyspaces() {
        let Ok(def) = db.describe_keyspace(&ks) else {
            continue;
        };
        for cf in &def.column_families {
            if let Ok(st) = db.column_family_stats(&ks, &cf.name) {
                out.push(row(&ks, &cf.name, &st));
            }
        }
    }
    out
}

/// The options in force, by name, as `storage-conf.xml` names them.
fn settings(db: &Database) -> Vec<(String, String)> {
    let o = db.options();
    let (sync, window) = match &o.commit_log_sync {
        CommitLogSync::Periodic { period_ms } => ("periodic", period_ms.to_string()),
        CommitLogSync::Batch { window_ms } => ("batch", window_ms.to_string()),
        other => ("other", format!("{other:?}")),
    };
    let window_name = if sync == "periodic" {
        "CommitLogSyncPeriodInMS"
    } else {
        "CommitLogSyncBatchWindowInMS"
    };
    let mut out = vec![
        (
            "BloomFilterFpChance".into(),
            o.bloom_filter_fp_chance.to_string(),
        ),
        (
            "BlockCacheSizeInMB".into(),
            o.block_cache_size_mb.to_string(),
        ),
        (
            "CommitLogSegmentSizeInMB".into(),
            o.commit_log_segment_size_mb.to_string(),
        ),
        ("CommitLogSync".into(), sync.into()),
        (window_name.into(), window),
        ("DataFileDirectory".into(), db.path().display().to_string()),
        ("GCGraceSeconds".into(), o.gc_grace_seconds.to_string()),
        (
            "MaxCompactionThreshold".into(),
            o.max_compaction_threshold.to_string(),
        ),
        (
            "MemtableFlushAfterMinutes".into(),
            o.memtable_flush_after_minutes.to_string(),
        ),
        (
            "MemtableOperationsInMillions".into(),
            o.memtable_operations_millions.to_string(),
        ),
        (
            "MemtableThroughputInMB".into(),
            o.memtable_throughput_mb.to_string(),
        ),
        (
            "MemtableTotalSpaceInMB".into(),
            o.memtable_total_space_mb.to_string(),
        ),
        (
            "MinCompactionThreshold".into(),
            o.min_compaction_threshold.to_string(),
        ),
        (
            "Partitioner".into(),
            db.partitioner().class_name().to_string(),
        ),
    ];
    if let Some(c) = o.column_index_size_kb {
        out.push(("ColumnIndexSizeInKB".into(), c.to_string()));
    }
    if let Some(d) = &o.commit_log_directory {
        out.push(("CommitLogDirectory".into(), d.display().to_string()));
    }
    out.sort();
    out
}

/// The key cache (`keys`) and the block cache (`chunks`, Cassandra's name for its cache of
/// file blocks), summed over the tables.
fn caches(db: &Database) -> Content {
    let (mut k, mut b) = ([0u64; 4], [0u64; 2]);
    for ks in db.keyspaces() {
        let Ok(def) = db.describe_keyspace(&ks) else {
            continue;
        };
        for cf in &def.column_families {
            if let Ok(st) = db.column_family_stats(&ks, &cf.name) {
                k[0] += st.key_cache_hits;
                k[1] += st.key_cache_misses;
                k[2] += st.key_cache_size as u64;
                k[3] += st.key_cache_capacity as u64;
                b[0] += st.block_cache_hits;
                b[1] += st.block_cache_misses;
            }
        }
    }
    let ratio = |hits: u64, misses: u64| match hits + misses {
        0 => n("NaN"),
        r => n(hits as f64 / r as f64),
    };
    let block_capacity = u64::from(db.options().block_cache_size_mb) << 20;
    Content {
        columns: vec![
            ("name", CqlType::Text),
            ("capacity_bytes", CqlType::Bigint),
            ("entry_count", CqlType::Int),
            ("hit_count", CqlType::Bigint),
            ("hit_ratio", CqlType::Double),
            ("request_count", CqlType::Bigint),
        ],
        rows: vec![
            vec![
                s("chunks"),
                n(block_capacity),
                Literal::Null,
                n(b[0]),
                ratio(b[0], b[1]),
                n(b[0] + b[1]),
            ],
            vec![
                s("keys"),
                n(k[3]),
                n(k[2]),
                n(k[0]),
                ratio(k[0], k[1]),
                n(k[0] + k[1]),
            ],
        ],
    }
}

/// `clients`: each connection to the server, as its handshake left it.
fn clients(node: &Node) -> Content {
    let text = || CqlType::Text;
    let or_null = |v: Option<&String>| v.map_or(Literal::Null, |v| s(v.as_str()));
    let clients = node
        .server
        .as_ref()
        .map(|s| s.clients())
        .unwrap_or_default();
    Content {
        columns: vec![
            ("address", CqlType::Inet),
            ("port", CqlType::Int),
            (
                "client_options",
                CqlType::Map(Box::new(text()), Box::new(text())),
            ),
            ("connection_stage", text()),
            ("driver_name", text()),
            ("driver_version", text()),
            ("hostname", text()),
            ("protocol_version", CqlType::Int),
            ("request_count", CqlType::Bigint),
            ("ssl_cipher_suite", text()),
            ("ssl_enabled", CqlType::Boolean),
            ("ssl_protocol", text()),
            ("username", text()),
        ],
        rows: clients
            .iter()
            .map(|c| {
                let options = c
                    .options
                    .iter()
                    .map(|(k, v)| (s(k.as_str()), s(v.as_str())));
                vec![
                    s(c.address.to_string()),
                    n(c.port),
                    if c.options.is_empty() {
                        Literal::Null
                    } else {
                        Literal::Map(options.collect())
                    },
                    s(c.stage),
                    or_null(c.options.get("DRIVER_NAME")),
                    or_null(c.options.get("DRIVER_VERSION")),
                    s(c.address.to_string()),
                    n(c.protocol_version),
                    n(c.requests),
                    Literal::Null,
                    Literal::Bool(false),
                    Literal::Null,
                    or_null(c.username.as_ref()),
                ]
            })
            .collect(),
    }
}

/// `sstable_tasks`: the compactions running, their progress in input rows (Cassandra's `keys`).
fn sstable_tasks(db: &Database) -> Content {
    let mut tasks = db.running_compactions();
    tasks.sort_by(|a, b| (&a.keyspace, &a.column_family).cmp(&(&b.keyspace, &b.column_family)));
    Content {
        columns: vec![
            ("keyspace_name", CqlType::Text),
            ("table_name", CqlType::Text),
            ("task_id", CqlType::Uuid),
            ("completion_ratio", CqlType::Double),
            ("kind", CqlType::Text),
            ("progress", CqlType::Bigint),
            ("total", CqlType::Bigint),
            ("unit", CqlType::Text),
        ],
        rows: tasks
            .iter()
            .map(|t| {
                let ratio = if t.rows_total == 0 {
                    1.0
                } else {
                    t.rows_done as f64 / t.rows_total as f64
                };
                vec![
                    s(t.keyspace.as_str()),
                    s(t.column_family.as_str()),
                    Literal::Uuid(uuid::Uuid::from_bytes(t.id).to_string()),
                    n(ratio),
                    s("compaction"),
                    n(t.rows_done),
                    n(t.rows_total),
                    s("keys"),
                ]
            })
            .collect(),
    }
}

/// `thread_pools`: the engine's background pools and the server's, by name.
fn thread_pools(db: &Database, node: &Node) -> Content {
    let mut pools = db.thread_pools();
    pools.extend(node.server.iter().flat_map(|s| s.thread_pools()));
    pools.sort_by(|a, b| a.name.cmp(&b.name));
    Content {
        columns: vec![
            ("name", CqlType::Text),
            ("active_tasks", CqlType::Int),
            ("active_tasks_limit", CqlType::Int),
            ("blocked_tasks", CqlType::Bigint),
            ("blocked_tasks_all_time", CqlType::Bigint),
            ("completed_tasks", CqlType::Bigint),
            ("pending_tasks", CqlType::Int),
        ],
        rows: pools
            .iter()
            .map(|p| {
                let int = |v: u64| n(v.min(i32::MAX as u64));
                vec![
                    s(p.name.as_str()),
                    int(p.active),
                    int(p.active_limit),
                    n(0),
                    n(p.blocked_all_time),
                    n(p.completed),
                    int(p.pending),
                ]
            })
            .collect(),
    }
}

/// `system_virtual_schema.keyspaces`, `.tables` and `.columns`: the virtual keyspaces, their
/// tables and each table's columns (kind, position, type), as Cassandra lists them.
pub fn virtual_schema(db: &Database, table: &str) -> Option<Content> {
    let text = || CqlType::Text;
    Some(match table {
        "keyspaces" => Content {
            columns: vec![("keyspace_name", text())],
            rows: vec![vec![s("system_views")], vec![s("system_virtual_schema")]],
        },
        "tables" => Content {
            columns: vec![
                ("keyspace_name", text()),
                ("table_name", text()),
                ("comment", text()),
            ],
            rows: VIEWS
                .iter()
                .map(|(t, _, _, c)| vec![s("system_views"), s(*t), s(*c)])
                .collect(),
        },
        "columns" => Content {
            columns: super::tables::columns_columns(),
            rows: VIEWS
                .iter()
                .flat_map(|&(t, pk, ck, _)| {
                    let columns = content(db, &Node::default(), t)
                        .map(|c| c.columns)
                        .unwrap_or_default();
                    columns.into_iter().enumerate().map(move |(i, (name, ty))| {
                        let (kind, position, order) = if i < pk {
                            ("partition_key", i as i64, "none")
                        } else if i < pk + ck {
                            ("clustering", (i - pk) as i64, "asc")
                        } else {
                            ("regular", -1, "none")
                        };
                        let hex = supercolumn::model::comparator::builtin::to_hex(name.as_bytes());
                        vec![
                            s("system_views"),
                            s(t),
                            s(name),
                            s(order),
                            Literal::Hex(hex),
                            s(kind),
                            n(position),
                            s(ty.to_string()),
                        ]
                    })
                })
                .collect(),
        },
        _ => return None,
    })
}
