//! What reads return: columns, super columns and rows, as Thrift's `Column`, `SuperColumn`,
//! `ColumnOrSuperColumn` and `KeySlice`.

/// A live column.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Column {
    /// Its name.
    pub name: Vec<u8>,
    /// Its value.
    pub value: Vec<u8>,
    /// Its timestamp.
    pub timestamp: i64,
    /// The TTL it was written with, if any.
    pub ttl: Option<u32>,
    /// When it expires, if it has a TTL: local time in seconds since the Unix epoch.
    pub expires_at: Option<i64>,
}

/// A super column with its live sub-columns, in sub-comparator order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SuperColumn {
    /// Its name.
    pub name: Vec<u8>,
    /// Its live sub-columns.
    pub columns: Vec<Column>,
}

/// One result of a read: a column (Standard CF, or a sub-column) or a super column.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ColumnOrSuperColumn {
    /// A column.
    Column(Column),
    /// A super column.
    SuperColumn(SuperColumn),
}

impl ColumnOrSuperColumn {
    /// The name of the column or super column.
    pub fn name(&self) -> &[u8] {
        match self {
            ColumnOrSuperColumn::Column(c) => &c.name,
            ColumnOrSuperColumn::SuperColumn(s) => &s.name,
        }
    }

    /// The column, if this is one.
    pub fn as_column(&self) -> Option<&Column> {
        match self {
            ColumnOrSuperColumn::Column(c) => Some(c),
            ColumnOrSuperColumn::SuperColumn(_) => None,
        }
    }

    /// The super column, if this is one.
    pub fn as_super_column(&self) -> Option<&SuperColumn> {
        match self {
            ColumnOrSuperColumn::SuperColumn(s) => Some(s),
            ColumnOrSuperColumn::Column(_) => None,
        }
    }
}

/// A row key with the results of a slice of that row.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KeySlice {
    /// The row key.
    pub key: Vec<u8>,
    /// The slice's results (possibly empty).
    pub columns: Vec<ColumnOrSuperColumn>,
}
