//! The schema in force as the database holds it: each keyspace's definition with the store of
//! each column family, and how stores are built. Replaced as a whole on every schema change, so
//! a reader holding one sees a consistent schema.

use std::collections::BTreeMap;
use std::sync::Arc;

use crossbeam_utils::sync::ShardedLock;

use crate::error::{Error, Result};
use crate::model::partitioner::Partitioner;
use crate::schema::catalog::Catalog;
use crate::schema::{ColumnFamilyDef, KeyspaceDef};
use crate::store::{ColumnFamilyStore, CompactionSettings, FlushLimits, IndexStore, StoreContext};

#[derive(Debug, Default)]
pub(super) struct SchemaState {
    pub(super) keyspaces: BTreeMap<String, KeyspaceState>,
    pub(super) next_cf_id: u32,
}

#[derive(Debug, Clone)]
pub(super) struct KeyspaceState {
    pub(super) def: KeyspaceDef,
    pub(super) cfs: BTreeMap<String, Arc<ColumnFamilyStore>>,
}

/// What a column family store is built with.
#[derive(Debug, Clone)]
pub(super) struct StoreEnv {
    pub(super) ctx: Arc<StoreContext>,
    pub(super) limits: FlushLimits,
    pub(super) compaction: CompactionSettings,
    /// The lock that orders memtable switches against memtable applies ([`super::Core`]'s),
    /// for what applies to memtables from below the database handle (an index cleaned as
    /// its base compacts).
    pub(super) switch: Arc<ShardedLock<()>>,
}

impl StoreEnv {
    pub(super) fn store(
        &self,
        ks: &KeyspaceDef,
        id: u32,
        cf: &ColumnFamilyDef,
    ) -> Arc<ColumnFamilyStore> {
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
    /// The stores of `def`'s column families and of their indexes' hidden column families
    /// (named `<base>.<index>`, a name no user column family can have), each base store
    /// wired to its indexes.
    pub(super) fn new(def: KeyspaceDef, ids: impl Fn(&str) -> u32, env: &StoreEnv) -> Self {
        let mut cfs = BTreeMap::new();
        for cf in &def.column_families {
            let base = env.store(&def, ids(&cf.name), cf);
            let mut indexes = Vec::with_capacity(cf.indexes.len());
            for idx in &cf.indexes {
                let hidden = idx.column_family(cf);
                let store = env.store(&def, ids(&hidden.name), &hidden);
                cfs.insert(hidden.name.clone(), store.clone());
                let idx = IndexStore {
                    def: idx.clone(),
                    store,
                };
                super::index_purge::wire(&def.name, &base, &idx);
                super::index_cleanup::wire(&def.name, &base, &env.switch);
                indexes.push(idx);
            }
            base.set_indexes(indexes);
            cfs.insert(cf.name.clone(), base);
        }
        KeyspaceState { def, cfs }
    }
}

/// Whether a column family name is an index's hidden one, which no client may name.
pub(super) fn is_hidden(cf: &str) -> bool {
    cf.contains('.')
}

impl SchemaState {
    pub(super) fn from_catalog(c: Catalog, env: &StoreEnv) -> Self {
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

    pub(super) fn to_catalog(&self, partitioner: Partitioner, settings: Vec<u8>) -> Catalog {
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

    pub(super) fn allocate_cf_id(&mut self) -> Result<u32> {
        let id = self.next_cf_id;
        self.next_cf_id = id
            .checked_add(1)
            .ok_or_else(|| Error::Schema("column family ids are exhausted".into()))?;
        Ok(id)
    }
}

impl SchemaState {
    /// The store of `keyspace`.`cf`, borrowed: a read that keeps the schema it found it in
    /// takes no reference count on it.
    #[inline]
    pub(super) fn cf(&self, keyspace: &str, cf: &str) -> Result<&Arc<ColumnFamilyStore>> {
        let ks = self
            .keyspaces
            .get(keyspace)
            .ok_or_else(|| Error::UnknownKeyspace(keyspace.to_string()))?;
        ks.cfs
            .get(cf)
            .filter(|_| !is_hidden(cf))
            .ok_or_else(|| Error::UnknownColumnFamily {
                keyspace: keyspace.to_string(),
                column_family: cf.to_string(),
            })
    }

    /// Every column family store.
    pub(super) fn all_cfs(&self) -> impl Iterator<Item = &Arc<ColumnFamilyStore>> {
        self.keyspaces.values().flat_map(|k| k.cfs.values())
    }
}
