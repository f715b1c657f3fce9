//! Evaluates a slice predicate over one row's merged sources: applies row, super column and
//! column deletions and TTL expiry, counts live results, walks forward or reversed, and decodes
//! sort keys back to names. Validation of the request happens before this (in the store); this
//! file only reads.
//!
//! Long because deletions, expiry, counting and both directions apply in one walk over the merged
//! sources, and are kept side by side.

use std::ops::Bound;

use super::predicate::{SlicePredicate, SliceRange};
use super::prefix_deletion::{self, Covering};
use super::range_deletion;
use super::result::{Column, ColumnOrSuperColumn, SuperColumn};
use crate::error::Error;
use crate::merge::{merged_deletion, merged_entries, RowSource};
use crate::model::cell::{Cell, CellIn, CellRef, CellValue, DeletionTime, Entry, EntryIn, Ttl};
use crate::model::cell_key;
use crate::model::comparator::{Comparator, MarshalError};
use crate::model::range_deletions::RangeDeletions;
use crate::model::reconcile::reconcile_entries;
use crate::schema::ColumnType;
use smallvec::SmallVec;

/// What a slice needs to know about its column family.
pub struct SliceContext<'a> {
    /// Standard or Super.
    pub column_type: ColumnType,
    /// `CompareWith`.
    pub comparator: &'a dyn Comparator,
    /// `CompareSubcolumnsWith` (Super CFs).
    pub subcomparator: &'a dyn Comparator,
    /// "Now", for TTL expiry.
    pub now_seconds: i64,
    /// Names the column family in errors (`Keyspace/ColumnFamily`).
    pub origin: &'a str,
}

impl SliceContext<'_> {
    /// A stored key that does not decode: only damaged data can hold one.
    fn undecodable(&self, e: MarshalError) -> Error {
        Error::CorruptName {
            column_family: self.origin.into(),
            reason: e.to_string(),
        }
    }
}

type Bounds = (Bound<Vec<u8>>, Bound<Vec<u8>>);
/// A super column's group prefix and the entries read of it so far.
type Group = (Vec<u8>, Vec<(Vec<u8>, Entry)>);

/// Reads the children of the row (or of the super column `super_column`) selected by `predicate`.
pub fn slice(
    sources: &[&dyn RowSource],
    ctx: &SliceContext<'_>,
    super_column: Option<&[u8]>,
    predicate: &SlicePredicate,
) -> Result<Vec<ColumnOrSuperColumn>, Error> {
    let row_del = merged_deletion(sources)?;
    match (ctx.column_type, super_column) {
        (ColumnType::Standard, _) => {
            let wrap = ColumnOrSuperColumn::Column;
            column_slice(sources, ctx, ctx.comparator, &[], row_del, predicate, wrap)
        }
        (ColumnType::Super, Some(sc)) => {
            let prefix = cell_key::super_column(ctx.comparator, sc);
            let del = DeletionTime::merge_opt(row_del, super_column_deletion(sources, &prefix)?);
            let wrap = ColumnOrSuperColumn::Column;
            column_slice(
                sources,
                ctx,
                ctx.subcomparator,
                &prefix,
                del,
                predicate,
                wrap,
            )
        }
        (ColumnType::Super, None) => {
            let scs = super_slice(sources, ctx, row_del, predicate)?;
            Ok(scs
                .into_iter()
                .map(ColumnOrSuperColumn::SuperColumn)
                .collect())
        }
    }
}

/// Whether the row holds anything live at all.
pub fn row_is_live(sources: &[&dyn RowSource], ctx: &SliceContext<'_>) -> Result<bool, Error> {
    let one = SlicePredicate::Range(SliceRange::all().count(1));
    Ok(!slice(sources, ctx, None, &one)?.is_empty())
}

fn super_column_deletion(
    sources: &[&dyn RowSource],
    prefix: &[u8],
) -> Result<Option<DeletionTime>, Error> {
    for item in merged_entries(
        sources,
        Bound::Included(prefix),
        Bound::Included(prefix),
        false,
    ) {
        if let (_, Entry::GroupDeletion(d)) = item? {
            return Ok(Some(d));
        }
    }
    Ok(None)
}

/// Whether the cell is live: not shadowed by `del`, not a tombstone, not expired.
fn is_live(cell: &CellRef<'_>, del: Option<DeletionTime>, ctx: &SliceContext<'_>) -> bool {
    let shadowed = del.is_some_and(|d| d.shadows(cell.timestamp));
    !shadowed && !cell.is_deleted(ctx.now_seconds)
}

/// The cell, if it is live.
fn live(cell: Cell, del: Option<DeletionTime>, ctx: &SliceContext<'_>) -> Option<Cell> {
    is_live(&cell.as_ref(), del, ctx).then_some(cell)
}

/// A live cell as a column, its name decoded from its sort key.
fn column_of(
    name_key: &[u8],
    cell: Cell,
    cmp: &dyn Comparator,
    ctx: &SliceContext<'_>,
) -> Result<Option<Column>, Error> {
    let CellValue::Live { value, ttl } = cell.value else {
        return Ok(None);
    };
    column(name_key, cell.timestamp, value, ttl, cmp, ctx).map(Some)
}

/// The column of a live cell's parts.
fn column(
    name_key: &[u8],
    timestamp: i64,
    value: Vec<u8>,
    ttl: Option<Ttl>,
    cmp: &dyn Comparator,
    ctx: &SliceContext<'_>,
) -> Result<Column, Error> {
    // A composite name is a byte per component longer than its sort key: room for it at once.
    let mut name = Vec::with_capacity(name_key.len() + 8);
    cmp.decode_sort_key(name_key, &mut name)
        .map_err(|e| ctx.undecodable(e))?;
    Ok(Column {
        name,
        value,
        timestamp,
        ttl: ttl.map(|t| t.ttl),
        expires_at: ttl.map(|t| t.local_expiration_time),
    })
}

fn live_column(
    name_key: &[u8],
    cell: Cell,
    del: Option<DeletionTime>,
    cmp: &dyn Comparator,
    ctx: &SliceContext<'_>,
) -> Result<Option<Column>, Error> {
    match live(cell, del, ctx) {
        Some(cell) => column_of(name_key, cell, cmp, ctx),
        None => Ok(None),
    }
}

fn with_prefix(prefix: &[u8], cmp: &dyn Comparator, name: &[u8]) -> Vec<u8> {
    let mut k = prefix.to_vec();
    cmp.encode_sort_key(name, &mut k);
    k
}

/// Bounds (low, high) of a range over names under `prefix` (empty: the whole row).
fn column_bounds(prefix: &[u8], cmp: &dyn Comparator, range: &SliceRange) -> Bounds {
    let (low, high) = if range.reversed {
        (&range.finish, &range.start)
    } else {
        (&range.start, &range.finish)
    };
    let lo = if !low.is_empty() {
        Bound::Included(with_prefix(prefix, cmp, low))
    } else if prefix.is_empty() {
        Bound::Unbounded
    } else {
        Bound::Excluded(prefix.to_vec())
    };
    let hi = if !high.is_empty() {
        Bound::Included(with_prefix(prefix, cmp, high))
    } else if prefix.is_empty() {
        Bound::Unbounded
    } else {
        Bound::Excluded(cell_key::group_end(prefix))
    };
    (lo, hi)
}

fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(v) => Bound::Included(v.as_slice()),
        Bound::Excluded(v) => Bound::Excluded(v.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// The columns of a slice, each as `wrap` makes it (built in place: no second vector).
fn column_slice<T>(
    sources: &[&dyn RowSource],
    ctx: &SliceContext<'_>,
    cmp: &dyn Comparator,
    prefix: &[u8],
    del: Option<DeletionTime>,
    predicate: &SlicePredicate,
    wrap: impl Fn(Column) -> T,
) -> Result<Vec<T>, Error> {
    let mut out = Vec::new();
    match predicate {
        SlicePredicate::Range(range) => {
            if range.count == 0 {
                return Ok(out);
            }
            // A short slice asks for room once; "everything" grows as it finds.
            if range.count <= 64 {
                out.reserve(range.count);
            }
            visit_live(sources, ctx, cmp, prefix, del, range, |name_key, cell| {
                let timestamp = cell.as_ref().timestamp;
                if let Some((value, ttl)) = cell.into_live() {
                    out.push(wrap(column(name_key, timestamp, value, ttl, cmp, ctx)?));
                }
                Ok(out.len() < range.count)
            })?;
        }
        SlicePredicate::Names(names) => {
            let mut covering = Covering::new(sources, covered_type(ctx, prefix), ctx.origin)?;
            for k in sorted_keys(names, |n| with_prefix(prefix, cmp, n)) {
                let found =
                    merged_entries(sources, Bound::Included(&k), Bound::Included(&k), false)
                        .next()
                        .transpose()?;
                if let Some((_, Entry::Cell(cell))) = found {
                    let del = DeletionTime::merge_opt(del, covering.of(sources, &k)?);
                    if let Some(c) = live_column(&k[prefix.len()..], cell, del, cmp, ctx)? {
                        out.push(wrap(c));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The column type whose prefix deletions can cover the names under `prefix`: sub-columns of a
/// super column are never deleted by prefix.
fn covered_type(ctx: &SliceContext<'_>, prefix: &[u8]) -> ColumnType {
    if prefix.is_empty() {
        ctx.column_type
    } else {
        ColumnType::Super
    }
}

/// Visits the live cells of `range` (its `count` aside) under `prefix` in read order, each as
/// the sort key of its name and the cell, until `f` answers `false`: a slice that builds no
/// column (a CQL read assembles its rows straight from these). A row read from one source
/// (the usual read of a compacted row) lends each cell from where it lies: nothing is copied
/// or allocated per cell but what `f` keeps.
pub fn visit_live(
    sources: &[&dyn RowSource],
    ctx: &SliceContext<'_>,
    cmp: &dyn Comparator,
    prefix: &[u8],
    del: Option<DeletionTime>,
    range: &SliceRange,
    mut f: impl FnMut(&[u8], CellIn<'_>) -> Result<bool, Error>,
) -> Result<(), Error> {
    let mut covering = Covering::new(sources, covered_type(ctx, prefix), ctx.origin)?;
    let (lo, hi) = column_bounds(prefix, cmp, range);
    let mut each = |key: &[u8], entry: EntryIn<'_>| -> Result<bool, Error> {
        let (Some(cell), Some(name_key)) = (entry.into_cell(), key.get(prefix.len()..)) else {
            return Ok(true);
        };
        let del = DeletionTime::merge_opt(del, covering.of(sources, key)?);
        if is_live(&cell.as_ref(), del, ctx) {
            f(name_key, cell)
        } else {
            Ok(true)
        }
    };
    if let [only] = sources {
        return only.visit(as_ref(&lo), as_ref(&hi), range.reversed, &mut each);
    }
    for item in merged_entries(sources, as_ref(&lo), as_ref(&hi), range.reversed) {
        let (key, entry) = item?;
        if !each(&key, EntryIn::Owned(entry))? {
            break;
        }
    }
    Ok(())
}

/// A read of named columns of a Standard column family, one source at a time: each source is
/// asked once for each name and its answer reconciled at once, so no source is read twice and
/// no merge is built. Sources come newest first; once every name has a version newer than
/// everything an SSTable holds (its footer's maximum), that SSTable cannot change the answer and
/// is skipped (Cassandra's time-ordered read of named columns).
pub struct NamedRead {
    /// The encoded keys, one after another (one buffer for every name, inline for short ones).
    keys: SmallVec<[u8; 64]>,
    /// Per key, in key order: where it lies in `keys`, the reconciled entry so far, and the
    /// newest timestamp seen (the entry's or a row deletion's, which shadows everything no
    /// newer). Inline for a read of one or two names.
    wanted: SmallVec<[Wanted; 2]>,
    row_deletion: Option<DeletionTime>,
}

struct Wanted {
    key: std::ops::Range<usize>,
    found: Option<Entry>,
    newest: Option<i64>,
    /// The newest deletion of a prefix of the name (a CQL row or collection), or of a range
    /// holding it.
    prefix_deletion: Option<DeletionTime>,
}

impl NamedRead {
    /// The read, if `predicate` names columns of a Standard column family (`None` for any
    /// other read).
    pub fn new(
        ctx: &SliceContext<'_>,
        super_column: Option<&[u8]>,
        predicate: &SlicePredicate,
    ) -> Option<NamedRead> {
        let (ColumnType::Standard, None, SlicePredicate::Names(names)) =
            (ctx.column_type, super_column, predicate)
        else {
            return None;
        };
        Some(Self::of(ctx, names))
    }

    /// A read of these names of a Standard column family's row.
    pub fn of<N: AsRef<[u8]>>(ctx: &SliceContext<'_>, names: &[N]) -> NamedRead {
        let mut read = Self::empty();
        let mut encoded = Vec::new();
        for n in names {
            if ctx.comparator.sort_key_is_name() {
                read.push(n.as_ref());
            } else {
                encoded.clear();
                ctx.comparator.encode_sort_key(n.as_ref(), &mut encoded);
                read.push(&encoded);
            }
        }
        read.sorted()
    }

    /// A read of the names whose sort keys these are (a caller that builds them from names it
    /// has validated: CQL's planned reads).
    pub fn of_sort_keys(keys: &[&[u8]]) -> NamedRead {
        let mut read = Self::empty();
        for k in keys {
            read.push(k);
        }
        read.sorted()
    }

    fn empty() -> NamedRead {
        NamedRead {
            keys: SmallVec::new(),
            wanted: SmallVec::new(),
            row_deletion: None,
        }
    }

    fn push(&mut self, key: &[u8]) {
        let at = self.keys.len();
        self.keys.extend_from_slice(key);
        self.wanted.push(Wanted {
            key: at..self.keys.len(),
            found: None,
            newest: None,
            prefix_deletion: None,
        });
    }

    fn sorted(mut self) -> NamedRead {
        let keys = &self.keys;
        self.wanted
            .sort_by(|a, b| keys[a.key.clone()].cmp(&keys[b.key.clone()]));
        self.wanted
            .dedup_by(|a, b| keys[a.key.clone()] == keys[b.key.clone()]);
        self
    }

    /// Whether a source whose newest timestamp is `max` can be skipped.
    pub fn can_skip(&self, max: i64) -> bool {
        self.wanted
            .iter()
            .all(|w| w.newest.is_some_and(|ts| ts > max))
    }

    /// Reads the names from one more source (of the column family `origin` names in errors).
    pub fn add(&mut self, source: &dyn RowSource, origin: &str) -> Result<(), Error> {
        let deletion = source.deletion()?;
        self.row_deletion = DeletionTime::merge_opt(self.row_deletion, deletion);
        let row_deleted = deletion.map(|d| d.marked_for_delete_at);
        let probe = source.may_hold_prefix_deletions();
        let mut ranges = Vec::new();
        range_deletion::read_source(source, origin, &mut ranges)?;
        let ranges = (!ranges.is_empty()).then(|| RangeDeletions::new(ranges));
        for w in self.wanted.iter_mut() {
            let mut ts = row_deleted;
            if let Some(d) = ranges
                .as_ref()
                .and_then(|r| r.covering(&self.keys[w.key.clone()]))
            {
                w.prefix_deletion = DeletionTime::merge_opt(w.prefix_deletion, Some(d));
                let t = d.marked_for_delete_at;
                ts = Some(ts.map_or(t, |r| r.max(t)));
            }
            if probe {
                let key = &self.keys[w.key.clone()];
                for n in cell_key::proper_prefix_lens(key) {
                    if let Some(d) = prefix_deletion::in_source(source, &key[..n])? {
                        w.prefix_deletion = DeletionTime::merge_opt(w.prefix_deletion, Some(d));
                        let t = d.marked_for_delete_at;
                        ts = Some(ts.map_or(t, |r| r.max(t)));
                    }
                }
            }
            if let Some((_, e)) = source.get(&self.keys[w.key.clone()])? {
                let e = e.into_owned();
                let t = match &e {
                    Entry::Cell(c) => c.timestamp,
                    Entry::GroupDeletion(d) => d.marked_for_delete_at,
                };
                ts = Some(ts.map_or(t, |r| r.max(t)));
                w.found = Some(match w.found.take() {
                    Some(prev) => reconcile_entries(prev, e),
                    None => e,
                });
            }
            if let Some(t) = ts {
                w.newest = Some(w.newest.map_or(t, |x| x.max(t)));
            }
        }
        Ok(())
    }

    /// The live column of a read of one name, if there is one.
    pub fn finish_one(self, ctx: &SliceContext<'_>) -> Result<Option<Column>, Error> {
        let mut live = None;
        for w in self.wanted {
            if let Some(Entry::Cell(cell)) = w.found {
                let key = &self.keys[w.key];
                let del = DeletionTime::merge_opt(self.row_deletion, w.prefix_deletion);
                live = live_column(key, cell, del, ctx.comparator, ctx)?;
            }
        }
        Ok(live)
    }

    /// Visits the live cells found, in sort key order, each with its sort key.
    pub fn visit(self, ctx: &SliceContext<'_>, mut f: impl FnMut(&[u8], Cell)) {
        for w in self.wanted {
            if let Some(Entry::Cell(cell)) = w.found {
                let del = DeletionTime::merge_opt(self.row_deletion, w.prefix_deletion);
                if let Some(cell) = live(cell, del, ctx) {
                    f(&self.keys[w.key], cell);
                }
            }
        }
    }

    /// The live columns found, in name order, each as `wrap` makes it.
    pub fn finish<T>(
        self,
        ctx: &SliceContext<'_>,
        wrap: impl Fn(Column) -> T,
    ) -> Result<Vec<T>, Error> {
        let mut out = Vec::new();
        for w in self.wanted {
            if let Some(Entry::Cell(cell)) = w.found {
                let key = &self.keys[w.key];
                let del = DeletionTime::merge_opt(self.row_deletion, w.prefix_deletion);
                if let Some(c) = live_column(key, cell, del, ctx.comparator, ctx)? {
                    out.push(wrap(c));
                }
            }
        }
        Ok(out)
    }
}

fn sorted_keys(names: &[Vec<u8>], key: impl Fn(&[u8]) -> Vec<u8>) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = names.iter().map(|n| key(n)).collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Builds a super column from one group's entries (in either order); `None` if nothing is live.
fn finish_group(
    prefix: &[u8],
    entries: Vec<(Vec<u8>, Entry)>,
    row_del: Option<DeletionTime>,
    ctx: &SliceContext<'_>,
) -> Result<Option<SuperColumn>, Error> {
    let sc_del = entries.iter().fold(None, |acc, (_, e)| match e {
        Entry::GroupDeletion(d) => DeletionTime::merge_opt(acc, Some(*d)),
        Entry::Cell(_) => acc,
    });
    let del = DeletionTime::merge_opt(row_del, sc_del);
    let mut columns = Vec::new();
    for (key, e) in entries {
        let Entry::Cell(cell) = e else { continue };
        if let Some(c) = live_column(&key[prefix.len()..], cell, del, ctx.subcomparator, ctx)? {
            columns.push(c);
        }
    }
    if columns.is_empty() {
        return Ok(None);
    }
    columns.sort_by(|a, b| ctx.subcomparator.compare(&a.name, &b.name));
    let sc_key = cell_key::super_column_sort_key(prefix)
        .ok_or_else(|| ctx.undecodable(MarshalError::new("malformed super column key")))?;
    let mut name = Vec::new();
    ctx.comparator
        .decode_sort_key(&sc_key, &mut name)
        .map_err(|e| ctx.undecodable(e))?;
    Ok(Some(SuperColumn { name, columns }))
}

fn super_slice(
    sources: &[&dyn RowSource],
    ctx: &SliceContext<'_>,
    row_del: Option<DeletionTime>,
    predicate: &SlicePredicate,
) -> Result<Vec<SuperColumn>, Error> {
    let mut out = Vec::new();
    match predicate {
        SlicePredicate::Range(range) => {
            if range.count == 0 {
                return Ok(out);
            }
            let (low, high) = if range.reversed {
                (&range.finish, &range.start)
            } else {
                (&range.start, &range.finish)
            };
            let lo = if low.is_empty() {
                Bound::Unbounded
            } else {
                Bound::Included(cell_key::super_column(ctx.comparator, low))
            };
            let hi = if high.is_empty() {
                Bound::Unbounded
            } else {
                Bound::Excluded(cell_key::group_end(&cell_key::super_column(
                    ctx.comparator,
                    high,
                )))
            };
            let mut group: Option<Group> = None;
            for item in merged_entries(sources, as_ref(&lo), as_ref(&hi), range.reversed) {
                let (key, entry) = item?;
                let plen = cell_key::group_prefix_len(&key).ok_or_else(|| {
                    ctx.undecodable(MarshalError::new("malformed super column entry key"))
                })?;
                let same = group
                    .as_ref()
                    .is_some_and(|(p, _)| p.as_slice() == &key[..plen]);
                if !same {
                    if let Some((p, entries)) = group.take() {
                        if let Some(sc) = finish_group(&p, entries, row_del, ctx)? {
                            out.push(sc);
                            if out.len() >= range.count {
                                return Ok(out);
                            }
                        }
                    }
                    group = Some((key[..plen].to_vec(), Vec::new()));
                }
                if let Some((_, entries)) = group.as_mut() {
                    entries.push((key.into_owned(), entry));
                }
            }
            if let Some((p, entries)) = group {
                if let Some(sc) = finish_group(&p, entries, row_del, ctx)? {
                    out.push(sc);
                }
            }
        }
        SlicePredicate::Names(names) => {
            for p in sorted_keys(names, |n| cell_key::super_column(ctx.comparator, n)) {
                let end = cell_key::group_end(&p);
                let entries: Vec<(Vec<u8>, Entry)> =
                    merged_entries(sources, Bound::Included(&p), Bound::Excluded(&end), false)
                        .map(|item| item.map(|(k, e)| (k.into_owned(), e)))
                        .collect::<Result<_, Error>>()?;
                if let Some(sc) = finish_group(&p, entries, row_del, ctx)? {
                    out.push(sc);
                }
            }
        }
    }
    Ok(out)
}
