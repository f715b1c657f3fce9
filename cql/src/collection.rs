//! Writes to CQL collections, as Cassandra 2.0 stores them: each element a cell named
//! `clustering…:column:element` (a map's key, a set's element, a list's TimeUUID), a whole
//! collection replaced by a range tombstone over its elements just before the write, and element
//! operations (`c = c + …`, `c = … + c`, `c = c - …`, `c[k] = …`, `DELETE c[k]`). A list's
//! index and value operations read the list first, as Cassandra does (so in a batch they do not
//! see the batch's own earlier writes). Only builds the batch: `execute` applies it.

use super::ast::Term;
use super::error::CqlError;
use super::session::{wall_clock_micros, Session};
use super::table::{ColumnDef, Table};
use super::types::{serialize, CqlType};
use supercolumn::model::comparator::CompositeType;
use supercolumn::query::{ColumnParent, ColumnPath, ColumnPathRef, SlicePredicate, SliceRange};
use supercolumn::{BatchMutation, WriteOptions};

/// 2010-01-01T00:00:00Z in microseconds: prepended list elements are named by TimeUUIDs as far
/// before it as the write is after it, so each prepend sorts before everything earlier
/// (Cassandra's `Lists.Prepender`).
const PREPEND_REFERENCE_MICROS: i64 = 1_262_304_000_000_000;

/// One operation on a collection column, its values already serialized.
#[derive(Debug)]
pub(super) enum CollectionOp {
    /// `c = value` (`None`: null, an empty collection).
    Replace(Option<Vec<u8>>),
    /// `c = c + value`.
    Add(Vec<u8>),
    /// `c = value + c` (lists).
    Prepend(Vec<u8>),
    /// `c = c - value` (a map takes a set of keys).
    Discard(Vec<u8>),
    /// `c[k] = value` (`None`: deletes the entry), or `DELETE c[k]`.
    SetElement(Vec<u8>, Option<Vec<u8>>),
}

/// A list's element as stored: its TimeUUID name and its value.
type ListElement = (Vec<u8>, Vec<u8>);

/// Where one CQL row's collection lives.
pub(super) struct Target<'a> {
    pub table: &'a Table,
    pub key: &'a [u8],
    pub clustering: &'a [&'a [u8]],
    pub column: &'a ColumnDef,
}

impl<'a> Target<'a> {
    /// The collection `column` of the CQL row at `clustering` in partition `key` of `table`.
    pub fn new(
        table: &'a Table,
        key: &'a [u8],
        clustering: &'a [&'a [u8]],
        column: &'a ColumnDef,
    ) -> Self {
        Target {
            table,
            key,
            clustering,
            column,
        }
    }

    /// The name every element's name starts with (`eoc` ±1: a bound before or after them).
    fn prefix(&self, eoc: i8) -> Result<Vec<u8>, CqlError> {
        self.table
            .name_in_row(self.clustering, &self.column.name, None, eoc)
    }

    fn path(&self, name: &[u8]) -> Result<ColumnPath, CqlError> {
        let n = self
            .table
            .element_name(self.clustering, &self.column.name, name)?;
        Ok(ColumnPath::new(&self.table.name).column(n))
    }
}

impl Session<'_> {
    /// The operation `term` makes on collection column `def`, its values checked by type
    /// (`add`, `prepend`, `discard`: which one; `None`: a replacement).
    pub(super) fn collection_op(
        &self,
        def: &ColumnDef,
        kind: Option<char>,
        term: &Term,
    ) -> Result<CollectionOp, CqlError> {
        let c = &def.name;
        // Adding or taking away null changes nothing, as in Cassandra: it is no elements.
        let needs = |v: Option<Vec<u8>>| -> Result<Vec<u8>, CqlError> {
            Ok(v.unwrap_or_else(|| serialize(std::iter::empty())))
        };
        Ok(match (kind, &def.ty) {
            (None, ty) => CollectionOp::Replace(self.value(ty, term, c)?),
            (Some(_), ty @ CqlType::Udt(_)) => {
                return Err(CqlError::invalid(format!(
                    "invalid operation for {c} of type {ty}: a user type's value is set whole or one field at a time ({c}.field = …)"
                )))
            }
            (Some('+'), ty) => CollectionOp::Add(needs(self.value(ty, term, c)?)?),
            (Some('<'), ty @ CqlType::List(_)) => {
                CollectionOp::Prepend(needs(self.value(ty, term, c)?)?)
            }
            (Some('-'), CqlType::Map(k, _)) => {
                CollectionOp::Discard(needs(self.value(&CqlType::Set(k.clone()), term, c)?)?)
            }
            (Some('-'), ty) => CollectionOp::Discard(needs(self.value(ty, term, c)?)?),
            // Only a list prepends (Cassandra's words).
            (Some(_), _) => {
                return Err(CqlError::invalid(format!(
                    "Invalid operation ({c} = {} + {c}) for non list column {c}",
                    term.text()
                )))
            }
        })
    }

    /// The operation `c[k] = value` (or `DELETE c[k]` with `value` `None`) on `def`.
    pub(super) fn element_op(
        &self,
        def: &ColumnDef,
        index: &Term,
        value: Option<&Term>,
    ) -> Result<CollectionOp, CqlError> {
        let c = &def.name;
        let (k, v) = match &def.ty {
            CqlType::Map(k, v) => (k.as_ref(), v.as_ref()),
            CqlType::List(e) => (&CqlType::Int, e.as_ref()),
            // `DELETE s[x]`: the element discarded, as `s = s - {x}` does.
            CqlType::Set(e) if value.is_none() => {
                let x = self
                    .value(e, index, c)?
                    .ok_or_else(|| CqlError::invalid("Invalid null set element"))?;
                return Ok(CollectionOp::Discard(serialize(std::iter::once((
                    &x[..],
                    None,
                )))));
            }
            ty => {
                let (index, set) = (index.text(), value.map_or_else(String::new, |v| v.text()));
                let kind = match ty {
                    CqlType::Set(_) => "set".to_string(),
                    other => format!("{other}"),
                };
                return Err(CqlError::invalid(format!(
                    "Invalid operation ({c}[{index}] = {set}) for {kind} column {c}"
                )));
            }
        };
        let key = self
            .value(k, index, c)?
            .ok_or_else(|| CqlError::invalid(format!("invalid null element key of {c}")))?;
        let value = match value {
            Some(t) => self.value(v, t, c)?,
            None => None,
        };
        Ok(CollectionOp::SetElement(key, value))
    }

    /// The operation `u.f = value` on `def`, a non-frozen user type's column: one cell.
    pub(super) fn field_op(
        &self,
        def: &ColumnDef,
        field: &str,
        value: &Term,
    ) -> Result<CollectionOp, CqlError> {
        let c = &def.name;
        let u = match &def.ty {
            CqlType::Udt(u) => u,
            ty => {
                // Only a non-frozen user type's fields are set one at a time (Cassandra's
                // words).
                let what = match ty {
                    CqlType::Frozen(inner) if matches!(**inner, CqlType::Udt(_)) => "frozen UDT",
                    _ => "non-UDT",
                };
                return Err(CqlError::invalid(format!(
                    "Invalid operation ({c}.{field} = {}) for {what} column {c}",
                    value.text()
                )));
            }
        };
        let (i, ty) = u.field(field).ok_or_else(|| {
            CqlError::invalid(format!(
                "UDT column {c} does not have a field named {field}"
            ))
        })?;
        let value = self.value(ty, value, &format!("{c}.{field}"))?;
        Ok(CollectionOp::SetElement(field_cell_key(i)?, value))
    }

    /// `DELETE u.f`: a tombstone for one field of `def`, a non-frozen user type's column.
    pub(super) fn field_deletion(
        &self,
        def: &ColumnDef,
        field: &str,
    ) -> Result<CollectionOp, CqlError> {
        let c = &def.name;
        let u = match &def.ty {
            CqlType::Udt(u) => u,
            CqlType::Frozen(inner) if matches!(**inner, CqlType::Udt(_)) => {
                return Err(CqlError::invalid(format!(
                    "Frozen UDT column {c} does not support field deletion"
                )))
            }
            _ => {
                return Err(CqlError::invalid(format!(
                    "Invalid field deletion operation for non-UDT column {c}"
                )))
            }
        };
        let (i, _) = u.field(field).ok_or_else(|| {
            CqlError::invalid(format!(
                "UDT column {c} does not have a field named {field}"
            ))
        })?;
        Ok(CollectionOp::SetElement(field_cell_key(i)?, None))
    }

    /// Adds `op` on one CQL row's collection to `batch`.
    // Long because it is one match with an arm per collection operation.
    pub(super) fn write_collection(
        &self,
        batch: &mut BatchMutation,
        at: &Target<'_>,
        op: &CollectionOp,
        write: WriteOptions,
    ) -> Result<(), CqlError> {
        let ty = &at.column.ty;
        let ts = write.timestamp.unwrap_or(i64::MIN);
        let elements = |bytes: &[u8]| {
            ty.elements(bytes).map_err(|e| {
                CqlError::invalid(format!("invalid value for {}: {e}", at.column.name))
            })
        };
        match op {
            CollectionOp::Replace(value) => {
                let path = ColumnPath::new(&at.table.name).column(at.prefix(0)?);
                batch.remove_prefix(at.key, path, Some(ts.saturating_sub(1)));
                match (value, ty) {
                    (Some(v), CqlType::Udt(u)) => {
                        let cells = CqlType::udt_cells(u, v).map_err(|e| {
                            CqlError::invalid(format!("invalid value for {}: {e}", at.column.name))
                        })?;
                        for (position, field) in cells {
                            batch.insert(at.key, &at.path(&position)?, field, write);
                        }
                    }
                    (Some(v), _) => self.add_elements(batch, at, elements(v)?, write)?,
                    (None, _) => {}
                }
            }
            CollectionOp::Add(v) => self.add_elements(batch, at, elements(v)?, write)?,
            CollectionOp::Prepend(v) => {
                let items = elements(v)?;
                // The wall clock, as appends' TimeUUIDs use (not the write's timestamp, which a
                // client may set to anything).
                let now = wall_clock_micros();
                let base = PREPEND_REFERENCE_MICROS
                    .saturating_sub(now.saturating_sub(PREPEND_REFERENCE_MICROS));
                let n = items.len() as i64;
                for (i, (value, _)) in items.into_iter().enumerate() {
                    // In list order, each before the next, all before earlier prepends.
                    let name = self.timeuuid_at(base - n + i as i64);
                    batch.insert(at.key, &at.path(&name)?, value, write);
                }
            }
            CollectionOp::Discard(v) => {
                let items = match ty {
                    CqlType::Map(k, _) => CqlType::Set(k.clone()).elements(v).map_err(|e| {
                        CqlError::invalid(format!("invalid value for {}: {e}", at.column.name))
                    })?,
                    _ => elements(v)?,
                };
                if let CqlType::List(_) = ty {
                    let gone: Vec<&[u8]> = items.iter().map(|(e, _)| e.as_slice()).collect();
                    for (name, value) in self.list(at)? {
                        if gone.contains(&value.as_slice()) {
                            batch.remove(at.key, &at.path(&name)?, Some(ts));
                        }
                    }
                } else {
                    for (e, _) in items {
                        batch.remove(at.key, &at.path(&e)?, Some(ts));
                    }
                }
            }
            CollectionOp::SetElement(k, value) => {
                let name = match ty {
                    CqlType::List(_) => {
                        let list = self.list(at)?;
                        let i = <[u8; 4]>::try_from(k.as_slice())
                            .map(i32::from_be_bytes)
                            .unwrap_or(-1);
                        let at_index = usize::try_from(i).ok().and_then(|i| list.get(i));
                        match at_index {
                            Some((name, _)) => name.clone(),
                            None if list.is_empty() => {
                                return Err(CqlError::invalid(
                                    "Attempted to set an element on a list which is null",
                                ))
                            }
                            None => {
                                return Err(CqlError::invalid(format!(
                                    "List index {i} out of bound, list has size {}",
                                    list.len()
                                )))
                            }
                        }
                    }
                    _ => k.clone(),
                };
                match value {
                    Some(v) => batch.insert(at.key, &at.path(&name)?, v, write),
                    None => batch.remove(at.key, &at.path(&name)?, Some(ts)),
                };
            }
        }
        Ok(())
    }

    /// `DELETE l[i], l[j], …` of one list: each index deletion applies in turn to the list as
    /// the ones before left it (Cassandra's: on `[1, 2, 9, 4]`, `DELETE l[2], l[2]` leaves
    /// `[1, 2]`).
    pub(super) fn delete_list_indexes(
        &self,
        batch: &mut BatchMutation,
        at: &Target<'_>,
        indexes: &[&[u8]],
        write: WriteOptions,
    ) -> Result<(), CqlError> {
        let mut live = self.list(at)?;
        if live.is_empty() {
            return Err(CqlError::invalid(
                "Attempted to delete an element from a list which is null",
            ));
        }
        for k in indexes {
            let i = <[u8; 4]>::try_from(*k)
                .map(i32::from_be_bytes)
                .unwrap_or(-1);
            let Some(at_index) = usize::try_from(i).ok().filter(|&i| i < live.len()) else {
                return Err(CqlError::invalid(format!(
                    "List index {i} out of bound, list has size {}",
                    live.len()
                )));
            };
            let (name, _) = live.remove(at_index);
            batch.remove(
                at.key,
                &at.path(&name)?,
                Some(write.timestamp.unwrap_or(i64::MIN)),
            );
        }
        Ok(())
    }

    /// Inserts elements as cells: a map's entries, a set's elements (empty values), a list's
    /// values appended under fresh TimeUUIDs.
    fn add_elements(
        &self,
        batch: &mut BatchMutation,
        at: &Target<'_>,
        items: Vec<super::types::Element>,
        write: WriteOptions,
    ) -> Result<(), CqlError> {
        for (a, b) in items {
            let (name, v) = match (&at.column.ty, b) {
                (CqlType::List(_), _) => (self.fresh_timeuuid().to_vec(), a),
                (CqlType::Map(..), Some(b)) => (a, b),
                _ => (a, Vec::new()),
            };
            let name = at
                .table
                .element_name(at.clustering, &at.column.name, &name)?;
            batch.insert(
                at.key,
                ColumnPathRef::new(&at.table.name).column(&name),
                v,
                write,
            );
        }
        Ok(())
    }

    /// A list's live elements in order: (TimeUUID name, value).
    fn list(&self, at: &Target<'_>) -> Result<Vec<ListElement>, CqlError> {
        let mut range = SliceRange::all().count(usize::MAX);
        range.start = at.prefix(-1)?;
        range.finish = at.prefix(1)?;
        // Each element's name: the clustering components, the column, then the element.
        let element_at = at.table.clustering.len() + 1;
        let columns = self.db.get_slice(
            &at.table.keyspace,
            at.key,
            &ColumnParent::new(&at.table.name),
            &SlicePredicate::Range(range),
        )?;
        let mut out = Vec::with_capacity(columns.len());
        for c in columns {
            let Some(c) = c.as_column() else { continue };
            if let Ok(parts) = CompositeType::split(&c.name) {
                if let Some(last) = parts.get(element_at) {
                    out.push((last.bytes.to_vec(), c.value.clone()));
                }
            }
        }
        Ok(out)
    }
}

/// The element key naming field `i`'s cell in a non-frozen user type's value: its position, a
/// `short`, as Cassandra names it.
fn field_cell_key(i: usize) -> Result<Vec<u8>, CqlError> {
    let i = i16::try_from(i).map_err(|_| CqlError::invalid("a field past 32767"))?;
    Ok(i.to_be_bytes().to_vec())
}
