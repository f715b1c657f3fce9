//! `Database`: the handle every public operation of SPEC §5 enters through.
//!
//! This file holds the handle and what it shares with its background threads ([`Core`]),
//! lookups, statistics and close. Opening is `open.rs` (and recovery from the files it finds,
//! `recovery.rs`); writes are `write.rs` (counters' increments `counter.rs`), reads `read.rs`, schema changes `schema.rs`, flushes
//! and compactions `flush.rs`, and the threads themselves `worker.rs`.

mod counter;
mod flush;
mod index;
mod index_build;
mod index_cleanup;
mod index_purge;
mod index_read;
mod index_write;
mod malloc;
mod open;
mod read;
mod recovery;
mod schema;
mod snapshot;
mod state;
mod worker;
mod write;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use arc_swap::{ArcSwap, Guard};
use parking_lot::Mutex;

use crate::commitlog::CommitLog;
use crate::error::{Error, Result};
use crate::io::dir_lock::DirLock;
use crate::model::partitioner::Partitioner;
use crate::mutation::Now;
use crate::options::Options;
use crate::schema::{ColumnFamilyDef, KeyspaceDef};
use crate::stats::{ColumnFamilyStats, CompactionTask, ThreadPoolStats};
use crate::store::ColumnFamilyStore;
pub use counter::Increment;
use flush::FlushJob;
pub use index_read::IndexEntry;
pub use snapshot::SnapshotInfo;
use state::{SchemaState, StoreEnv};
use worker::Worker;

/// The default data directory when neither `Database::open` nor the configuration names one.
pub const DEFAULT_DATA_DIR: &str = "./supercolumn-data";

/// What the handle shares with its background threads: the commit log, what stores are built
/// with, the lock that orders memtable switches against writes, and the compactor.
#[derive(Debug)]
struct Core {
    commitlog: Arc<CommitLog>,
    /// What stores are built with, `env.switch` among it: writers hold that lock shared from
    /// commit log append to memtable apply; a memtable switch holds it exclusively. Sharded (a
    /// writer locks only its own thread's shard, a switch every shard): as one lock word,
    /// every write of every thread wrote the same cache line.
    env: StoreEnv,
    /// Runs minor compactions of the column families handed to it, one at a time.
    compactor: Worker<Arc<ColumnFamilyStore>>,
}

#[derive(Debug)]
struct Inner {
    root: PathBuf,
    core: Arc<Core>,
    /// Flushes frozen memtables, and memtables idle past `MemtableFlushAfterMinutes`.
    flusher: Worker<FlushJob>,
    options: Options,
    partitioner: Partitioner,
    /// Replaced whole by a schema change; read without a lock.
    schema: ArcSwap<SchemaState>,
    /// Serializes schema changes (and their catalog writes).
    schema_change: Mutex<()>,
    /// What replay at open dropped, when asked to ignore replay errors.
    replay_report: Vec<String>,
    /// The traced requests' sessions (`TRACING ON`).
    traces: crate::trace::TraceStore,
    /// The index builds running in the background.
    builds: index_build::IndexBuilds,
    _lock: DirLock,
}

/// An open database: one data directory holding keyspaces of column families.
///
/// `Database` is cheap to clone (clones share one database) and `Send + Sync`: many threads may
/// read and write at once. The directory is locked while any clone is alive.
#[derive(Debug, Clone)]
pub struct Database {
    inner: Arc<Handle>,
}

/// What a [`Database`] and its clones share: the database's state, and whether they are a
/// caller's handles or an index build's (`index_build.rs`). When the last of a caller's
/// handles goes, the builds stop first, so the database closes on the caller's thread.
#[derive(Debug)]
struct Handle {
    inner: Arc<Inner>,
    caller: bool,
}

impl std::ops::Deref for Handle {
    type Target = Inner;

    #[inline]
    fn deref(&self) -> &Inner {
        &self.inner
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        if self.caller {
            self.inner.builds.stop_all();
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing is quick: queued flushes are skipped and a running compaction stops, because
        // the commit log holds every write not yet in an SSTable and the next open replays it.
        // The flusher feeds the compactor, so it stops first.
        self.core.env.ctx.closing.store(true, Ordering::Relaxed);
        self.flusher.stop();
        self.core.compactor.stop();
        let cfs: Vec<Arc<ColumnFamilyStore>> = self.schema.load().all_cfs().cloned().collect();
        if self.core.commitlog.is_poisoned() {
            // The memtables may hold the only copy of writes since the log's last good fsync:
            // put them in SSTables, and leave the log alone.
            for cf in cfs {
                self.core.freeze(&cf);
                if let Err(e) = cf.flush_frozen() {
                    tracing::error!("flush at close of {} failed: {e}", cf.def().name);
                }
            }
            return;
        }
        // Periodic mode's writes since the last fsync become durable now. An error here cannot
        // be returned ([`Database::close`] returns it).
        if let Err(e) = self.core.commitlog.sync() {
            tracing::error!("syncing the commit log at close failed: {e}");
        }
        // A keyspace with `durable_writes` off has no log to replay: its memtables are the only
        // copy of its unflushed writes, so a clean close flushes them (as Cassandra's drain does);
        // so are a column family's that took such writes before its keyspace was altered.
        let schema = self.schema.load_full();
        for ks in schema.keyspaces.values() {
            let unlogged = ks.cfs.values();
            for cf in unlogged.filter(|cf| !ks.def.durable_writes || cf.holds_unlogged()) {
                if self.core.freeze(cf) || cf.frozen_count() > 0 {
                    if let Err(e) = cf.flush_frozen() {
                        tracing::error!("flush at close of {} failed: {e}", cf.def().name);
                    }
                }
            }
        }
    }
}

/// A column family found once (see [`Database::column_family_handle`]), for the cell-level
/// reads ([`Database::visit_slice`], [`Database::visit_columns`]) of a caller that reads one
/// table many times. It keeps the column family it found: after the table is dropped or
/// altered, compare [`version`](Self::version) with
/// [`Database::column_family_version`] to notice.
#[derive(Debug, Clone)]
pub struct ColumnFamilyHandle(Arc<ColumnFamilyStore>);

impl ColumnFamilyHandle {
    /// The column family's version when it was found: see [`Database::column_family_version`].
    #[inline]
    pub fn version(&self) -> u64 {
        self.0.version()
    }

    /// The column family's definition as it is now (shared, not copied).
    pub fn definition(&self) -> Arc<ColumnFamilyDef> {
        Guard::into_inner(self.0.def())
    }
}

impl Database {
    /// The caller's first handle to a database just opened.
    fn caller(inner: Inner) -> Database {
        Database {
            inner: Arc::new(Handle {
                inner: Arc::new(inner),
                caller: true,
            }),
        }
    }

    /// A handle of the database's own (an index build's), which does not keep the database
    /// open once the caller's handles are gone.
    fn own_handle(&self) -> Database {
        Database {
            inner: Arc::new(Handle {
                inner: self.inner.inner.clone(),
                caller: false,
            }),
        }
    }

    /// The traced requests kept (`crate::trace`): a server keeps each traced request's
    /// session here, and `system_traces` reads them back.
    pub fn traces(&self) -> &crate::trace::TraceStore {
        &self.inner.traces
    }

    /// What the commit log replay at open dropped, one line per problem, when the database
    /// was opened with [`Options::commit_log_ignore_replay_errors`]; empty otherwise (without
    /// the option, any such problem makes `open` fail).
    pub fn replay_report(&self) -> &[String] {
        &self.inner.replay_report
    }

    /// The data directory.
    pub fn path(&self) -> &Path {
        &self.inner.root
    }

    /// The partitioner rows are ordered by.
    pub fn partitioner(&self) -> Partitioner {
        self.inner.partitioner
    }

    /// The options in force: those the database was opened with, and for each stored setting
    /// the database keeps that they left at its default, the stored one.
    #[inline]
    pub fn options(&self) -> &Options {
        &self.inner.options
    }

    /// Makes every acknowledged write durable (an fsync of the commit log, which holds every
    /// write not yet in an SSTable: closing does not flush memtables, the next open replays the
    /// log) and releases this handle, reporting any error that dropping it would have to
    /// swallow. The database itself closes (its background work stops and its directory lock is
    /// released) when the last clone is closed or dropped.
    pub fn close(self) -> Result<()> {
        self.inner.core.commitlog.sync()
    }

    fn now(&self) -> Now {
        let micros = self.inner.options.clock.now_micros();
        Now {
            micros,
            seconds: micros.div_euclid(1_000_000),
        }
    }

    /// The schema in force: no lock and no reference count taken (every read starts here).
    fn schema(&self) -> Guard<Arc<SchemaState>> {
        self.inner.schema.load()
    }

    #[inline]
    fn cf(&self, keyspace: &str, cf: &str) -> Result<Arc<ColumnFamilyStore>> {
        self.schema().cf(keyspace, cf).cloned()
    }

    /// One column family, or with `None` every column family of the keyspace.
    fn cfs_of(
        &self,
        keyspace: &str,
        column_family: Option<&str>,
    ) -> Result<Vec<Arc<ColumnFamilyStore>>> {
        match column_family {
            Some(cf) => {
                // A column family's indexes go with it, as Cassandra flushes and compacts them.
                let base = self.cf(keyspace, cf)?;
                let mut all: Vec<_> = base.indexes().iter().map(|i| i.store.clone()).collect();
                all.insert(0, base);
                Ok(all)
            }
            None => Ok(self
                .schema()
                .keyspaces
                .get(keyspace)
                .ok_or_else(|| Error::UnknownKeyspace(keyspace.to_string()))?
                .cfs
                .values()
                .cloned()
                .collect()),
        }
    }

    /// The compactions running now, each with its progress (an index's under `table.index`).
    pub fn running_compactions(&self) -> Vec<CompactionTask> {
        let schema = self.schema();
        let mut out = Vec::new();
        for cf in schema.all_cfs() {
            out.extend(cf.running_compaction());
            out.extend(
                cf.indexes()
                    .iter()
                    .filter_map(|i| i.store.running_compaction()),
            );
        }
        out
    }

    /// The background pools' counts: the flusher (`MemtableFlushWriter`) and the compactor
    /// (`CompactionExecutor`), a task being one memtable handed over to flush, one column family
    /// handed over to compact until it needs no more.
    pub fn thread_pools(&self) -> Vec<ThreadPoolStats> {
        vec![
            self.inner.core.compactor.stats("CompactionExecutor"),
            self.inner.flusher.stats("MemtableFlushWriter"),
        ]
    }

    /// What a column family holds and what its reads did: SSTables, memtable size, bloom filter,
    /// key cache and block cache counters.
    pub fn column_family_stats(
        &self,
        keyspace: &str,
        column_family: &str,
    ) -> Result<ColumnFamilyStats> {
        Ok(self.cf(keyspace, column_family)?.stats())
    }

    /// The keyspace names, sorted.
    pub fn keyspaces(&self) -> Vec<String> {
        self.schema().keyspaces.keys().cloned().collect()
    }

    /// A keyspace's definition.
    pub fn describe_keyspace(&self, name: &str) -> Result<KeyspaceDef> {
        self.schema()
            .keyspaces
            .get(name)
            .map(|k| k.def.clone())
            .ok_or_else(|| Error::UnknownKeyspace(name.to_string()))
    }

    /// The id the catalog gave a column family. One dropped and created again under the same
    /// name gets a new id (ids are never reused), so a caller holding an id can tell.
    pub fn column_family_id(&self, keyspace: &str, cf: &str) -> Result<u32> {
        Ok(self.cf(keyspace, cf)?.id())
    }

    /// A number for a column family's definition as this open database holds it: a new one
    /// after an alteration (`ALTER TABLE`), for a column family created again, and after a
    /// reopen, so two equal versions name the same table with the same definition.
    pub fn column_family_version(&self, keyspace: &str, cf: &str) -> Result<u64> {
        Ok(self.cf(keyspace, cf)?.version())
    }

    /// A column family as one lookup finds it, for a caller that checks its version and then
    /// reads it without looking it up again (CQL's planned reads).
    #[inline]
    pub fn column_family_handle(&self, keyspace: &str, cf: &str) -> Result<ColumnFamilyHandle> {
        self.cf(keyspace, cf).map(ColumnFamilyHandle)
    }

    /// A column family's definition, as the catalog holds it now.
    pub fn describe_column_family(&self, keyspace: &str, cf: &str) -> Result<ColumnFamilyDef> {
        self.describe_keyspace(keyspace)?
            .column_family(cf)
            .cloned()
            .ok_or_else(|| Error::UnknownColumnFamily {
                keyspace: keyspace.to_string(),
                column_family: cf.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn database_is_send_and_sync() {
        assert_send_sync::<Database>();
    }

    /// Regression: a non-UTF-8 name in the commit log reached an SSTable of a UTF8Type column
    /// family at replay and made it unreadable, with an error naming no file.
    #[test]
    fn replay_refuses_a_logged_name_that_does_not_fit_its_comparator() {
        use crate::codec::Writer;
        use crate::commitlog::record::{LogRecord, RowMutation};
        use crate::commitlog::{replay, segment};
        use crate::file_names;
        use crate::model::cell::{Cell, Entry};
        use crate::mutation::RowUpdate;
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), Options::default()).unwrap();
        let cf = db.cf("Keyspace1", "Standard2").unwrap().id();
        drop(db);
        let seg = replay::segments_in(
            &crate::io::RealFs,
            &dir.path().join(file_names::COMMIT_LOG_DIR),
        )
        .unwrap()
        .pop()
        .unwrap()
        .1;
        let cell = Entry::Cell(Cell::live(1, b"v".to_vec(), None));
        let m = RowMutation {
            key: std::borrow::Cow::Borrowed(b"k"),
            updates: vec![(
                cf,
                RowUpdate {
                    deletion: None,
                    entries: vec![(std::borrow::Cow::Borrowed(&[0xff, 0xfe]), cell.as_ref())],
                },
            )],
        };
        let mut w = Writer::default();
        m.encode(&mut w);
        let mut bytes = std::fs::read(&seg).unwrap();
        segment::frame(&w.buf, &mut bytes);
        std::fs::write(&seg, &bytes).unwrap();
        match Database::open(dir.path(), Options::default()) {
            Err(Error::Corrupt { path, reason, .. }) => {
                assert_eq!(path, seg);
                assert!(
                    reason.contains("Standard2") && reason.contains("UTF8Type"),
                    "{reason}"
                );
            }
            Err(e) => panic!("expected a corruption error, got {e}"),
            Ok(_) => panic!("a name that does not fit UTF8Type was replayed"),
        }
    }

    #[test]
    fn a_re_created_column_family_gets_a_new_id_that_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), Options::default()).unwrap();
        let old = db.cf("Keyspace1", "Standard1").unwrap().id();
        db.drop_column_family("Keyspace1", "Standard1").unwrap();
        db.create_column_family("Keyspace1", ColumnFamilyDef::standard("Standard1"))
            .unwrap();
        let new = db.cf("Keyspace1", "Standard1").unwrap().id();
        assert_ne!(old, new);
        db.create_keyspace(
            KeyspaceDef::new("K2")
                .with_column_family(ColumnFamilyDef::standard("A"))
                .with_column_family(ColumnFamilyDef::standard("B")),
        )
        .unwrap();
        let (a, b) = (
            db.cf("K2", "A").unwrap().id(),
            db.cf("K2", "B").unwrap().id(),
        );
        assert!(a != b && a != new && b != new);
        drop(db);
        let db = Database::open(dir.path(), Options::default()).unwrap();
        assert_eq!(db.cf("Keyspace1", "Standard1").unwrap().id(), new);
        assert_eq!(db.cf("K2", "B").unwrap().id(), b);
    }
}
