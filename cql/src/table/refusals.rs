//! Cassandra's refusals that list a table's columns, in the order it lists them (its column
//! order: regular before static, each kind by name). Which statements refuse is their
//! planners'; this only words it.

use super::Table;
use crate::error::CqlError;

impl Table {
    /// The refusal of a write's `WHERE` restricting `others` (column indexes), columns outside
    /// the primary key: each named once. Cassandra's message ends in a space.
    pub fn non_key_refusal(&self, mut others: Vec<usize>) -> CqlError {
        others.sort_by_key(|&i| (self.columns[i].is_static, self.columns[i].name.as_str()));
        others.dedup();
        let names: Vec<&str> = others
            .iter()
            .map(|&i| self.columns[i].name.as_str())
            .collect();
        CqlError::invalid(format!(
            "Non PRIMARY KEY columns found in where clause: {} ",
            names.join(", ")
        ))
    }
}
