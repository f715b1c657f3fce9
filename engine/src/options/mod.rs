//! Database options and their documented defaults (SPEC §6), from code or `storage-conf.xml`.
//!
//! Options are read at open; nothing here acts on them. The database-wide ones are kept with
//! the schema (`stored.rs`), so a database reopened without its configuration keeps them.

pub mod storage_conf;
mod stored;

pub use storage_conf::StorageConf;
pub use stored::NAMES as STORED_SETTINGS;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::io::{FileSystem, RealFs};
use crate::model::comparator::ComparatorRegistry;
use crate::model::partitioner::Partitioner;
use crate::schema::KeyspaceDef;

/// When the commit log is fsynced.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum CommitLogSync {
    /// A write returns before its fsync; the log is fsynced every `period_ms`.
    Periodic {
        /// `CommitLogSyncPeriodInMS` (default 10000).
        period_ms: u64,
    },
    /// A write returns only after an fsync that covers it; concurrent writers share one fsync
    /// within `window_ms`.
    Batch {
        /// `CommitLogSyncBatchWindowInMS` (default 1).
        window_ms: f64,
    },
}

impl Default for CommitLogSync {
    fn default() -> Self {
        CommitLogSync::Periodic { period_ms: 10_000 }
    }
}

/// Everything a database is opened with. `Options::default()` gives SPEC §6's defaults.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// `<Partitioner>`: `None` keeps the stored one (RandomPartitioner for a new database). It is
    /// fixed when the database is created; asking for another one later is refused.
    pub partitioner: Option<Partitioner>,
    /// `<CommitLogDirectory>`; `None`: `commit-log/` inside the data directory.
    pub commit_log_directory: Option<PathBuf>,
    /// `<DataFileDirectories>`; used when `Database::open` is not given a directory.
    pub data_file_directories: Vec<PathBuf>,
    /// `<CommitLogSegmentSizeInMB>` (default 32).
    pub commit_log_segment_size_mb: u32,
    /// `<CommitLogSync>` and its period or window.
    pub commit_log_sync: CommitLogSync,
    /// `<MemtableThroughputInMB>` (default 64), per column family.
    pub memtable_throughput_mb: u32,
    /// `<MemtableTotalSpaceInMB>` (default 256), all memtables together.
    pub memtable_total_space_mb: u32,
    /// `<MemtableOperationsInMillions>` (default 0.3) (millions = 10^6 column writes).
    pub memtable_operations_millions: f64,
    /// `<MemtableFlushAfterMinutes>` (default 60).
    pub memtable_flush_after_minutes: u32,
    /// `<BloomFilterFpChance>` (default 0.01).
    pub bloom_filter_fp_chance: f64,
    /// `<BlockCacheSizeInMB>` (default 32).
    pub block_cache_size_mb: u32,
    /// `<ColumnIndexSizeInKB>`: the SSTable block size; `None` for the engine's measured default.
    pub column_index_size_kb: Option<u32>,
    /// `<GCGraceSeconds>` (default 864000); a column family may override it.
    pub gc_grace_seconds: u32,
    /// `<MinimumCompactionThreshold>` (default 4); a column family may override it.
    pub min_compaction_threshold: u32,
    /// `<MaximumCompactionThreshold>` (default 32); a column family may override it.
    pub max_compaction_threshold: u32,
    /// The schema to open with. `None`: the stored schema, or for a new database the embedded
    /// default (the seeds' `Keyspace1`). Keyspaces and column families given here that the stored
    /// schema lacks are added; ones that conflict with it make `open` fail.
    pub keyspaces: Option<Vec<KeyspaceDef>>,
    /// Where "now" comes from.
    pub clock: Arc<dyn Clock>,
    /// Comparator class names known to this database (built-ins plus any user types).
    pub comparators: ComparatorRegistry,
    /// Where durable effects go: the real file system, or a test one that can lose power.
    pub file_system: Arc<dyn FileSystem>,
    /// Open a database whose commit log is damaged or has gaps anyway, skipping what is lost
    /// (Cassandra's `commitlog_ignore_replay_errors`); each problem is logged and listed by
    /// [`Database::replay_report`](crate::Database::replay_report). Off by default: without
    /// it such a database is refused with an error naming the file and offset.
    pub commit_log_ignore_replay_errors: bool,
    /// Whether opening a directory that holds no database creates one there (RocksDB's
    /// `create_if_missing`). On by default; a tool that only reads a database turns it off, so a
    /// mistyped path is refused ([`Error::NoDatabase`](crate::Error::NoDatabase)) instead of
    /// becoming an empty database. A folder holding the engine's files but not its catalog is
    /// refused either way.
    pub create_if_missing: bool,
    /// Under glibc, fix malloc's mmap threshold at 128 KiB when the database opens (for the
    /// whole process), so the large buffers flushes and compactions free go back to the
    /// system: a 10,000,000-row load peaked at 285 MiB instead of 367. `false` leaves malloc
    /// as the program set it.
    pub tune_malloc: bool,
    /// The stored settings a configuration file named (see [`stored`]).
    pub(crate) given: BTreeSet<&'static str>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            partitioner: None,
            commit_log_directory: None,
            data_file_directories: Vec::new(),
            commit_log_segment_size_mb: 32,
            commit_log_sync: CommitLogSync::default(),
            memtable_throughput_mb: 64,
            memtable_total_space_mb: 256,
            memtable_operations_millions: 0.3,
            memtable_flush_after_minutes: 60,
            bloom_filter_fp_chance: 0.01,
            block_cache_size_mb: 32,
            column_index_size_kb: None,
            gc_grace_seconds: 864_000,
            min_compaction_threshold: 4,
            max_compaction_threshold: 32,
            keyspaces: None,
            clock: Arc::new(SystemClock),
            comparators: ComparatorRegistry::default(),
            file_system: Arc::new(RealFs),
            commit_log_ignore_replay_errors: false,
            create_if_missing: true,
            tune_malloc: true,
            given: BTreeSet::new(),
        }
    }
}

impl Options {
    /// Sets the clock (tests use [`ManualClock`](crate::ManualClock)).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Sets the partitioner.
    pub fn with_partitioner(mut self, partitioner: Partitioner) -> Self {
        self.partitioner = Some(partitioner);
        self
    }

    /// Sets the schema to open with.
    pub fn with_keyspaces(mut self, keyspaces: Vec<KeyspaceDef>) -> Self {
        self.keyspaces = Some(keyspaces);
        self
    }
}
