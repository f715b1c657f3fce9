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
//! column family definitions, storage-conf.xml), [`query`] (what a read asks and returns),
//! [`options`], [`io`] (the file-system door, with a power-loss simulator for tests) and [`fuzz`]
//! (the bodies of the fuzz targets). Inside, data flows one way: `mutation` → `commitlog` →
//! `memtable` → `store`, and reads merge back through `query`.

#![warn(missing_docs)]

mod cache;
pub mod clock;
mod codec;
mod commitlog;
mod compaction;
mod db;
pub mod error;
mod file_names;
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

pub use clock::{Clock, ManualClock, SystemClock};
pub use db::{Database, DEFAULT_DATA_DIR};
pub use error::{ConfError, CorruptKind, Error, FormatError, NameKind, Place, Result};
pub use model::comparator;
pub use model::partitioner::{Partitioner, Token};
pub use model::timeuuid::TimeUuidGenerator;
pub use mutation::{
    BatchMutation, Mutation, WriteOptions, MAX_KEY_LEN, MAX_NAME_LEN, MAX_VALUE_LEN,
};
pub use options::{CommitLogSync, Options, StorageConf};
pub use query::{
    Column, ColumnOrSuperColumn, ColumnParent, ColumnPath, KeyRange, KeySlice, RangeBound,
    SlicePredicate, SliceRange, SuperColumn,
};
/// The README's examples, compiled and run as doc-tests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use schema::{ColumnFamilyDef, ColumnType, KeysCached, KeyspaceDef};
pub use stats::{ColumnFamilyStats, LatencySummary};
