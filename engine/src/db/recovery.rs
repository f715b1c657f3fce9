//! Recovery at open, from the files the manifest describes: column families dropped half-way
//! are settled, live SSTables opened and leftovers the engine can prove its own removed, and
//! the commit log replayed into the memtables.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::index_write;
use super::state::SchemaState;
use super::Database;
use crate::commitlog::record::RowMutation;
use crate::commitlog::replay::{self, LogBounds};
use crate::commitlog::LogPosition;
use crate::error::{Error, FormatError, Place, Result};
use crate::file_names;
use crate::io::FileSystem;
use crate::model::partitioner::Partitioner;
use crate::options::Options;
use crate::schema::ColumnType;
use crate::store::manifest::Manifest;
use crate::store::{ColumnFamilyStore, StoreContext};

/// What replaying the commit log at open left behind.
pub(super) struct ReplayOutcome {
    /// What replay found.
    pub(super) log: replay::Replayed,
    /// Each replayed segment and the column families whose data in it is now in memtables.
    pub(super) dirty: BTreeMap<u64, (PathBuf, BTreeSet<u32>)>,
    /// Segments older than the manifest's bound, to delete.
    pub(super) obsolete: Vec<PathBuf>,
}

impl Database {
    /// Column families in the manifest that the schema no longer has (a drop interrupted
    /// between the catalog and the manifest): their SSTables become obsolete files.
    pub(super) fn settle_dropped(
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
    pub(super) fn open_sstables(
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
            let entries = match fs.read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(&dir, e)),
            };
            for entry in entries {
                let Some(name) = entry.path.file_name().map(|n| n.to_string_lossy()) else {
                    continue;
                };
                if live.contains(name.as_ref()) || !entry.is_file {
                    continue;
                }
                let ours = file_names::parse_sstable(&name).filter(|s| ks.cfs.contains_key(s.cf));
                match ours {
                    Some(s) if s.temp => remove(&entry.path, "an unfinished write")?,
                    Some(s) if s.generation >= manifest.next_generation => remove(
                        &entry.path,
                        "written after the manifest, by a flush or compaction that never finished",
                    )?,
                    _ => tracing::warn!(
                        "{} is not a live SSTable of this database; left alone",
                        entry.path.display()
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
    // Long because each record is checked against the column families that exist now (dropped,
    // recreated, truncated since) in the one loop that applies it.
    pub(super) fn replay(
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
                let Some(cf) = by_id.get(id) else { continue };
                let indexes = cf.indexes();
                if !indexes.is_empty() {
                    // The index entries this record made, for each index not flushed past it.
                    let flushed_to = |id: u32| {
                        manifest
                            .cfs
                            .get(&id)
                            .map(|m| m.flushed_to)
                            .unwrap_or_default()
                    };
                    let due: Vec<_> = indexes
                        .iter()
                        .filter(|i| pos >= flushed_to(i.store.id()))
                        .cloned()
                        .collect();
                    let mut derived = Vec::new();
                    index_write::derive(
                        true,
                        cf.keyspace(),
                        cf,
                        &due,
                        (&m.key, &sort_key),
                        update,
                        &mut derived,
                    )
                    .map_err(|e| {
                        Error::corrupt(
                            segment_path(pos.segment),
                            FormatError::malformed(format!("an indexed record: {e}"))
                                .at(Place::Offset(pos.offset)),
                        )
                    })?;
                    index_write::apply(partitioner, &derived);
                    for i in &due {
                        dirty_ids
                            .entry(pos.segment)
                            .or_default()
                            .insert(i.store.id());
                    }
                }
                if pos < flushed {
                    continue;
                }
                {
                    let corrupt = |reason: String| {
                        Error::corrupt(
                            segment_path(pos.segment),
                            FormatError::malformed(format!(
                                "a record for {}: {reason}",
                                cf.def().name
                            ))
                            .at(Place::Offset(pos.offset)),
                        )
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
        let started = std::time::Instant::now();
        let log = replay::replay_log(
            options.file_system.as_ref(),
            log_dir,
            bounds,
            options.commit_log_ignore_replay_errors,
            &mut apply,
        )?;
        if log.records > 0 {
            tracing::info!(
                "replayed {} records from {} commit log segment(s) in {} ms",
                log.records,
                log.segments.len(),
                started.elapsed().as_millis()
            );
        }
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
}
