//! Writes: inserts, removes and batches are validated whole, grouped by row, logged (one
//! commit log record per row) and applied to the memtables; then the flushes they make due are
//! requested, and a writer is slowed when compaction falls behind.

use std::collections::HashMap;
use std::sync::Arc;

use super::index_write;
use super::state::is_hidden;
use super::Database;
use crate::commitlog::record::{LogUpdate, RowWrite};
use crate::commitlog::LogPosition;
use crate::error::{Error, Result};
use crate::mutation::{validate_key, BatchMutation, RowUpdate, WriteOptions};
use crate::query::ColumnPath;
use crate::store::ColumnFamilyStore;

/// Batches of up to this many rows find a row's slot by a linear search; larger ones hash.
const LINEAR_ROW_SEARCH: usize = 16;

/// One column family's part of a row's update in a batch being applied.
type CfUpdate<'b> = (Arc<ColumnFamilyStore>, RowUpdate<'b>);

impl LogUpdate for CfUpdate<'_> {
    fn cf_id(&self) -> u32 {
        self.0.id()
    }

    fn update(&self) -> &RowUpdate<'_> {
        &self.1
    }

    fn each_dependent(&self, f: &mut dyn FnMut(u32)) {
        if self.0.has_indexes() {
            self.0.indexes().iter().for_each(|i| f(i.store.id()));
        }
    }
}

thread_local! {
    /// Writes this thread made since it last summed the memtables against their budget.
    static BUDGET_CHECK: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// A thread checks `MemtableTotalSpaceInMB` on every this-many-th write (and every multi-row one).
const BUDGET_CHECK_EVERY: u32 = 16;

impl Database {
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
        b.insert(key, path, value, write);
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
        b.remove(key, path, timestamp);
        self.batch_mutate(keyspace, &b)
    }

    /// Applies many mutations over many rows and column families of one keyspace. The whole batch
    /// is validated first (a bad mutation anywhere changes nothing); then each row's mutations
    /// for one column family apply atomically. Default timestamps are one "now" for the batch.
    // Long because a batch is validated whole and then applied row by row in one walk over its
    // mutations, so nothing applies before everything is checked.
    pub fn batch_mutate(&self, keyspace: &str, batch: &BatchMutation) -> Result<()> {
        let started = std::time::Instant::now();
        let now = self.now();
        let schema = self.schema();
        let ks = schema
            .keyspaces
            .get(keyspace)
            .ok_or_else(|| Error::UnknownKeyspace(keyspace.to_string()))?;
        // Sort keys built for the batch (they outlive `rows`, which borrows them).
        let keys = bumpalo::Bump::new();
        let mut scratch = Vec::new();
        // Validate everything first, grouping by row key, then by column family.
        let mut rows: Vec<(&[u8], Vec<CfUpdate>)> = Vec::new();
        let mut row_index: HashMap<&[u8], usize> = HashMap::new();
        for (key, m, sort_key) in batch.iter_sorted() {
            validate_key(key)?;
            let cf_name = m.path().column_family;
            let cf = ks
                .cfs
                .get(cf_name)
                .filter(|_| !is_hidden(cf_name))
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
            match sort_key {
                Some(sorted) => {
                    cf.validator()
                        .add_sorted(m, sorted, now, &mut updates[j].1, &mut scratch)?
                }
                None => cf
                    .validator()
                    .add(m, now, &mut updates[j].1, &keys, &mut scratch)?,
            }
        }
        // Index entries are derived before anything is logged, so a value an index cannot hold
        // refuses the whole batch.
        let mut derived = Vec::new();
        for (key, updates) in &rows {
            for (cf, update) in updates.iter().filter(|(cf, _)| cf.has_indexes()) {
                let indexes = cf.indexes();
                if !indexes.is_empty() {
                    let sort_key = self.inner.partitioner.row_sort_key(key);
                    index_write::derive(
                        false,
                        keyspace,
                        cf,
                        &indexes,
                        (key, &sort_key),
                        update,
                        &mut derived,
                    )?;
                }
            }
        }
        let records: Vec<RowWrite<'_, CfUpdate>> = rows
            .iter()
            .map(|(key, updates)| RowWrite { key, updates })
            .collect();
        {
            // The switch lock keeps a memtable switch from falling between the log append and
            // the memtable apply, which would let a flush claim a log position it does not cover.
            let _switch = self.inner.core.hold_switch();
            // One record per row, one fsync for the batch. A keyspace with `durable_writes`
            // off skips the log, as in Cassandra: its writes live in the memtable until flushed.
            let logged = if ks.def.durable_writes {
                crate::trace::event(|| "Appending to commitlog".to_string());
                let logged = self.inner.core.commitlog.append_all(&records)?;
                crate::trace::event(|| {
                    let bytes: u64 = logged.iter().map(|(_, b)| b).sum();
                    let synced = match self.inner.options.commit_log_sync {
                        crate::options::CommitLogSync::Batch { .. } => ", synced",
                        _ => "",
                    };
                    let n = logged.len();
                    format!("Appended {n} records ({bytes} bytes) to the commitlog{synced}")
                });
                logged
            } else {
                crate::trace::event(|| {
                    "Skipping the commitlog (durable_writes = false)".to_string()
                });
                for (_, updates) in &rows {
                    updates.iter().for_each(|(cf, _)| cf.mark_unlogged());
                }
                derived.iter().for_each(|d| d.store.mark_unlogged());
                vec![(LogPosition::default(), 0); records.len()]
            };
            for (record, (_, updates)) in records.iter().zip(&rows) {
                let sort_key = self.inner.partitioner.row_sort_key(record.key);
                for (cf, update) in updates {
                    crate::trace::event(|| format!("Adding to {} memtable", cf.def().name));
                    cf.apply(&sort_key, record.key, update);
                }
            }
            if !derived.is_empty() {
                crate::trace::event(|| format!("Adding {} secondary index entries", derived.len()));
            }
            // The index entries of the rows just applied: logged with them (each base record
            // marks its indexes dirty), and derived again from it at replay.
            index_write::apply(self.inner.partitioner, &derived);
            let took = started.elapsed();
            for ((_, updates), (_, log_bytes)) in rows.iter().zip(&logged) {
                for (cf, _) in updates {
                    cf.record_write(took, log_bytes / updates.len() as u64);
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
        for d in &derived {
            if !touched.iter().any(|t| Arc::ptr_eq(t, &d.store)) {
                touched.push(&d.store);
            }
        }
        for cf in touched {
            if cf.needs_flush_at(now.micros) {
                if let Err(e) = self.request_flush(cf) {
                    tracing::error!("flush of {} failed: {e}", cf.def().name);
                }
            }
        }
        // Summing every memtable reads each column family's view; once per few writes of a
        // thread is enough (the overshoot is a few writes' bytes against a budget of megabytes).
        let due = BUDGET_CHECK.with(|n| {
            let next = n.get().wrapping_add(1);
            n.set(next);
            next % BUDGET_CHECK_EVERY == 0 || rows.len() > 1
        });
        if due {
            if let Err(e) = self.check_total_memtable_space() {
                tracing::error!("flush for MemtableTotalSpaceInMB failed: {e}");
            }
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
        let took = started.elapsed();
        if took >= crate::store::SLOW_OPERATION {
            tracing::warn!(
                "slow write to {keyspace}: {} row(s), {} ms (compaction back-pressure: {} ms)",
                rows.len(),
                took.as_millis(),
                delay.as_millis()
            );
        }
        Ok(())
    }
}
