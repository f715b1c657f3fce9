//! `IN` on a regular or static column, which Cassandra (4.0 on) takes as a filter with `ALLOW
//! FILTERING`: a row passes when the column holds one of the values. Refused in Cassandra's
//! words on what no value can be compared with: a collection or a non-frozen user type.
//! Reading the values is this file's; the filter's value layout is `types::in_list`'s, and
//! deciding whether the query may filter is the planner's.

use super::ast::Term;
use super::error::CqlError;
use super::session::Session;
use super::table::Table;
use super::types::{in_list, CqlType, Op};

/// A filter: a column's index, the operator and the value.
type Filter = (usize, Op, Vec<u8>);

impl Session<'_> {
    /// The filter of `c IN (terms)` on a regular or static column `c`: `=` for one value.
    pub(super) fn in_filter(&self, t: &Table, c: &str, terms: &[Term]) -> Result<Filter, CqlError> {
        let (i, def) = t.column(c)?;
        match &def.ty {
            ty if ty.is_collection() => {
                return Err(CqlError::invalid(format!(
                    "Collection column '{c}' ({ty}) cannot be restricted by a 'IN' relation"
                )))
            }
            ty @ CqlType::Udt(_) => {
                return Err(CqlError::invalid(format!(
                    "Non-frozen UDT column '{c}' ({ty}) cannot be restricted by any relation"
                )))
            }
            // Values holding a duration compare equal byte for byte.
            ty if ty.comparator().is_none() && !ty.references_duration() => {
                return Err(CqlError::invalid(format!(
                    "filtering on {c} of type {ty} is not supported yet"
                )))
            }
            _ => {}
        }
        let mut values: Vec<Vec<u8>> = Vec::with_capacity(terms.len());
        for term in terms {
            let v = self.value(&def.ty, term, c)?.ok_or_else(|| {
                CqlError::invalid(format!("Invalid null value in condition for column {c}"))
            })?;
            if !values.contains(&v) {
                values.push(v);
            }
        }
        Ok(match <[Vec<u8>; 1]>::try_from(values) {
            Ok([one]) => (i, Op::Eq, one),
            Err(values) => (i, Op::In, in_list(&values)),
        })
    }
}
