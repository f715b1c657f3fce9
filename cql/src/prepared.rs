//! A prepared statement: parsed, resolved against its table and planned once, then executed
//! many times with values for its markers (`Session::prepare`, `Session::execute_prepared`).
//! It holds what it was resolved against; running it is the session's.

use std::sync::Arc;

use crate::ast::Statement;
use crate::error::CqlError;
use crate::table::Table;
use crate::types::CqlType;
use crate::{binds, plan, unset};

/// A statement parsed and resolved once, to execute many times with values for its `?`
/// markers: the hot path skips the parser and the schema lookup. It stays bound to the table
/// it was prepared against; after that table is dropped, executing it fails.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub(crate) statement: Statement,
    pub(crate) keyspace: Option<String>,
    /// The table, and its column family's id when prepared.
    pub(crate) table: Option<(Arc<Table>, u64)>,
    pub(crate) markers: usize,
    /// The fast path of a planned shape (`plan.rs`).
    pub(crate) plan: Option<plan::Plan>,
    /// An upper bound of the bytes it holds (`footprint`).
    pub(crate) footprint: usize,
    /// A batch's tables, each statement's in order (empty for any other statement).
    pub(crate) batch_tables: Vec<Arc<Table>>,
    /// For a statement on a system table or a Thrift-era column family (`served.rs`): its
    /// markers' names and types.
    pub(crate) served: Option<Vec<(String, CqlType)>>,
}

/// The most bytes one token of a prepared statement becomes: its syntax node, a literal's own
/// text, and the value a plan encodes from it (checked against a counting allocator by
/// `tests/prepared_footprint.rs`).
pub(crate) const BYTES_PER_TOKEN: usize = 128;

impl Prepared {
    /// How many `?` markers the statement has.
    pub fn markers(&self) -> usize {
        self.markers
    }

    /// The column each `?` marker is bound to and its type, in marker order (a `:name` marker
    /// by its own name).
    pub fn bind_columns(&self) -> Vec<(String, CqlType)> {
        self.bound_markers()
            .into_iter()
            .map(|(name, _, ty)| (name, ty))
            .collect()
    }

    /// Each marker's name (its own for `:name`), the column it is bound to, and its type, in
    /// marker order.
    pub fn bound_markers(&self) -> Vec<(String, String, CqlType)> {
        if let Some(served) = &self.served {
            return served
                .iter()
                .map(|(name, ty)| (name.clone(), name.clone(), ty.clone()))
                .collect();
        }
        let own = self.table.as_ref().map(|(t, _)| &**t);
        let mut batch = self.batch_tables.iter();
        // A batch's statements are walked in order, each with its own table.
        let next = std::cell::RefCell::new(&mut batch);
        let tables = |s: &Statement| match s {
            Statement::Batch { .. } => None,
            _ if !self.batch_tables.is_empty() => next.borrow_mut().next().map(|t| &**t),
            _ => own,
        };
        binds::markers(&self.statement, &tables)
    }

    /// The keyspace of the table the statement names, if it names one.
    pub fn keyspace(&self) -> Option<&str> {
        self.keyspace.as_deref()
    }

    /// The table the statement reads or writes, if it is a CQL table.
    pub fn table(&self) -> Option<&Table> {
        self.table.as_ref().map(|(t, _)| &**t)
    }

    /// The statement.
    pub fn statement(&self) -> &Statement {
        &self.statement
    }

    /// This statement as it runs with the values `unset` marks (by marker position) left unset
    /// (native protocol v4): without the parts they would fill (`unset.rs`), and without its
    /// plan, so it runs by the general path. `Ok(None)`: nothing is left to do (every column
    /// an `UPDATE` or a `DELETE` names is unset). The values bound to the other markers stay
    /// at their positions.
    pub fn without_unset(&self, unset: &[bool]) -> Result<Option<Prepared>, CqlError> {
        let own = self.table.as_ref().map(|(t, _)| &**t);
        let mut batch = self.batch_tables.iter().map(|t| &**t);
        let mut tables = || {
            if self.batch_tables.is_empty() {
                own
            } else {
                batch.next()
            }
        };
        let Some(statement) = unset::without_unset(&self.statement, &mut tables, unset)? else {
            return Ok(None);
        };
        Ok(Some(Prepared {
            statement,
            plan: None,
            ..self.clone()
        }))
    }

    /// An upper bound of the memory it holds, in bytes: what a cache of prepared statements
    /// counts against its bound.
    pub fn footprint(&self) -> usize {
        self.footprint
    }
}
