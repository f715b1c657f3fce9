//! The system tables drivers read when they connect, built from the catalog on each read:
//! `system.local` (one node owning the whole ring), `system.peers` and `peers_v2` (empty), and
//! `system_schema.*` describing every CQL table (the other schema tables exist, empty). Each
//! table is its columns and its rows as literals; `mod.rs` filters and projects them.
//!
//! Long because it holds the content of every system table, one short function each.

use crate::table::{ColumnDef, Kind, Table};
use crate::types::{CqlType, Literal};
use crate::user_types::UserTypes;
use md5::{Digest, Md5};
use supercolumn::Database;

/// One system table's content.
pub struct Content {
    /// Columns, in Cassandra's order (alphabetical after the key, as `SELECT *` returns them).
    pub columns: Vec<(&'static str, CqlType)>,
    /// Rows, a literal per column.
    pub rows: Vec<Vec<Literal>>,
}

/// What a node says about itself beyond the catalog.
#[derive(Debug, Clone)]
pub struct Node {
    /// The address clients reach the server at.
    pub address: String,
    /// The port.
    pub port: u16,
    /// The server's clients and pools; none for an embedded session.
    pub server: Option<std::sync::Arc<dyn super::server::ServerState>>,
}

impl Default for Node {
    /// An embedded session's node: the loopback address and CQL's port.
    fn default() -> Self {
        Node {
            address: "127.0.0.1".into(),
            port: 9042,
            server: None,
        }
    }
}

fn text() -> CqlType {
    CqlType::Text
}
fn map_text() -> CqlType {
    CqlType::Map(Box::new(CqlType::Text), Box::new(CqlType::Text))
}
fn set_text() -> CqlType {
    CqlType::Set(Box::new(CqlType::Text))
}
fn list_text() -> CqlType {
    CqlType::List(Box::new(CqlType::Text))
}
fn s(v: impl Into<String>) -> Literal {
    Literal::Str(v.into())
}
fn n(v: impl ToString) -> Literal {
    Literal::Number(v.to_string())
}
fn map(pairs: &[(&str, &str)]) -> Literal {
    Literal::Map(pairs.iter().map(|(k, v)| (s(*k), s(*v))).collect())
}

/// A UUID derived from `seed` (stable across runs: a host id, a table id, a schema version).
pub fn uuid_of(seed: &[u8]) -> String {
    let d = Md5::digest(seed);
    let mut b = [0u8; 16];
    b.copy_from_slice(&d);
    b[6] = (b[6] & 0x0f) | 0x30;
    b[8] = (b[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(b).to_string()
}

/// The tables of every keyspace: CQL tables, and Thrift-era column families as Cassandra shows
/// them (`thrift.rs`).
pub fn cql_tables(db: &Database) -> Vec<Table> {
    let mut out = Vec::new();
    for ks in db.keyspaces() {
        let Ok(def) = db.describe_keyspace(&ks) else {
            continue;
        };
        let types = UserTypes::of(&def).unwrap_or_else(|_| UserTypes::none(&ks));
        for cf in &def.column_families {
            if let Ok(Some(t)) = Table::from_cf(&ks, cf, &types) {
                out.push(t);
            } else if let Some(c) = crate::compact::Compact::of(&ks, cf) {
                out.push(c.table);
            }
        }
    }
    out
}

/// The schema version: changes whenever a keyspace or table does.
pub fn schema_version(db: &Database) -> String {
    let mut seed = Vec::new();
    for ks in db.keyspaces() {
        seed.extend_from_slice(ks.as_bytes());
        seed.push(0);
        if let Ok(def) = db.describe_keyspace(&ks) {
            for cf in &def.column_families {
                seed.extend_from_slice(cf.name.as_bytes());
                seed.push(1);
                if let Some(t) = &cf.cql_table {
                    seed.extend_from_slice(t.as_bytes());
                }
            }
        }
    }
    uuid_of(&seed)
}

/// The replication map a keyspace shows (a Thrift-era strategy under its Cassandra 1.x+ name).
fn replication(db: &Database, ks: &str) -> Literal {
    let def = db.describe_keyspace(ks).ok();
    let class = def
        .as_ref()
        .map(|d| {
            d.replica_placement_strategy
                .rsplit('.')
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default();
    let class = match class.as_str() {
        "NetworkTopologyStrategy" => "org.apache.cassandra.locator.NetworkTopologyStrategy",
        _ => "org.apache.cassandra.locator.SimpleStrategy",
    };
    let rf = def.map_or(1, |d| d.replication_factor).to_string();
    map(&[("class", class), ("replication_factor", &rf)])
}

/// The content of `keyspace.table`, if it is a system table this server knows.
pub fn content(db: &Database, node: &Node, keyspace: &str, table: &str) -> Option<Content> {
    content_with(db, node, keyspace, table, true)
}

/// The system tables themselves, as tables (`system_schema` lists them, so cqlsh finds
/// `system.local`), with their keys: (keyspace, table, partition key columns, clustering ones).
const SYSTEM_TABLES: &[(&str, &str, usize, usize)] = &[
    ("system", "local", 1, 0),
    ("system", "peers", 1, 0),
    ("system", "peers_v2", 2, 0),
    ("system_schema", "keyspaces", 1, 0),
    ("system_schema", "tables", 1, 1),
    ("system_schema", "columns", 1, 2),
    ("system_schema", "types", 1, 1),
    ("system_schema", "functions", 1, 2),
    ("system_schema", "aggregates", 1, 2),
    ("system_schema", "indexes", 1, 2),
    ("system_schema", "triggers", 1, 2),
    ("system_schema", "views", 1, 1),
    ("system_traces", "sessions", 1, 0),
    ("system_traces", "events", 1, 1),
];

fn system_tables(db: &Database) -> Vec<Table> {
    let node = Node {
        address: "127.0.0.1".into(),
        port: 0,
        server: None,
    };
    SYSTEM_TABLES
        .iter()
        .filter_map(|&(ks, name, pk, ck)| {
            let c = content_with(db, &node, ks, name, false)?;
            let columns = c
                .columns
                .into_iter()
                .enumerate()
                .map(|(i, (n, ty))| ColumnDef {
                    name: n.to_string(),
                    ty,
                    kind: if i < pk {
                        Kind::PartitionKey(i)
                    } else if i < pk + ck {
                        Kind::Clustering(i - pk)
                    } else {
                        Kind::Regular
                    },
                    is_static: false,
                    dropped_at: None,
                })
                .collect();
            Some(Table {
                keyspace: ks.to_string(),
                name: name.to_string(),
                columns,
                partition_key: (0..pk).collect(),
                clustering: (pk..pk + ck).collect(),
                descending: vec![false; ck],
                options: Default::default(),
                dropped: Vec::new(),
                indexes: Vec::new(),
            })
        })
        .collect()
}

/// `content`, with the rows of `system_schema.tables` and `.columns` left out when `!rows`
/// (what `system_tables` asks, as those rows list the system tables themselves).
// Long because it is one match with an arm per system table.
fn content_with(
    db: &Database,
    node: &Node,
    keyspace: &str,
    table: &str,
    rows: bool,
) -> Option<Content> {
    Some(match (keyspace, table) {
        ("system", "local") => local(db, node),
        ("system", "peers") => Content {
            columns: vec![
                ("peer", CqlType::Inet),
                ("data_center", text()),
                ("host_id", CqlType::Uuid),
                ("preferred_ip", CqlType::Inet),
                ("rack", text()),
                ("release_version", text()),
                ("rpc_address", CqlType::Inet),
                ("schema_version", CqlType::Uuid),
                ("tokens", set_text()),
            ],
            rows: Vec::new(),
        },
        ("system", "peers_v2") => Content {
            columns: vec![
                ("peer", CqlType::Inet),
                ("peer_port", CqlType::Int),
                ("data_center", text()),
                ("host_id", CqlType::Uuid),
                ("native_address", CqlType::Inet),
                ("native_port", CqlType::Int),
                ("preferred_ip", CqlType::Inet),
                ("preferred_port", CqlType::Int),
                ("rack", text()),
                ("release_version", text()),
                ("schema_version", CqlType::Uuid),
                ("tokens", set_text()),
            ],
            rows: Vec::new(),
        },
        ("system_schema", "keyspaces") => Content {
            columns: vec![
                ("keyspace_name", text()),
                ("durable_writes", CqlType::Boolean),
                ("replication", map_text()),
            ],
            rows: db
                .keyspaces()
                .into_iter()
                .map(|ks| {
                    let r = replication(db, &ks);
                    let durable = db.describe_keyspace(&ks).map_or(true, |d| d.durable_writes);
                    vec![s(ks), Literal::Bool(durable), r]
                })
                .chain(["system", "system_schema"].map(|ks| {
                    let local = map(&[("class", "org.apache.cassandra.locator.LocalStrategy")]);
                    vec![s(ks), Literal::Bool(true), local]
                }))
                .collect(),
        },
        ("system_schema", "tables") if rows => tables(db),
        ("system_schema", "tables") => Content {
            columns: table_columns(),
            rows: Vec::new(),
        },
        ("system_views", t) => return super::views::content(db, node, t),
        ("system_traces", t) => return super::traces::content(db, node, t),
        ("system_virtual_schema", t) => return super::views::virtual_schema(db, t),
        ("system_schema", "columns") => {
            let rows = if rows { columns_rows(db) } else { Vec::new() };
            Content {
                columns: columns_columns(),
                rows,
            }
        }
        ("system_schema", "types") => Content {
            columns: vec![
                ("keyspace_name", text()),
                ("type_name", text()),
                ("field_names", list_text()),
                ("field_types", list_text()),
            ],
            rows: type_rows(db),
        },
        ("system_schema", "functions") => empty(&[
            ("keyspace_name", text()),
            ("function_name", text()),
            ("argument_types", list_text()),
            ("argument_names", list_text()),
            ("body", text()),
            ("called_on_null_input", CqlType::Boolean),
            ("language", text()),
            ("return_type", text()),
        ]),
        ("system_schema", "aggregates") => empty(&[
            ("keyspace_name", text()),
            ("aggregate_name", text()),
            ("argument_types", list_text()),
            ("final_func", text()),
            ("initcond", text()),
            ("return_type", text()),
            ("state_func", text()),
            ("state_type", text()),
        ]),
        ("system_schema", "indexes") => Content {
            columns: vec![
                ("keyspace_name", text()),
                ("table_name", text()),
                ("index_name", text()),
                ("kind", text()),
                ("options", map_text()),
            ],
            rows: index_rows(db),
        },
        ("system_schema", "triggers") => empty(&[
            ("keyspace_name", text()),
            ("table_name", text()),
            ("trigger_name", text()),
            ("options", map_text()),
        ]),
        ("system_schema", "views") => empty(&[
            ("keyspace_name", text()),
            ("view_name", text()),
            ("base_table_id", CqlType::Uuid),
            ("base_table_name", text()),
            ("include_all_columns", CqlType::Boolean),
            ("where_clause", text()),
        ]),
        _ => return None,
    })
}

/// The columns of `system_schema.columns` (and `system_virtual_schema.columns`).
pub fn columns_columns() -> Vec<(&'static str, CqlType)> {
    vec![
        ("keyspace_name", text()),
        ("table_name", text()),
        ("column_name", text()),
        ("clustering_order", text()),
        ("column_name_bytes", CqlType::Blob),
        ("kind", text()),
        ("position", CqlType::Int),
        ("type", text()),
    ]
}

fn empty(columns: &[(&'static str, CqlType)]) -> Content {
    Content {
        columns: columns.to_vec(),
        rows: Vec::new(),
    }
}

fn local(db: &Database, node: &Node) -> Content {
    let partitioner = format!("org.apache.cassandra.dht.{}", db.partitioner().class_name());
    let host_id = uuid_of(db.path().to_string_lossy().as_bytes());
    Content {
        columns: vec![
            ("key", text()),
            ("bootstrapped", text()),
            ("broadcast_address", CqlType::Inet),
            ("broadcast_port", CqlType::Int),
            ("cluster_name", text()),
            ("cql_version", text()),
            ("data_center", text()),
            ("gossip_generation", CqlType::Int),
            ("host_id", CqlType::Uuid),
            ("listen_address", CqlType::Inet),
            ("listen_port", CqlType::Int),
            ("native_protocol_version", text()),
            ("partitioner", text()),
            ("rack", text()),
            ("release_version", text()),
            ("rpc_address", CqlType::Inet),
            ("rpc_port", CqlType::Int),
            ("schema_version", CqlType::Uuid),
            ("tokens", set_text()),
        ],
        rows: vec![vec![
            s("local"),
            s("COMPLETED"),
            s(&node.address),
            n(7000),
            s("supercolumn"),
            s(super::CQL_VERSION),
            s("datacenter1"),
            n(1),
            Literal::Uuid(host_id),
            s(&node.address),
            n(7000),
            s("4"),
            s(partitioner),
            s("rack1"),
            s(super::RELEASE_VERSION),
            s(&node.address),
            n(node.port),
            Literal::Uuid(schema_version(db)),
            Literal::Set(vec![s("0")]),
        ]],
    }
}

fn table_columns() -> Vec<(&'static str, CqlType)> {
    vec![
        ("keyspace_name", text()),
        ("table_name", text()),
        ("bloom_filter_fp_chance", CqlType::Double),
        ("caching", map_text()),
        ("cdc", CqlType::Boolean),
        ("comment", text()),
        ("compaction", map_text()),
        ("compression", map_text()),
        ("crc_check_chance", CqlType::Double),
        ("dclocal_read_repair_chance", CqlType::Double),
        ("default_time_to_live", CqlType::Int),
        (
            "extensions",
            CqlType::Map(Box::new(text()), Box::new(CqlType::Blob)),
        ),
        ("flags", set_text()),
        ("gc_grace_seconds", CqlType::Int),
        ("id", CqlType::Uuid),
        ("max_index_interval", CqlType::Int),
        ("memtable_flush_period_in_ms", CqlType::Int),
        ("min_index_interval", CqlType::Int),
        ("read_repair_chance", CqlType::Double),
        ("speculative_retry", text()),
    ]
}

fn tables(db: &Database) -> Content {
    let columns = table_columns();
    let rows = cql_tables(db)
        .into_iter()
        .chain(system_tables(db))
        .map(|t| {
            let id = uuid_of(format!("{}.{}", t.keyspace, t.name).as_bytes());
            // What the table sets, else Cassandra's defaults.
            let o = &t.options;
            vec![
                s(&t.keyspace),
                s(&t.name),
                o.shown_number("bloom_filter_fp_chance", "0.01"),
                o.shown_map(
                    "caching",
                    &[("keys", "ALL"), ("rows_per_partition", "NONE")],
                ),
                Literal::Bool(matches!(o.tuning("cdc"), Some(Literal::Bool(true)))),
                s(t.options.comment.as_deref().unwrap_or("")),
                o.shown_map(
                    "compaction",
                    &[
                        (
                            "class",
                            "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy",
                        ),
                        ("max_threshold", "32"),
                        ("min_threshold", "4"),
                    ],
                ),
                o.shown_map(
                    "compression",
                    &[
                        ("chunk_length_in_kb", "16"),
                        ("class", "org.apache.cassandra.io.compress.LZ4Compressor"),
                    ],
                ),
                o.shown_number("crc_check_chance", "1.0"),
                o.shown_number("dclocal_read_repair_chance", "0.0"),
                n(t.options.default_ttl),
                Literal::Map(Vec::new()),
                Literal::Set(vec![s("compound")]),
                n(t.options
                    .gc_grace_seconds
                    .unwrap_or(db.options().gc_grace_seconds)),
                Literal::Uuid(id),
                o.shown_number("max_index_interval", "2048"),
                o.shown_number("memtable_flush_period_in_ms", "0"),
                o.shown_number("min_index_interval", "128"),
                o.shown_number("read_repair_chance", "0.0"),
                o.shown_text("speculative_retry", "99p"),
            ]
        })
        .collect();
    Content { columns, rows }
}

/// `system_schema.indexes`: each index's kind and its options (a custom one's class first).
fn index_rows(db: &Database) -> Vec<Vec<Literal>> {
    let mut rows = Vec::new();
    for t in cql_tables(db) {
        let mut indexes: Vec<_> = t.indexes.iter().collect();
        indexes.sort_by(|a, b| a.name.cmp(&b.name));
        for i in indexes {
            let target = i.target(&t);
            let (kind, options) = match &i.class {
                Some(_) => (
                    "CUSTOM",
                    map(&[("class_name", crate::table::SAI_CLASS), ("target", &target)]),
                ),
                None => ("COMPOSITES", map(&[("target", &target)])),
            };
            rows.push(vec![
                s(&t.keyspace),
                s(&t.name),
                s(&i.name),
                s(kind),
                options,
            ]);
        }
    }
    rows
}

/// Each keyspace's user types, by name (the table's clustering order), their fields' types as
/// Cassandra writes them (`frozen<address>`).
fn type_rows(db: &Database) -> Vec<Vec<Literal>> {
    let mut rows = Vec::new();
    for ks in db.keyspaces() {
        let Ok(def) = db.describe_keyspace(&ks) else {
            continue;
        };
        let Ok(types) = UserTypes::of(&def) else {
            continue;
        };
        let mut list: Vec<_> = types.list().iter().collect();
        list.sort_by(|a, b| a.name.cmp(&b.name));
        for t in list {
            rows.push(vec![
                s(&ks),
                s(&t.name),
                Literal::List(t.fields.iter().map(|(n, _)| s(n)).collect()),
                Literal::List(t.fields.iter().map(|(_, ty)| s(ty.to_string())).collect()),
            ]);
        }
    }
    rows
}

fn columns_rows(db: &Database) -> Vec<Vec<Literal>> {
    let mut rows = Vec::new();
    for t in cql_tables(db).into_iter().chain(system_tables(db)) {
        for c in &t.columns {
            let (kind, position, order) = match c.kind {
                Kind::PartitionKey(i) => ("partition_key", i as i64, "none"),
                Kind::Clustering(i) => (
                    "clustering",
                    i as i64,
                    if t.descending.get(i).copied().unwrap_or(false) {
                        "desc"
                    } else {
                        "asc"
                    },
                ),
                Kind::Regular if c.is_static => ("static", -1, "none"),
                Kind::Regular => ("regular", -1, "none"),
            };
            let hex = hex::encode(&c.name);
            rows.push(vec![
                s(&t.keyspace),
                s(&t.name),
                s(&c.name),
                s(order),
                Literal::Hex(hex),
                s(kind),
                n(position),
                s(c.ty.to_string()),
            ]);
        }
    }
    rows
}
