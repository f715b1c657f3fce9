//! Whether a `SELECT` reads through a secondary index: an `=` on a column a built index covers,
//! to a value an index can hold, and no token range on the partitions. `select_plan.rs` asks
//! here; `index_scan.rs` reads what it planned.

use super::ast::{Relation, Select};
use super::error::CqlError;
use super::table::Table;
use super::types::Op;

/// The longest value an index holds (a row key of the index's column family).
const MAX_INDEXED_VALUE: usize = 65_535;

/// A read through a secondary index: its name, its column and the value looked up.
pub(super) struct IndexRead {
    pub index: String,
    pub column: String,
    pub value: Vec<u8>,
}

/// Whether `s` would read through an index: `=` on an indexed column, and no partition key
/// column restricted (Cassandra makes this check before any other on ORDER BY).
pub(super) fn uses_index(t: &Table, s: &Select) -> bool {
    let mut indexed = false;
    for r in &s.relations {
        match r {
            Relation::Compare(c, Op::Eq, _) | Relation::In(c, _) | Relation::InMarker(c, _)
                if t.partition_key.iter().any(|&i| t.columns[i].name == *c) =>
            {
                return false
            }
            Relation::Compare(c, Op::Eq, _) => {
                indexed |= t.indexes.iter().any(|x| x.built && x.column == *c);
            }
            _ => {}
        }
    }
    indexed
}

/// The index that can find the rows of a query with these filters (column, operator, value):
/// a built one on a column restricted by `=` to a value other than empty (an empty value is
/// not indexed: such a query reads the table), when no token range restricts the partitions.
/// A value too long for any index is refused, in Cassandra's words.
pub(super) fn usable_index(
    t: &Table,
    filters: &[(usize, Op, Vec<u8>)],
    token_restricted: bool,
) -> Result<Option<IndexRead>, CqlError> {
    if token_restricted {
        return Ok(None);
    }
    for (i, op, v) in filters {
        let column = &t.columns[*i].name;
        let Some(idx) = t.indexes.iter().find(|x| x.built && x.column == *column) else {
            continue;
        };
        if *op != Op::Eq || v.is_empty() {
            continue;
        }
        if v.len() > MAX_INDEXED_VALUE {
            return Err(CqlError::invalid(
                "Index expression values may not be larger than 64K",
            ));
        }
        return Ok(Some(IndexRead {
            index: idx.name.clone(),
            column: column.clone(),
            value: v.clone(),
        }));
    }
    Ok(None)
}
