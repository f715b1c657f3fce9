//! Writes: the public mutation types, and their validation into [`RowUpdate`]s, the one form the
//! commit log and memtable take.
//!
//! Everything a user sends is checked here against SPEC §1's limits and the column family's
//! comparators before anything is applied, so a bad batch changes nothing.
//!
//! Long because every mutation form is validated against SPEC §1's limits here, in one place, so no
//! form is checked differently.

use crate::error::{Error, NameKind, Result};
use std::borrow::Cow;
use std::sync::Arc;

use bumpalo::Bump;

use crate::model::cell::{CellRef, CellValueRef, DeletionTime, EntryRef, Ttl};
use crate::model::cell_key;
use crate::model::comparator::{BytesType, Comparator, CompositeType};
use crate::query::{ColumnPathRef, SlicePredicate};
use crate::schema::{ColumnFamilyDef, ColumnType};

mod batch;
mod sorted_name;

pub use batch::{BatchMutation, Mutation, MutationRef};
pub use sorted_name::{SortedMark, SortedName};

/// The largest row key, and the largest column or super column name, in bytes.
pub const MAX_KEY_LEN: usize = 65_535;
/// The largest column name, in bytes.
pub const MAX_NAME_LEN: usize = 65_535;
/// The longest composite name (a CQL table's cell name): its components are each at most
/// 65,535 bytes, as Cassandra's clustering values and collection elements are, so the whole
/// name may pass [`MAX_NAME_LEN`].
pub const MAX_COMPOSITE_NAME_LEN: usize = 16 << 20;
/// The largest value, in bytes.
pub const MAX_VALUE_LEN: usize = i32::MAX as usize;

/// The timestamp and TTL of a write.
///
/// ```
/// use supercolumn::WriteOptions;
/// let now = WriteOptions::now();                 // the database clock's "now", in µs
/// let at = WriteOptions::at(1_374_546_754_299_000).with_ttl(3600);
/// # let _ = (now, at);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// The timestamp; `None`: the database clock's current time in microseconds.
    pub timestamp: Option<i64>,
    /// Seconds until the column expires; `None`: never.
    pub ttl: Option<u32>,
}

impl WriteOptions {
    /// Timestamp from the database clock, no TTL.
    #[inline]
    pub fn now() -> Self {
        Self::default()
    }

    /// The given timestamp, no TTL.
    #[inline]
    pub fn at(timestamp: i64) -> Self {
        WriteOptions {
            timestamp: Some(timestamp),
            ttl: None,
        }
    }

    /// Sets a TTL in seconds (must be positive).
    pub fn with_ttl(mut self, ttl: u32) -> Self {
        self.ttl = Some(ttl);
        self
    }
}

/// A validated change to one row of one column family: what the commit log records and the
/// memtable applies, all or nothing.
///
/// It borrows what it can from the request it was validated from (names that are their own
/// sort keys, and values), so a write copies a value only into the log and the memtable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowUpdate<'a> {
    /// A row deletion, if the update deletes the row.
    pub deletion: Option<DeletionTime>,
    /// Entries in the order written; later ones reconcile with earlier ones of the same key.
    pub entries: Vec<(Cow<'a, [u8]>, EntryRef<'a>)>,
}

impl RowUpdate<'_> {
    /// Checks that the entry keys fit the layout of a Standard (`is_super` false) or Super CF,
    /// for updates read back from disk: a super column deletion only under a whole group
    /// prefix, and in a Super CF every cell under one.
    pub fn check_shape(&self, is_super: bool) -> std::result::Result<(), String> {
        for (key, entry) in &self.entries {
            if key.is_empty() {
                return Err("an entry with an empty key".into());
            }
            let group = cell_key::group_prefix_len(key);
            match (entry, is_super) {
                (EntryRef::GroupDeletion(_), false)
                    if cell_key::prefix_of_deletion(key).is_none()
                        && cell_key::range_of_deletion(key).is_none() =>
                {
                    return Err("a prefix deletion under a malformed key".into())
                }
                (EntryRef::GroupDeletion(_), true) if group != Some(key.len()) => {
                    return Err("a super column deletion under a malformed key".into())
                }
                (EntryRef::Cell(_), true) if group.is_none_or(|g| g >= key.len()) => {
                    return Err("a sub-column outside any super column".into())
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The column writes this update counts as (for the memtable's operation threshold).
    pub fn operation_count(&self) -> u64 {
        self.entries.len() as u64 + u64::from(self.deletion.is_some())
    }
}

/// Whether a name past [`MAX_NAME_LEN`] is a composite one within [`MAX_COMPOSITE_NAME_LEN`]
/// (its components' own bounds are the comparator's to check). Only long names ask, so the
/// comparator's name is built off the hot path.
fn composite_fits(cmp: &dyn Comparator, name: &[u8]) -> bool {
    name.len() <= MAX_COMPOSITE_NAME_LEN && cmp.name().starts_with("CompositeType(")
}

/// Checks a row key against SPEC §1.
pub fn validate_key(key: &[u8]) -> Result<()> {
    if key.is_empty() {
        // Cassandra's wording (ThriftValidation, and CQL's key checks).
        return Err(Error::invalid("Key may not be empty"));
    }
    if key.len() > MAX_KEY_LEN {
        return Err(Error::invalid(format!(
            "Key length of {} is longer than maximum of {MAX_KEY_LEN}",
            key.len()
        )));
    }
    Ok(())
}

/// The clock readings a batch is stamped with: one "now" for the whole batch.
#[derive(Clone, Copy, Debug)]
pub struct Now {
    /// Microseconds, the default timestamp.
    pub micros: i64,
    /// Seconds, for deletion and expiration times.
    pub seconds: i64,
}

/// Validates names and values of one column family.
pub struct Validator<'a> {
    /// Keyspace name, for errors.
    pub keyspace: &'a str,
    /// The column family, as defined when the validator was made.
    pub cf: arc_swap::Guard<std::sync::Arc<ColumnFamilyDef>>,
}

impl Validator<'_> {
    fn name_error(&self, kind: NameKind, comparator: String, reason: String) -> Error {
        Error::InvalidName {
            keyspace: self.keyspace.to_string(),
            column_family: self.cf.name.clone(),
            comparator,
            kind,
            reason,
        }
    }

    /// Checks a name for a stored column, super column or sub-column.
    pub fn name(&self, name: &[u8], kind: NameKind) -> Result<()> {
        // Borrowed, not cloned: this runs for every name of every write.
        let cmp: &dyn Comparator = match (kind, self.cf.column_type) {
            (NameKind::Column, ColumnType::Super) => {
                self.cf.subcomparator.as_deref().unwrap_or(&BytesType)
            }
            _ => self.cf.comparator.as_ref(),
        };
        if name.is_empty() {
            return Err(self.name_error(kind, cmp.name(), "a name must not be empty".into()));
        }
        if name.len() > MAX_NAME_LEN && !composite_fits(cmp, name) {
            return Err(self.name_error(
                kind,
                cmp.name(),
                format!("{} bytes exceeds the limit of {MAX_NAME_LEN}", name.len()),
            ));
        }
        cmp.validate(name)
            .map_err(|e| self.name_error(kind, cmp.name(), e.0))
    }

    /// Checks a slice bound (empty allowed).
    pub fn bound(&self, name: &[u8], kind: NameKind) -> Result<()> {
        if name.is_empty() {
            Ok(())
        } else {
            self.name(name, kind)
        }
    }

    /// Checks a value against the CF's `DefaultValidationClass` (an empty value is always valid).
    pub fn value(&self, value: &[u8]) -> Result<()> {
        if value.len() > MAX_VALUE_LEN {
            return Err(Error::invalid(format!(
                "value of {} bytes exceeds the limit of {MAX_VALUE_LEN}",
                value.len()
            )));
        }
        if value.is_empty() {
            return Ok(());
        }
        let v = &self.cf.default_validation_class;
        v.validate(value)
            .map_err(|e| self.name_error(NameKind::Value, v.name(), e.0))
    }

    /// Checks that a path's shape fits the CF's type: `needs_column` for inserts.
    pub fn path(&self, path: ColumnPathRef<'_>, needs_column: bool) -> Result<()> {
        let cf = &self.cf.name;
        match self.cf.column_type {
            ColumnType::Standard => {
                if path.super_column.is_some() {
                    return Err(Error::invalid(format!(
                        "column family {}.{cf} is Standard: a path may not name a super column",
                        self.keyspace
                    )));
                }
            }
            ColumnType::Super => {
                if path.column.is_some() && path.super_column.is_none() {
                    return Err(Error::invalid(format!(
                        "column family {}.{cf} is Super: a column path needs a super column",
                        self.keyspace
                    )));
                }
                if needs_column && path.super_column.is_none() {
                    return Err(Error::invalid(format!(
                        "column family {}.{cf} is Super: an insert needs a super column and a column",
                        self.keyspace
                    )));
                }
            }
        }
        if needs_column && path.column.is_none() {
            return Err(Error::invalid(format!(
                "an insert into {}.{cf} needs a column name",
                self.keyspace
            )));
        }
        if let Some(sc) = path.super_column {
            self.name(sc, NameKind::SuperColumn)?;
        }
        if let Some(c) = path.column {
            self.name(c, NameKind::Column)?;
        }
        Ok(())
    }

    /// Validates `mutation` and appends it to `update`, which borrows from it.
    ///
    /// Sort keys that differ from their names are built in `scratch` and kept in `keys` (one
    /// arena for a whole batch, instead of an allocation per column).
    pub fn add<'m>(
        &self,
        mutation: MutationRef<'m>,
        now: Now,
        update: &mut RowUpdate<'m>,
        keys: &'m Bump,
        scratch: &mut Vec<u8>,
    ) -> Result<()> {
        match mutation {
            MutationRef::Insert { path, value, write } => {
                self.path(path, true)?;
                self.value(value)?;
                let key = self.entry_key(path, keys, scratch);
                update.entries.push((key, Self::live(value, write, now)?));
            }
            MutationRef::Remove { path, timestamp } => {
                self.path(path, false)?;
                let del = DeletionTime {
                    marked_for_delete_at: timestamp.unwrap_or(now.micros),
                    local_deletion_time: now.seconds,
                };
                match (path.super_column, path.column) {
                    (None, None) => {
                        update.deletion = DeletionTime::merge_opt(update.deletion, Some(del))
                    }
                    (Some(sc), None) => update.entries.push((
                        Cow::Owned(cell_key::super_column(self.cf.comparator.as_ref(), sc)),
                        EntryRef::GroupDeletion(del),
                    )),
                    (_, Some(_)) => update.entries.push((
                        self.entry_key(path, keys, scratch),
                        EntryRef::Cell(CellRef {
                            timestamp: del.marked_for_delete_at,
                            value: CellValueRef::Tombstone {
                                local_deletion_time: now.seconds,
                            },
                        }),
                    )),
                }
            }
            MutationRef::RemoveRange {
                path,
                start,
                finish,
                timestamp,
            } => {
                let key = self.range_deletion_key(path, start, finish)?;
                update.entries.push((
                    Cow::Owned(key),
                    EntryRef::GroupDeletion(DeletionTime {
                        marked_for_delete_at: timestamp.unwrap_or(now.micros),
                        local_deletion_time: now.seconds,
                    }),
                ));
            }
            MutationRef::RemovePrefix { path, timestamp } => {
                let key = self.prefix_deletion_key(path)?;
                update.entries.push((
                    Cow::Owned(key),
                    EntryRef::GroupDeletion(DeletionTime {
                        marked_for_delete_at: timestamp.unwrap_or(now.micros),
                        local_deletion_time: now.seconds,
                    }),
                ));
            }
        }
        Ok(())
    }

    /// Checks a prefix deletion's path and gives its entry key: a Standard CF whose comparator
    /// is a `CompositeType`, and a prefix of at least one and fewer than all its components.
    fn prefix_deletion_key(&self, path: ColumnPathRef<'_>) -> Result<Vec<u8>> {
        self.path(path, false)?;
        let cmp = self.cf.comparator.as_ref();
        let (ColumnType::Standard, Some(n), Some(prefix)) =
            (self.cf.column_type, cmp.composite_len(), path.column)
        else {
            return Err(Error::invalid(format!(
                "a prefix deletion needs a composite column prefix in a Standard column family with a CompositeType comparator ({}.{})",
                self.keyspace, self.cf.name
            )));
        };
        let parts = CompositeType::split(prefix)
            .map_err(|e| self.name_error(NameKind::Column, cmp.name(), e.0))?;
        if parts.len() >= n {
            return Err(self.name_error(
                NameKind::Column,
                cmp.name(),
                format!(
                    "a prefix deletion names {} of {n} components: it must name fewer",
                    parts.len()
                ),
            ));
        }
        let bytes: Vec<&[u8]> = parts.iter().map(|p| p.bytes).collect();
        let mut sort_key = Vec::with_capacity(prefix.len() + 2);
        let name = if CompositeType::is_static(prefix) {
            CompositeType::build_static(&bytes, 0)
        } else {
            CompositeType::build(&bytes, 0)
        };
        cmp.encode_sort_key(&name, &mut sort_key);
        Ok(cell_key::prefix_deletion(&sort_key))
    }

    /// Checks a range deletion's column family and bounds and gives its entry key: a Standard
    /// CF whose comparator is a `CompositeType`, bounds that are names or bounds of it (not
    /// static ones), the start not after the finish.
    fn range_deletion_key(
        &self,
        path: ColumnPathRef<'_>,
        start: &[u8],
        finish: &[u8],
    ) -> Result<Vec<u8>> {
        self.path(path, false)?;
        let cmp = self.cf.comparator.as_ref();
        if self.cf.column_type != ColumnType::Standard
            || cmp.composite_len().is_none()
            || path.column.is_some()
        {
            return Err(Error::invalid(format!(
                "a range deletion needs a Standard column family with a CompositeType comparator, and names no column ({}.{})",
                self.keyspace, self.cf.name
            )));
        }
        let mut keys = [Vec::new(), Vec::new()];
        for (bound, key) in [start, finish].into_iter().zip(&mut keys) {
            self.bound(bound, NameKind::Column)?;
            if CompositeType::is_static(bound) {
                return Err(self.name_error(
                    NameKind::Column,
                    cmp.name(),
                    "a range deletion's bound cannot be a static name".into(),
                ));
            }
            if !bound.is_empty() {
                cmp.encode_sort_key(bound, key);
            }
        }
        if !start.is_empty() && !finish.is_empty() && cmp.compare(start, finish).is_gt() {
            return Err(Error::invalid(format!(
                "a range deletion's finish comes before its start ({}.{})",
                self.keyspace, self.cf.name
            )));
        }
        Ok(cell_key::range_deletion(&keys[0], &keys[1]))
    }

    /// Checks a read of `super_column` (if any) with `predicate` against this CF.
    pub fn read(&self, super_column: Option<&[u8]>, predicate: &SlicePredicate) -> Result<()> {
        let v = self;
        let kind = match (self.cf.column_type, super_column) {
            (ColumnType::Standard, Some(_)) => {
                return Err(Error::invalid(format!(
                    "column family {}.{} is Standard: a read may not name a super column",
                    self.keyspace, self.cf.name
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
                        NameKind::Column if self.cf.column_type == ColumnType::Super => {
                            self.cf.subcomparator()
                        }
                        _ => self.cf.comparator.clone(),
                    };
                    let order = cmp.compare(&r.start, &r.finish);
                    if (r.reversed && order.is_lt()) || (!r.reversed && order.is_gt()) {
                        return Err(Error::invalid(format!(
                            "range finish must come after start in the order of traversal ({} slice of {}.{})",
                            if r.reversed { "reversed" } else { "forward" },
                            self.keyspace,
                            self.cf.name
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks an update read back from disk (the commit log at replay) as a write is checked:
    /// every name decodes under the CF's comparators and fits them, and every live value fits
    /// the validator. A name that does not would make the CF unreadable once flushed.
    pub fn stored_update(&self, update: &RowUpdate<'_>) -> Result<()> {
        let undecodable = |kind, e: crate::model::comparator::MarshalError| {
            self.name_error(kind, self.cf.comparator.name(), format!("undecodable: {e}"))
        };
        for (key, entry) in &update.entries {
            let mut name = Vec::new();
            match self.cf.column_type {
                ColumnType::Standard
                    if matches!(entry, EntryRef::GroupDeletion(_))
                        && key.starts_with(&cell_key::RANGE_DELETIONS) =>
                {
                    self.stored_range(key)?;
                    continue;
                }
                ColumnType::Standard => {
                    let deleted_prefix = match entry {
                        EntryRef::GroupDeletion(_) => Some(
                            cell_key::prefix_of_deletion(key)
                                .filter(|_| self.cf.comparator.composite_len().is_some())
                                .ok_or_else(|| {
                                    Error::invalid(format!(
                                        "a malformed prefix deletion in {}.{}",
                                        self.keyspace, self.cf.name
                                    ))
                                })?,
                        ),
                        EntryRef::Cell(_) => None,
                    };
                    self.cf
                        .comparator
                        .decode_sort_key(deleted_prefix.unwrap_or(key), &mut name)
                        .map_err(|e| undecodable(NameKind::Column, e))?;
                    self.name(&name, NameKind::Column)?;
                }
                ColumnType::Super => {
                    let plen = cell_key::group_prefix_len(key).unwrap_or(key.len());
                    let sc_key =
                        cell_key::super_column_sort_key(&key[..plen]).ok_or_else(|| {
                            Error::invalid(format!(
                                "a malformed super column key in {}.{}",
                                self.keyspace, self.cf.name
                            ))
                        })?;
                    self.cf
                        .comparator
                        .decode_sort_key(&sc_key, &mut name)
                        .map_err(|e| undecodable(NameKind::SuperColumn, e))?;
                    self.name(&name, NameKind::SuperColumn)?;
                    if plen < key.len() {
                        name.clear();
                        self.cf
                            .subcomparator()
                            .decode_sort_key(&key[plen..], &mut name)
                            .map_err(|e| undecodable(NameKind::Column, e))?;
                        self.name(&name, NameKind::Column)?;
                    }
                }
            }
            if let EntryRef::Cell(CellRef {
                value: CellValueRef::Live { value, .. },
                ..
            }) = entry
            {
                self.value(value)?;
            }
        }
        Ok(())
    }

    /// Checks a range deletion's key read back from disk: both bounds decode under the CF's
    /// composite comparator and are bounds of it.
    fn stored_range(&self, key: &[u8]) -> Result<()> {
        let cmp = self.cf.comparator.as_ref();
        let malformed = || {
            Error::invalid(format!(
                "a malformed range deletion in {}.{}",
                self.keyspace, self.cf.name
            ))
        };
        let (start, finish) = cell_key::range_of_deletion(key).ok_or_else(malformed)?;
        if cmp.composite_len().is_none() {
            return Err(malformed());
        }
        for sort_key in [start, finish].iter().filter(|k| !k.is_empty()) {
            let mut name = Vec::new();
            cmp.decode_sort_key(sort_key, &mut name).map_err(|e| {
                self.name_error(NameKind::Column, cmp.name(), format!("undecodable: {e}"))
            })?;
            self.bound(&name, NameKind::Column)?;
        }
        Ok(())
    }

    /// The entry key of a validated path that names a column: the name itself when it is its
    /// own sort key.
    /// An insert's cell: its timestamp (now when unset) and its expiry.
    fn live(value: &[u8], write: WriteOptions, now: Now) -> Result<EntryRef<'_>> {
        let ttl = match write.ttl {
            None => None,
            Some(0) => return Err(Error::invalid("a TTL must be positive")),
            // Counted from the current whole second, as Cassandra counts it (its `nowInSec` plus
            // the TTL): a cell reads as live while the reader's whole second is before that, so
            // it lives between TTL - 1 and TTL seconds.
            Some(t) => Some(Ttl {
                ttl: t,
                local_expiration_time: now.seconds.saturating_add(i64::from(t)),
            }),
        };
        Ok(EntryRef::Cell(CellRef {
            timestamp: write.timestamp.unwrap_or(now.micros),
            value: CellValueRef::Live { value, ttl },
        }))
    }

    /// [`add`](Self::add) of an insert whose name came with its sort key (a `SortedName`,
    /// see `BatchMutation::insert_sorted`): taken as given when the name was built for this
    /// column family's very comparator (it was validated as it was built); otherwise the name
    /// is validated as `add` does and the sort key checked against the name's own (in
    /// `scratch`), so a wrong one is refused rather than stored out of order. The commit log and
    /// the memtable take it as given.
    pub fn add_sorted<'m>(
        &self,
        mutation: MutationRef<'m>,
        (sort_key, built_for): (&'m [u8], Option<&Arc<dyn Comparator>>),
        now: Now,
        update: &mut RowUpdate<'m>,
        scratch: &mut Vec<u8>,
    ) -> Result<()> {
        let MutationRef::Insert { path, value, write } = mutation else {
            return Err(Error::invalid("only an insert carries a sort key"));
        };
        let name = path.column.unwrap_or_default();
        if self.cf.column_type != ColumnType::Standard || path.super_column.is_some() {
            // The general checks give the error.
            self.path(path, true)?;
            return Err(Error::invalid(
                "a sorted insert needs a Standard column name",
            ));
        }
        let cmp = self.cf.comparator.as_ref();
        if name.is_empty() || (name.len() > MAX_NAME_LEN && !composite_fits(cmp, name)) {
            // The general check gives the error.
            self.name(name, NameKind::Column)?;
            return Err(Error::invalid(
                "a sorted insert's name is empty or too long",
            ));
        }
        if !built_for.is_some_and(|c| Arc::ptr_eq(c, &self.cf.comparator)) {
            cmp.validate_sorted(name, sort_key, scratch)
                .map_err(|e| self.name_error(NameKind::Column, cmp.name(), e.0))?;
        }
        self.value(value)?;
        update
            .entries
            .push((Cow::Borrowed(sort_key), Self::live(value, write, now)?));
        Ok(())
    }

    fn entry_key<'m>(
        &self,
        path: ColumnPathRef<'m>,
        keys: &'m Bump,
        scratch: &mut Vec<u8>,
    ) -> Cow<'m, [u8]> {
        let column = path.column.unwrap_or_default();
        match path.super_column {
            None if self.cf.comparator.sort_key_is_name() => Cow::Borrowed(column),
            None => {
                cell_key::column_into(self.cf.comparator.as_ref(), column, scratch);
                Cow::Borrowed(keys.alloc_slice_copy(scratch))
            }
            Some(sc) => {
                let prefix = cell_key::super_column(self.cf.comparator.as_ref(), sc);
                Cow::Owned(cell_key::sub_column(
                    &prefix,
                    self.cf.subcomparator().as_ref(),
                    column,
                ))
            }
        }
    }
}
