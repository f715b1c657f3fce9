//! Opening a database: the catalog and the manifest (or a new database), the options in force,
//! then recovery (`recovery.rs`), the commit log, and the background threads.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use parking_lot::Mutex;

use super::flush::{self, FlushJob};
use super::state::{SchemaState, StoreEnv};
use super::{Core, Database, Inner, DEFAULT_DATA_DIR};
use crate::commitlog::{replay, CommitLog};
use crate::error::{Error, Result};
use crate::file_names;
use crate::io::dir_lock::DirLock;
use crate::io::FileSystem;
use crate::memtable::ChunkPool;
use crate::options::Options;
use crate::schema::catalog::Catalog;
use crate::schema::default_keyspaces;
use crate::sstable::{BlockCache, TableOptions, DEFAULT_BLOCK_SIZE};
use crate::store::manifest::Manifest;
use crate::store::{CompactionSettings, FlushLimits, StoreContext};

/// Segments replay may leave in place at open; past this, the replayed data is flushed so the
/// next open's replay stays bounded.
const MAX_SEGMENTS_LEFT_TO_REPLAY: usize = 2;

impl Database {
    /// Opens (or creates) the database in `dir`.
    ///
    /// A new database gets `options.keyspaces`, or the embedded default schema (the seeds'
    /// `Keyspace1`). An existing one keeps its stored schema; keyspaces and column families in
    /// `options.keyspaces` that it lacks are added, and ones that conflict with it (another
    /// comparator or column type), or another partitioner, are refused with
    /// [`Error::SchemaConflict`]. A directory another process has open is refused with
    /// [`Error::Locked`].
    // Long because opening runs steps whose order matters (lock, catalog, manifest, options, column
    // families, commit-log replay, sweep), and one body keeps that order in sight.
    pub fn open(dir: impl AsRef<Path>, options: Options) -> Result<Database> {
        if options.tune_malloc {
            super::malloc::fix_mmap_threshold();
        }
        let root = dir.as_ref().to_path_buf();
        let fs = options.file_system.clone();
        if !options.create_if_missing && Self::holds_nothing(&root, &options)? {
            // Checked before anything is created, the directory and its lock marker included.
            return Err(Error::NoDatabase(root));
        }
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
                // A flushed memtable's memory is kept for the next up to one memtable's
                // worth: what the process held while that memtable was being flushed.
                chunks: Arc::new(ChunkPool::new(
                    (options
                        .memtable_throughput_mb
                        .min(options.memtable_total_space_mb) as usize)
                        << 20,
                )),
                table: TableOptions {
                    block_size,
                    bloom_fp: options.bloom_filter_fp_chance,
                    partitioner,
                    compress: true,
                },
                clock: options.clock.clone(),
                partitioner,
                closing: AtomicBool::new(false),
                removed: Mutex::new(Vec::new()),
            }),
            compaction: CompactionSettings {
                min_threshold: options.min_compaction_threshold,
                max_threshold: options.max_compaction_threshold,
                gc_grace_seconds: options.gc_grace_seconds,
            },
            switch: Arc::new(crossbeam_utils::sync::ShardedLock::new(())),
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
        // What a replay read is what reads will show from now on, and the next segment's header
        // records where the newest one ends: both must survive a power cut, also when the
        // process that wrote them died before its fsync (a failed or a periodic one).
        for (_, path) in &replayed.log.segments {
            fs.sync_file(path).map_err(|e| Error::io(path, e))?;
        }
        let oldest = replayed.log.segments.first().map_or(first_seq, |s| s.0);
        let replayed_segments = replayed.log.segments.len();
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
        let core = Arc::new(Core {
            commitlog,
            env,
            compactor: flush::start_compactor()?,
        });
        let flusher = flush::start_flusher(core.clone())?;
        for cf in state.all_cfs() {
            flusher.send_uncounted(FlushJob::Watch(Arc::downgrade(cf)));
        }
        let db = Database::caller(Inner {
            root,
            core,
            flusher,
            partitioner,
            options,
            schema: arc_swap::ArcSwap::from_pointee(state),
            schema_change: Mutex::new(()),
            replay_report: replayed.log.dropped,
            traces: crate::trace::TraceStore::default(),
            builds: Default::default(),
            _lock: lock,
        });
        // Replayed data stays in the memtables, as if just written, and its segments stay until
        // it is flushed: opening after a crash costs no flush. It goes to SSTables at once when
        // replay dropped something on request (so the damaged segments are retired and the next
        // open does not meet them again), and when replay met more than a few segments: a column
        // family written once and never flushed pins every segment after its write, so without
        // this each crash would add a segment that every later open replays again.
        if !db.inner.replay_report.is_empty() || replayed_segments > MAX_SEGMENTS_LEFT_TO_REPLAY {
            db.flush_all()?;
        } else {
            for cf in db.schema().all_cfs() {
                if cf.needs_flush() {
                    db.request_flush(cf)?;
                }
            }
            db.check_total_memtable_space()?;
        }
        let core = &db.inner.core;
        core.retire(core.commitlog.retire_unneeded()?)?;
        // An index whose build a crash interrupted is built again, in the background.
        let unbuilt: Vec<(String, String, String)> = db
            .schema()
            .keyspaces
            .iter()
            .flat_map(|(ks, k)| {
                k.def.column_families.iter().flat_map(move |cf| {
                    cf.indexes
                        .iter()
                        .filter(|i| !i.built)
                        .map(move |i| (ks.clone(), cf.name.clone(), i.name.clone()))
                })
            })
            .collect();
        for (ks, cf, index) in unbuilt {
            db.start_build(&ks, &cf, &index)?;
        }
        // Compactions pending when the database last closed resume now.
        for cf in db.schema().all_cfs() {
            if cf.needs_compaction() {
                core.compactor.send(cf.clone());
            }
        }
        Ok(db)
    }

    /// Loads the catalog and the manifest, or creates both for a new database, and works out
    /// the options in force (the given ones over the stored settings). A folder that holds the
    /// engine's data files but lacks either file is refused, changing nothing: opening it as
    /// new would lose everything the missing file described.
    // Long because each combination of catalog and manifest found (both, neither, one of them) is
    // its own case, and they are kept together.
    fn load_or_create(root: &Path, given: &Options) -> Result<(Catalog, Manifest, Options)> {
        let fs = given.file_system.as_ref();
        let catalog = Catalog::load(fs, root, &given.comparators)?;
        let schema_path = root.join(file_names::SCHEMA);
        let options = match catalog.as_ref().and_then(|c| c.settings.as_deref()) {
            Some(stored) => given
                .with_stored_settings(stored)
                .map_err(|e| Error::corrupt(&schema_path, e.context("the stored settings")))?,
            None => given.clone(),
        };
        let options = &options;
        let log_dir = &options
            .commit_log_directory
            .clone()
            .unwrap_or_else(|| root.join(file_names::COMMIT_LOG_DIR));
        let manifest = Manifest::load(fs, root)?;
        let missing = |name: &str, reason: String| Error::missing(root.join(name), reason);
        let catalog = match (catalog, &manifest) {
            (Some(mut stored), _) => {
                let given = options.keyspaces.clone().unwrap_or_default();
                for ks in &given {
                    ks.validate()?;
                }
                let wanted = options.partitioner.unwrap_or(stored.partitioner);
                let evidence = match &manifest {
                    Some(_) => DataFiles::default(),
                    None => DataFiles::find(fs, root, log_dir)?,
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
                let evidence = DataFiles::find(fs, root, log_dir)?;
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

    /// Opens the database where the options say: the first of `data_file_directories`, else
    /// [`DEFAULT_DATA_DIR`].
    pub fn open_configured(options: Options) -> Result<Database> {
        let dir = Self::configured_directory(&options);
        Self::open(dir, options)
    }

    /// The data directory `options` name: the first `DataFileDirectory`, else
    /// [`DEFAULT_DATA_DIR`] (what [`open_configured`](Self::open_configured) opens).
    pub fn configured_directory(options: &Options) -> PathBuf {
        options
            .data_file_directories
            .first()
            .cloned()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR))
    }

    /// Whether `dir` holds a database (its catalog): a tool tells a user that it created one.
    pub fn exists(dir: impl AsRef<Path>) -> bool {
        dir.as_ref().join(file_names::SCHEMA).is_file()
    }

    /// Whether `root` holds none of the engine's files: no catalog, no manifest, no SSTable,
    /// no commit log segment (a directory that is missing holds none).
    fn holds_nothing(root: &Path, options: &Options) -> Result<bool> {
        if !root.exists() {
            return Ok(true);
        }
        if root.join(file_names::SCHEMA).exists() || root.join(file_names::MANIFEST).exists() {
            return Ok(false);
        }
        let log_dir = options
            .commit_log_directory
            .clone()
            .unwrap_or_else(|| root.join(file_names::COMMIT_LOG_DIR));
        Ok(DataFiles::find(options.file_system.as_ref(), root, &log_dir)?.is_empty())
    }
}

/// The engine's data files found in a folder that lacks its catalog or manifest.
#[derive(Debug, Default)]
pub(super) struct DataFiles {
    sstables: Vec<PathBuf>,
    segments: Vec<PathBuf>,
}

impl DataFiles {
    /// SSTables in keyspace-named folders of `root`, and segments in `log_dir`.
    fn find(fs: &dyn FileSystem, root: &Path, log_dir: &Path) -> Result<DataFiles> {
        let mut found = DataFiles::default();
        let dirs = match fs.read_dir(root) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(found),
            Err(e) => return Err(Error::io(root, e)),
        };
        let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
        for d in dirs {
            if !d.is_dir || !name(&d.path).is_some_and(|n| file_names::is_identifier(&n)) {
                continue;
            }
            for f in fs.read_dir(&d.path).map_err(|e| Error::io(&d.path, e))? {
                let table = name(&f.path)
                    .is_some_and(|n| file_names::parse_sstable(&n).is_some_and(|s| !s.temp));
                if table {
                    found.sstables.push(f.path);
                }
            }
        }
        found.segments = replay::segments_in(fs, log_dir)?
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
