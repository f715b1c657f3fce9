//! One column family's live state: its memtables and SSTables (a *view*, `view.rs`, swapped
//! atomically so a read sees one consistent set), its key cache and counters, and writes into it. Flushing it is
//! `flush.rs`, compacting it `compaction.rs`, reading it `read.rs`.
//!
//! Writes arrive validated ([`RowUpdate`]) and already in the commit log (or, in a keyspace
//! without `durable_writes`, marked unlogged here).
//!
//! Long because the store holds its view, caches, counters and the locks that order its flushes
//! and compactions, each with its few accessors.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// An operation at least this slow is logged (a warning) as it finishes.
pub const SLOW_OPERATION: Duration = Duration::from_millis(500);

use arc_swap::{ArcSwap, Guard};
use parking_lot::Mutex;

use super::manifest::{CfManifest, Manifest};
use super::view::{View, ViewCell};
use super::StoreContext;
use crate::cache::KeyCache;
use crate::commitlog::LogPosition;
use crate::error::{CorruptKind, Error, FormatError, Result};
use crate::file_names;
use crate::memtable::Memtable;
use crate::model::cell::{CellRef, CellValueRef, EntryRef};
use crate::mutation::{RowUpdate, Validator};
use crate::schema::{ColumnFamilyDef, ColumnType, KeysCached};
use crate::sstable::reader::Obsolete;
use crate::sstable::{ReadContext, Sstable, TableOptions};
use crate::stats::{ColumnFamilyStats, Counters};

/// When a memtable is flushed.
#[derive(Clone, Copy, Debug)]
pub struct FlushLimits {
    /// `MemtableThroughputInMB`, in bytes.
    pub bytes: usize,
    /// `MemtableOperationsInMillions`, in column writes.
    pub operations: u64,
    /// `MemtableFlushAfterMinutes`.
    pub age: Duration,
}

/// A store definition's number, never handed out twice in a process.
fn fresh_generation() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Rows a memtable may reach before its operation limit flushes it (each row write is at
/// least one operation), bounded for memtables that flush on bytes or age instead.
fn expected_rows(limits: &FlushLimits) -> usize {
    match limits.operations {
        0 => 1 << 20,
        n => usize::try_from(n).unwrap_or(usize::MAX).min(1 << 22),
    }
}

/// When and how this CF compacts.
#[derive(Clone, Copy, Debug)]
pub struct CompactionSettings {
    /// `MinimumCompactionThreshold` (0: no minor compaction).
    pub min_threshold: u32,
    /// `MaximumCompactionThreshold` (0: no minor compaction).
    pub max_threshold: u32,
    /// `GCGraceSeconds` of the database: a CF's own (which `ALTER TABLE … WITH` may change)
    /// overrides it, see [`ColumnFamilyStore::gc_grace_seconds`].
    pub gc_grace_seconds: u32,
}

/// A column family's store.
#[derive(Debug)]
pub struct ColumnFamilyStore {
    pub(super) keyspace: String,
    /// `Keyspace/ColumnFamily`, for errors.
    pub(super) origin: String,
    pub(super) id: u32,
    /// The definition: replaced whole when a CQL table gains a collection column (its
    /// comparator grows a component that orders no name already written differently).
    pub(super) def: ArcSwap<ColumnFamilyDef>,
    /// A number no other store of this process has had, drawn again each time the definition
    /// is altered (after the new one is published), so what was prepared against an older
    /// definition, or against this CF before the database was reopened, can tell.
    pub(super) generation: AtomicU64,
    pub(super) dir: PathBuf,
    pub(super) view: ViewCell,
    pub(super) ctx: Arc<StoreContext>,
    pub(super) key_cache: KeyCache,
    pub(super) keys_cached: KeysCached,
    pub(super) counters: Counters,
    pub(super) limits: FlushLimits,
    pub(super) compaction: CompactionSettings,
    pub(super) compacting: Mutex<()>,
    /// The compaction running now, for those who ask while `compacting` is held.
    pub(super) running: Mutex<Option<Arc<super::compaction::Running>>>,
    /// Set once the CF is dropped: nothing may be flushed or compacted into it afterwards.
    pub(super) dropped: AtomicBool,
    /// When the active memtable took its first write (engine clock, µs; 0: not yet).
    pub(super) active_since: AtomicI64,
    pub(super) flushing: Mutex<()>,
    /// Set once a write skipped the commit log (its keyspace's `durable_writes` off): a clean
    /// close flushes this CF whatever its keyspace says by then.
    pub(super) unlogged: AtomicBool,
    /// The secondary indexes its writes maintain (`index.rs`), and whether there are any.
    pub(super) indexes: ArcSwap<Vec<super::index::IndexStore>>,
    pub(super) indexed: AtomicBool,
    /// For an index's column family: which entries its major compactions keep.
    pub(super) entry_check: arc_swap::ArcSwapOption<super::index::EntryCheck>,
    /// For a column family with indexes: what its compactions tell of the cells they discard.
    pub(super) discard_hook: arc_swap::ArcSwapOption<super::index::OnDiscard>,
}

impl ColumnFamilyStore {
    /// A store for `def` in `keyspace`, with no data yet.
    pub fn new(
        keyspace: &str,
        keys_cached_fraction: f64,
        id: u32,
        def: ColumnFamilyDef,
        ctx: Arc<StoreContext>,
        limits: FlushLimits,
        compaction: CompactionSettings,
    ) -> Self {
        ColumnFamilyStore {
            keyspace: keyspace.to_string(),
            origin: format!("{keyspace}/{}", def.name),
            id,
            keys_cached: def
                .keys_cached
                .unwrap_or(KeysCached::Fraction(keys_cached_fraction)),
            dir: ctx.root.join(keyspace),
            def: ArcSwap::from_pointee(def),
            generation: AtomicU64::new(fresh_generation()),
            view: ViewCell::new(View {
                active: Arc::new(Memtable::with_pool(
                    expected_rows(&limits),
                    Some(ctx.chunks.clone()),
                )),
                ..View::default()
            }),
            ctx,
            key_cache: KeyCache::default(),
            counters: Counters::default(),
            limits,
            compaction,
            compacting: Mutex::new(()),
            running: Mutex::new(None),
            dropped: AtomicBool::new(false),
            active_since: AtomicI64::new(0),
            flushing: Mutex::new(()),
            unlogged: AtomicBool::new(false),
            indexes: ArcSwap::from_pointee(Vec::new()),
            indexed: AtomicBool::new(false),
            entry_check: arc_swap::ArcSwapOption::empty(),
            discard_hook: arc_swap::ArcSwapOption::empty(),
        }
    }

    /// Records that a write to this CF skipped the commit log.
    pub fn mark_unlogged(&self) {
        if !self.unlogged.load(Ordering::Relaxed) {
            self.unlogged.store(true, Ordering::Relaxed);
        }
    }

    /// Whether a write to this CF ever skipped the commit log.
    pub fn holds_unlogged(&self) -> bool {
        self.unlogged.load(Ordering::Relaxed)
    }

    pub(super) fn new_memtable(&self) -> Memtable {
        Memtable::with_pool(expected_rows(&self.limits), Some(self.ctx.chunks.clone()))
    }

    /// The keyspace the column family belongs to.
    pub fn keyspace(&self) -> &str {
        &self.keyspace
    }

    /// The column family's id (never reused; see the catalog).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The definition as it is now.
    pub fn def(&self) -> Guard<Arc<ColumnFamilyDef>> {
        self.def.load()
    }

    /// Replaces the definition with `def`, whose comparator must order every name the old one
    /// accepted as the old one did (the caller checks; see `Database::alter_cql_table`).
    pub fn replace_def(&self, def: ColumnFamilyDef) {
        self.def.store(Arc::new(def));
    }

    /// This store's definition as a number no other store, and no earlier definition of this
    /// one, has had in this process: what a prepared statement checks before it runs on the
    /// table it was planned for. (A store opened again starts with a new one: a count from
    /// zero would match what was prepared before a reopen, and an alteration since.)
    pub fn version(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Marks an alteration, once the altered table is published.
    pub fn altered(&self) {
        self.generation.store(fresh_generation(), Ordering::Release);
    }

    /// A validator for this CF's names and values, under the definition as it is now.
    pub fn validator(&self) -> Validator<'_> {
        Validator {
            keyspace: &self.keyspace,
            cf: self.def.load(),
        }
    }

    /// How long a tombstone outlives compaction: the CF's own `GCGraceSeconds`, else the
    /// database's.
    pub fn gc_grace_seconds(&self) -> u32 {
        self.def
            .load()
            .gc_grace_seconds
            .unwrap_or(self.compaction.gc_grace_seconds)
    }

    /// The compaction thresholds in force: the CF's own, else the database's. Read from the
    /// definition each time, so an `ALTER TABLE` takes effect at the next compaction.
    pub(super) fn compaction_settings(&self) -> CompactionSettings {
        let def = self.def.load();
        CompactionSettings {
            min_threshold: def
                .min_compaction_threshold
                .unwrap_or(self.compaction.min_threshold),
            max_threshold: def
                .max_compaction_threshold
                .unwrap_or(self.compaction.max_threshold),
            gc_grace_seconds: self.gc_grace_seconds(),
        }
    }

    /// How this CF's next SSTable is written: its own block size, filter rate and compression,
    /// else the database's.
    pub(super) fn table_options(&self) -> TableOptions {
        let def = self.def.load();
        let db = self.ctx.table;
        TableOptions {
            block_size: def
                .block_size_kb
                .map_or(db.block_size, |kb| kb as usize * 1024),
            bloom_fp: def.bloom_filter_fp_chance.unwrap_or(db.bloom_fp),
            compress: def.compression.unwrap_or(db.compress),
            ..db
        }
    }

    pub(super) fn is_super(&self) -> bool {
        self.def.load().column_type == ColumnType::Super
    }

    /// The current view, for a read (see `view.rs`).
    pub(super) fn view(&self) -> Guard<Arc<View>> {
        self.view.load()
    }

    pub(super) fn read_context(&self) -> ReadContext<'_> {
        ReadContext {
            blocks: &self.ctx.blocks,
            keys: &self.key_cache,
            counters: &self.counters,
        }
    }

    /// Opens the live SSTables the manifest names (oldest first). One that fails its checks is
    /// kept as broken: the database opens, other column families read normally, and reads of
    /// this one name the damaged file.
    pub fn open_sstables(&self, generations: &[u64]) -> Result<()> {
        let mut tables = Vec::with_capacity(generations.len());
        let mut broken = Vec::new();
        for g in generations {
            let path = self
                .dir
                .join(file_names::sstable(&self.def.load().name, *g));
            match Sstable::open(self.ctx.fs.as_ref(), &path, *g, self.ctx.partitioner) {
                Ok(t) => tables.push(Arc::new(t)),
                Err(Error::Corrupt {
                    path,
                    place,
                    kind,
                    reason,
                }) => {
                    tracing::error!("{}{place}: {reason}", path.display());
                    broken.push((
                        path,
                        FormatError {
                            kind,
                            place,
                            reason,
                        },
                    ));
                }
                Err(Error::Io { path, source })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    let e = FormatError::new(
                        CorruptKind::Missing,
                        "a live SSTable named by the manifest is missing",
                    );
                    tracing::error!("{}: {e}", path.display());
                    broken.push((path, e));
                }
                Err(e) => return Err(e),
            }
        }
        let mut v = self.view.write();
        *v = Arc::new(View {
            active: v.active.clone(),
            frozen: v.frozen.clone(),
            sstables: tables,
            broken,
        });
        drop(v);
        self.resize_key_cache();
        Ok(())
    }

    pub(super) fn resize_key_cache(&self) {
        let rows: u64 = self.view().sstables.iter().map(|t| t.footer().rows).sum();
        let cap = match self.keys_cached {
            KeysCached::Absolute(n) => n,
            KeysCached::Fraction(f) if f <= 0.0 => 0,
            // At least one key when caching is on and there is anything to cache.
            KeysCached::Fraction(f) => ((rows as f64 * f).ceil() as u64).min(rows.max(1)),
        };
        self.key_cache
            .set_capacity(usize::try_from(cap).unwrap_or(usize::MAX));
    }

    /// Applies a validated row update to the active memtable. The caller holds the database's
    /// switch lock shared, so no memtable switch falls between its commit log append and this.
    pub fn apply(&self, sort_key: &[u8], key: &[u8], update: &RowUpdate<'_>) {
        let v = self.view();
        v.active.apply(sort_key, update, self.is_super());
        let client: usize = update
            .entries
            .iter()
            .map(|(k, e)| {
                key.len()
                    + k.len()
                    + match e {
                        EntryRef::Cell(CellRef {
                            value: CellValueRef::Live { value, .. },
                            ..
                        }) => value.len(),
                        _ => 0,
                    }
            })
            .sum();
        self.counters
            .local()
            .client_bytes
            .fetch_add(client.max(key.len()) as u64, Ordering::Relaxed);
        if self.active_since.load(Ordering::Relaxed) == 0 {
            let now = self.ctx.clock.now_micros().max(1);
            let _ =
                self.active_since
                    .compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// Whether the active memtable has passed a flush threshold.
    pub fn needs_flush(&self) -> bool {
        self.needs_flush_at(self.ctx.clock.now_micros())
    }

    /// [`Self::needs_flush`] with the clock read by the caller (a write's "now").
    pub fn needs_flush_at(&self, now_micros: i64) -> bool {
        self.memtable_full() || self.idle_at(now_micros)
    }

    /// Whether the active memtable has reached its size or operation threshold.
    pub fn memtable_full(&self) -> bool {
        let v = self.view();
        let m = &v.active;
        m.live_bytes() >= self.limits.bytes || m.operations() >= self.limits.operations
    }

    /// Whether the active memtable holds writes older than `MemtableFlushAfterMinutes`.
    pub fn idle_too_long(&self) -> bool {
        self.idle_at(self.ctx.clock.now_micros())
    }

    fn idle_at(&self, now_micros: i64) -> bool {
        let since = self.active_since.load(Ordering::Relaxed);
        let age = i64::try_from(self.limits.age.as_micros()).unwrap_or(i64::MAX);
        since != 0 && now_micros.saturating_sub(since) >= age
    }

    /// Bytes held by the active memtable.
    pub fn active_bytes(&self) -> usize {
        self.view().active.live_bytes()
    }

    /// Bytes held by all of this CF's memtables.
    pub fn memtable_bytes(&self) -> usize {
        self.view().memtables().map(|m| m.live_bytes()).sum()
    }

    /// Memtables waiting to be flushed.
    pub fn frozen_count(&self) -> usize {
        self.view().frozen.len()
    }

    /// Freezes the active memtable (if it holds anything) as covering the commit log up to
    /// `position`, and starts a fresh one. The caller holds the database's switch lock
    /// exclusively. Returns whether a memtable was frozen.
    pub fn switch_memtable(&self, position: LogPosition) -> bool {
        let mut v = self.view.write();
        if v.active.operations() == 0 {
            return false;
        }
        let mut frozen = v.frozen.clone();
        frozen.push((v.active.clone(), position));
        *v = Arc::new(View {
            active: Arc::new(self.new_memtable()),
            frozen,
            sstables: v.sstables.clone(),
            broken: v.broken.clone(),
        });
        self.active_since.store(0, Ordering::Relaxed);
        true
    }

    /// Records a read's latency.
    pub fn record_read(&self, start: std::time::Instant) {
        // One clock read serves both (a clock read is a few percent of a cached read).
        let took = start.elapsed();
        self.counters.reads.record(took);
        self.note_if_slow("read", took);
    }

    /// Logs an operation slower than [`SLOW_OPERATION`], so a user watching the log sees stalls
    /// as they happen.
    fn note_if_slow(&self, what: &str, took: std::time::Duration) {
        if took >= SLOW_OPERATION {
            tracing::warn!("slow {what} of {}: {} ms", self.origin, took.as_millis());
        }
    }

    /// Records a write's latency and the commit log bytes it took.
    pub fn record_write(&self, took: std::time::Duration, log_bytes: u64) {
        self.counters.writes.record(took);
        self.counters
            .local()
            .commitlog_bytes
            .fetch_add(log_bytes, Ordering::Relaxed);
    }

    /// Marks the CF dropped, waiting out any flush or compaction in progress, so nothing is
    /// written for it afterwards.
    pub fn mark_dropped(&self) {
        let _f = self.flushing.lock();
        let _c = self.compacting.lock();
        self.dropped.store(true, Ordering::SeqCst);
    }

    /// Removes this CF's SSTable files (after it is dropped and the manifest lists them as
    /// obsolete). Readers holding them keep their mappings; the files vanish from the directory
    /// at once.
    pub fn remove_files(&self) -> Result<()> {
        let fs = self.ctx.fs.as_ref();
        let tables = self.view().sstables.clone();
        for t in &tables {
            self.ctx.blocks.forget_table(t.id());
            self.key_cache.forget_table(t.id());
            match fs.remove_file(t.path()) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(t.path(), e)),
            }
        }
        if self.dir.exists() {
            fs.sync_dir(&self.dir)
                .map_err(|e| Error::io(&self.dir, e))?;
        }
        let notify = self.ctx.removal_notifier();
        for t in &tables {
            notify(t.path());
        }
        Ok(())
    }

    /// Runs `f` with the paths of this CF's live SSTables, which stay on disk while it runs
    /// (the view it holds keeps them from deletion): a snapshot links them.
    pub fn with_live_sstables<R>(&self, f: impl FnOnce(&[&Path]) -> R) -> R {
        let view = self.view();
        let paths: Vec<&Path> = view.sstables.iter().map(|t| t.path()).collect();
        f(&paths)
    }

    /// The relative paths of this CF's live SSTables, as the manifest lists obsolete files.
    pub fn live_files(&self) -> Vec<String> {
        self.view()
            .sstables
            .iter()
            .map(|t| self.ctx.relative(t.path()))
            .collect()
    }

    /// This CF's entry in the manifest, created with its names if it has none.
    pub(super) fn manifest_entry<'m>(&self, m: &'m mut Manifest) -> &'m mut CfManifest {
        let e = m.cfs.entry(self.id).or_default();
        if e.name.is_empty() {
            e.keyspace.clone_from(&self.keyspace);
            e.name.clone_from(&self.def.load().name);
        }
        e
    }

    pub(super) fn obsolete(&self) -> Obsolete {
        Obsolete {
            fs: self.ctx.fs.clone(),
            pending_bytes: self.counters.obsolete_bytes.clone(),
            on_removed: self.ctx.removal_notifier(),
        }
    }

    /// A snapshot of the CF's counters and sizes.
    pub fn stats(&self) -> ColumnFamilyStats {
        let v = self.view();
        let mut s = self.counters.snapshot();
        s.sstables = v.sstables.len();
        s.sstable_bytes = v.sstables.iter().map(|t| t.bytes()).sum();
        s.total_bytes += s.sstable_bytes;
        s.pending_compactions = self.pending_compactions();
        s.memtable_bytes = v.memtables().map(|m| m.live_bytes()).sum();
        s.memtable_operations = v.active.operations();
        s.key_cache_capacity = self.key_cache.capacity();
        s.key_cache_size = self.key_cache.len();
        s
    }
}
