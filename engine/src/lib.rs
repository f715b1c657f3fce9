//! supercolumn: an embedded storage engine implementing the Apache Cassandra 0.6/0.7 data model.
//!
//! A [`Database`] (one data directory) holds keyspaces; a keyspace holds column families,
//! Standard or Super; a row (a key) holds columns sorted by the column family's comparator; a
//! column is a name, a value and a timestamp, and writes reconcile by timestamp.
//!
//! ```
//! use supercolumn::{ColumnParent, ColumnPath, Database, Options, SlicePredicate, SliceRange, WriteOptions};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! // A new database gets the seeds' Keyspace1 (Standard1, Standard2, StandardByUUID1, Super1).
//! let db = Database::open(dir.path(), Options::default())?;
//!
//! let first = ColumnPath::new("Standard2").column("first");
//! db.insert("Keyspace1", "jsmith", &first, "John", WriteOptions::at(1))?;
//! db.insert("Keyspace1", "jsmith", &ColumnPath::new("Standard2").column("last"), "Smith", WriteOptions::at(1))?;
//!
//! // The last column of the row: an empty start, reversed, count 1.
//! let last = db.get_slice(
//!     "Keyspace1",
//!     "jsmith",
//!     &ColumnParent::new("Standard2"),
//!     &SliceRange::all().reversed().count(1).into(),
//! )?;
//! assert_eq!(last[0].name(), b"last");
//!
//! // A delete with a later timestamp hides the column.
//! db.remove("Keyspace1", "jsmith", &first, Some(2))?;
//! assert!(db.get("Keyspace1", "jsmith", &first)?.is_none());
//! assert_eq!(db.get_count("Keyspace1", "jsmith", &ColumnParent::new("Standard2"), &SlicePredicate::everything())?, 1);
//! # Ok::<(), supercolumn::Error>(())
//! ```
//!
//! The public modules: [`model`] (comparators, partitioners, TimeUUIDs), [`schema`] (keyspace and
//! column family definitions), [`options`] (options, `storage-conf.xml`), [`query`] (what a read
//! asks and returns), [`inspect`] (read-only access to SSTable files, for tools) and [`io`] (the
//! file-system door).
//!
//! # The house
//!
//! ```text
//!  write:  db ─► mutation ─► commitlog ─► memtable ─┐            read:  db ─► store ─► query
//!                (validate)  (append,     (skiplist) │ flush                 (view)   (slice)
//!                            sync, replay)           ▼                          │        ▲
//!                                    store ─► sstable ◄─ compaction             └► merge ┘
//!                                    (manifest) (blocks, index, bloom)   (k-way, reconcile)
//!  below them all: model (cells, comparators, keys) · schema · options · io · codec · error
//! ```
//!
//! - `db/` — the [`Database`] handle: open and recovery, writes, reads, schema changes, flushes,
//!   and the two background workers (flusher, compactor).
//! - `mutation` — what a write may be, validated into the `RowUpdate` the log and memtable take.
//! - `commitlog/` — segments, records, replay (and the proof the log is whole).
//! - `memtable/` — the in-memory rows of one column family.
//! - `sstable/` — immutable files: blocks, index, bloom filter, footer; reading and writing.
//! - `compaction/` — which SSTables to merge (size-tiered) and the merge itself.
//! - `store/` — one column family's live state (memtables + SSTables), its flush, compaction
//!   and reads; the manifest.
//! - `merge/` — the k-way merges every reader, flush and compaction runs on.
//! - `query/` — what a request names (paths, predicates, results) and slice evaluation.
//! - `cache/` — the block cache and the key cache.
//! - `model/`, `schema/`, `options/`, `io/`, `codec`, `error`, `file_names`, `clock`, `stats`.
//!
//! The import rule: a module uses only what lies below it. No stage imports a later one
//! (`memtable`, `sstable` and `compaction` never import `commitlog`, `query` or `store`), and
//! `model`, `io` and `codec` import nothing of the engine above them. `engine/tests/house.rs`
//! holds the table of what each module may use, and fails when an import breaks it.

#![warn(missing_docs)]

mod cache;
pub mod clock;
mod codec;
mod commitlog;
mod compaction;
mod db;
pub mod error;
mod file_names;
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod fuzz;
pub mod inspect;
pub mod io;
mod memtable;
mod merge;
pub mod model;
mod mutation;
pub mod options;
pub mod query;
pub mod schema;
mod sstable;
pub mod stats;
mod store;
pub mod trace;

pub use clock::{Clock, ManualClock, SystemClock};
pub use db::{ColumnFamilyHandle, Database, Increment, IndexEntry, SnapshotInfo, DEFAULT_DATA_DIR};
pub use error::{ConfError, CorruptKind, Error, FormatError, NameKind, Place, Result};
#[doc(hidden)]
pub use memtable::standalone::StandaloneMemtable;
pub use model::comparator;
pub use model::partitioner::{Partitioner, Token};
pub use model::timeuuid::TimeUuidGenerator;
pub use mutation::{
    BatchMutation, Mutation, MutationRef, SortedMark, SortedName, WriteOptions, MAX_KEY_LEN,
    MAX_NAME_LEN, MAX_VALUE_LEN,
};
pub use options::{CommitLogSync, Options, StorageConf};
pub use query::{
    AsColumnPath, Column, ColumnOrSuperColumn, ColumnParent, ColumnPath, ColumnPathRef,
    IndexClause, IndexExpression, IndexOperator, KeyRange, KeySlice, RangeBound, SlicePredicate,
    SliceRange, SuperColumn,
};
/// The README's examples, compiled and run as doc-tests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use schema::{ColumnFamilyDef, ColumnType, KeysCached, KeyspaceDef};
pub use stats::{ColumnFamilyStats, CompactionTask, LatencySummary, ThreadPoolStats};
