//! A map's entry in a `WHERE`, `m[key] = value`, as Cassandra takes it: only `=`, only on a
//! non-frozen map, neither key nor value null. This file checks the relation and binds its
//! values; `select_plan.rs` keeps the filter, `collect.rs` applies it to each row and
//! `index_plan.rs` finds an index of the map's entries for it.

use super::ast::{Op, Term};
use super::error::CqlError;
use super::session::Session;
use super::table::Table;
use super::types::CqlType;

/// A filter on a map's entry, `m[key] = value`: the column's index, the key and the value.
pub(super) type EntryFilter = (usize, Vec<u8>, Vec<u8>);

impl Session<'_> {
    /// `m[key] = value`, checked as Cassandra checks it.
    pub(super) fn entry_filter(
        &self,
        t: &Table,
        c: &str,
        key: &Term,
        op: Op,
        value: &Term,
    ) -> Result<EntryFilter, CqlError> {
        let (i, def) = t.column(c)?;
        let refused = |why: String| Err(CqlError::invalid(why));
        let (kt, vt) = match &def.ty {
            CqlType::List(_) => {
                return refused(format!(
                    "Indexes on list entries ({c}[index] = value) are not currently supported."
                ))
            }
            CqlType::Map(k, v) => ((**k).clone(), (**v).clone()),
            CqlType::Frozen(inner) if matches!(**inner, CqlType::Map(..)) => {
                return refused(format!(
                    "Map-entry equality predicates on frozen map column {c} are not supported"
                ))
            }
            _ => return refused(format!("Column {c} cannot be used as a map")),
        };
        if op != Op::Eq {
            return refused("Only EQ relations are supported on map entries".into());
        }
        let null = || CqlError::invalid(format!("Unsupported null map key for column {c}"));
        let k = self.value(&kt, key, c)?.ok_or_else(null)?;
        let null = || CqlError::invalid(format!("Unsupported null map value for column {c}"));
        let v = self.value(&vt, value, c)?.ok_or_else(null)?;
        Ok((i, k, v))
    }
}
