//! One element or one field of a value, as a condition reads it (`IF l[0] = ?`,
//! `IF m['k'] = ?`, `IF u.f = ?`): the type it is compared as, and its bytes in a value of the
//! whole type, null when the value has no such element; and what `CONTAINS` looks for. How values are laid out is
//! `collection_value.rs`'s and `udt.rs`'s.

use std::cmp::Ordering;

use super::CqlType;

impl CqlType {
    /// The type of what `CONTAINS` (`key`: `CONTAINS KEY`) looks for in a column `column` of
    /// this type, or Cassandra's refusal for a column holding none.
    pub fn contained(&self, column: &str, key: bool) -> Result<CqlType, String> {
        let inner = match self {
            CqlType::Frozen(t) => t.as_ref(),
            t => t,
        };
        match (inner, key) {
            (CqlType::Map(k, _), true) => Ok((**k).clone()),
            (_, true) => Err(format!(
                "Cannot use CONTAINS KEY on non-map column {column}"
            )),
            (CqlType::List(e) | CqlType::Set(e) | CqlType::Map(_, e), false) => Ok((**e).clone()),
            _ => Err(format!(
                "Cannot use CONTAINS on non-collection column {column}"
            )),
        }
    }

    /// The types of `c[k]`'s key and element (a list's key is its `int` index), or why a
    /// column `column` of this type has no elements to name.
    pub fn element_access(&self, column: &str) -> Result<(CqlType, CqlType), String> {
        match self {
            CqlType::Frozen(inner) => inner.element_access(column),
            CqlType::List(e) => Ok((CqlType::Int, (**e).clone())),
            CqlType::Map(k, v) => Ok(((**k).clone(), (**v).clone())),
            CqlType::Set(_) => Err(format!(
                "Invalid element access syntax for set column {column}"
            )),
            other => Err(format!(
                "Invalid element access syntax for non-collection column {column} of type {other}"
            )),
        }
    }

    /// The element at `key` of `bytes`, a value of this type: a list's element at that index,
    /// a map's value under that key; `None` when there is none.
    pub fn element_at(&self, bytes: &[u8], key: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let ty = match self {
            CqlType::Frozen(inner) => return inner.element_at(bytes, key),
            ty => ty,
        };
        let elements = ty.elements(bytes)?;
        Ok(match ty {
            CqlType::List(_) => {
                let index = <[u8; 4]>::try_from(key)
                    .map(i32::from_be_bytes)
                    .map_err(|_| "a list index is an int")?;
                usize::try_from(index)
                    .ok()
                    .and_then(|i| elements.into_iter().nth(i))
                    .map(|(e, _)| e)
            }
            CqlType::Map(k, _) => {
                let cmp = k.comparator();
                let same = |a: &[u8]| match &cmp {
                    Some(c) => c.compare(a, key) == Ordering::Equal,
                    None => a == key,
                };
                elements
                    .into_iter()
                    .find(|(a, _)| same(a))
                    .and_then(|(_, v)| v)
            }
            _ => None,
        })
    }

    /// The position and type of field `field` of a user type's value, frozen or not, or why a
    /// column `column` of this type has no such field.
    pub fn field_access(&self, column: &str, field: &str) -> Result<(usize, CqlType), String> {
        match self {
            CqlType::Frozen(inner) => inner.field_access(column, field),
            CqlType::Udt(u) => u
                .field(field)
                .map(|(i, t)| (i, t.clone()))
                .ok_or_else(|| format!("Unknown field {field} for column {column}")),
            other => Err(format!(
                "Invalid field selection: {column} of type {other} is not a user type"
            )),
        }
    }

    /// Field `i` of `bytes`, a value of this user type; `None` when it is null or absent (a
    /// value written before the field was added).
    pub fn field_at(&self, bytes: &[u8], i: usize) -> Result<Option<Vec<u8>>, String> {
        match self {
            CqlType::Frozen(inner) => inner.field_at(bytes, i),
            CqlType::Udt(u) => Ok(CqlType::udt_fields(u, bytes)?.into_iter().nth(i).flatten()),
            other => Err(format!("{other} is not a user type")),
        }
    }
}
