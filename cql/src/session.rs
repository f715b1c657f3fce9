//! The CQL session: what one client's statements run against (the database, the keyspace in
//! use, the values bound to the statement executing, the page asked for), and what a
//! statement returns. Every module that runs statements extends [`Session`] from here, below
//! the crate's public methods (`lib.rs`), which call them; nothing here calls back up.

use std::cell::{OnceCell, RefCell};
use std::sync::Arc;

use supercolumn::model::timeuuid::TimeUuidGenerator;
use supercolumn::{Database, Increment};

use super::functions::Context;
use super::page::{PageRequest, Position};
use super::rows::Rows;
use super::system::Node;
use super::table::Table;

/// What a statement returns.
#[derive(Debug, Clone, PartialEq)]
pub enum CqlResult {
    /// Nothing (a write, or a schema statement that changed nothing).
    Void,
    /// Rows of a `SELECT`.
    Rows(Rows),
    /// `USE` switched to this keyspace.
    SetKeyspace(String),
    /// A schema change, described (`CREATED TABLE ks.t`).
    SchemaChange(String),
}

/// A CQL session on a database: the keyspace in use, and the values bound to the statement
/// being executed.
pub struct Session<'db> {
    pub(crate) db: &'db Database,
    pub(crate) keyspace: Option<String>,
    /// Serialized values of the executing statement's `?` markers (`None`: null).
    pub(crate) binds: Vec<Option<Vec<u8>>>,
    /// The table a prepared statement was resolved against, while it executes.
    pub(crate) pinned: Option<(Arc<Table>, u64)>,
    /// The timestamp of writes that give none (a driver's client-side timestamp).
    pub(crate) default_timestamp: Option<i64>,
    pub(crate) uuids: OnceCell<TimeUuidGenerator>,
    /// The page the next `SELECT` returns (`None`: all its rows).
    pub(crate) page: Option<PageRequest>,
    /// Where the last paged `SELECT` ended, when more rows may follow.
    pub(crate) page_end: Option<Position>,
    /// This node, as the system tables show it.
    pub(crate) node: Node,
    /// The counter increments of the statement or batch being built, applied with it.
    pub(crate) counter_writes: RefCell<Vec<Increment>>,
}

impl<'db> Session<'db> {
    /// A session with no keyspace in use.
    pub fn new(db: &'db Database) -> Self {
        Session {
            db,
            keyspace: None,
            binds: Vec::new(),
            pinned: None,
            default_timestamp: None,
            uuids: OnceCell::new(),
            page: None,
            page_end: None,
            node: Node::default(),
            counter_writes: RefCell::new(Vec::new()),
        }
    }
    /// A fresh version-1 UUID for `now()`.
    /// A TimeUUID for the moment `unix_micros` (not unique: a list's prepends name elements by
    /// distinct moments).
    pub(crate) fn timeuuid_at(&self, unix_micros: i64) -> [u8; 16] {
        *self
            .uuids
            .get_or_init(TimeUuidGenerator::for_process)
            .at(unix_micros)
            .as_bytes()
    }

    /// What the native functions a statement calls read: now, this session's TimeUUIDs, the
    /// partitioner.
    pub(crate) fn functions(&self) -> Context<'_> {
        Context {
            now_micros: wall_clock_micros(),
            uuids: self.uuids.get_or_init(TimeUuidGenerator::for_process),
            partitioner: self.db.partitioner(),
            binds: &self.binds,
        }
    }

    pub(crate) fn fresh_timeuuid(&self) -> [u8; 16] {
        let micros = wall_clock_micros();
        *self
            .uuids
            .get_or_init(TimeUuidGenerator::for_process)
            .next(micros)
            .as_bytes()
    }
}

/// Microseconds since the Unix epoch by the system clock: what a list's TimeUUIDs order by.
pub(crate) fn wall_clock_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}
