//! One column family's live state: its memtables and SSTables (a *view*, swapped atomically so a
//! read sees one consistent set), its key cache and counters; writes into it, flushes of it, and
//! reads over it.
//!
//! Writes arrive validated ([`RowUpdate`]) and already in the commit log. Reads are validated
//! here against the CF's comparators, then evaluated by [`crate::query::slice`] over every source
//! holding the row: memtables, then SSTables (bloom filter → key cache → index → blocks).

use std::ops::Bound;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};

use super::manifest::{CfManifest, Manifest};
use super::StoreContext;
use crate::cache::KeyCache;
use crate::commitlog::LogPosition;
use crate::compaction::size_tiered::{self, Candidate, SMALL_FLOOR};
use crate::compaction::task::{self, CompactionParams};
use crate::error::{Error, NameKind, Result};
use crate::file_names;
use crate::memtable::{Memtable, RowData};
use crate::model::partitioner::Partitioner;
use crate::mutation::{RowUpdate, Validator};
use crate::query::merge::{row_key, KMerge, RowSource};
use crate::query::slice::{self, SliceContext};
use crate::query::{ColumnOrSuperColumn, KeySlice, SlicePredicate};
use crate::schema::{ColumnFamilyDef, ColumnType, KeysCached};
use crate::sstable::reader::{Obsolete, SstRow};
use crate::sstable::{ReadContext, Sstable, SstableWriter};
use crate::stats::{bump, ColumnFamilyStats, Counters};

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
    /// `GCGraceSeconds`.
    pub gc_grace_seconds: u32,
}

/// What one compaction did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactionSummary {
    /// SSTables merged.
    pub inputs: usize,
    /// Bytes read.
    pub bytes_in: u64,
    /// Bytes written.
    pub bytes_out: u64,
    /// Tombstones purged.
    pub purged: u64,
}

/// The pause for a write to a CF with `sstables` SSTables (see
/// [`ColumnFamilyStore::write_delay`]).
pub fn write_delay(sstables: usize, min_threshold: u32) -> Duration {
    if min_threshold == 0 {
        return Duration::ZERO;
    }
    let soft = (8 * min_threshold as usize).max(16);
    Duration::from_millis(sstables.saturating_sub(soft).min(50) as u64)
}

/// The sources a read consults, fixed for the read's duration.
#[derive(Debug, Default)]
struct View {
    active: Arc<Memtable>,
    /// Memtables waiting to be flushed, oldest first, each with the commit log position it
    /// covers up to.
    frozen: Vec<(Arc<Memtable>, LogPosition)>,
    /// Live SSTables, oldest first.
    sstables: Vec<Arc<Sstable>>,
    /// Live SSTables that failed their checks at open: (file, what is wrong). While any is
    /// here, reads of this CF report it rather than answer without it.
    broken: Vec<(PathBuf, String)>,
}

impl View {
    /// The first broken SSTable as an error, if there is one.
    fn check_broken(&self) -> Result<()> {
        match self.broken.first() {
            None => Ok(()),
            Some((path, reason)) => Err(Error::Corrupt {
                path: path.clone(),
                reason: reason.clone(),
            }),
        }
    }
}

impl View {
    fn memtables(&self) -> impl Iterator<Item = &Arc<Memtable>> {
        std::iter::once(&self.active).chain(self.frozen.iter().map(|(m, _)| m))
    }
}

/// A column family's store.
#[derive(Debug)]
pub struct ColumnFamilyStore {
    keyspace: String,
    /// `Keyspace/ColumnFamily`, for errors.
    origin: String,
    id: u32,
    def: ColumnFamilyDef,
    dir: PathBuf,
    view: RwLock<Arc<View>>,
    ctx: Arc<StoreContext>,
    key_cache: KeyCache,
    keys_cached: KeysCached,
    counters: Counters,
    limits: FlushLimits,
    compaction: CompactionSettings,
    compacting: Mutex<()>,
    /// Set once the CF is dropped: nothing may be flushed or compacted into it afterwards.
    dropped: AtomicBool,
    /// When the active memtable took its first write (engine clock, µs; 0: not yet).
    active_since: AtomicI64,
    flushing: Mutex<()>,
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
        let compaction = CompactionSettings {
            min_threshold: def
                .min_compaction_threshold
                .unwrap_or(compaction.min_threshold),
            max_threshold: def
                .max_compaction_threshold
                .unwrap_or(compaction.max_threshold),
            gc_grace_seconds: def.gc_grace_seconds.unwrap_or(compaction.gc_grace_seconds),
        };
        ColumnFamilyStore {
            keyspace: keyspace.to_string(),
            origin: format!("{keyspace}/{}", def.name),
            id,
            keys_cached: def
                .keys_cached
                .unwrap_or(KeysCached::Fraction(keys_cached_fraction)),
            dir: ctx.root.join(keyspace),
            def,
            view: RwLock::new(Arc::new(View {
                active: Arc::new(Memtable::with_expected_rows(expected_rows(&limits))),
                ..View::default()
            })),
            ctx,
            key_cache: KeyCache::default(),
            counters: Counters::default(),
            limits,
            compaction,
            compacting: Mutex::new(()),
            dropped: AtomicBool::new(false),
            active_since: AtomicI64::new(0),
            flushing: Mutex::new(()),
        }
    }

    fn new_memtable(&self) -> Memtable {
        Memtable::with_expected_rows(expected_rows(&self.limits))
    }

    /// The column family's id (never reused; see the catalog).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The definition.
    pub fn def(&self) -> &ColumnFamilyDef {
        &self.def
    }

    /// A validator for this CF's names and values.
    pub fn validator(&self) -> Validator<'_> {
        Validator {
            keyspace: &self.keyspace,
            cf: &self.def,
        }
    }

    fn is_super(&self) -> bool {
        self.def.column_type == ColumnType::Super
    }

    fn view(&self) -> Arc<View> {
        self.view.read().clone()
    }

    fn read_context(&self) -> ReadContext<'_> {
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
            let path = self.dir.join(file_names::sstable(&self.def.name, *g));
            match Sstable::open(&path, *g) {
                Ok(t) => tables.push(Arc::new(t)),
                Err(Error::Corrupt { path, reason }) => {
                    tracing::error!("{}: {reason}", path.display());
                    broken.push((path, reason));
                }
                Err(Error::Io { path, source })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    let reason = "a live SSTable named by the manifest is missing".to_string();
                    tracing::error!("{}: {reason}", path.display());
                    broken.push((path, reason));
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

    fn resize_key_cache(&self) {
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
    pub fn apply(&self, sort_key: &[u8], key: &[u8], update: &RowUpdate) {
        let v = self.view();
        v.active.apply(sort_key, key, update, self.is_super());
        let client: usize = update
            .entries
            .iter()
            .map(|(k, e)| {
                key.len()
                    + k.len()
                    + match e {
                        crate::model::cell::Entry::Cell(c) => match &c.value {
                            crate::model::cell::CellValue::Live { value, .. } => value.len(),
                            crate::model::cell::CellValue::Tombstone { .. } => 0,
                        },
                        crate::model::cell::Entry::SuperColumnDeletion(_) => 0,
                    }
            })
            .sum();
        self.counters
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
        let v = self.view();
        let m = &v.active;
        m.live_bytes() >= self.limits.bytes
            || m.operations() >= self.limits.operations
            || self.idle_too_long()
    }

    /// Whether the active memtable holds writes older than `MemtableFlushAfterMinutes`.
    pub fn idle_too_long(&self) -> bool {
        let since = self.active_since.load(Ordering::Relaxed);
        let age = i64::try_from(self.limits.age.as_micros()).unwrap_or(i64::MAX);
        since != 0 && self.ctx.clock.now_micros().saturating_sub(since) >= age
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

    /// Writes every frozen memtable to an SSTable, oldest first, making each live in the
    /// manifest; returns the commit log position this CF is now flushed to, if it moved. On an
    /// error the memtable stays frozen (and readable), to be flushed again later.
    pub fn flush_frozen(&self) -> Result<Option<LogPosition>> {
        let _one_at_a_time = self.flushing.lock();
        if self.dropped.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let mut flushed_to = None;
        loop {
            let Some((mem, position)) = self.view().frozen.first().cloned() else {
                break;
            };
            let table = self.write_sstable(&mem)?;
            let generation = table.as_ref().map(|t| t.generation());
            self.ctx.update_manifest(|m| {
                let e = self.manifest_entry(m);
                e.flushed_to = e.flushed_to.max(position);
                e.sstables.extend(generation);
            })?;
            let mut v = self.view.write();
            let mut sstables = v.sstables.clone();
            sstables.extend(table);
            *v = Arc::new(View {
                active: v.active.clone(),
                frozen: v.frozen.iter().skip(1).cloned().collect(),
                sstables,
                broken: v.broken.clone(),
            });
            drop(v);
            self.resize_key_cache();
            crate::stats::bump(&self.counters.flushes);
            flushed_to = Some(position);
        }
        Ok(flushed_to)
    }

    fn write_sstable(&self, mem: &Memtable) -> Result<Option<Arc<Sstable>>> {
        let fs = self.ctx.fs.as_ref();
        if !self.dir.exists() {
            fs.create_dir_all(&self.dir)
                .map_err(|e| Error::io(&self.dir, e))?;
            // The new directory's entry must be durable before anything in it is made live.
            fs.sync_dir(&self.ctx.root)
                .map_err(|e| Error::io(&self.ctx.root, e))?;
        }
        let generation = self.ctx.next_generation();
        let path = self
            .dir
            .join(file_names::sstable(&self.def.name, generation));
        let mut w = SstableWriter::create(fs, &path, self.ctx.block_size, self.ctx.bloom_fp)?;
        let mut rows = 0;
        for row in mem.rows_from(Bound::Unbounded) {
            let data = row.value().data.read();
            if data.deletion.is_none() && data.entries.is_empty() {
                continue;
            }
            w.add_row(
                row.key().bytes(),
                row.key().client_key(),
                data.deletion,
                data.entries.iter(),
            )?;
            rows += 1;
        }
        if rows == 0 {
            return Ok(None);
        }
        let written = w.finish()?;
        self.counters
            .sstable_bytes_written
            .fetch_add(written.bytes, Ordering::Relaxed);
        Ok(Some(Arc::new(Sstable::open(&written.path, generation)?)))
    }

    /// Runs one compaction: `major` merges every SSTable; otherwise size-tiered picks a bucket,
    /// if one is full. The result is made live in the manifest, then in the view; the replaced
    /// SSTables' files go once no reader holds them. Returns `None` if there was nothing to do.
    pub fn compact(&self, major: bool) -> Result<Option<CompactionSummary>> {
        let _one_at_a_time = self.compacting.lock();
        if self.dropped.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let view = self.view();
        if !view.broken.is_empty() {
            // Merging around a damaged file would drop what it holds.
            view.check_broken()?;
        }
        let inputs: Vec<Arc<Sstable>> = if major {
            view.sstables.clone()
        } else {
            let candidates = self.candidates(&view);
            let c = self.compaction;
            let Some(pick) =
                size_tiered::pick(&candidates, c.min_threshold, c.max_threshold, SMALL_FLOOR)
            else {
                return Ok(None);
            };
            view.sstables
                .iter()
                .filter(|t| pick.iter().any(|p| p.generation == t.generation()))
                .cloned()
                .collect()
        };
        if inputs.is_empty() {
            return Ok(None);
        }
        let input_gens: Vec<u64> = inputs.iter().map(|t| t.generation()).collect();
        let others: Vec<Arc<Sstable>> = view
            .sstables
            .iter()
            .filter(|t| !input_gens.contains(&t.generation()))
            .cloned()
            .collect();
        let elsewhere = |sort_key: &[u8], key: &[u8]| {
            others.iter().any(|t| t.may_contain(key))
                || self.view().memtables().any(|m| m.row(sort_key).is_some())
        };
        let partitioner = self.ctx.partitioner;
        let key_of = |sort_key: &[u8]| partitioner.key_part(sort_key).to_vec();
        let params = CompactionParams {
            major,
            now_seconds: self.ctx.clock.now_seconds(),
            gc_grace_seconds: self.compaction.gc_grace_seconds,
            is_super: self.is_super(),
            elsewhere: &elsewhere,
            key_of: &key_of,
        };
        let fs = self.ctx.fs.as_ref();
        let generation = self.ctx.next_generation();
        let dest = self
            .dir
            .join(file_names::sstable(&self.def.name, generation));
        let out = task::compact(
            fs,
            &inputs,
            &dest,
            generation,
            self.ctx.block_size,
            self.ctx.bloom_fp,
            &params,
        )?;
        let output_gen = out.table.as_ref().map(|t| t.generation());
        self.ctx.update_manifest(|m| {
            let e = self.manifest_entry(m);
            e.sstables.retain(|g| !input_gens.contains(g));
            e.sstables.extend(output_gen);
            m.obsolete
                .extend(inputs.iter().map(|t| self.ctx.relative(t.path())));
        })?;
        let mut v = self.view.write();
        let mut sstables: Vec<Arc<Sstable>> = v
            .sstables
            .iter()
            .filter(|t| !input_gens.contains(&t.generation()))
            .cloned()
            .collect();
        sstables.extend(out.table.clone());
        *v = Arc::new(View {
            active: v.active.clone(),
            frozen: v.frozen.clone(),
            sstables,
            broken: v.broken.clone(),
        });
        drop(v);
        for t in &inputs {
            self.ctx.blocks.forget_table(t.id());
            self.key_cache.forget_table(t.id());
            t.mark_obsolete(self.obsolete());
        }
        self.resize_key_cache();
        crate::stats::bump(&self.counters.compactions);
        self.counters
            .bytes_compacted
            .fetch_add(out.bytes_in, Ordering::Relaxed);
        self.counters
            .sstable_bytes_written
            .fetch_add(out.bytes_out, Ordering::Relaxed);
        self.counters
            .tombstones_purged
            .fetch_add(out.purged, Ordering::Relaxed);
        Ok(Some(CompactionSummary {
            inputs: inputs.len(),
            bytes_in: out.bytes_in,
            bytes_out: out.bytes_out,
            purged: out.purged,
        }))
    }

    /// The live SSTables as size-tiered bucketing sees them.
    fn candidates(&self, view: &View) -> Vec<Candidate> {
        view.sstables
            .iter()
            .map(|t| Candidate {
                generation: t.generation(),
                bytes: t.bytes(),
            })
            .collect()
    }

    /// Full size-tiered buckets waiting to be merged.
    pub fn pending_compactions(&self) -> usize {
        let c = self.compaction;
        if c.min_threshold == 0 || c.max_threshold == 0 {
            return 0;
        }
        let candidates = self.candidates(&self.view());
        size_tiered::buckets(&candidates, SMALL_FLOOR)
            .iter()
            .filter(|b| b.len() >= (c.min_threshold as usize).max(2))
            .map(|b| b.len().div_ceil(c.max_threshold as usize))
            .sum()
    }

    /// Records a read's latency.
    pub fn record_read(&self, start: std::time::Instant) {
        self.counters.reads.record_since(start);
    }

    /// Records a write's latency and the commit log bytes it took.
    pub fn record_write(&self, start: std::time::Instant, log_bytes: u64) {
        self.counters.writes.record_since(start);
        self.counters
            .commitlog_bytes
            .fetch_add(log_bytes, Ordering::Relaxed);
    }

    /// How long a write should pause because compaction has fallen behind: nothing up to a soft
    /// limit of SSTables, then a millisecond per SSTable over it, at most 50 ms. With minor
    /// compaction off the user chose to let SSTables pile up, so writers are never slowed.
    pub fn write_delay(&self) -> Duration {
        write_delay(self.view().sstables.len(), self.compaction.min_threshold)
    }

    /// Whether size-tiered compaction has a full bucket to merge.
    pub fn needs_compaction(&self) -> bool {
        let candidates = self.candidates(&self.view());
        let c = self.compaction;
        size_tiered::pick(&candidates, c.min_threshold, c.max_threshold, SMALL_FLOOR).is_some()
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

    /// The relative paths of this CF's live SSTables, as the manifest lists obsolete files.
    pub fn live_files(&self) -> Vec<String> {
        self.view()
            .sstables
            .iter()
            .map(|t| self.ctx.relative(t.path()))
            .collect()
    }

    /// This CF's entry in the manifest, created with its names if it has none.
    fn manifest_entry<'m>(&self, m: &'m mut Manifest) -> &'m mut CfManifest {
        let e = m.cfs.entry(self.id).or_default();
        if e.name.is_empty() {
            e.keyspace.clone_from(&self.keyspace);
            e.name.clone_from(&self.def.name);
        }
        e
    }

    fn obsolete(&self) -> Obsolete {
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

    /// Checks a read of `super_column` (if any) with `predicate` against this CF.
    pub fn validate_read(
        &self,
        super_column: Option<&[u8]>,
        predicate: &SlicePredicate,
    ) -> Result<()> {
        let v = self.validator();
        let kind = match (self.def.column_type, super_column) {
            (ColumnType::Standard, Some(_)) => {
                return Err(Error::invalid(format!(
                    "column family {}.{} is Standard: a read may not name a super column",
                    self.keyspace, self.def.name
                )))
            }
            (ColumnType::Super, Some(sc)) => {
                v.name(sc, NameKind::SuperColumn)?;
                NameKind::Column
            }
            (ColumnType::Super, None) => NameKind::SuperColumn,
            (ColumnType::Standard, None) => NameKind::Column,
        };
        match predicate {
            SlicePredicate::Names(names) => {
                for n in names {
                    v.name(n, kind)?;
                }
            }
            SlicePredicate::Range(r) => {
                v.bound(&r.start, kind)?;
                v.bound(&r.finish, kind)?;
                if !r.start.is_empty() && !r.finish.is_empty() {
                    let cmp = match kind {
                        NameKind::Column if self.is_super() => self.def.subcomparator(),
                        _ => self.def.comparator.clone(),
                    };
                    let order = cmp.compare(&r.start, &r.finish);
                    if (r.reversed && order.is_lt()) || (!r.reversed && order.is_gt()) {
                        return Err(Error::invalid(format!(
                            "range finish must come after start in the order of traversal ({} slice of {}.{})",
                            if r.reversed { "reversed" } else { "forward" },
                            self.keyspace,
                            self.def.name
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    fn context(&self, now_seconds: i64) -> SliceContext<'_> {
        SliceContext {
            origin: &self.origin,
            column_type: self.def.column_type,
            comparator: self.def.comparator.as_ref(),
            subcomparator: self
                .def
                .subcomparator
                .as_deref()
                .unwrap_or(&crate::model::comparator::BytesType),
            now_seconds,
        }
    }

    /// Evaluates a slice of one row over the given memtable rows and SSTables of a view.
    #[allow(clippy::too_many_arguments)]
    fn eval_row(
        &self,
        view: &View,
        sort_key: &[u8],
        key: &[u8],
        super_column: Option<&[u8]>,
        predicate: &SlicePredicate,
        now_seconds: i64,
        skip_dead: bool,
    ) -> Result<Option<Vec<ColumnOrSuperColumn>>> {
        view.check_broken()?;
        let mem_rows: Vec<_> = view.memtables().filter_map(|m| m.row(sort_key)).collect();
        let guards: Vec<_> = mem_rows.iter().map(|e| e.value().data.read()).collect();
        let rctx = self.read_context();
        let ctx = self.context(now_seconds);
        let mut sst_rows: Vec<SstRow<'_>> = Vec::new();
        // Named columns of a live read: newest SSTables first, stopping once what was found is
        // newer than anything the rest hold. A range scan's liveness check needs every source.
        match slice::requested_keys(&ctx, super_column, predicate).filter(|_| !skip_dead) {
            Some(keys) => {
                let mut newest = vec![None; keys.len()];
                for g in &guards {
                    slice::note_newest(&**g as &RowData, &keys, &mut newest)?;
                }
                let mut tables: Vec<&Arc<Sstable>> = view.sstables.iter().collect();
                tables.sort_by_key(|t| std::cmp::Reverse(t.footer().max_timestamp));
                for t in tables {
                    let max = t.footer().max_timestamp;
                    if newest.iter().all(|n| n.is_some_and(|ts| ts > max)) {
                        bump(&self.counters.sstables_skipped);
                        continue;
                    }
                    if let Some(pos) = t.locate(sort_key, key, &rctx)? {
                        let row = t.row(sort_key, pos, rctx);
                        slice::note_newest(&row, &keys, &mut newest)?;
                        sst_rows.push(row);
                    }
                }
            }
            None => {
                for t in &view.sstables {
                    if let Some(pos) = t.locate(sort_key, key, &rctx)? {
                        sst_rows.push(t.row(sort_key, pos, rctx));
                    }
                }
            }
        }
        if guards.is_empty() && sst_rows.is_empty() {
            return Ok(if skip_dead { None } else { Some(Vec::new()) });
        }
        let mut sources: Vec<&dyn RowSource> = guards
            .iter()
            .map(|g| &**g as &RowData as &dyn RowSource)
            .collect();
        sources.extend(sst_rows.iter().map(|r| r as &dyn RowSource));
        let results = slice::slice(&sources, &ctx, super_column, predicate)?;
        // A row the slice found anything in is live; only an empty answer needs the check.
        if skip_dead && results.is_empty() && !slice::row_is_live(&sources, &ctx)? {
            return Ok(None);
        }
        Ok(Some(results))
    }

    /// Reads a validated slice of the row with this sort key and client key.
    pub fn slice(
        &self,
        sort_key: &[u8],
        key: &[u8],
        super_column: Option<&[u8]>,
        predicate: &SlicePredicate,
        now_seconds: i64,
    ) -> Result<Vec<ColumnOrSuperColumn>> {
        let view = self.view();
        Ok(self
            .eval_row(
                &view,
                sort_key,
                key,
                super_column,
                predicate,
                now_seconds,
                false,
            )?
            .unwrap_or_default())
    }

    /// Reads up to `count` live rows from `start`, in token order, while their token part is at
    /// most `end_token`, each with its slice.
    #[allow(clippy::too_many_arguments)]
    pub fn range_slices(
        &self,
        partitioner: Partitioner,
        start: Bound<&[u8]>,
        end_token: Option<&[u8]>,
        super_column: Option<&[u8]>,
        predicate: &SlicePredicate,
        count: usize,
        now_seconds: i64,
    ) -> Result<Vec<KeySlice>> {
        let view = self.view();
        view.check_broken()?;
        let rctx = self.read_context();
        let mut streams: Vec<Box<dyn Iterator<Item = Result<Vec<u8>>> + '_>> = Vec::new();
        for m in view.memtables() {
            streams.push(Box::new(
                m.rows_from(start).map(|e| Ok(e.key().bytes().to_vec())),
            ));
        }
        for t in &view.sstables {
            streams.push(Box::new(t.rows_from(start, rctx)));
        }
        let mut out = Vec::new();
        for group in KMerge::new(streams, row_key, false) {
            if out.len() >= count {
                break;
            }
            let sort_key = match group.into_iter().next() {
                Some(Ok(k)) => k,
                Some(Err(e)) => return Err(e),
                None => continue,
            };
            if end_token.is_some_and(|end| partitioner.token_part(&sort_key) > end) {
                break;
            }
            let key = partitioner.key_part(&sort_key).to_vec();
            if let Some(columns) = self.eval_row(
                &view,
                &sort_key,
                &key,
                super_column,
                predicate,
                now_seconds,
                true,
            )? {
                out.push(KeySlice { key, columns });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writers_slow_in_proportion_to_the_compaction_backlog() {
        assert_eq!(write_delay(10, 4), Duration::ZERO);
        assert_eq!(write_delay(32, 4), Duration::ZERO);
        assert_eq!(write_delay(35, 4), Duration::from_millis(3));
        assert_eq!(write_delay(1000, 4), Duration::from_millis(50));
        assert_eq!(write_delay(1000, 0), Duration::ZERO, "minor compaction off");
    }
}
