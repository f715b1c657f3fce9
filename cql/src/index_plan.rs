//! Whether a `SELECT` reads through a secondary index: an `=` on a column an index covers (one still building
//! refuses the read, as Cassandra's does)
//! (or `CONTAINS`, `CONTAINS KEY` on a collection an index of its elements covers, `m[k] = v`
//! on a map an index of its entries covers), to a value an index can hold, the rows kept to
//! the query's `token(k)` range. Whether the query needs `ALLOW FILTERING` is
//! `index_use.rs`'s; `select_plan.rs` asks both; `index_scan.rs` reads what it planned.

use super::ast::{Relation, Select};
use super::error::CqlError;
use super::key_span::KeySpan;
use super::table::{Table, TableIndex};
use super::types::{CqlType, Op};
use supercolumn::schema::{entry_value, IndexOf};

/// The longest value an index holds (a row key of the index's column family).
const MAX_INDEXED_VALUE: usize = 65_535;

/// A read through a secondary index: its name, its column and the value looked up.
pub(super) struct IndexRead {
    pub index: String,
    pub column: String,
    pub value: Vec<u8>,
    /// The index is of a static column: its entries name partitions, each read whole.
    pub partitions: bool,
    /// The index is of a key column (its equality is among the key filters).
    pub on_key: bool,
    /// The partitions a `token(k)` range leaves (every one without it).
    pub span: KeySpan,
}

/// Whether index `x` finds the rows of a relation with operator `op` on its column: `=` for
/// an index of values, `CONTAINS` for one of a collection's values, `CONTAINS KEY` for one of
/// a map's keys.
pub(super) fn serves(t: &Table, x: &TableIndex, op: Op) -> bool {
    let map = t
        .columns
        .iter()
        .any(|c| c.name == x.column && matches!(c.ty, CqlType::Map(..)));
    matches!(
        (x.of, op, map),
        (
            IndexOf::Value
                | IndexOf::StaticValue
                | IndexOf::Clustering(_)
                | IndexOf::KeyComponent(_),
            Op::Eq,
            _
        ) | (IndexOf::ElementValues, Op::Contains, _)
            | (IndexOf::ElementNames, Op::Contains, false)
            | (IndexOf::ElementNames, Op::ContainsKey, true)
    )
}

/// A read of `value`'s rows through index `idx` of `column`; a value too long for an index is
/// refused, in Cassandra's words.
fn read_through(
    idx: &TableIndex,
    column: &str,
    value: Vec<u8>,
    span: &KeySpan,
) -> Result<IndexRead, CqlError> {
    if value.len() > MAX_INDEXED_VALUE {
        return Err(CqlError::invalid(
            "Index expression values may not be larger than 64K",
        ));
    }
    Ok(IndexRead {
        index: idx.name.clone(),
        column: column.to_string(),
        value,
        partitions: idx.of == IndexOf::StaticValue,
        on_key: idx.of.of_rows(),
        span: span.clone(),
    })
}

/// An index of the entries of map `column`.
fn entries_index<'t>(t: &'t Table, column: &str) -> Option<&'t TableIndex> {
    t.indexes
        .iter()
        .find(|x| x.column == column && x.of == IndexOf::ElementEntries)
}

/// Whether the rows are best found through an index of a key column: the partition key is
/// not named whole, no index of another column serves the filters, and a key column with a
/// index is fixed by `=` to a value other than empty. Its restrictions then become
/// filters (`key_filters.rs`), the index finding the rows.
pub(super) fn key_index_wanted(
    t: &Table,
    eq: &[Option<Vec<Vec<u8>>>],
    filters: &[(usize, Op, Vec<u8>)],
) -> bool {
    let named = t.partition_key.iter().all(|&i| eq[i].is_some());
    let other = filters.iter().any(|(i, op, v)| {
        !v.is_empty()
            && t.indexes
                .iter()
                .any(|x| x.column == t.columns[*i].name && serves(t, x, *op))
    });
    !named
        && !other
        && t.indexes.iter().any(|x| {
            x.of.of_rows()
                && t.columns
                    .iter()
                    .position(|c| c.name == x.column)
                    .is_some_and(|i| {
                        eq[i]
                            .as_ref()
                            .is_some_and(|v| v.len() == 1 && !v[0].is_empty())
                    })
        })
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
            Relation::Compare(c, op, _) => {
                indexed |= t
                    .indexes
                    .iter()
                    .any(|x| x.column == *c && serves(t, x, *op));
            }
            Relation::Entry(c, _, Op::Eq, _) => indexed |= entries_index(t, c).is_some(),
            _ => {}
        }
    }
    indexed
}

/// The index that can find the rows of a query with these filters (column, operator, value):
/// one on a column restricted by `=` to a value other than empty (an empty value is
/// not indexed: such a query reads the table); the rows it lists are kept to `span`, the
/// query's token range. A value too long for any index is refused, in Cassandra's words.
pub(super) fn usable_index(
    t: &Table,
    filters: &[(usize, Op, Vec<u8>)],
    entries: &[(usize, Vec<u8>, Vec<u8>)],
    span: &KeySpan,
) -> Result<Option<IndexRead>, CqlError> {
    // A map's entry, `m[k] = v`, through an index of the map's entries.
    for (i, k, v) in entries {
        let column = &t.columns[*i].name;
        if let Some(idx) = entries_index(t, column) {
            return read_through(idx, column, entry_value(k, v), span).map(Some);
        }
    }
    for (i, op, v) in filters {
        let column = &t.columns[*i].name;
        let found = t
            .indexes
            .iter()
            .find(|x| x.column == *column && serves(t, x, *op));
        if let Some(idx) = found.filter(|_| !v.is_empty()) {
            return read_through(idx, column, v.clone(), span).map(Some);
        }
    }
    Ok(None)
}
