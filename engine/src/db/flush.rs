//! Flushes and compactions, and the two background threads that run them.
//!
//! A flush is always the same two steps: [`Core::freeze`] (take the switch lock, switch the
//! memtable at the commit log's position) and [`Core::flush_and_release`] (write the frozen
//! memtables to SSTables, then let the commit log drop what they covered — recording first in
//! the manifest that the log now starts past the retired segments). The flusher thread runs them
//! for memtables that filled or sat too long; writers run them themselves when the flusher falls
//! behind.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError, Weak};
use std::time::{Duration, Instant};

use super::worker::{Event, Worker};
use super::{Core, Database};
use crate::commitlog::{LogPosition, Retired};
use crate::error::{Error, Result};
use crate::store::ColumnFamilyStore;

/// How many memtables of one column family may wait for the flusher before writers flush
/// themselves (and so slow down) instead of piling up memory.
const MAX_FROZEN_MEMTABLES: usize = 2;

/// How often the flusher looks for memtables past `MemtableFlushAfterMinutes`.
const AGE_CHECK_EVERY: Duration = Duration::from_millis(500);

/// What the flusher thread is told.
#[derive(Debug)]
pub(super) enum FlushJob {
    /// Flush this CF's frozen memtables.
    Flush(Arc<ColumnFamilyStore>),
    /// Watch this CF's memtable age (`MemtableFlushAfterMinutes`).
    Watch(Weak<ColumnFamilyStore>),
}

impl Core {
    /// Holds off memtable switches while a writer appends to the log and applies to memtables
    /// (or a build applies index entries), so a flush never claims a log position its memtable
    /// does not cover. Nothing panics while holding it, and it guards no data: a poisoned lock
    /// still orders.
    #[inline]
    pub(super) fn hold_switch(&self) -> crossbeam_utils::sync::ShardedLockReadGuard<'_, ()> {
        self.env
            .switch
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the database is closing (background work stops short).
    fn closing(&self) -> bool {
        self.env.ctx.closing.load(Ordering::Relaxed)
    }
    /// Freezes `cf`'s active memtable as covering the commit log up to now. Returns whether
    /// there was anything to freeze.
    pub(super) fn freeze(&self, cf: &ColumnFamilyStore) -> bool {
        self.freeze_at(cf).0
    }

    /// [`Core::freeze`], also returning the position: with the switch lock held, no write is
    /// between its log append and its memtable apply, so everything logged before it is in a
    /// memtable.
    fn freeze_at(&self, cf: &ColumnFamilyStore) -> (bool, LogPosition) {
        // Nothing panics while holding it, and it guards no data: a poisoned lock still orders.
        let _switch = self
            .env
            .switch
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let position = self.commitlog.current_position();
        (cf.switch_memtable(position), position)
    }

    /// Freezes and flushes one column family, then lets the commit log drop what it covered.
    pub(super) fn flush_cf(&self, cf: &Arc<ColumnFamilyStore>) -> Result<()> {
        let (switched, position) = self.freeze_at(cf);
        if !switched && cf.frozen_count() == 0 {
            // Nothing unflushed: no segment needs to wait for this CF.
            return self.release(cf.id(), position);
        }
        self.flush_and_release(cf)
    }

    /// Flushes the frozen memtables, lets the commit log drop what they covered, and hands the
    /// CF to the compactor if a bucket filled.
    pub(super) fn flush_and_release(&self, cf: &Arc<ColumnFamilyStore>) -> Result<()> {
        if let Some(pos) = cf.flush_frozen()? {
            self.release(cf.id(), pos)?;
            if cf.needs_compaction() {
                self.compactor.send(cf.clone());
            }
        }
        Ok(())
    }

    /// Records that `cf` has flushed everything logged before `upto`, retiring the segments no
    /// column family needs any more.
    pub(super) fn release(&self, cf: u32, upto: LogPosition) -> Result<()> {
        let retired = self.commitlog.release(cf, upto)?;
        self.retire(retired)
    }

    /// Deletes retired segments, once the manifest says the log starts past them.
    pub(super) fn retire(&self, retired: Retired) -> Result<()> {
        if retired.is_empty() {
            return Ok(());
        }
        self.env
            .ctx
            .update_manifest(|m| m.log_oldest = m.log_oldest.max(retired.oldest_kept))?;
        self.commitlog.delete(&retired)
    }
}

/// The compactor: one thread (SPEC's "1 compaction thread") running the minor compactions of
/// the column families handed to it until none has a full bucket.
pub(super) fn start_compactor() -> Result<Worker<Arc<ColumnFamilyStore>>> {
    Worker::start(
        "compaction",
        None,
        |event: Event<Arc<ColumnFamilyStore>>| {
            let Event::Job(cf) = event else { return };
            loop {
                match cf.compact(false) {
                    Ok(Some(_)) => continue,
                    Ok(None) | Err(Error::Closing) => break,
                    // The inputs stay live; the next flush tries again.
                    Err(e) => {
                        tracing::error!("compaction of {} failed: {e}", cf.def().name);
                        break;
                    }
                }
            }
        },
    )
}

/// The flusher: one thread writing frozen memtables to SSTables in the order they were handed
/// over, and flushing memtables that sat unflushed past their age limit.
pub(super) fn start_flusher(core: Arc<Core>) -> Result<Worker<FlushJob>> {
    let mut watched: Vec<Weak<ColumnFamilyStore>> = Vec::new();
    let mut last_check = Instant::now();
    Worker::start("memtable-flush", Some(AGE_CHECK_EVERY), move |event| {
        match event {
            // Closing: the memtable stays frozen and its segments stay in the commit log, which
            // the next open replays.
            Event::Job(FlushJob::Flush(_)) if core.closing() => {}
            Event::Job(FlushJob::Flush(cf)) => {
                // On failure the memtable stays frozen and readable; the next flush retries it.
                if let Err(e) = core.flush_and_release(&cf) {
                    tracing::error!("flush of {} failed: {e}", cf.def().name);
                }
            }
            Event::Job(FlushJob::Watch(cf)) => watched.push(cf),
            Event::Tick => {}
        }
        // Checked on time whatever arrived, so steady flush traffic cannot starve it.
        if last_check.elapsed() < AGE_CHECK_EVERY || core.closing() {
            return;
        }
        last_check = Instant::now();
        watched.retain(|w| w.strong_count() > 0);
        for cf in watched.iter().filter_map(Weak::upgrade) {
            if cf.idle_too_long() && !core.commitlog.is_poisoned() {
                core.freeze(&cf);
                if let Err(e) = core.flush_and_release(&cf) {
                    tracing::error!("flush of {} failed: {e}", cf.def().name);
                }
            }
        }
    })
}

impl Database {
    /// Freezes `cf`'s memtable and hands it to the background flusher. If flushing has fallen
    /// behind (too many frozen memtables), the writer flushes itself: it is slowed, not failed,
    /// and memory stays bounded.
    pub(super) fn request_flush(&self, cf: &Arc<ColumnFamilyStore>) -> Result<()> {
        let core = &self.inner.core;
        let switched = core.freeze(cf);
        if cf.frozen_count() > MAX_FROZEN_MEMTABLES {
            core.flush_and_release(cf)?;
        } else if switched {
            self.inner.flusher.send(FlushJob::Flush(cf.clone()));
        }
        Ok(())
    }

    /// Past `MemtableTotalSpaceInMB` across all column families, flushes the largest memtable.
    pub(super) fn check_total_memtable_space(&self) -> Result<()> {
        let limit = (self.inner.options.memtable_total_space_mb as usize) << 20;
        let schema = self.schema();
        // Total over all memtables; the flush goes to the largest *active* one (frozen ones are
        // already on their way to disk).
        let (total, largest) = schema.all_cfs().fold(
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

    /// Flushes the memtables of one column family (or, with `None`, of every column family of
    /// the keyspace) to SSTables, returning once they are on disk and live.
    pub fn flush(&self, keyspace: &str, column_family: Option<&str>) -> Result<()> {
        for cf in self.cfs_of(keyspace, column_family)? {
            self.inner.core.flush_cf(&cf)?;
        }
        Ok(())
    }

    /// Flushes every column family of every keyspace.
    pub fn flush_all(&self) -> Result<()> {
        let schema = self.schema();
        for cf in schema.all_cfs() {
            self.inner.core.flush_cf(cf)?;
        }
        Ok(())
    }

    /// Runs a major compaction of one column family (or, with `None`, of every column family of
    /// the keyspace): flushes its memtables, merges all its SSTables into one, and purges
    /// tombstones past their grace period. Returns once the result is live.
    pub fn compact(&self, keyspace: &str, column_family: Option<&str>) -> Result<()> {
        self.flush(keyspace, column_family)?;
        for cf in self.cfs_of(keyspace, column_family)? {
            cf.compact(true)?;
        }
        Ok(())
    }

    /// Runs the minor (size-tiered) compactions that are due for one column family (or every
    /// column family of the keyspace) now, instead of waiting for the background compactor.
    /// Returns how many ran.
    pub fn compact_pending(&self, keyspace: &str, column_family: Option<&str>) -> Result<usize> {
        let mut n = 0;
        for cf in self.cfs_of(keyspace, column_family)? {
            while cf.compact(false)?.is_some() {
                n += 1;
            }
        }
        Ok(n)
    }
}
