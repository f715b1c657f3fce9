//! Compacting a column family: size-tiered picking (or every SSTable, for a major compaction),
//! the merge itself (`crate::compaction::task`), the swap into the manifest and the view, and
//! the back-pressure a compaction backlog puts on writers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::column_family::ColumnFamilyStore;
use super::view::View;
use crate::compaction::size_tiered::{self, Candidate, SMALL_FLOOR};
use crate::compaction::task::{self, CompactionParams};
use crate::error::Result;
use crate::file_names;
use crate::model::timeuuid::TimeUuidGenerator;
use crate::sstable::Sstable;
use crate::stats::{Bytes, CompactionTask};

/// A compaction under way: what `ColumnFamilyStore::running_compaction` reports.
#[derive(Debug)]
pub(crate) struct Running {
    id: [u8; 16],
    major: bool,
    rows_total: u64,
    /// Input rows merged so far, counted by the merge.
    rows_done: AtomicU64,
}

/// Clears the store's running compaction however the compaction ends.
struct Clear<'a>(&'a ColumnFamilyStore);

impl Drop for Clear<'_> {
    fn drop(&mut self) {
        self.0.running.lock().take();
    }
}

/// A time UUID for a compaction starting at `micros`.
fn compaction_id(micros: i64) -> [u8; 16] {
    static IDS: OnceLock<TimeUuidGenerator> = OnceLock::new();
    *IDS.get_or_init(TimeUuidGenerator::for_process)
        .next(micros)
        .as_bytes()
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

impl ColumnFamilyStore {
    /// The compaction running on this CF now, with its progress.
    pub fn running_compaction(&self) -> Option<CompactionTask> {
        let r = self.running.lock().clone()?;
        Some(CompactionTask {
            keyspace: self.keyspace.clone(),
            column_family: self.def.load().name.clone(),
            id: r.id,
            major: r.major,
            rows_done: r.rows_done.load(Ordering::Relaxed).min(r.rows_total),
            rows_total: r.rows_total,
        })
    }

    /// Runs one compaction: `major` merges every SSTable; otherwise size-tiered picks a bucket,
    /// if one is full. The result is made live in the manifest, then in the view; the replaced
    /// SSTables' files go once no reader holds them. Returns `None` if there was nothing to do.
    // Long because a compaction's steps (pick, merge, manifest, view, file removal) run in an order
    // that matters, with each step's failure handled beside it.
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
            let c = self.compaction_settings();
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
        let running = Arc::new(Running {
            id: compaction_id(self.ctx.clock.now_micros()),
            major,
            rows_total: inputs.iter().map(|t| t.footer().rows).sum(),
            rows_done: AtomicU64::new(0),
        });
        *self.running.lock() = Some(running.clone());
        let _clear = Clear(self);
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
        // An index's stale entries are looked up in its base only by a major compaction: a
        // point read of the base per entry is a cost minor compactions do not pay.
        let check = if major {
            self.entry_check.load_full()
        } else {
            None
        };
        // A base's indexes lose the entries of the cells this merge discards (every compaction).
        let on_discard = if self.has_indexes() {
            self.discard_hook.load_full()
        } else {
            None
        };
        let params = CompactionParams {
            major,
            keep_entry: check.as_deref().map(|c| &*c.0),
            on_discard: on_discard.as_deref().map(|h| &*h.0),
            now_seconds: self.ctx.clock.now_seconds(),
            gc_grace_seconds: self.gc_grace_seconds(),
            is_super: self.is_super(),
            elsewhere: &elsewhere,
            key_of: &key_of,
            cancelled: &|| self.ctx.closing.load(Ordering::Relaxed),
            progress: &running.rows_done,
        };
        let fs = self.ctx.fs.as_ref();
        let generation = self.ctx.next_generation();
        let dest = self
            .dir
            .join(file_names::sstable(&self.def.load().name, generation));
        let kind = if major { "major" } else { "minor" };
        tracing::info!(
            "{kind} compaction of {} started: {} SSTables, {}",
            self.origin,
            inputs.len(),
            Bytes(inputs.iter().map(|t| t.bytes()).sum::<u64>())
        );
        let started = std::time::Instant::now();
        let out = task::compact(
            fs,
            &inputs,
            &dest,
            generation,
            self.table_options(),
            &params,
        )?;
        tracing::info!(
            "{kind} compaction of {} done: {} SSTables, {} in, {} out, {} tombstones purged, \
             {} stale index entries dropped, in {} ms",
            self.origin,
            inputs.len(),
            Bytes(out.bytes_in),
            Bytes(out.bytes_out),
            out.purged,
            out.stale,
            started.elapsed().as_millis()
        );
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
        crate::stats::bump(&self.counters.local().compactions);
        self.counters
            .local()
            .bytes_compacted
            .fetch_add(out.bytes_in, Ordering::Relaxed);
        self.counters
            .local()
            .sstable_bytes_written
            .fetch_add(out.bytes_out, Ordering::Relaxed);
        self.counters
            .local()
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
    pub(super) fn candidates(&self, view: &View) -> Vec<Candidate> {
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
        let c = self.compaction_settings();
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

    /// How long a write should pause because compaction has fallen behind: nothing up to a soft
    /// limit of SSTables, then a millisecond per SSTable over it, at most 50 ms. With minor
    /// compaction off the user chose to let SSTables pile up, so writers are never slowed.
    pub fn write_delay(&self) -> Duration {
        write_delay(
            self.view().sstables.len(),
            self.compaction_settings().min_threshold,
        )
    }

    /// Whether size-tiered compaction has a full bucket to merge.
    pub fn needs_compaction(&self) -> bool {
        let candidates = self.candidates(&self.view());
        let c = self.compaction_settings();
        size_tiered::pick(&candidates, c.min_threshold, c.max_threshold, SMALL_FLOOR).is_some()
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
