//! Schema changes: keyspaces and column families created and dropped, each stored in the catalog
//! before it takes effect; a drop then makes the CF's files obsolete in the manifest, forgets it
//! in the commit log, and removes its files.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::flush::FlushJob;
use super::state::{is_hidden, KeyspaceState, SchemaState};
use super::Database;
use crate::error::{Error, Result};
use crate::model::comparator::collection::adds_collections;
use crate::schema::{ColumnFamilyDef, KeyspaceDef};
use crate::store::ColumnFamilyStore;

impl Database {
    pub(super) fn change_schema(
        &self,
        f: impl FnOnce(&mut SchemaState) -> Result<()>,
    ) -> Result<()> {
        self.change_schema_then(f, |()| ())
    }

    /// [`change_schema`](Self::change_schema), with `stored` run on what `f` returned once the
    /// catalog holds the change and before anyone sees the new schema, still under the lock.
    pub(super) fn change_schema_then<T>(
        &self,
        f: impl FnOnce(&mut SchemaState) -> Result<T>,
        stored: impl FnOnce(T),
    ) -> Result<()> {
        let _serial = self.inner.schema_change.lock();
        let current = self.schema();
        let mut next = SchemaState {
            keyspaces: current.keyspaces.clone(),
            next_cf_id: current.next_cf_id,
        };
        let done = f(&mut next)?;
        let catalog = next.to_catalog(self.inner.partitioner, self.inner.options.encode_settings());
        catalog.store(self.inner.options.file_system.as_ref(), &self.inner.root)?;
        stored(done);
        self.inner.schema.store(Arc::new(next));
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
                &self.inner.core.env,
            );
            for cf in state.cfs.values() {
                self.inner
                    .flusher
                    .send_uncounted(FlushJob::Watch(Arc::downgrade(cf)));
            }
            s.keyspaces.insert(def.name.clone(), state);
            Ok(())
        })
    }

    /// Changes a keyspace's replication and `durable_writes` (CQL's `ALTER KEYSPACE`), or its
    /// CQL types (`CREATE`/`ALTER`/`DROP TYPE`): `alter` gets its definition and must leave its name and column families as they are. Writes
    /// that skipped the commit log while `durable_writes` was off stay in memtables until
    /// flushed; a clean close flushes them whatever the keyspace says by then.
    pub fn alter_keyspace(
        &self,
        name: &str,
        alter: impl FnOnce(&mut KeyspaceDef) -> Result<()>,
    ) -> Result<()> {
        self.change_schema(|s| {
            let ks = s
                .keyspaces
                .get_mut(name)
                .ok_or_else(|| Error::UnknownKeyspace(name.to_string()))?;
            let mut def = ks.def.clone();
            alter(&mut def)?;
            if def.name != ks.def.name || def.column_families != ks.def.column_families {
                return Err(Error::Schema(format!(
                    "altering keyspace {name} may change its replication, durable_writes and types only"
                )));
            }
            def.validate()?;
            ks.def = def;
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
            let _ = self.options().file_system.remove_dir(&dir);
        }
        Ok(())
    }

    /// After a drop is in the catalog: takes the CFs out of the manifest and the commit log's
    /// bookkeeping, and removes their files.
    pub(super) fn remove_dropped(&self, dropped: &[Arc<ColumnFamilyStore>]) -> Result<()> {
        for cf in dropped {
            cf.mark_dropped();
        }
        let ids: BTreeSet<u32> = dropped.iter().map(|c| c.id()).collect();
        self.inner.core.env.ctx.update_manifest(|m| {
            m.cfs.retain(|id, _| !ids.contains(id));
            m.obsolete
                .extend(dropped.iter().flat_map(|cf| cf.live_files()));
        })?;
        for cf in dropped {
            let retired = self.inner.core.commitlog.forget(cf.id())?;
            self.inner.core.retire(retired)?;
            cf.remove_files()?;
        }
        Ok(())
    }

    /// Refuses a definition whose comparators the catalog could not read back at the next
    /// open (one nested deeper or wider than the registry takes): stored, it would keep the
    /// database from opening.
    fn check_readable(&self, def: &ColumnFamilyDef) -> Result<()> {
        let names = [
            Some(&def.comparator),
            def.subcomparator.as_ref(),
            Some(&def.default_validation_class),
            def.key_validation_class.as_ref(),
        ];
        for c in names.into_iter().flatten() {
            let name = c.name();
            self.options().comparators.resolve(&name).map_err(|e| {
                Error::InvalidRequest(format!(
                    "column family '{}': its types nest too deep or too wide to be stored ({e})",
                    def.name
                ))
            })?;
        }
        Ok(())
    }

    /// Adds a column family to a keyspace.
    pub fn create_column_family(&self, keyspace: &str, def: ColumnFamilyDef) -> Result<()> {
        def.validate()?;
        self.check_readable(&def)?;
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
            let store = self.inner.core.env.store(&ks.def, id, &def);
            self.inner
                .flusher
                .send_uncounted(FlushJob::Watch(Arc::downgrade(&store)));
            ks.cfs.insert(def.name.clone(), store);
            ks.def.column_families.push(def);
            Ok(())
        })
    }

    /// Changes a CQL table's column family as `alter` does to it (`ALTER TABLE`: the CQL schema
    /// stored beside it, its comment and `GCGraceSeconds`), under the schema lock: two changes
    /// racing, or a table dropped and created again meanwhile, are seen by `alter` (which may
    /// refuse) rather than one undoing the other. The name, id, column type and data stay as they
    /// are; so does the comparator, unless `alter` gives one that only adds collection columns to
    /// it ([`adds_collections`]), which orders every name already written as before. `alter`
    /// answers whether what was prepared against the old table must be prepared again (its
    /// version changes, see [`Database::column_family_version`]).
    pub fn alter_cql_table(
        &self,
        keyspace: &str,
        cf: &str,
        alter: impl FnOnce(&mut ColumnFamilyDef) -> Result<bool>,
    ) -> Result<()> {
        let change = |s: &mut SchemaState| {
            let ks = s
                .keyspaces
                .get_mut(keyspace)
                .ok_or_else(|| Error::UnknownKeyspace(keyspace.to_string()))?;
            let unknown = || Error::UnknownColumnFamily {
                keyspace: keyspace.to_string(),
                column_family: cf.to_string(),
            };
            let store = ks.cfs.get(cf).ok_or_else(unknown)?.clone();
            let def = ks
                .def
                .column_families
                .iter_mut()
                .find(|c| c.name == cf)
                .ok_or_else(unknown)?;
            let before = def.clone();
            let stale = alter(def)?;
            self.check_readable(def)?;
            let (old, new) = (before.comparator.as_ref(), def.comparator.as_ref());
            if new.name() != old.name() && !adds_collections(old, new) {
                return Err(Error::Schema(format!(
                    "{keyspace}.{cf}: the comparator {} cannot become {}: only collection \
                     columns may be added to it",
                    old.name(),
                    new.name()
                )));
            }
            if def.name != before.name
                || def.column_type != before.column_type
                || def.subcomparator.as_ref().map(|c| c.name())
                    != before.subcomparator.as_ref().map(|c| c.name())
            {
                return Err(Error::Schema(format!(
                    "{keyspace}.{cf}: an ALTER TABLE may not change the column family's name or type"
                )));
            }
            Ok((store, def.clone(), stale))
        };
        // The store takes the definition before anyone sees the new table: a writer that still
        // has the old table writes only names the new definition orders as the old one did, and
        // one that has the new table is validated by the new definition. Under the schema lock,
        // two ALTERs land in order.
        let mut altered = None;
        self.change_schema_then(change, |(store, def, stale)| {
            store.replace_def(def);
            altered = stale.then_some(store);
        })?;
        // After the new table is published: a statement prepared against the old table with
        // this version, or against the new one with the old version, is found stale and
        // prepared again, never run with a table its version does not match.
        if let Some(store) = altered {
            store.altered();
        }
        Ok(())
    }

    /// Drops a column family and all its data.
    pub fn drop_column_family(&self, keyspace: &str, cf: &str) -> Result<()> {
        let mut dropped = Vec::new();
        self.change_schema(|s| {
            let ks = s
                .keyspaces
                .get_mut(keyspace)
                .ok_or_else(|| Error::UnknownKeyspace(keyspace.to_string()))?;
            let Some(store) = ks.cfs.remove(cf).filter(|_| !is_hidden(cf)) else {
                return Err(Error::UnknownColumnFamily {
                    keyspace: keyspace.to_string(),
                    column_family: cf.to_string(),
                });
            };
            // Its indexes go with it.
            for idx in store.indexes().iter() {
                dropped.extend(ks.cfs.remove(&idx.def.column_family_name(cf)));
            }
            dropped.push(store);
            ks.def.column_families.retain(|c| c.name != cf);
            Ok(())
        })?;
        self.remove_dropped(&dropped)
    }
}
