//! What an indexed read asks (Cassandra 0.7's `get_indexed_slices`): expressions on column
//! values, at least one an equality on an indexed column, a start key and a count.

/// How an expression compares a column's value (under the column family's value type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexOperator {
    /// `EQ`.
    Eq,
    /// `GTE`.
    Gte,
    /// `GT`.
    Gt,
    /// `LTE`.
    Lte,
    /// `LT`.
    Lt,
}

/// One expression: a column's value compared with `value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexExpression {
    /// The column's name.
    pub column_name: Vec<u8>,
    /// The comparison.
    pub op: IndexOperator,
    /// The value compared with.
    pub value: Vec<u8>,
}

/// Which rows an indexed read returns: those matching every expression, from `start_key`
/// (inclusive; empty: the first) in token order, at most `count` of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexClause {
    /// The expressions, all of which a row must match.
    pub expressions: Vec<IndexExpression>,
    /// The first row key a result may have.
    pub start_key: Vec<u8>,
    /// At most this many rows.
    pub count: usize,
}

impl IndexExpression {
    /// `column = value`.
    pub fn eq(column_name: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Self {
        IndexExpression {
            column_name: column_name.into(),
            op: IndexOperator::Eq,
            value: value.into(),
        }
    }

    /// Whether `ord` (the column's value compared with `self.value`) satisfies the operator.
    pub fn holds(&self, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self.op {
            IndexOperator::Eq => ord == Equal,
            IndexOperator::Gte => ord != Less,
            IndexOperator::Gt => ord == Greater,
            IndexOperator::Lte => ord != Greater,
            IndexOperator::Lt => ord == Less,
        }
    }
}
