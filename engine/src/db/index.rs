//! Secondary indexes through the database: created (and built over the rows already written),
//! dropped, and read, each entry checked against its base row by the reader that asked.
//!
//! A build runs in the background (`index_build.rs`) while other writes go on: the index is
//! wired to its base before the build scans it, so every write from then on derives its own
//! entries, and the scan adds those of the rows already there. The catalog marks the index
//! built only once its entries are flushed, and until then it refuses queries; an index found
//! unbuilt at open (a crash in the middle of a build) is built again from there.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::flush::FlushJob;
use super::index_cleanup;
use super::index_purge::{self, LiveCell};
use super::index_write;
use super::state::SchemaState;
use super::Database;
use crate::error::{Error, Result};
use crate::query::{ColumnParent, KeyRange, RangeBound, SlicePredicate, SliceRange};
use crate::schema::{ColumnType, IndexDef};
use crate::store::{ColumnFamilyStore, IndexStore};

/// Rows a build reads per range read.
const BUILD_ROWS: usize = 256;

impl Database {
    /// Creates `index` on `keyspace`.`cf` and starts building it from the rows already there,
    /// in the background: it answers queries once built ([`Self::wait_for_index`] waits for
    /// that). Its name must be new in the keyspace.
    pub fn create_index(&self, keyspace: &str, cf: &str, mut index: IndexDef) -> Result<()> {
        crate::schema::validate_identifier(&index.name, "index")?;
        index.built = false;
        let mut watch = None;
        self.change_schema_then(
            |s| {
                let base = base_store(s, keyspace, cf)?;
                let def = base.def();
                if def.column_type == ColumnType::Super {
                    return Err(Error::Schema(format!(
                        "{keyspace}.{cf} is a Super column family: its columns cannot be indexed"
                    )));
                }
                if index_owner(s, keyspace, &index.name).is_some() {
                    return Err(Error::Schema(format!(
                        "an index named '{}' already exists in keyspace '{keyspace}'",
                        index.name
                    )));
                }
                let id = s.allocate_cf_id()?;
                let ks = s
                    .keyspaces
                    .get_mut(keyspace)
                    .ok_or_else(|| Error::UnknownKeyspace(keyspace.to_string()))?;
                let mut next = (**def).clone();
                next.indexes.push(index.clone());
                let hidden = index.column_family(&next);
                let store = self.inner.core.env.store(&ks.def, id, &hidden);
                ks.cfs.insert(hidden.name.clone(), store.clone());
                replace_cf_def(&mut ks.def, &next);
                let mut wired: Vec<IndexStore> = base.indexes().to_vec();
                let added = IndexStore {
                    def: index.clone(),
                    store: store.clone(),
                };
                index_purge::wire(keyspace, &base, &added);
                index_cleanup::wire(keyspace, &base, &self.inner.core.env.switch);
                wired.push(added);
                Ok((base, next, wired, store))
            },
            |(base, next, wired, store)| {
                base.replace_def(next);
                base.set_indexes(wired);
                watch = Some(store);
            },
        )?;
        if let Some(store) = watch {
            self.inner
                .flusher
                .send_uncounted(FlushJob::Watch(Arc::downgrade(&store)));
        }
        self.start_build(keyspace, cf, &index.name)
    }

    /// Waits at most `timeout` for index `index` of `keyspace` to be built. True once it
    /// answers queries, false when its build still runs at the deadline; a build that failed is
    /// an error saying why (it is tried again at the next open).
    pub fn wait_for_index(&self, keyspace: &str, index: &str, timeout: Duration) -> Result<bool> {
        self.inner.builds.wait(keyspace, index, timeout);
        let schema = self.schema();
        let cf = index_owner(&schema, keyspace, index).ok_or_else(|| {
            Error::Schema(format!("no index named '{index}' in keyspace '{keyspace}'"))
        })?;
        let base = base_store(&schema, keyspace, &cf)?;
        if base
            .indexes()
            .iter()
            .any(|i| i.def.name == index && i.def.built)
        {
            return Ok(true);
        }
        match self.inner.builds.failure(keyspace, index) {
            Some(why) => Err(Error::Schema(format!(
                "building index '{index}' of {keyspace}.{cf} failed: {why}"
            ))),
            None => Ok(false),
        }
    }

    /// Starts building index `index` of `keyspace`.`cf` on a thread of its own.
    pub(super) fn start_build(&self, keyspace: &str, cf: &str, index: &str) -> Result<()> {
        let db = self.own_handle();
        let (ks, cf, name) = (keyspace.to_string(), cf.to_string(), index.to_string());
        self.inner.builds.start(keyspace, index, move || {
            let result = db.build_index(&ks, &cf, &name);
            if let Err(e) = &result {
                tracing::error!("building index {name} of {ks}.{cf} failed: {e}");
            }
            db.inner.builds.ended(&ks, &name, &result);
        })
    }

    /// Drops the index named `index` of `keyspace` and its entries; returns the column family
    /// it indexed.
    pub fn drop_index(&self, keyspace: &str, index: &str) -> Result<String> {
        let mut dropped = Vec::new();
        let mut owner = String::new();
        let mut altered = None;
        self.change_schema_then(
            |s| {
                let cf = index_owner(s, keyspace, index).ok_or_else(|| {
                    Error::Schema(format!("no index named '{index}' in keyspace '{keyspace}'"))
                })?;
                let base = base_store(s, keyspace, &cf)?;
                let ks = s
                    .keyspaces
                    .get_mut(keyspace)
                    .ok_or_else(|| Error::UnknownKeyspace(keyspace.to_string()))?;
                let mut next = (**base.def()).clone();
                next.indexes.retain(|i| i.name != index);
                replace_cf_def(&mut ks.def, &next);
                let hidden = ks.cfs.remove(&format!("{cf}.{index}"));
                let wired: Vec<IndexStore> = base
                    .indexes()
                    .iter()
                    .filter(|i| i.def.name != index)
                    .cloned()
                    .collect();
                owner = cf;
                Ok((base, next, wired, hidden))
            },
            |(base, next, wired, hidden)| {
                base.replace_def(next);
                base.set_indexes(wired);
                dropped.extend(hidden);
                altered = Some(base);
            },
        )?;
        // What was prepared against the table with the index is prepared again without it.
        if let Some(base) = altered {
            base.altered();
        }
        self.remove_dropped(&dropped)?;
        Ok(owner)
    }

    /// Builds index `index` of `keyspace`.`cf` from the rows already written, flushes it and
    /// marks it built in the catalog. Stops early, leaving it unbuilt, when the database closes
    /// or the index is dropped.
    fn build_index(&self, keyspace: &str, cf: &str, index: &str) -> Result<()> {
        let schema = self.schema();
        let base = base_store(&schema, keyspace, cf)?;
        let Some(idx) = base.indexes().iter().find(|i| i.def.name == index).cloned() else {
            return Ok(());
        };
        drop(schema);
        // Checked before each batch of rows.
        let go_on = || {
            !self.inner.builds.stopping().load(Ordering::Relaxed)
                && self.schema().cf(keyspace, cf).is_ok_and(|b| {
                    b.indexes()
                        .iter()
                        .any(|i| Arc::ptr_eq(&i.store, &idx.store))
                })
        };
        let started = std::time::Instant::now();
        let parent = ColumnParent::new(cf);
        let keys_only = SlicePredicate::Range(SliceRange::all().count(1));
        let everything = SlicePredicate::Range(SliceRange::all().count(usize::MAX));
        let handle = super::ColumnFamilyHandle(base.clone());
        let mut start = RangeBound::Unbounded;
        let mut last: Option<Vec<u8>> = None;
        let mut rows = 0u64;
        loop {
            if !go_on() {
                return Ok(());
            }
            let range = KeyRange {
                start: start.clone(),
                end: RangeBound::Unbounded,
                count: BUILD_ROWS,
            };
            let found = self.get_range_slices(keyspace, &parent, &keys_only, &range)?;
            let full = found.len() == BUILD_ROWS;
            for row in found {
                if last.as_deref() == Some(row.key.as_slice()) {
                    continue;
                }
                self.index_row(&base, &idx, &handle, &parent, &everything, &row.key)?;
                rows += 1;
                last = Some(row.key);
            }
            match (&last, full) {
                (Some(k), true) => start = RangeBound::Key(k.clone()),
                _ => break,
            }
        }
        self.inner.core.flush_cf(&idx.store)?;
        if let Err(e) = self.mark_built(keyspace, cf, &idx) {
            // A build of an index dropped since (or closing) ends quietly.
            return if go_on() { Err(e) } else { Ok(()) };
        }
        tracing::info!(
            "built index {index} of {keyspace}.{cf} over {rows} row(s) in {} ms",
            started.elapsed().as_millis()
        );
        Ok(())
    }

    /// Marks index `built_one` of `keyspace`.`cf` built in the catalog, once its entries are in
    /// SSTables: it answers queries from then on. One dropped since (its name perhaps given
    /// to another) is an error.
    fn mark_built(&self, keyspace: &str, cf: &str, built_one: &IndexStore) -> Result<()> {
        let index = built_one.def.name.as_str();
        let mut built = None;
        self.change_schema_then(
            |s| {
                let base = base_store(s, keyspace, cf)?;
                let ks = s
                    .keyspaces
                    .get_mut(keyspace)
                    .ok_or_else(|| Error::UnknownKeyspace(keyspace.to_string()))?;
                let same = |i: &IndexStore| Arc::ptr_eq(&i.store, &built_one.store);
                let mut next = (**base.def()).clone();
                let found = next.indexes.iter_mut().find(|i| i.name == index);
                let Some(d) = found.filter(|_| base.indexes().iter().any(same)) else {
                    return Err(Error::Schema(format!(
                        "index '{index}' was dropped while it was built"
                    )));
                };
                d.built = true;
                replace_cf_def(&mut ks.def, &next);
                let wired: Vec<IndexStore> = base
                    .indexes()
                    .iter()
                    .map(|i| {
                        let mut i = i.clone();
                        i.def.built |= i.def.name == index;
                        i
                    })
                    .collect();
                Ok((base, next, wired))
            },
            |(base, next, wired)| {
                base.replace_def(next);
                base.set_indexes(wired);
                built = Some(base);
            },
        )?;
        // What was prepared against the table without the index is prepared again with it.
        if let Some(base) = built {
            base.altered();
        }
        Ok(())
    }

    /// Adds the entries of one base row to index `idx`.
    fn index_row(
        &self,
        base: &ColumnFamilyStore,
        idx: &IndexStore,
        handle: &super::ColumnFamilyHandle,
        parent: &ColumnParent,
        everything: &SlicePredicate,
        key: &[u8],
    ) -> Result<()> {
        let mut cells: Vec<LiveCell> = Vec::new();
        self.visit_slice(handle, key, parent, everything, |sort_key, cell| {
            let timestamp = cell.as_ref().timestamp;
            if let Some((value, ttl)) = cell.into_live() {
                cells.push((sort_key.to_vec(), timestamp, value, ttl));
            }
            Ok(true)
        })?;
        let sort_key = self.inner.partitioner.row_sort_key(key);
        let derived =
            index_purge::entries_of(base.keyspace(), base, idx, (key, &sort_key), &cells)?;
        // Under the switch lock, as a write applies: a flush of the index never claims a log
        // position its memtable does not cover.
        let _switch = self.inner.core.hold_switch();
        index_write::apply(self.inner.partitioner, &derived);
        Ok(())
    }
}

/// The store of user column family `keyspace`.`cf` in `s`.
pub(super) fn base_store(
    s: &SchemaState,
    keyspace: &str,
    cf: &str,
) -> Result<Arc<ColumnFamilyStore>> {
    s.cf(keyspace, cf).cloned()
}

/// The column family of `keyspace` that has an index named `index`.
fn index_owner(s: &SchemaState, keyspace: &str, index: &str) -> Option<String> {
    let ks = s.keyspaces.get(keyspace)?;
    ks.def
        .column_families
        .iter()
        .find(|c| c.indexes.iter().any(|i| i.name == index))
        .map(|c| c.name.clone())
}

/// Puts `def` in place of the keyspace's column family of the same name.
fn replace_cf_def(ks: &mut crate::schema::KeyspaceDef, def: &crate::schema::ColumnFamilyDef) {
    if let Some(slot) = ks.column_families.iter_mut().find(|c| c.name == def.name) {
        *slot = def.clone();
    }
}
