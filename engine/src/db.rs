//! `Database`: open and close, the schema in force, and the routing of mutations and reads to
//! column family stores. Every public operation of SPEC §5 enters here.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Weak};
use std::thread::JoinHandle;

use parking_lot::{Mutex, RwLock};

use crate::cache::BlockCache;
use crate::codec::Writer;
use crate::commitlog::record::{self, LogRecord, RowMutation};
use crate::commitlog::replay::{self, LogBounds};
use crate::commitlog::{CommitLog, LogPosition, Retired};
use crate::error::{Error, Result};
use crate::file_names;
use crate::io::dir_lock::DirLock;
use crate::io::FileSystem;
use crate::model::partitioner::Partitioner;
use crate::mutation::{validate_key, BatchMutation, Mutation, Now, RowUpdate, WriteOptions};
use crate::options::Options;
use crate::query::{
    ColumnOrSuperColumn, ColumnParent, ColumnPath, KeyRange, KeySlice, RangeBound, SlicePredicate,
};
use crate::schema::catalog::Catalog;
use crate::schema::{default_keyspaces, ColumnFamilyDef, ColumnType, KeyspaceDef};
use crate::sstable::DEFAULT_BLOCK_SIZE;
use crate::stats::ColumnFamilyStats;
use crate::store::manifest::Manifest;
use crate::store::{ColumnFamilyStore, CompactionSettings, FlushLimits, StoreContext};

/// How many memtables of one column family may wait for the flusher before writers flush
/// themselves (and so slow down) instead of piling up memory.
const MAX_FROZEN_MEMTABLES: usize = 2;

/// The background flusher: one thread writing frozen memtables to SSTables, in the order they
/// were handed over.
/// The background compactor: one thread (the pool of SPEC's "1 compaction thread") running
/// minor compactions of the column families handed to it until none has a full bucket.
#[derive(Debug)]
struct Compactor {
    tx: Mutex<Option<mpsc::Sender<Arc<ColumnFamilyStore>>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Compactor {
    fn start() -> Result<Compactor> {
        let (tx, rx) = mpsc::channel::<Arc<ColumnFamilyStore>>();
        let thread = std::thread::Builder::new()
            .name("compaction".into())
            .spawn(move || {
                for cf in rx {
                    loop {
                        match cf.compact(false) {
                            Ok(Some(_)) => continue,
                            Ok(None) => break,
                            // The inputs stay live; the next flush tries again.
                            Err(e) => {
                                tracing::error!("compaction of {} failed: {e}", cf.def().name);
                                break;
                            }
                        }
                    }
                }
            })
            .map_err(|e| Error::io("compaction thread", e))?;
        Ok(Compactor {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        })
    }

    fn sender(&self) -> Option<mpsc::Sender<Arc<ColumnFamilyStore>>> {
        self.tx.lock().clone()
    }

    /// Lets the running compaction finish, drops the queued ones, and stops the thread.
    fn stop(&self) {
        self.tx.lock().take();
        if let Some(t) = self.thread.lock().take() {
            let _ = t.join();
        }
    }
}

/// What the flusher thread is told.
enum FlushJob {
    /// Flush this CF's frozen memtables.
    Flush(Arc<ColumnFamilyStore>),
    /// Watch this CF's memtable age (`MemtableFlushAfterMinutes`).
    Watch(Weak<ColumnFamilyStore>),
}

/// How often the flusher looks for memtables past `MemtableFlushAfterMinutes`.
const AGE_CHECK_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// The background flusher: one thread writing frozen memtables to SSTables, in the order they
/// were handed over, and flushing memtables that sat unflushed past their age limit.
#[derive(Debug)]
struct Flusher {
    tx: Mutex<Option<mpsc::Sender<FlushJob>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// Lets the commit log drop what `cf` has flushed up to `upto`: the manifest first records
/// that the log now starts past the retired segments, then they are deleted.
fn release_log(log: &CommitLog, ctx: &StoreContext, cf: u32, upto: LogPosition) -> Result<()> {
    let retired = log.release(cf, upto)?;
    retire(log, ctx, retired)
}

fn retire(log: &CommitLog, ctx: &StoreContext, retired: Retired) -> Result<()> {
    if retired.is_empty() {
        return Ok(());
    }
    ctx.update_manifest(|m| m.log_oldest = m.log_oldest.max(retired.oldest_kept))?;
    log.delete(&retired)
}

fn flush_and_discard(
    cf: &Arc<ColumnFamilyStore>,
    log: &CommitLog,
    ctx: &StoreContext,
    compactor: &Option<mpsc::Sender<Arc<ColumnFamilyStore>>>,
) {
    match cf.flush_frozen() {
        Ok(Some(pos)) => {
            if let Err(e) = release_log(log, ctx, cf.id(), pos) {
                tracing::error!("discarding commit log segments: {e}");
            }
            if let Some(tx) = compactor {
                if cf.needs_compaction() {
                    let _ = tx.send(cf.clone());
                }
            }
        }
        Ok(None) => {}
        // The memtable stays frozen and readable; the next flush retries it.
        Err(e) => tracing::error!("flush of {} failed: {e}", cf.def().name),
    }
}

impl Flusher {
    fn start(
        log: Arc<CommitLog>,
        ctx: Arc<StoreContext>,
        switch_lock: Arc<RwLock<()>>,
        compactor: Option<mpsc::Sender<Arc<ColumnFamilyStore>>>,
    ) -> Result<Flusher> {
        let (tx, rx) = mpsc::channel::<FlushJob>();
        let thread = std::thread::Builder::new()
            .name("memtable-flush".into())
            .spawn(move || {
                let mut watched: Vec<Weak<ColumnFamilyStore>> = Vec::new();
                let mut last_check = std::time::Instant::now();
                loop {
                    match rx.recv_timeout(AGE_CHECK_EVERY) {
                        Ok(FlushJob::Flush(cf)) => flush_and_discard(&cf, &log, &ctx, &compactor),
                        Ok(FlushJob::Watch(cf)) => watched.push(cf),
                        Err(mpsc::RecvTimeoutError::Timeout) => {}
                        Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                    // Checked on time whatever arrived, so steady flush traffic cannot starve it.
                    if last_check.elapsed() >= AGE_CHECK_EVERY {
                        last_check = std::time::Instant::now();
                        {
                            watched.retain(|w| w.strong_count() > 0);
                            for cf in watched.iter().filter_map(Weak::upgrade) {
                                if cf.idle_too_long() && !log.is_poisoned() {
                                    {
                                        let _switch = switch_lock.write();
                                        cf.switch_memtable(log.current_position());
                                    }
                                    flush_and_discard(&cf, &log, &ctx, &compactor);
                                }
                            }
                        }
                    }
                }
            })
            .map_err(|e| Error::io("memtable-flush thread", e))?;
        Ok(Flusher {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        })
    }

    fn send(&self, job: FlushJob) {
        if let Some(tx) = self.tx.lock().as_ref() {
            let _ = tx.send(job);
        }
    }

    fn submit(&self, cf: Arc<ColumnFamilyStore>) {
        self.send(FlushJob::Flush(cf));
    }

    fn watch(&self, cf: &Arc<ColumnFamilyStore>) {
        self.send(FlushJob::Watch(Arc::downgrade(cf)));
    }

    /// Finishes the queued flushes and stops the thread.
    fn stop(&self) {
        self.tx.lock().take();
        if let Some(t) = self.thread.lock().take() {
            let _ = t.join();
        }
    }
}

impl Inner {
    /// Freezes and flushes one column family, then lets the commit log drop what it covered.
    fn flush_cf(&self, cf: &Arc<ColumnFamilyStore>) -> Result<()> {
        let (switched, position) = {
            let _switch = self.switch_lock.write();
            let position = self.commitlog.current_position();
            (cf.switch_memtable(position), position)
        };
        if !switched && cf.frozen_count() == 0 {
            // Nothing unflushed before `position`: no segment needs to wait for this CF.
            return release_log(&self.commitlog, &self.env.ctx, cf.id(), position);
        }
        self.flush_frozen(cf)
    }

    /// Deletes retired commit log segments once the manifest is past them.
    fn retire(&self, retired: Retired) -> Result<()> {
        retire(&self.commitlog, &self.env.ctx, retired)
    }

    /// Flushes the frozen memtables, lets the commit log drop what they covered, and hands the
    /// CF to the compactor if a bucket filled.
    fn flush_frozen(&self, cf: &Arc<ColumnFamilyStore>) -> Result<()> {
        if let Some(pos) = cf.flush_frozen()? {
            release_log(&self.commitlog, &self.env.ctx, cf.id(), pos)?;
            if cf.needs_compaction() {
                if let Some(tx) = self.compactor.sender() {
                    let _ = tx.send(cf.clone());
                }
            }
        }
        Ok(())
    }

    fn all_cfs(&self) -> Vec<Arc<ColumnFamilyStore>> {
        let schema = self.schema.read().clone();
        schema
            .keyspaces
            .values()
            .flat_map(|k| k.cfs.values().cloned())
            .collect()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The flusher feeds the compactor, so it stops first.
        self.flusher.stop();
        self.compactor.stop();
        if self.commitlog.is_poisoned() {
            // The memtables may hold the only copy of writes since the log's last good fsync:
            // put them in SSTables, and leave the log alone.
            for cf in self.all_cfs() {
                {
                    let _switch = self.switch_lock.write();
                    cf.switch_memtable(self.commitlog.current_position());
                }
                if let Err(e) = cf.flush_frozen() {
                    tracing::error!("flush at close of {} failed: {e}", cf.def().name);
                }
            }
            return;
        }
        // Flush on close, so the next open has nothing to replay. Errors here cannot be
        // returned; the commit log still holds everything, so nothing is lost.
        for cf in self.all_cfs() {
            if let Err(e) = self.flush_cf(&cf) {
                tracing::warn!("flush at close of {} failed: {e}", cf.def().name);
                break;
            }
        }
    }
}

/// One row's updates, per column family, in a batch being applied.
type CfUpdates = Vec<(Arc<ColumnFamilyStore>, RowUpdate)>;

/// One row of a batch as the commit log records it, borrowed from the batch.
struct RowWrite<'a> {
    key: &'a [u8],
    updates: &'a CfUpdates,
}

impl LogRecord for RowWrite<'_> {
    fn encode(&self, w: &mut Writer) {
        record::encode_parts(self.key, self.updates.iter().map(|(cf, u)| (cf.id(), u)), w);
    }

    fn size_hint(&self) -> usize {
        record::size_hint(self.key, self.updates.iter().map(|(_, u)| u))
    }

    fn each_column_family(&self, f: &mut dyn FnMut(u32)) {
        self.updates.iter().for_each(|(cf, _)| f(cf.id()));
    }
}

/// Batches of up to this many rows find a row's slot by a linear search; larger ones hash.
const LINEAR_ROW_SEARCH: usize = 16;

/// What replaying the commit log at open left behind.
struct ReplayOutcome {
    /// What replay found.
    log: replay::Replayed,
    /// Each replayed segment and the column families whose data in it is now in memtables.
    dirty: BTreeMap<u64, (PathBuf, BTreeSet<u32>)>,
    /// Segments older than the manifest's bound, to delete.
    obsolete: Vec<PathBuf>,
}

/// The engine's data files found in a folder that lacks its catalog or manifest.
#[derive(Debug, Default)]
struct DataFiles {
    sstables: Vec<PathBuf>,
    segments: Vec<PathBuf>,
}

impl DataFiles {
    /// SSTables in keyspace-named folders of `root`, and segments in `log_dir`.
    fn find(root: &Path, log_dir: &Path) -> Result<DataFiles> {
        let mut found = DataFiles::default();
        let dirs = match std::fs::read_dir(root) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(found),
            Err(e) => return Err(Error::io(root, e)),
        };
        for d in dirs {
            let d = d.map_err(|e| Error::io(root, e))?;
            let name = d.file_name().to_string_lossy().into_owned();
            if !file_names::is_identifier(&name) || !d.path().is_dir() {
                continue;
            }
            for f in std::fs::read_dir(d.path()).map_err(|e| Error::io(d.path(), e))? {
                let f = f.map_err(|e| Error::io(d.path(), e))?;
                let fname = f.file_name().to_string_lossy().into_owned();
                if file_names::parse_sstable(&fname).is_some_and(|s| !s.temp) {
                    found.sstables.push(f.path());
                }
            }
        }
        found.segments = replay::segments_in(log_dir)?
            .into_iter()
            .map(|s| s.1)
            .collect();
        found.sstables.sort();
        Ok(found)
    }

    fn is_empty(&self) -> bool {
        self.sstables.is_empty() && self.segments.is_empty()
    }

    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(first) = self.sstables.first() {
            parts.push(format!(
                "{} SSTables (the first {})",
                self.sstables.len(),
                first.display()
            ));
        }
        if let Some(first) = self.segments.first() {
            parts.push(format!(
                "{} commit log segments (the first {})",
                self.segments.len(),
                first.display()
            ));
        }
        parts.join(" and ")
    }
}

/// The default data directory when neither `Database::open` nor the configuration names one.
pub const DEFAULT_DATA_DIR: &str = "./supercolumn-data";

#[derive(Debug, Default)]
struct SchemaState {
    keyspaces: BTreeMap<String, KeyspaceState>,
    next_cf_id: u32,
}

#[derive(Debug, Clone)]
struct KeyspaceState {
    def: KeyspaceDef,
    cfs: BTreeMap<String, Arc<ColumnFamilyStore>>,
}

/// What a column family store is built with.
#[derive(Debug, Clone)]
struct StoreEnv {
    ctx: Arc<StoreContext>,
    limits: FlushLimits,
    compaction: CompactionSettings,
}

impl StoreEnv {
    fn store(&self, ks: &KeyspaceDef, id: u32, cf: &ColumnFamilyDef) -> Arc<ColumnFamilyStore> {
        Arc::new(ColumnFamilyStore::new(
            &ks.name,
            ks.keys_cached_fraction,
            id,
            cf.clone(),
            self.ctx.clone(),
            self.limits,
            self.compaction,
        ))
    }
}

impl KeyspaceState {
    fn new(def: KeyspaceDef, ids: impl Fn(&str) -> u32, env: &StoreEnv) -> Self {
        let cfs = def
            .column_families
            .iter()
            .map(|cf| (cf.name.clone(), env.store(&def, ids(&cf.name), cf)))
            .collect();
        KeyspaceState { def, cfs }
    }
}

impl SchemaState {
    fn from_catalog(c: Catalog, env: &StoreEnv) -> Self {
        let keyspaces = c
            .keyspaces
            .iter()
            .map(|ks| {
                let state =
                    KeyspaceState::new(ks.clone(), |cf| c.cf_id(&ks.name, cf).unwrap_or(0), env);
                (ks.name.clone(), state)
            })
            .collect();
        SchemaState {
            keyspaces,
            next_cf_id: c.next_cf_id,
        }
    }

    fn to_catalog(&self, partitioner: Partitioner, settings: Vec<u8>) -> Catalog {
        let mut cf_ids = BTreeMap::new();
        for (name, ks) in &self.keyspaces {
            for (cf, store) in &ks.cfs {
                cf_ids.insert((name.clone(), cf.clone()), store.id());
            }
        }
        Catalog {
            partitioner,
            keyspaces: self.keyspaces.values().map(|k| k.def.clone()).collect(),
            cf_ids,
            next_cf_id: self.next_cf_id,
            settings: Some(settings),
        }
    }

    fn allocate_cf_id(&mut self) -> Result<u32> {
        let id = self.next_cf_id;
        self.next_cf_id = id
            .checked_add(1)
            .ok_or_else(|| Error::Schema("column family ids are exhausted".into()))?;
        Ok(id)
    }
}

#[derive(Debug)]
struct Inner {
    root: PathBuf,
    commitlog: Arc<CommitLog>,
    env: StoreEnv,
    flusher: Flusher,
    compactor: Compactor,
    /// Writers hold it shared from commit log append to memtable apply; a memtable switch holds
    /// it exclusively.
    switch_lock: Arc<RwLock<()>>,
    options: Options,
    partitioner: Partitioner,
    schema: RwLock<Arc<SchemaState>>,
    /// Serializes schema changes (and their catalog writes).
    schema_change: Mutex<()>,
    /// What replay at open dropped, when asked to ignore replay errors.
    replay_report: Vec<String>,
    _lock: DirLock,
}

/// An open database: one data directory holding keyspaces of column families.
///
/// `Database` is cheap to clone (clones share one database) and `Send + Sync`: many threads may
/// read and write at once. The directory is locked while any clone is alive.
#[derive(Debug, Clone)]
pub struct Database {
    inner: Arc<Inner>,
}

impl Database {
    /// Opens (or creates) the database in `dir`.
    ///
    /// A new database gets `options.keyspaces`, or the embedded default schema (the seeds'
    /// `Keyspace1`). An existing one keeps its stored schema; keyspaces and column families in
    /// `options.keyspaces` that it lacks are added, and ones that conflict with it (another
    /// comparator or column type), or another partitioner, are refused with
    /// [`Error::SchemaConflict`]. A directory another process has open is refused with
    /// [`Error::Locked`].
    pub fn open(dir: impl AsRef<Path>, options: Options) -> Result<Database> {
        let root = dir.as_ref().to_path_buf();
        let fs = options.file_system.clone();
        if !root.exists() {
            fs.create_dir_all(&root).map_err(|e| Error::io(&root, e))?;
            let parent = crate::io::fs::parent_dir(&root);
            fs.sync_dir(&parent).map_err(|e| Error::io(&parent, e))?;
        }
        let lock = DirLock::acquire(&root)?;
        let (catalog, mut manifest, options) = Self::load_or_create(&root, &options)?;
        let log_dir = options
            .commit_log_directory
            .clone()
            .unwrap_or_else(|| root.join(file_names::COMMIT_LOG_DIR));
        let partitioner = catalog.partitioner;
        let block_size = options
            .column_index_size_kb
            .map_or(DEFAULT_BLOCK_SIZE, |kb| kb as usize * 1024);
        let env = StoreEnv {
            ctx: Arc::new(StoreContext {
                root: root.clone(),
                fs: fs.clone(),
                manifest: Mutex::new(manifest.clone()),
                blocks: BlockCache::new(options.block_cache_size_mb as usize * (1 << 20)),
                bloom_fp: options.bloom_filter_fp_chance,
                block_size,
                clock: options.clock.clone(),
                partitioner,
                removed: Mutex::new(Vec::new()),
            }),
            compaction: CompactionSettings {
                min_threshold: options.min_compaction_threshold,
                max_threshold: options.max_compaction_threshold,
                gc_grace_seconds: options.gc_grace_seconds,
            },
            limits: FlushLimits {
                bytes: (options.memtable_throughput_mb as usize) << 20,
                operations: (options.memtable_operations_millions * 1e6).max(1.0) as u64,
                age: std::time::Duration::from_secs(
                    u64::from(options.memtable_flush_after_minutes) * 60,
                ),
            },
        };
        let state = SchemaState::from_catalog(catalog, &env);
        Self::settle_dropped(&state, &env.ctx, &mut manifest)?;
        Self::open_sstables(&root, fs.as_ref(), &state, &manifest)?;
        if !manifest.obsolete.is_empty() {
            // Every obsolete file is gone now.
            env.ctx.update_manifest(|m| m.obsolete.clear())?;
        }
        let mut replayed = Self::replay(&log_dir, &state, partitioner, &manifest, &options)?;
        for p in &replayed.obsolete {
            // Older than the manifest's bound: every record in it was flushed.
            tracing::info!("removing {} (flushed before the last open)", p.display());
            fs.remove_file(p).map_err(|e| Error::io(p, e))?;
        }
        if !replayed.obsolete.is_empty() {
            fs.sync_dir(&log_dir).map_err(|e| Error::io(&log_dir, e))?;
        }
        // New segments number past anything present and past every position the manifest
        // knows, so a record written now can never look older than a flush.
        let flushed_max = manifest
            .cfs
            .values()
            .map(|m| m.flushed_to.segment)
            .max()
            .unwrap_or(0);
        let first_seq = replayed
            .log
            .max_seq
            .max(flushed_max)
            .max(manifest.log_start)
            .max(manifest.log_oldest)
            + 1;
        let prev_end = replayed
            .log
            .newest_end
            .filter(|(seq, _)| seq + 1 == first_seq)
            .map_or(0, |(_, end)| end);
        let oldest = replayed.log.segments.first().map_or(first_seq, |s| s.0);
        let commitlog = Arc::new(CommitLog::open(
            &log_dir,
            fs.clone(),
            options.commit_log_segment_size_mb,
            options.commit_log_sync,
            first_seq,
            prev_end,
            std::mem::take(&mut replayed.dirty),
        )?);
        env.ctx.update_manifest(|m| {
            m.log_start = first_seq;
            m.log_oldest = m.log_oldest.max(oldest);
        })?;
        let switch_lock = Arc::new(RwLock::new(()));
        let compactor = Compactor::start()?;
        let flusher = Flusher::start(
            commitlog.clone(),
            env.ctx.clone(),
            switch_lock.clone(),
            compactor.sender(),
        )?;
        for cf in state.keyspaces.values().flat_map(|k| k.cfs.values()) {
            flusher.watch(cf);
        }
        let db = Database {
            inner: Arc::new(Inner {
                root,
                commitlog,
                env,
                flusher,
                compactor,
                switch_lock,
                partitioner,
                options,
                schema: RwLock::new(Arc::new(state)),
                schema_change: Mutex::new(()),
                replay_report: replayed.log.dropped,
                _lock: lock,
            }),
        };
        // Replayed data goes to SSTables at once, so the old segments can go and a crash
        // during the next run replays less.
        db.flush_all()?;
        let retired = db.inner.commitlog.retire_unneeded()?;
        db.inner.retire(retired)?;
        // Compactions pending when the database last closed resume now.
        if let Some(tx) = db.inner.compactor.sender() {
            for cf in db.inner.all_cfs() {
                if cf.needs_compaction() {
                    let _ = tx.send(cf);
                }
            }
        }
        Ok(db)
    }

    /// Loads the catalog and the manifest, or creates both for a new database, and works out
    /// the options in force (the given ones over the stored settings). A folder that holds the
    /// engine's data files but lacks either file is refused, changing nothing: opening it as
    /// new would lose everything the missing file described.
    fn load_or_create(root: &Path, given: &Options) -> Result<(Catalog, Manifest, Options)> {
        let fs = given.file_system.as_ref();
        let catalog = Catalog::load(fs, root, &given.comparators)?;
        let schema_path = root.join(file_names::SCHEMA);
        let options = match catalog.as_ref().and_then(|c| c.settings.as_deref()) {
            Some(stored) => given
                .with_stored_settings(stored)
                .map_err(|e| Error::Corrupt {
                    path: schema_path.clone(),
                    reason: format!("the stored settings: {e}"),
                })?,
            None => given.clone(),
        };
        let options = &options;
        let log_dir = &options
            .commit_log_directory
            .clone()
            .unwrap_or_else(|| root.join(file_names::COMMIT_LOG_DIR));
        let manifest = Manifest::load(fs, root)?;
        let missing = |name: &str, reason: String| Error::Corrupt {
            path: root.join(name),
            reason,
        };
        let catalog = match (catalog, &manifest) {
            (Some(mut stored), _) => {
                let given = options.keyspaces.clone().unwrap_or_default();
                for ks in &given {
                    ks.validate()?;
                }
                let wanted = options.partitioner.unwrap_or(stored.partitioner);
                let evidence = match &manifest {
                    Some(_) => DataFiles::default(),
                    None => DataFiles::find(root, log_dir)?,
                };
                if !evidence.is_empty() {
                    return Err(missing(
                        file_names::MANIFEST,
                        format!(
                            "missing, but the folder holds {}; without the manifest the live \
                             SSTables and the commit log's extent are unknown, so nothing was \
                             opened or changed (restore MANIFEST.db from a backup)",
                            evidence.describe()
                        ),
                    ));
                }
                let settings = Some(options.encode_settings());
                let changed = stored.settings != settings;
                stored.settings = settings;
                if stored.merge_given(wanted, &given)? || changed {
                    stored.store(fs, root)?;
                }
                stored
            }
            (None, Some(m)) => {
                return Err(missing(
                    file_names::SCHEMA,
                    format!(
                        "missing, but the manifest describes {} column families and {} \
                         SSTables; without the schema their comparators are unknown, so nothing \
                         was opened or changed (restore SCHEMA.db from a backup)",
                        m.cfs.len(),
                        m.cfs.values().map(|c| c.sstables.len()).sum::<usize>()
                    ),
                ))
            }
            (None, None) => {
                let evidence = DataFiles::find(root, log_dir)?;
                if !evidence.is_empty() {
                    return Err(missing(
                        file_names::SCHEMA,
                        format!(
                            "missing, and so is MANIFEST.db, but the folder holds {}; nothing \
                             was opened or changed (restore both from a backup)",
                            evidence.describe()
                        ),
                    ));
                }
                let keyspaces = options.keyspaces.clone().unwrap_or_else(default_keyspaces);
                for (i, ks) in keyspaces.iter().enumerate() {
                    ks.validate()?;
                    if keyspaces[..i].iter().any(|o| o.name == ks.name) {
                        return Err(Error::Schema(format!(
                            "keyspace '{}' is defined twice",
                            ks.name
                        )));
                    }
                }
                let mut c = Catalog::new(options.partitioner.unwrap_or_default(), keyspaces)?;
                c.settings = Some(options.encode_settings());
                c.store(fs, root)?;
                c
            }
        };
        let manifest = match manifest {
            Some(m) => m,
            None => {
                // A new database, or one whose creation stopped between the two files.
                let m = Manifest::new();
                m.store(fs, root)?;
                m
            }
        };
        Ok((catalog, manifest, options.clone()))
    }

    /// Column families in the manifest that the schema no longer has (a drop interrupted
    /// between the catalog and the manifest): their SSTables become obsolete files.
    fn settle_dropped(
        state: &SchemaState,
        ctx: &StoreContext,
        manifest: &mut Manifest,
    ) -> Result<()> {
        let known: BTreeSet<u32> = state
            .keyspaces
            .values()
            .flat_map(|k| k.cfs.values().map(|c| c.id()))
            .collect();
        if manifest.cfs.keys().all(|id| known.contains(id)) {
            return Ok(());
        }
        ctx.update_manifest(|m| {
            let gone: Vec<u32> = m
                .cfs
                .keys()
                .filter(|id| !known.contains(id))
                .copied()
                .collect();
            for id in gone {
                let Some(e) = m.cfs.remove(&id) else { continue };
                if e.name.is_empty() {
                    tracing::warn!(
                        "column family id {id} was dropped; its files are not named in this \
                         older manifest and are left where they are"
                    );
                    continue;
                }
                m.obsolete.extend(
                    e.sstables
                        .iter()
                        .map(|g| file_names::sstable_relative(&e.keyspace, &e.name, *g)),
                );
            }
        })?;
        *manifest = ctx.manifest.lock().clone();
        Ok(())
    }

    /// Opens every live SSTable the manifest names, and removes from the keyspace folders only
    /// what the engine can prove it wrote and no longer needs: files the manifest lists as
    /// obsolete, and SSTables (or their temporary names) of a generation handed out after the
    /// manifest was written (an interrupted flush or compaction). Everything else is left alone.
    fn open_sstables(
        root: &Path,
        fs: &dyn FileSystem,
        state: &SchemaState,
        manifest: &Manifest,
    ) -> Result<()> {
        let mut synced: BTreeSet<PathBuf> = BTreeSet::new();
        let mut remove = |path: &Path, why: &str| -> Result<()> {
            tracing::info!("removing {} ({why})", path.display());
            match fs.remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(Error::io(path, e)),
            }
            synced.insert(crate::io::fs::parent_dir(path));
            Ok(())
        };
        for rel in &manifest.obsolete {
            match file_names::resolve_sstable_relative(root, rel) {
                Some(p) if p.exists() => remove(&p, "obsolete")?,
                Some(_) => {}
                None => tracing::warn!(
                    "the manifest lists '{rel}' as obsolete; not an SSTable name, left alone"
                ),
            }
        }
        for (ks_name, ks) in &state.keyspaces {
            let dir = root.join(ks_name);
            let mut live: BTreeSet<String> = BTreeSet::new();
            for cf in ks.cfs.values() {
                let gens = manifest
                    .cfs
                    .get(&cf.id())
                    .map(|m| m.sstables.clone())
                    .unwrap_or_default();
                live.extend(gens.iter().map(|g| file_names::sstable(&cf.def().name, *g)));
                cf.open_sstables(&gens)?;
            }
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(&dir, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| Error::io(&dir, e))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if live.contains(&name) || !entry.path().is_file() {
                    continue;
                }
                let ours = file_names::parse_sstable(&name).filter(|s| ks.cfs.contains_key(s.cf));
                match ours {
                    Some(s) if s.temp => remove(&entry.path(), "an unfinished write")?,
                    Some(s) if s.generation >= manifest.next_generation => remove(
                        &entry.path(),
                        "written after the manifest, by a flush or compaction that never finished",
                    )?,
                    _ => tracing::warn!(
                        "{} is not a live SSTable of this database; left alone",
                        entry.path().display()
                    ),
                }
            }
        }
        for dir in synced {
            fs.sync_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        Ok(())
    }

    /// Replays the commit log into the memtables of the column families that still exist.
    fn replay(
        log_dir: &Path,
        state: &SchemaState,
        partitioner: Partitioner,
        manifest: &Manifest,
        options: &Options,
    ) -> Result<ReplayOutcome> {
        let by_id: HashMap<u32, Arc<ColumnFamilyStore>> = state
            .keyspaces
            .values()
            .flat_map(|ks| ks.cfs.values())
            .map(|cf| (cf.id(), cf.clone()))
            .collect();
        let mut dirty_ids: BTreeMap<u64, BTreeSet<u32>> = BTreeMap::new();
        let segment_path = |seq: u64| log_dir.join(file_names::segment(seq));
        let mut apply = |pos: LogPosition, m: RowMutation| -> Result<()> {
            let sort_key = partitioner.row_sort_key(&m.key);
            for (id, update) in &m.updates {
                // A CF dropped since the record was written: its data goes with it. Records
                // before the CF's flushed position are already in its SSTables.
                let flushed = manifest
                    .cfs
                    .get(id)
                    .map(|m| m.flushed_to)
                    .unwrap_or_default();
                if pos < flushed {
                    continue;
                }
                if let Some(cf) = by_id.get(id) {
                    let corrupt = |reason: String| Error::Corrupt {
                        path: segment_path(pos.segment),
                        reason: format!(
                            "record at offset {} for {}: {reason}",
                            pos.offset,
                            cf.def().name
                        ),
                    };
                    crate::mutation::validate_key(&m.key).map_err(|e| corrupt(e.to_string()))?;
                    update
                        .check_shape(cf.def().column_type == ColumnType::Super)
                        .map_err(corrupt)?;
                    cf.validator()
                        .stored_update(update)
                        .map_err(|e| corrupt(e.to_string()))?;
                    cf.apply(&sort_key, &m.key, update);
                    dirty_ids.entry(pos.segment).or_default().insert(*id);
                }
            }
            Ok(())
        };
        let bounds = LogBounds {
            oldest: manifest.log_oldest,
            start: manifest.log_start,
        };
        let log = replay::replay_log(
            log_dir,
            bounds,
            options.commit_log_ignore_replay_errors,
            &mut apply,
        )?;
        tracing::debug!(
            "replayed {} records from {} segments",
            log.records,
            log.segments.len()
        );
        let dirty = log
            .segments
            .iter()
            .map(|(seq, path)| {
                (
                    *seq,
                    (path.clone(), dirty_ids.remove(seq).unwrap_or_default()),
                )
            })
            .collect();
        Ok(ReplayOutcome {
            obsolete: log.obsolete.clone(),
            log,
            dirty,
        })
    }

    /// Opens the database where the options say: the first of `data_file_directories`, else
    /// [`DEFAULT_DATA_DIR`].
    pub fn open_configured(options: Options) -> Result<Database> {
        let dir = options
            .data_file_directories
            .first()
            .cloned()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
        Self::open(dir, options)
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
    pub fn options(&self) -> &Options {
        &self.inner.options
    }

    /// Makes every acknowledged write durable and releases this handle, reporting any error that
    /// dropping it would have to swallow. The database itself closes (its background work stops
    /// and its directory lock is released) when the last clone is closed or dropped.
    pub fn close(self) -> Result<()> {
        self.flush_all()?;
        self.inner.commitlog.sync()
    }

    fn now(&self) -> Now {
        let micros = self.inner.options.clock.now_micros();
        Now {
            micros,
            seconds: micros.div_euclid(1_000_000),
        }
    }

    fn schema(&self) -> Arc<SchemaState> {
        self.inner.schema.read().clone()
    }

    fn cf(&self, keyspace: &str, cf: &str) -> Result<Arc<ColumnFamilyStore>> {
        let schema = self.schema();
        let ks = schema
            .keyspaces
            .get(keyspace)
            .ok_or_else(|| Error::UnknownKeyspace(keyspace.to_string()))?;
        ks.cfs
            .get(cf)
            .cloned()
            .ok_or_else(|| Error::UnknownColumnFamily {
                keyspace: keyspace.to_string(),
                column_family: cf.to_string(),
            })
    }

    /// One column family, or with `None` every column family of the keyspace.
    fn cfs_of(
        &self,
        keyspace: &str,
        column_family: Option<&str>,
    ) -> Result<Vec<Arc<ColumnFamilyStore>>> {
        match column_family {
            Some(cf) => Ok(vec![self.cf(keyspace, cf)?]),
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

    // ---- writes ----

    /// Writes one column (Standard CF) or sub-column (Super CF).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use supercolumn::{ColumnPath, Database, Options, WriteOptions};
    /// let db = Database::open(dir.path(), Options::default())?;
    /// db.insert("Keyspace1", "jsmith", &ColumnPath::new("Standard2").column("first"), "John", WriteOptions::now())?;
    /// # Ok::<(), supercolumn::Error>(())
    /// ```
    pub fn insert(
        &self,
        keyspace: &str,
        key: impl AsRef<[u8]>,
        path: &ColumnPath,
        value: impl AsRef<[u8]>,
        write: WriteOptions,
    ) -> Result<()> {
        let mut b = BatchMutation::new();
        b.insert(key, path.clone(), value, write);
        self.batch_mutate(keyspace, &b)
    }

    /// Deletes what `path` names: the whole row (CF only), a super column, or a column, with a
    /// tombstone at `timestamp` (default: now) that hides everything beneath it written at or
    /// before that timestamp.
    pub fn remove(
        &self,
        keyspace: &str,
        key: impl AsRef<[u8]>,
        path: &ColumnPath,
        timestamp: Option<i64>,
    ) -> Result<()> {
        let mut b = BatchMutation::new();
        b.remove(key, path.clone(), timestamp);
        self.batch_mutate(keyspace, &b)
    }

    /// Applies many mutations over many rows and column families of one keyspace. The whole batch
    /// is validated first (a bad mutation anywhere changes nothing); then each row's mutations
    /// for one column family apply atomically. Default timestamps are one "now" for the batch.
    pub fn batch_mutate(&self, keyspace: &str, batch: &BatchMutation) -> Result<()> {
        let started = std::time::Instant::now();
        let now = self.now();
        let schema = self.schema();
        let ks = schema
            .keyspaces
            .get(keyspace)
            .ok_or_else(|| Error::UnknownKeyspace(keyspace.to_string()))?;
        // Validate everything first, grouping by row key, then by column family.
        let mut rows: Vec<(&[u8], CfUpdates)> = Vec::new();
        let mut row_index: HashMap<&[u8], usize> = HashMap::new();
        for (key, m) in batch.iter() {
            validate_key(key)?;
            let cf_name = BatchMutation::column_family_of(m);
            let cf = ks
                .cfs
                .get(cf_name)
                .ok_or_else(|| Error::UnknownColumnFamily {
                    keyspace: keyspace.to_string(),
                    column_family: cf_name.to_string(),
                })?;
            let found = if rows.len() <= LINEAR_ROW_SEARCH {
                rows.iter().position(|(k, _)| *k == key)
            } else {
                if row_index.is_empty() {
                    row_index.extend(rows.iter().enumerate().map(|(i, (k, _))| (*k, i)));
                }
                row_index.get(key).copied()
            };
            let i = match found {
                Some(i) => i,
                None => {
                    rows.push((key, Vec::new()));
                    if !row_index.is_empty() {
                        row_index.insert(key, rows.len() - 1);
                    }
                    rows.len() - 1
                }
            };
            let updates = &mut rows[i].1;
            let j = match updates.iter().position(|(c, _)| Arc::ptr_eq(c, cf)) {
                Some(j) => j,
                None => {
                    updates.push((cf.clone(), RowUpdate::default()));
                    updates.len() - 1
                }
            };
            cf.validator().add(m, now, &mut updates[j].1)?;
        }
        let records: Vec<RowWrite<'_>> = rows
            .iter()
            .map(|(key, updates)| RowWrite { key, updates })
            .collect();
        {
            // The switch lock keeps a memtable switch from falling between the log append and
            // the memtable apply, which would let a flush claim a log position it does not cover.
            let _switch = self.inner.switch_lock.read();
            // One record per row, one fsync for the batch.
            let logged = self.inner.commitlog.append_all(&records)?;
            for ((record, (_, updates)), (_, log_bytes)) in records.iter().zip(&rows).zip(&logged) {
                let sort_key = self.inner.partitioner.row_sort_key(record.key);
                for (cf, update) in updates {
                    cf.apply(&sort_key, record.key, update);
                    cf.record_write(started, log_bytes / updates.len() as u64);
                }
            }
        }
        // The writes are durable and visible: from here on, trouble is logged, not returned.
        let mut touched: Vec<&Arc<ColumnFamilyStore>> = Vec::new();
        for (_, updates) in &rows {
            for (cf, _) in updates {
                if !touched.iter().any(|t| Arc::ptr_eq(t, cf)) {
                    touched.push(cf);
                }
            }
        }
        for cf in touched {
            if cf.needs_flush() {
                if let Err(e) = self.request_flush(cf) {
                    tracing::error!("flush of {} failed: {e}", cf.def().name);
                }
            }
        }
        if let Err(e) = self.check_total_memtable_space() {
            tracing::error!("flush for MemtableTotalSpaceInMB failed: {e}");
        }
        // Compaction behind: slow this writer in proportion, so the compactor can catch up.
        let delay = rows
            .iter()
            .flat_map(|(_, u)| u.iter().map(|(cf, _)| cf.write_delay()))
            .max()
            .unwrap_or_default();
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        Ok(())
    }

    /// Freezes `cf`'s memtable and hands it to the background flusher. If flushing has fallen
    /// behind (too many frozen memtables), the writer flushes itself: it is slowed, not failed,
    /// and memory stays bounded.
    fn request_flush(&self, cf: &Arc<ColumnFamilyStore>) -> Result<()> {
        let switched = {
            let _switch = self.inner.switch_lock.write();
            cf.switch_memtable(self.inner.commitlog.current_position())
        };
        if cf.frozen_count() > MAX_FROZEN_MEMTABLES {
            self.flush_frozen(cf)?;
        } else if switched {
            self.inner.flusher.submit(cf.clone());
        }
        Ok(())
    }

    /// Past `MemtableTotalSpaceInMB` across all column families, flushes the largest memtable.
    fn check_total_memtable_space(&self) -> Result<()> {
        let limit = (self.inner.options.memtable_total_space_mb as usize) << 20;
        let schema = self.schema();
        let cfs = schema.keyspaces.values().flat_map(|k| k.cfs.values());
        // Total over all memtables; the flush goes to the largest *active* one (frozen ones are
        // already on their way to disk).
        let (total, largest) = cfs.fold(
            (0usize, None::<(&Arc<ColumnFamilyStore>, usize)>),
            |(t, l), cf| {
                let active = cf.active_bytes();
                let l = match l {
                    Some((x, b)) if b >= active => Some((x, b)),
                    _ if active > 0 => Some((cf, active)),
                    other => other,
                };
                (t + cf.memtable_bytes(), l)
            },
        );
        match largest {
            Some((cf, _)) if total > limit => self.request_flush(cf),
            _ => Ok(()),
        }
    }

    fn flush_frozen(&self, cf: &Arc<ColumnFamilyStore>) -> Result<()> {
        self.inner.flush_frozen(cf)
    }

    /// Flushes the memtables of one column family (or, with `None`, of every column family of
    /// the keyspace) to SSTables, returning once they are on disk and live.
    pub fn flush(&self, keyspace: &str, column_family: Option<&str>) -> Result<()> {
        let cfs = self.cfs_of(keyspace, column_family)?;
        for cf in cfs {
            self.inner.flush_cf(&cf)?;
        }
        Ok(())
    }

    /// Runs a major compaction of one column family (or, with `None`, of every column family of
    /// the keyspace): flushes its memtables, merges all its SSTables into one, and purges
    /// tombstones past their grace period. Returns once the result is live.
    pub fn compact(&self, keyspace: &str, column_family: Option<&str>) -> Result<()> {
        self.flush(keyspace, column_family)?;
        let cfs = self.cfs_of(keyspace, column_family)?;
        for cf in cfs {
            cf.compact(true)?;
        }
        Ok(())
    }

    /// Runs the minor (size-tiered) compactions that are due for one column family (or every
    /// column family of the keyspace) now, instead of waiting for the background compactor.
    /// Returns how many ran.
    pub fn compact_pending(&self, keyspace: &str, column_family: Option<&str>) -> Result<usize> {
        let cfs = self.cfs_of(keyspace, column_family)?;
        let mut n = 0;
        for cf in cfs {
            while cf.compact(false)?.is_some() {
                n += 1;
            }
        }
        Ok(n)
    }

    /// Flushes every column family of every keyspace.
    pub fn flush_all(&self) -> Result<()> {
        for cf in self.inner.all_cfs() {
            self.inner.flush_cf(&cf)?;
        }
        Ok(())
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

    // ---- reads ----

    /// Reads one column, or one super column with its live sub-columns. `Ok(None)` when nothing
    /// live is there.
    pub fn get(
        &self,
        keyspace: &str,
        key: impl AsRef<[u8]>,
        path: &ColumnPath,
    ) -> Result<Option<ColumnOrSuperColumn>> {
        let key = key.as_ref();
        validate_key(key)?;
        let cf = self.cf(keyspace, &path.column_family)?;
        let (parent_sc, name) = match (cf.def().column_type, &path.super_column, &path.column) {
            (_, sc, Some(c)) => (sc.as_deref(), c.clone()),
            (ColumnType::Super, Some(sc), None) => (None, sc.clone()),
            (ColumnType::Standard, _, None) => {
                return Err(Error::invalid(format!(
                    "get from {keyspace}.{} needs a column name",
                    path.column_family
                )))
            }
            (ColumnType::Super, None, None) => {
                return Err(Error::invalid(format!(
                    "get from {keyspace}.{} needs a super column",
                    path.column_family
                )))
            }
        };
        cf.validator().path(path, false)?;
        let predicate = SlicePredicate::Names(vec![name]);
        cf.validate_read(parent_sc, &predicate)?;
        let started = std::time::Instant::now();
        let sort_key = self.inner.partitioner.row_sort_key(key);
        let mut found = cf.slice(&sort_key, key, parent_sc, &predicate, self.now().seconds)?;
        cf.record_read(started);
        Ok(found.pop())
    }

    /// Reads the columns (or super columns, or sub-columns of `parent.super_column`) of one row
    /// that `predicate` selects; empty when there are none.
    pub fn get_slice(
        &self,
        keyspace: &str,
        key: impl AsRef<[u8]>,
        parent: &ColumnParent,
        predicate: &SlicePredicate,
    ) -> Result<Vec<ColumnOrSuperColumn>> {
        let key = key.as_ref();
        validate_key(key)?;
        let cf = self.cf(keyspace, &parent.column_family)?;
        cf.validate_read(parent.super_column.as_deref(), predicate)?;
        let started = std::time::Instant::now();
        let sort_key = self.inner.partitioner.row_sort_key(key);
        let out = cf.slice(
            &sort_key,
            key,
            parent.super_column.as_deref(),
            predicate,
            self.now().seconds,
        );
        cf.record_read(started);
        out
    }

    /// [`get_slice`](Self::get_slice) of many rows: one [`KeySlice`] per requested key, in request
    /// order, with an empty list where a row has no data.
    pub fn multiget_slice<K: AsRef<[u8]>>(
        &self,
        keyspace: &str,
        keys: &[K],
        parent: &ColumnParent,
        predicate: &SlicePredicate,
    ) -> Result<Vec<KeySlice>> {
        let cf = self.cf(keyspace, &parent.column_family)?;
        cf.validate_read(parent.super_column.as_deref(), predicate)?;
        for k in keys {
            validate_key(k.as_ref())?;
        }
        let now = self.now().seconds;
        let started = std::time::Instant::now();
        let out = keys
            .iter()
            .map(|k| {
                let key = k.as_ref();
                let sort_key = self.inner.partitioner.row_sort_key(key);
                Ok(KeySlice {
                    key: key.to_vec(),
                    columns: cf.slice(
                        &sort_key,
                        key,
                        parent.super_column.as_deref(),
                        predicate,
                        now,
                    )?,
                })
            })
            .collect();
        cf.record_read(started);
        out
    }

    /// Counts what [`get_slice`](Self::get_slice) would return (so a range predicate's `count`
    /// caps it; [`SlicePredicate::everything`] counts all). Under a Super CF without a super
    /// column, super columns with at least one live sub-column are counted.
    pub fn get_count(
        &self,
        keyspace: &str,
        key: impl AsRef<[u8]>,
        parent: &ColumnParent,
        predicate: &SlicePredicate,
    ) -> Result<usize> {
        Ok(self.get_slice(keyspace, key, parent, predicate)?.len())
    }

    /// Reads rows in token order within `range` (both ends inclusive; a key bound stands for its
    /// token under a hashing partitioner), at most `range.count` of them, each with the slice
    /// `predicate` selects. Rows that hold only tombstones are skipped.
    pub fn get_range_slices(
        &self,
        keyspace: &str,
        parent: &ColumnParent,
        predicate: &SlicePredicate,
        range: &KeyRange,
    ) -> Result<Vec<KeySlice>> {
        let cf = self.cf(keyspace, &parent.column_family)?;
        cf.validate_read(parent.super_column.as_deref(), predicate)?;
        if range.count == 0 {
            return Err(Error::invalid("a key range's count must be positive"));
        }
        let p = self.inner.partitioner;
        let bound_token = |b: &RangeBound| -> Result<Option<Vec<u8>>> {
            Ok(match b {
                RangeBound::Unbounded => None,
                RangeBound::Key(k) => {
                    validate_key(k)?;
                    Some(Partitioner::token_bytes(&p.token(k)))
                }
                RangeBound::Token(t) => Some(Partitioner::token_bytes(&p.parse_token(t)?)),
            })
        };
        let start = bound_token(&range.start)?;
        let end = bound_token(&range.end)?;
        if let (Some(s), Some(e)) = (&start, &end) {
            if s > e {
                return Err(Error::invalid(format!(
                    "the start of the key range sorts after its end under {}",
                    p.class_name()
                )));
            }
        }
        let lo = start.as_deref().map_or(Bound::Unbounded, Bound::Included);
        let started = std::time::Instant::now();
        let out = cf.range_slices(
            p,
            lo,
            end.as_deref(),
            parent.super_column.as_deref(),
            predicate,
            range.count,
            self.now().seconds,
        );
        cf.record_read(started);
        out
    }

    // ---- schema ----

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

    /// A column family's definition.
    pub fn describe_column_family(&self, keyspace: &str, cf: &str) -> Result<ColumnFamilyDef> {
        Ok(self.cf(keyspace, cf)?.def().clone())
    }

    fn change_schema(&self, f: impl FnOnce(&mut SchemaState) -> Result<()>) -> Result<()> {
        let _serial = self.inner.schema_change.lock();
        let current = self.schema();
        let mut next = SchemaState {
            keyspaces: current.keyspaces.clone(),
            next_cf_id: current.next_cf_id,
        };
        f(&mut next)?;
        let catalog = next.to_catalog(self.inner.partitioner, self.inner.options.encode_settings());
        catalog.store(self.inner.options.file_system.as_ref(), &self.inner.root)?;
        *self.inner.schema.write() = Arc::new(next);
        Ok(())
    }

    /// Creates a keyspace (with any column families it defines).
    pub fn create_keyspace(&self, def: KeyspaceDef) -> Result<()> {
        def.validate()?;
        self.change_schema(|s| {
            if s.keyspaces.contains_key(&def.name) {
                return Err(Error::Schema(format!(
                    "keyspace '{}' already exists",
                    def.name
                )));
            }
            let ids: Vec<(String, u32)> = def
                .column_families
                .iter()
                .map(|c| Ok((c.name.clone(), s.allocate_cf_id()?)))
                .collect::<Result<_>>()?;
            let state = KeyspaceState::new(
                def.clone(),
                |cf| ids.iter().find(|(n, _)| n == cf).map_or(0, |(_, id)| *id),
                &self.inner.env,
            );
            for cf in state.cfs.values() {
                self.inner.flusher.watch(cf);
            }
            s.keyspaces.insert(def.name.clone(), state);
            Ok(())
        })
    }

    /// Drops a keyspace and all its data.
    pub fn drop_keyspace(&self, name: &str) -> Result<()> {
        let mut dropped = Vec::new();
        self.change_schema(|s| {
            let ks = s
                .keyspaces
                .remove(name)
                .ok_or_else(|| Error::UnknownKeyspace(name.to_string()))?;
            dropped.extend(ks.cfs.into_values());
            Ok(())
        })?;
        self.remove_dropped(&dropped)?;
        let dir = self.inner.root.join(name);
        if dir.exists() {
            // Empty by now; a stray file left by hand keeps the directory, harmlessly.
            let _ = std::fs::remove_dir(&dir);
        }
        Ok(())
    }

    /// After a drop is in the catalog: takes the CFs out of the manifest and the commit log's
    /// bookkeeping, and removes their files.
    fn remove_dropped(&self, dropped: &[Arc<ColumnFamilyStore>]) -> Result<()> {
        for cf in dropped {
            cf.mark_dropped();
        }
        let ids: BTreeSet<u32> = dropped.iter().map(|c| c.id()).collect();
        self.inner.env.ctx.update_manifest(|m| {
            m.cfs.retain(|id, _| !ids.contains(id));
            m.obsolete
                .extend(dropped.iter().flat_map(|cf| cf.live_files()));
        })?;
        for cf in dropped {
            let retired = self.inner.commitlog.forget(cf.id())?;
            self.inner.retire(retired)?;
            cf.remove_files()?;
        }
        Ok(())
    }

    /// Adds a column family to a keyspace.
    pub fn create_column_family(&self, keyspace: &str, def: ColumnFamilyDef) -> Result<()> {
        def.validate()?;
        self.change_schema(|s| {
            let id = s.allocate_cf_id()?;
            let ks = s
                .keyspaces
                .get_mut(keyspace)
                .ok_or_else(|| Error::UnknownKeyspace(keyspace.to_string()))?;
            if ks.cfs.contains_key(&def.name) {
                return Err(Error::Schema(format!(
                    "column family '{}' already exists in keyspace '{keyspace}'",
                    def.name
                )));
            }
            let store = self.inner.env.store(&ks.def, id, &def);
            self.inner.flusher.watch(&store);
            ks.cfs.insert(def.name.clone(), store);
            ks.def.column_families.push(def);
            Ok(())
        })
    }

    /// Drops a column family and all its data.
    pub fn drop_column_family(&self, keyspace: &str, cf: &str) -> Result<()> {
        let mut dropped = Vec::new();
        self.change_schema(|s| {
            let ks = s
                .keyspaces
                .get_mut(keyspace)
                .ok_or_else(|| Error::UnknownKeyspace(keyspace.to_string()))?;
            let Some(store) = ks.cfs.remove(cf) else {
                return Err(Error::UnknownColumnFamily {
                    keyspace: keyspace.to_string(),
                    column_family: cf.to_string(),
                });
            };
            dropped.push(store);
            ks.def.column_families.retain(|c| c.name != cf);
            Ok(())
        })?;
        self.remove_dropped(&dropped)
    }
}

impl Mutation {
    /// An insert, for [`BatchMutation::push`].
    pub fn insert(path: ColumnPath, value: impl AsRef<[u8]>, write: WriteOptions) -> Self {
        Mutation::Insert {
            path,
            value: value.as_ref().to_vec(),
            write,
        }
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
        use crate::commitlog::segment;
        use crate::model::cell::{Cell, Entry};
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), Options::default()).unwrap();
        let cf = db.cf("Keyspace1", "Standard2").unwrap().id();
        drop(db);
        let seg = replay::segments_in(&dir.path().join(file_names::COMMIT_LOG_DIR))
            .unwrap()
            .pop()
            .unwrap()
            .1;
        let m = RowMutation {
            key: b"k".to_vec(),
            updates: vec![(
                cf,
                RowUpdate {
                    deletion: None,
                    entries: vec![(
                        vec![0xff, 0xfe],
                        Entry::Cell(Cell::live(1, b"v".to_vec(), None)),
                    )],
                },
            )],
        };
        let mut w = Writer::default();
        m.encode(&mut w);
        let mut bytes = std::fs::read(&seg).unwrap();
        segment::frame(&w.buf, &mut bytes);
        std::fs::write(&seg, &bytes).unwrap();
        match Database::open(dir.path(), Options::default()) {
            Err(Error::Corrupt { path, reason }) => {
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
