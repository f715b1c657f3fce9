//! Reads: each request is checked against the column family, then evaluated by its store over
//! the memtables and SSTables that hold the row (or rows, for a range).

use std::ops::Bound;

use super::{ColumnFamilyHandle, Database};
use crate::error::{Error, NameKind, Result};
use crate::model::cell::{Cell, CellIn};
use crate::model::partitioner::{Partitioner, RowKey};
use crate::mutation::validate_key;
use crate::query::{
    Column, ColumnOrSuperColumn, ColumnParent, ColumnPath, KeyRange, KeySlice, RangeBound,
    SlicePredicate,
};
use crate::schema::ColumnType;
use crate::store::{ColumnFamilyStore, ReadRequest, RowRange};

impl Database {
    /// The request to `cf` for `parent`'s columns that `predicate` selects, checked.
    pub(super) fn read_request<'a>(
        &self,
        cf: &ColumnFamilyStore,
        parent: &'a ColumnParent,
        predicate: &'a SlicePredicate,
    ) -> Result<ReadRequest<'a>> {
        let super_column = parent.super_column.as_deref();
        cf.validator().read(super_column, predicate)?;
        Ok(ReadRequest {
            super_column,
            predicate,
            now_seconds: self.now().seconds,
        })
    }

    /// Reads one column, or one super column with its live sub-columns. `Ok(None)` when nothing
    /// live is there.
    pub fn get(
        &self,
        keyspace: &str,
        key: impl AsRef<[u8]>,
        path: &ColumnPath,
    ) -> Result<Option<ColumnOrSuperColumn>> {
        let key = key.as_ref();
        validate_key(key)?;
        let schema = self.schema();
        let cf = schema.cf(keyspace, &path.column_family)?;
        // A column of a Standard CF: read by its name, without building a predicate.
        if let (ColumnType::Standard, None, Some(name)) =
            (cf.def().column_type, &path.super_column, &path.column)
        {
            cf.validator().path(path.into(), false)?;
            let started = std::time::Instant::now();
            let row = RowKey::new(self.inner.partitioner, key);
            let found = cf.column(&row, name, self.now().seconds)?;
            cf.record_read(started);
            return Ok(found.map(ColumnOrSuperColumn::Column));
        }
        let (parent_sc, name) = match (cf.def().column_type, &path.super_column, &path.column) {
            (_, sc, Some(c)) => (sc.as_deref(), c.clone()),
            (ColumnType::Super, Some(sc), None) => (None, sc.clone()),
            (ColumnType::Standard, _, None) => {
                return Err(Error::invalid(format!(
                    "get from {keyspace}.{} needs a column name",
                    path.column_family
                )))
            }
            (ColumnType::Super, None, None) => {
                return Err(Error::invalid(format!(
                    "get from {keyspace}.{} needs a super column",
                    path.column_family
                )))
            }
        };
        cf.validator().path(path.into(), false)?;
        let predicate = SlicePredicate::Names(vec![name]);
        cf.validator().read(parent_sc, &predicate)?;
        let started = std::time::Instant::now();
        let req = ReadRequest {
            super_column: parent_sc,
            predicate: &predicate,
            now_seconds: self.now().seconds,
        };
        let mut found = cf.slice(&RowKey::new(self.inner.partitioner, key), &req)?;
        cf.record_read(started);
        Ok(found.pop())
    }

    /// Reads columns of one row of a Standard column family by name: the live ones, in the
    /// comparator's order. What [`get_slice`](Self::get_slice) with
    /// [`SlicePredicate::Names`] answers, without building the predicate or wrapping each
    /// column (a CQL read of one row by its primary key is this).
    pub fn get_columns<N: AsRef<[u8]>>(
        &self,
        keyspace: &str,
        key: impl AsRef<[u8]>,
        column_family: &str,
        names: &[N],
    ) -> Result<Vec<Column>> {
        let key = key.as_ref();
        validate_key(key)?;
        let schema = self.schema();
        let cf = schema.cf(keyspace, column_family)?;
        if cf.def().column_type != ColumnType::Standard {
            return Err(Error::invalid(format!(
                "column family {keyspace}.{column_family} is Super: read its columns by super column"
            )));
        }
        let validator = cf.validator();
        for n in names {
            validator.name(n.as_ref(), NameKind::Column)?;
        }
        let started = std::time::Instant::now();
        let row = RowKey::new(self.inner.partitioner, key);
        let found = cf.columns(&row, names, self.now().seconds);
        cf.record_read(started);
        found
    }

    /// Visits the live columns of one row of a Standard column family among those whose names
    /// have these sort keys (built by the caller from names it validated: CQL's planned
    /// reads), in sort key order, each as its key and the cell: what
    /// [`get_columns`](Self::get_columns) reads, without encoding, decoding or a column built.
    pub fn visit_columns(
        &self,
        ColumnFamilyHandle(cf): &ColumnFamilyHandle,
        key: &[u8],
        sort_keys: &[&[u8]],
        f: impl FnMut(&[u8], Cell),
    ) -> Result<()> {
        validate_key(key)?;
        if cf.def().column_type != ColumnType::Standard {
            return Err(Error::invalid(format!(
                "column family {}.{} is Super: read its columns by super column",
                cf.keyspace(),
                cf.def().name
            )));
        }
        let started = std::time::Instant::now();
        let row = RowKey::new(self.inner.partitioner, key);
        let out = cf.visit_sort_keys(&row, sort_keys, self.now().seconds, f);
        cf.record_read(started);
        out
    }

    /// Reads the columns (or super columns, or sub-columns of `parent.super_column`) of one row
    /// that `predicate` selects; empty when there are none.
    pub fn get_slice(
        &self,
        keyspace: &str,
        key: impl AsRef<[u8]>,
        parent: &ColumnParent,
        predicate: &SlicePredicate,
    ) -> Result<Vec<ColumnOrSuperColumn>> {
        let key = key.as_ref();
        validate_key(key)?;
        let schema = self.schema();
        let cf = schema.cf(keyspace, &parent.column_family)?;
        let req = self.read_request(cf, parent, predicate)?;
        let started = std::time::Instant::now();
        let out = cf.slice(&RowKey::new(self.inner.partitioner, key), &req);
        cf.record_read(started);
        out
    }

    /// Visits the live columns of one row of a Standard column family that a range
    /// `predicate` selects (its `count` aside), in read order, each as the sort key of its name
    /// and the cell, until `f` answers `false`: [`get_slice`](Self::get_slice) without a
    /// column built per cell, for a reader that assembles its own answer (CQL's rows).
    pub fn visit_slice(
        &self,
        ColumnFamilyHandle(cf): &ColumnFamilyHandle,
        key: &[u8],
        parent: &ColumnParent,
        predicate: &SlicePredicate,
        f: impl FnMut(&[u8], CellIn<'_>) -> Result<bool>,
    ) -> Result<()> {
        validate_key(key)?;
        let req = self.read_request(cf, parent, predicate)?;
        let SlicePredicate::Range(range) = predicate else {
            return Err(Error::invalid("a visited slice takes a range predicate"));
        };
        if cf.def().column_type != ColumnType::Standard || parent.super_column.is_some() {
            return Err(Error::invalid(format!(
                "column family {}.{} is Super: visit its columns by super column",
                cf.keyspace(),
                cf.def().name
            )));
        }
        let started = std::time::Instant::now();
        let row = RowKey::new(self.inner.partitioner, key);
        let out = cf.visit_slice(&row, range, req.now_seconds, f);
        cf.record_read(started);
        out
    }

    /// [`get_slice`](Self::get_slice) of many rows: one [`KeySlice`] per requested key, in request
    /// order, with an empty list where a row has no data.
    pub fn multiget_slice<K: AsRef<[u8]>>(
        &self,
        keyspace: &str,
        keys: &[K],
        parent: &ColumnParent,
        predicate: &SlicePredicate,
    ) -> Result<Vec<KeySlice>> {
        let schema = self.schema();
        let cf = schema.cf(keyspace, &parent.column_family)?;
        let req = self.read_request(cf, parent, predicate)?;
        for k in keys {
            validate_key(k.as_ref())?;
        }
        let started = std::time::Instant::now();
        let out = keys
            .iter()
            .map(|k| {
                let key = k.as_ref();
                Ok(KeySlice {
                    key: key.to_vec(),
                    columns: cf.slice(&RowKey::new(self.inner.partitioner, key), &req)?,
                })
            })
            .collect();
        cf.record_read(started);
        out
    }

    /// Counts what [`get_slice`](Self::get_slice) would return (so a range predicate's `count`
    /// caps it; [`SlicePredicate::everything`] counts all). Under a Super CF without a super
    /// column, super columns with at least one live sub-column are counted.
    pub fn get_count(
        &self,
        keyspace: &str,
        key: impl AsRef<[u8]>,
        parent: &ColumnParent,
        predicate: &SlicePredicate,
    ) -> Result<usize> {
        Ok(self.get_slice(keyspace, key, parent, predicate)?.len())
    }

    /// Reads rows in token order within `range` (both ends inclusive; a key bound stands for its
    /// token under a hashing partitioner), at most `range.count` of them, each with the slice
    /// `predicate` selects. Rows that hold only tombstones are skipped.
    pub fn get_range_slices(
        &self,
        keyspace: &str,
        parent: &ColumnParent,
        predicate: &SlicePredicate,
        range: &KeyRange,
    ) -> Result<Vec<KeySlice>> {
        let schema = self.schema();
        let cf = schema.cf(keyspace, &parent.column_family)?;
        let req = self.read_request(cf, parent, predicate)?;
        if range.count == 0 {
            return Err(Error::invalid("a key range's count must be positive"));
        }
        let p = self.inner.partitioner;
        let bound_token = |b: &RangeBound| -> Result<Option<Vec<u8>>> {
            Ok(match b {
                RangeBound::Unbounded => None,
                RangeBound::Key(k) => {
                    validate_key(k)?;
                    Some(Partitioner::token_bytes(&p.token(k)))
                }
                RangeBound::Token(t) => Some(Partitioner::token_bytes(&p.parse_token(t)?)),
            })
        };
        let start = bound_token(&range.start)?;
        let end = bound_token(&range.end)?;
        if let (Some(s), Some(e)) = (&start, &end) {
            if s > e {
                return Err(Error::invalid(format!(
                    "the start of the key range sorts after its end under {}",
                    p.class_name()
                )));
            }
        }
        let lo = start.as_deref().map_or(Bound::Unbounded, Bound::Included);
        let started = std::time::Instant::now();
        let rows = RowRange {
            start: lo,
            end_token: end.as_deref(),
            count: range.count,
        };
        let out = cf.range_slices(&rows, &req);
        cf.record_read(started);
        out
    }
}
