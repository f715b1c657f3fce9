//! Whether a `SELECT` that an index can serve runs without `ALLOW FILTERING`, as Cassandra
//! decides it: the restrictions it would filter with (every one on a column outside the
//! primary key; the partition key's when they name no partition whole; the clustering
//! columns' when the partition key is not named whole, or when they are no prefix) must all
//! be served by one index group (a legacy index alone, or every storage-attached index
//! together). And such a query takes no `IN` on the partition key. Which index then reads the rows
//! is `index_plan.rs`'s; this only weighs the `WHERE`.

use super::error::CqlError;
use super::table::{Table, TableIndex, SAI_CLASS};
use super::types::{CqlType, Op};
use supercolumn::schema::IndexOf;

/// One restriction of a `WHERE`, as an index sees it.
pub(super) struct Weighed {
    /// The column, by index.
    pub column: usize,
    /// Its operator; `None` for what no index serves (`IN`, a multi-column relation).
    pub op: Option<Op>,
    /// A range (which narrows a clustering slice without fixing its column).
    pub slice: bool,
    /// A map's entry, `m[k] = v`.
    pub entry: bool,
}

impl Weighed {
    /// A restriction of `column` by `op`.
    pub fn new(column: usize, op: Option<Op>) -> Weighed {
        let slice = matches!(op, Some(Op::Lt | Op::Le | Op::Gt | Op::Ge));
        Weighed {
            column,
            op,
            slice,
            entry: false,
        }
    }
}

/// A `WHERE`'s restrictions by what they restrict.
#[derive(Default)]
pub(super) struct WhereShape {
    pub partition: Vec<Weighed>,
    /// In clustering order.
    pub clustering: Vec<Weighed>,
    pub others: Vec<Weighed>,
    /// The partition key is restricted by `token()`.
    pub token: bool,
    /// A partition key column is restricted by `IN` (of more than one value).
    pub key_in: bool,
}

/// How the indexes take a query.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum IndexUse {
    /// No index serves any of its restrictions, or it filters with none.
    None,
    /// One index group serves every restriction it filters with: no `ALLOW FILTERING`.
    Served,
    /// An index serves some, but no group serves all: `ALLOW FILTERING` is needed.
    Unserved,
}

/// Whether index `x` serves restriction `r` of table `t`.
fn supports(t: &Table, x: &TableIndex, r: &Weighed) -> bool {
    let column = &t.columns[r.column];
    let Some(op) = r.op.filter(|_| x.column == column.name) else {
        return false;
    };
    if r.entry {
        return x.of == IndexOf::ElementEntries;
    }
    let ordered = matches!(
        column.ty,
        CqlType::Tinyint
            | CqlType::Smallint
            | CqlType::Int
            | CqlType::Bigint
            | CqlType::Varint
            | CqlType::Decimal
            | CqlType::Float
            | CqlType::Double
            | CqlType::Date
            | CqlType::Time
            | CqlType::Timestamp
    );
    let storage_attached = x.class.as_deref() == Some(SAI_CLASS);
    super::index_plan::serves(t, x, op)
        || (storage_attached
            && r.slice
            && ordered
            && matches!(
                x.of,
                IndexOf::Value | IndexOf::Clustering(_) | IndexOf::KeyComponent(_)
            ))
}

/// Whether the clustering restrictions (in clustering order) are no prefix: a column
/// restricted after one left free or after a range.
fn clustering_filters(t: &Table, clustering: &[Weighed]) -> bool {
    let mut next = 0;
    for r in clustering {
        let Some(at) = t.clustering.iter().position(|&i| i == r.column) else {
            continue;
        };
        if at != next {
            return true;
        }
        if !r.slice {
            next = at + 1;
        }
    }
    false
}

/// How the indexes of `t` take a `WHERE` shaped `w` (Cassandra's `StatementRestrictions`).
pub(super) fn index_use(t: &Table, w: &WhereShape) -> Result<IndexUse, CqlError> {
    let all = || w.partition.iter().chain(&w.clustering).chain(&w.others);
    if !all().any(|r| t.indexes.iter().any(|x| supports(t, x, r))) {
        return Ok(IndexUse::None);
    }
    let mut named: Vec<usize> = w.partition.iter().map(|r| r.column).collect();
    named.sort_unstable();
    named.dedup();
    let key_empty = w.partition.is_empty() && !w.token;
    let key_filters = !w.token
        && !w.partition.is_empty()
        && (named.len() < t.partition_key.len() || w.partition.iter().any(|r| r.slice));
    let clustering_filters = clustering_filters(t, &w.clustering);
    let uses = key_empty || key_filters || clustering_filters || !w.others.is_empty();
    if uses && w.key_in {
        return Err(CqlError::invalid(
            "Select on indexed columns and with IN clause for the PRIMARY KEY are not supported",
        ));
    }
    let mut filtered: Vec<&Weighed> = w.others.iter().collect();
    if key_filters {
        filtered.extend(&w.partition);
    }
    if key_empty || key_filters || clustering_filters {
        filtered.extend(&w.clustering);
    }
    if filtered.is_empty() {
        return Ok(IndexUse::None);
    }
    let attached: Vec<&TableIndex> = t
        .indexes
        .iter()
        .filter(|x| x.class.as_deref() == Some(SAI_CLASS))
        .collect();
    let mut groups: Vec<Vec<&TableIndex>> = t
        .indexes
        .iter()
        .filter(|x| x.class.as_deref() != Some(SAI_CLASS))
        .map(|x| vec![x])
        .collect();
    let legacy = groups.len();
    groups.push(attached);
    // A legacy index answers one expression; a second one, even on its own column
    // (`l CONTAINS 1 AND l CONTAINS 2`), filters. Storage-attached indexes answer them all.
    let served = groups.iter().enumerate().any(|(n, g)| {
        (n == legacy || filtered.len() == 1)
            && filtered.iter().all(|r| g.iter().any(|x| supports(t, x, r)))
    });
    Ok(if served {
        IndexUse::Served
    } else {
        IndexUse::Unserved
    })
}
