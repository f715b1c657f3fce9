//! One column family's live state: its memtables, and reads over them.
//!
//! Writes arrive here already validated ([`RowUpdate`]); reads are validated here against the
//! CF's comparators, then evaluated by [`crate::query::slice`] over every source holding the row.
//! Readers take a snapshot of the memtable set, so a future memtable switch or SSTable swap never
//! changes what a read in progress sees.

use std::ops::Bound;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::error::{Error, NameKind, Result};
use crate::memtable::{MemRow, Memtable, RowData};
use crate::model::partitioner::Partitioner;
use crate::mutation::{RowUpdate, Validator};
use crate::query::merge::{KMerge, RowSource};
use crate::query::slice::{self, SliceContext};
use crate::query::{ColumnOrSuperColumn, KeySlice, SlicePredicate};
use crate::schema::{ColumnFamilyDef, ColumnType};

/// The memtables a read consults: the one taking writes, and any being flushed.
#[derive(Debug, Default)]
struct MemtableSet {
    active: Arc<Memtable>,
    flushing: Vec<Arc<Memtable>>,
}

impl MemtableSet {
    fn all(&self) -> impl Iterator<Item = &Arc<Memtable>> {
        std::iter::once(&self.active).chain(self.flushing.iter())
    }
}

/// A column family's store.
#[derive(Debug)]
pub struct ColumnFamilyStore {
    keyspace: String,
    /// `Keyspace/ColumnFamily`, for errors.
    origin: String,
    id: u32,
    def: ColumnFamilyDef,
    memtables: RwLock<Arc<MemtableSet>>,
}

impl ColumnFamilyStore {
    /// An empty store for `def` in `keyspace`.
    pub fn new(keyspace: &str, id: u32, def: ColumnFamilyDef) -> Self {
        ColumnFamilyStore {
            keyspace: keyspace.to_string(),
            origin: format!("{keyspace}/{}", def.name),
            id,
            def,
            memtables: RwLock::new(Arc::new(MemtableSet::default())),
        }
    }

    /// The column family's id (never reused; see the catalog).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The definition.
    pub fn def(&self) -> &ColumnFamilyDef {
        &self.def
    }

    /// A validator for this CF's names and values.
    pub fn validator(&self) -> Validator<'_> {
        Validator {
            keyspace: &self.keyspace,
            cf: &self.def,
        }
    }

    fn is_super(&self) -> bool {
        self.def.column_type == ColumnType::Super
    }

    /// Applies a validated row update to the active memtable.
    pub fn apply(&self, sort_key: &[u8], key: &[u8], update: &RowUpdate) {
        let set = self.memtables.read().clone();
        set.active.apply(sort_key, key, update, self.is_super());
    }

    /// Bytes held by the memtables.
    #[allow(dead_code)] // read by the flush triggers, the next step of the durability work
    pub fn memtable_bytes(&self) -> usize {
        self.memtables.read().all().map(|m| m.live_bytes()).sum()
    }

    /// Column writes applied to the active memtable.
    #[allow(dead_code)] // read by the flush triggers, the next step of the durability work
    pub fn memtable_operations(&self) -> u64 {
        self.memtables.read().active.operations()
    }

    /// Checks a read of `super_column` (if any) with `predicate` against this CF.
    pub fn validate_read(
        &self,
        super_column: Option<&[u8]>,
        predicate: &SlicePredicate,
    ) -> Result<()> {
        let v = self.validator();
        let kind = match (self.def.column_type, super_column) {
            (ColumnType::Standard, Some(_)) => {
                return Err(Error::invalid(format!(
                    "column family {}.{} is Standard: a read may not name a super column",
                    self.keyspace, self.def.name
                )))
            }
            (ColumnType::Super, Some(sc)) => {
                v.name(sc, NameKind::SuperColumn)?;
                NameKind::Column
            }
            (ColumnType::Super, None) => NameKind::SuperColumn,
            (ColumnType::Standard, None) => NameKind::Column,
        };
        match predicate {
            SlicePredicate::Names(names) => {
                for n in names {
                    v.name(n, kind)?;
                }
            }
            SlicePredicate::Range(r) => {
                v.bound(&r.start, kind)?;
                v.bound(&r.finish, kind)?;
                if !r.start.is_empty() && !r.finish.is_empty() {
                    let cmp = match kind {
                        NameKind::Column if self.is_super() => self.def.subcomparator(),
                        _ => self.def.comparator.clone(),
                    };
                    let order = cmp.compare(&r.start, &r.finish);
                    if (r.reversed && order.is_lt()) || (!r.reversed && order.is_gt()) {
                        return Err(Error::invalid(format!(
                            "range finish must come after start in the order of traversal ({} slice of {}.{})",
                            if r.reversed { "reversed" } else { "forward" },
                            self.keyspace,
                            self.def.name
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    fn context(&self, now_seconds: i64) -> SliceContext<'_> {
        SliceContext {
            origin: &self.origin,
            column_type: self.def.column_type,
            comparator: self.def.comparator.as_ref(),
            subcomparator: self
                .def
                .subcomparator
                .as_deref()
                .unwrap_or(&crate::model::comparator::BytesType),
            now_seconds,
        }
    }

    fn eval_row(
        &self,
        rows: &[&MemRow],
        super_column: Option<&[u8]>,
        predicate: &SlicePredicate,
        now_seconds: i64,
        skip_dead: bool,
    ) -> Result<Option<Vec<ColumnOrSuperColumn>>> {
        let guards: Vec<_> = rows.iter().map(|r| r.data.read()).collect();
        let sources: Vec<&dyn RowSource> = guards
            .iter()
            .map(|g| &**g as &RowData as &dyn RowSource)
            .collect();
        let ctx = self.context(now_seconds);
        if skip_dead && !slice::row_is_live(&sources, &ctx)? {
            return Ok(None);
        }
        slice::slice(&sources, &ctx, super_column, predicate).map(Some)
    }

    /// Reads a validated slice of the row with this sort key.
    pub fn slice(
        &self,
        sort_key: &[u8],
        super_column: Option<&[u8]>,
        predicate: &SlicePredicate,
        now_seconds: i64,
    ) -> Result<Vec<ColumnOrSuperColumn>> {
        let set = self.memtables.read().clone();
        let entries: Vec<_> = set.all().filter_map(|m| m.row(sort_key)).collect();
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<&MemRow> = entries.iter().map(|e| e.value()).collect();
        Ok(self
            .eval_row(&rows, super_column, predicate, now_seconds, false)?
            .unwrap_or_default())
    }

    /// Reads up to `count` live rows from `start`, in token order, while their token part is at
    /// most `end_token`, each with its slice.
    #[allow(clippy::too_many_arguments)]
    pub fn range_slices(
        &self,
        partitioner: Partitioner,
        start: Bound<&[u8]>,
        end_token: Option<&[u8]>,
        super_column: Option<&[u8]>,
        predicate: &SlicePredicate,
        count: usize,
        now_seconds: i64,
    ) -> Result<Vec<KeySlice>> {
        let set = self.memtables.read().clone();
        let streams: Vec<_> = set.all().map(|m| m.rows_from(start)).collect();
        let mut out = Vec::new();
        for group in KMerge::new(streams, |e| Some(e.key().as_slice()), false) {
            if out.len() >= count {
                break;
            }
            let sort_key = group[0].key().as_slice();
            if end_token.is_some_and(|end| partitioner.token_part(sort_key) > end) {
                break;
            }
            let rows: Vec<&MemRow> = group.iter().map(|e| e.value()).collect();
            if let Some(columns) =
                self.eval_row(&rows, super_column, predicate, now_seconds, true)?
            {
                out.push(KeySlice {
                    key: rows[0].key.clone(),
                    columns,
                });
            }
        }
        Ok(out)
    }
}
