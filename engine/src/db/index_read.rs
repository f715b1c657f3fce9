//! Reading secondary indexes: the entries of one value, page by page (CQL checks each against
//! its row), and Cassandra 0.7's `get_indexed_slices`, which checks them here.

use super::index::base_store;
use super::Database;
use crate::error::{Error, Result};
use crate::query::{
    ColumnOrSuperColumn, ColumnParent, IndexClause, IndexOperator, KeySlice, SlicePredicate,
    SliceRange,
};
use crate::schema::index::MAX_INDEXED_VALUE;

/// One entry of an index: a row that held the indexed value when it was written (it may hold
/// another since; the caller checks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    /// The row (partition) key.
    pub key: Vec<u8>,
    /// The row's clustering components (none for a column family without a composite
    /// comparator, or a CQL table without clustering columns).
    pub clustering: Vec<Vec<u8>>,
    /// The entry's name in the index: pass it back to continue after this entry.
    pub position: Vec<u8>,
}

impl Database {
    /// Up to `count` entries of index `index` of `keyspace`.`cf` for `value`, in the order a
    /// scan of the base returns their rows, from after the entry whose `position` is `after`.
    /// An entry may be stale (its row overwritten, deleted or expired since): the caller
    /// checks each against its row, as Cassandra does.
    pub fn index_entries(
        &self,
        keyspace: &str,
        cf: &str,
        index: &str,
        value: &[u8],
        after: Option<&[u8]>,
        count: usize,
    ) -> Result<Vec<IndexEntry>> {
        self.entries_from(keyspace, cf, index, value, after, false, count)
    }

    /// [`index_entries`](Self::index_entries) from `from`: after it, or with `inclusive` at it.
    #[allow(clippy::too_many_arguments)] // the request's parts, each a different thing
    fn entries_from(
        &self,
        keyspace: &str,
        cf: &str,
        index: &str,
        value: &[u8],
        after: Option<&[u8]>,
        inclusive: bool,
        count: usize,
    ) -> Result<Vec<IndexEntry>> {
        let schema = self.schema();
        let base = base_store(&schema, keyspace, cf)?;
        let indexes = base.indexes();
        let Some(idx) = indexes.iter().find(|i| i.def.name == index) else {
            return Err(Error::invalid(format!(
                "no index named '{index}' on {keyspace}.{cf}"
            )));
        };
        if !idx.def.built {
            return Err(Error::IndexNotBuilt {
                keyspace: keyspace.to_string(),
                index: index.to_string(),
            });
        }
        if value.is_empty() || value.len() > MAX_INDEXED_VALUE {
            return Ok(Vec::new());
        }
        let want = count.saturating_add(usize::from(after.is_some())).max(1);
        let range = SliceRange {
            start: after.map(<[u8]>::to_vec).unwrap_or_default(),
            ..SliceRange::all().count(want)
        };
        let predicate = SlicePredicate::Range(range);
        let hidden = idx.def.column_family_name(cf);
        let parent = ColumnParent::new(hidden.as_str());
        let req = self.read_request(&idx.store, &parent, &predicate)?;
        let row = crate::model::partitioner::RowKey::new(self.inner.partitioner, value);
        let found = idx.store.slice(&row, &req)?;
        let p = self.inner.partitioner;
        let mut out = Vec::with_capacity(found.len());
        for c in found {
            let ColumnOrSuperColumn::Column(c) = c else {
                continue;
            };
            if !inclusive && after == Some(c.name.as_slice()) {
                continue;
            }
            let Some((sort_key, clustering)) = idx.def.split_entry(&c.name) else {
                return Err(Error::invalid(format!(
                    "index {index} of {keyspace}.{cf} holds an entry it could not have written"
                )));
            };
            out.push(IndexEntry {
                key: p.key_part(sort_key).to_vec(),
                clustering: clustering.into_iter().map(<[u8]>::to_vec).collect(),
                position: c.name.clone(),
            });
            if out.len() == count {
                break;
            }
        }
        Ok(out)
    }

    /// Cassandra 0.7's `get_indexed_slices`: the rows of `parent`'s column family matching
    /// every expression of `clause` (one at least an equality on an indexed column, which
    /// finds the candidates), from `clause.start_key` in token order, at most `clause.count`,
    /// each with the columns `predicate` selects. Values compare under the column family's
    /// value type. Each candidate is checked against its row as it is now, so an entry left by
    /// an overwrite, a delete or an expiry is never answered.
    pub fn get_indexed_slices(
        &self,
        keyspace: &str,
        parent: &ColumnParent,
        clause: &IndexClause,
        predicate: &SlicePredicate,
    ) -> Result<Vec<KeySlice>> {
        let cf = parent.column_family.as_str();
        if parent.super_column.is_some() {
            return Err(Error::invalid("an indexed read names no super column"));
        }
        let base = base_store(&self.schema(), keyspace, cf)?;
        let def = base.def();
        let indexes = base.indexes();
        let found = clause.expressions.iter().find_map(|e| {
            let idx = indexes.iter().find(|i| i.def.column == e.column_name)?;
            (e.op == IndexOperator::Eq).then_some((idx, e))
        });
        let Some((idx, primary)) = found else {
            return Err(Error::invalid(
                "No indexed columns present in index clause with operator EQ",
            ));
        };
        if clause.count == 0 {
            return Ok(Vec::new());
        }
        let names: Vec<Vec<u8>> = clause
            .expressions
            .iter()
            .map(|e| e.column_name.clone())
            .collect();
        let checked = SlicePredicate::Names(names);
        let values = def.default_validation_class.clone();
        let mut after = (!clause.start_key.is_empty())
            .then(|| self.inner.partitioner.row_sort_key(&clause.start_key));
        // The first entry may be the start key's own: it is asked for inclusively.
        let mut inclusive = after.is_some();
        let mut out = Vec::new();
        loop {
            let page = clause.count.saturating_sub(out.len()).clamp(16, 1_000);
            let entries = self.entries_from(
                keyspace,
                cf,
                &idx.def.name,
                &primary.value,
                after.as_deref(),
                inclusive,
                page,
            )?;
            inclusive = false;
            let full = entries.len() == page;
            for e in &entries {
                let current = self.get_slice(keyspace, &e.key, parent, &checked)?;
                let matches = clause.expressions.iter().all(|x| {
                    current.iter().any(|c| match c {
                        ColumnOrSuperColumn::Column(c) => {
                            c.name == x.column_name && x.holds(values.compare(&c.value, &x.value))
                        }
                        ColumnOrSuperColumn::SuperColumn(_) => false,
                    })
                });
                if matches {
                    let columns = self.get_slice(keyspace, &e.key, parent, predicate)?;
                    out.push(KeySlice {
                        key: e.key.clone(),
                        columns,
                    });
                    if out.len() == clause.count {
                        return Ok(out);
                    }
                }
            }
            match entries.last() {
                Some(last) if full => after = Some(last.position.clone()),
                _ => return Ok(out),
            }
        }
    }
}
