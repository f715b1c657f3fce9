//! The engines `stress` drives, behind one small trait: supercolumn itself and, with the cargo
//! feature `peers`, RocksDB and fjall. Each adapter maps the workload's cells — (row key, column
//! name, value) — onto its engine the way a fair user would; this module owns that mapping and
//! nothing about phases or reports.

/// `flush`, `compact` and `tables` of an adapter whose `self.db` is a database holding the CQL
/// tables `point` and `wide` (the `cql`, `cells` and `server` engines alike).
macro_rules! cql_tables_maintenance {
    () => {
        fn flush(&self) -> anyhow::Result<()> {
            Ok(self.db.flush_all()?)
        }

        fn compact(&self) -> anyhow::Result<()> {
            super::supercolumn_cql::compact_tables(&self.db)
        }

        fn tables(&self) -> usize {
            super::supercolumn_cql::table_count(&self.db)
        }
    };
}

mod supercolumn;
mod supercolumn_cells;
mod supercolumn_cql;
#[cfg(feature = "server")]
mod supercolumn_server;

#[cfg(feature = "peers")]
mod fjall;
#[cfg(feature = "peers")]
mod rocksdb;

use std::path::Path;

use anyhow::bail;

/// How writes reach disk, matched across engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Write-ahead log on, no fsync per write (Cassandra's periodic commit log).
    Periodic,
    /// An fsync before a write is acknowledged (Cassandra's batch commit log).
    Batch,
}

impl Durability {
    /// Parses `periodic` or `batch`.
    pub fn parse(text: &str) -> anyhow::Result<Durability> {
        match text {
            "periodic" => Ok(Durability::Periodic),
            "batch" => Ok(Durability::Batch),
            other => bail!("--sync is periodic or batch, not '{other}'"),
        }
    }
}

/// What every engine is given alike.
#[derive(Clone, Copy, Debug)]
pub struct EngineConfig {
    /// Write durability.
    pub durability: Durability,
    /// Block cache budget, the same for every engine.
    pub block_cache_bytes: u64,
    /// Budget of all memtables together (supercolumn's `MemtableTotalSpaceInMB`, RocksDB's
    /// `db_write_buffer_size`; fjall keeps its default); `None` leaves each engine's default.
    pub memtable_bytes: Option<u64>,
    /// supercolumn's rows in key order (OrderPreservingPartitioner) instead of token order. The
    /// peers store rows in key order always.
    pub order_preserving: bool,
    /// `--engine cql`: a secondary index on the point table's value column, so every point
    /// write also writes an index entry (`--cql-index`).
    pub index_values: bool,
    /// supercolumn: render its Prometheus metrics every this many milliseconds while it runs
    /// (`--scrape-ms`).
    pub scrape_ms: Option<u64>,
}

/// The engines `stress` knows, in the order it prints them.
pub const ENGINES: [&str; 6] = ["supercolumn", "rocksdb", "fjall", "cql", "cells", "server"];

/// One engine under test. Point rows hold one column; wide rows hold many, sorted by name.
pub trait Engine: Send + Sync {
    /// Writes one column.
    fn put(&self, row: &[u8], column: &[u8], value: &[u8]) -> anyhow::Result<()>;
    /// Writes columns of one wide row in one atomic batch.
    fn put_wide(&self, row: &[u8], cells: &[([u8; 8], Vec<u8>)]) -> anyhow::Result<()>;
    /// Whether the column is there.
    fn get(&self, row: &[u8], column: &[u8]) -> anyhow::Result<bool>;
    /// Reads the first (or, reversed, the last) `count` columns of a wide row; returns how many.
    fn slice(&self, row: &[u8], count: usize, reversed: bool) -> anyhow::Result<usize>;
    /// Reads `rows` point rows onward from `start`; returns how many cells it saw.
    fn scan(&self, start: &[u8], rows: usize) -> anyhow::Result<usize>;
    /// Flushes memtables to tables on disk.
    fn flush(&self) -> anyhow::Result<()>;
    /// Compacts everything into as few tables as the engine makes, and waits.
    fn compact(&self) -> anyhow::Result<()>;
    /// Tables (SSTables) on disk now.
    fn tables(&self) -> usize;
    /// Closes cleanly.
    fn close(self: Box<Self>) -> anyhow::Result<()>;
}

/// Opens engine `name` on a fresh directory.
pub fn open(name: &str, dir: &Path, config: EngineConfig) -> anyhow::Result<Box<dyn Engine>> {
    match name {
        "supercolumn" => Ok(Box::new(supercolumn::Supercolumn::open(dir, config)?)),
        "cql" => Ok(Box::new(supercolumn_cql::SupercolumnCql::open(
            dir, config,
        )?)),
        "cells" => Ok(Box::new(supercolumn_cells::SupercolumnCells::open(
            dir, config,
        )?)),
        #[cfg(feature = "server")]
        "server" => Ok(Box::new(supercolumn_server::SupercolumnServer::open(
            dir, config,
        )?)),
        #[cfg(not(feature = "server"))]
        "server" => {
            bail!("engine 'server' needs the driver: cargo run --release --features server --bin stress")
        }
        #[cfg(feature = "peers")]
        "rocksdb" => Ok(Box::new(rocksdb::Rocks::open(dir, config)?)),
        #[cfg(feature = "peers")]
        "fjall" => Ok(Box::new(fjall::Fjall::open(dir, config)?)),
        #[cfg(not(feature = "peers"))]
        "rocksdb" | "fjall" => {
            bail!("engine '{name}' needs the peers: cargo run --release --features peers --bin stress")
        }
        other => bail!("unknown engine '{other}' (known: {})", ENGINES.join(", ")),
    }
}

/// The key a key-value engine stores a column under: row key ++ column name. Every row key of a
/// workload has one length, so no two (row, column) pairs share a key.
#[cfg(feature = "peers")]
fn cell_key(row: &[u8], column: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(row.len() + column.len());
    k.extend_from_slice(row);
    k.extend_from_slice(column);
    k
}
