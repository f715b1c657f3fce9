//! CQL3 over the engine (SPEC §9): a lexer and parser for the language, CQL tables kept as
//! column families with composite names (`table.rs`), statements planned and executed through
//! the public [`Database`](supercolumn::Database) API (`select_plan.rs` and `select.rs`,
//! `write.rs` and `execute.rs`, …), and results as rows of typed values. This file is the
//! crate's public face: [`Session`]'s public methods, above every module, which none imports
//! (`cql/tests/house.rs` checks the order of the rest).
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! use supercolumn::{Database, Options};
//! use supercolumn_cql::Session;
//! let db = Database::open(dir.path(), Options::default())?;
//! let mut cql = Session::new(&db);
//! cql.execute("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; USE ks")?;
//! cql.execute("CREATE TABLE example (field1 int PRIMARY KEY, field2 int, field3 int)")?;
//! cql.execute("INSERT INTO example (field1, field2, field3) VALUES (1, 2, 3)")?;
//! let rows = cql.query("SELECT * FROM example")?;
//! assert_eq!(rows.to_table(), " field1 | field2 | field3\n--------+--------+--------\n      1 |      2 |      3\n\n(1 rows)");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod assemble;
mod ast;
mod batch;
mod binds;
mod bounds;
mod collect;
mod collection;
mod compact;
mod conditional;
mod counter_write;
mod error;
mod execute;
mod functions;
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod fuzz;
mod in_filter;
mod index_plan;
mod index_scan;
mod index_schema;
mod index_use;
mod json_insert;
mod key_filters;
mod key_span;
mod lexer;
mod map_entry;
mod multi_column;
mod page;
mod pages;
mod parser;
mod plan;
mod plan_values;
mod prepared;
mod range_delete;
mod replication;
mod rows;
mod schema_change;
mod select;
mod select_plan;
mod select_shape;
mod selection;
mod served;
mod session;
mod slice_plan;
mod slice_read;
mod system;
mod table;
mod table_options;
mod text_value;
mod token_relation;
mod type_schema;
mod types;
mod unset;
mod user_types;
mod write;
mod write_rows;

pub use compact::thrift_type;
pub use served::is_describe;
pub use session::{CqlResult, Session};
pub use system::{ConnectedClient, Node, ServerState, ServerTraffic, CQL_VERSION, RELEASE_VERSION};

pub use ast::{
    table_of, Arith, Assignment, BatchKind, Bind, ColumnCondition, Op, Relation, Select, Selector,
    Statement, Subscript, TableName, Term, Using,
};
pub use error::CqlError;
pub use lexer::split_statements;
pub use page::{PageRequest, Position};
pub use parser::{parse, parse_literal};
pub use prepared::Prepared;
pub use rows::{Columns, Row, Rows, RowsIter};
pub use table::{quote_ident, ColumnDef, Kind, Table};
pub use table_options::TableOptions;
pub use text_value::value_from_text;
pub use types::{CqlType, Duration, Literal, UserType};
pub use user_types::{create_statement as create_type_statement, UserTypes};

use supercolumn::BatchMutation;

impl<'db> Session<'db> {
    /// This node's address and port, as `system.local` shows them (a server passes its own;
    /// the default is 127.0.0.1:9042).
    pub fn set_node(&mut self, node: Node) {
        self.node = node;
    }

    /// Whether `text` is answered with rows built whole rather than read through a plan: a
    /// `DESCRIBE`, a statement on a system table or on a Thrift-era column family. A caller
    /// that pages (a server) pages those by offset; they take no page request.
    pub fn builds_whole(&self, text: &str) -> bool {
        is_describe(text)
            || parse(text).ok().is_some_and(|s| {
                s.len() == 1 && served::route(self.db, self.keyspace(), &s[0]).is_some()
            })
    }

    /// Parses and resolves one statement for [`Session::execute_prepared`].
    pub fn prepare(&self, text: &str) -> Result<Prepared, CqlError> {
        let tokens = lexer::tokenize(text)?.len();
        let mut stmts = parse(text)?;
        if stmts.len() != 1 {
            return Err(CqlError::invalid("prepare takes exactly one statement"));
        }
        let statement = stmts.remove(0);
        let markers = ast::markers(&statement);
        // A literal's text is held by its syntax node and again as the value it encodes to.
        let footprint = std::mem::size_of::<Prepared>()
            + text.len().saturating_mul(3)
            + tokens.saturating_mul(prepared::BYTES_PER_TOKEN);
        if let Some(served) = served::route(self.db, self.keyspace(), &statement) {
            let binds = match &statement {
                Statement::Select(sel) => served::bind_columns(self.db, &self.node, &served, sel)?,
                _ => Vec::new(),
            };
            return Ok(Prepared {
                keyspace: ast::table_of(&statement).and_then(|t| self.keyspace_of(t).ok()),
                statement,
                table: None,
                markers,
                plan: None,
                footprint,
                batch_tables: Vec::new(),
                served: Some(binds),
            });
        }
        let (keyspace, table) = match ast::table_of(&statement) {
            Some(t) => {
                let ks = self.keyspace_of(t)?;
                // The table (whose lookup says what is unknown, as CQL errors), then its version,
                // then the table the statement is planned with: an ALTER in between makes the
                // pin stale, never wrong.
                self.table(t)?;
                let id = self
                    .db
                    .column_family_version(&ks, &t.table)
                    .map_err(|_| CqlError::Unconfigured(format!("table {ks}.{}", t.table)))?;
                let table = self.table(t)?;
                binds::check(&statement, &table)?;
                if let Statement::Select(sel) = &statement {
                    select_shape::validate(&table, sel, self.db.partitioner())?;
                }
                (Some(ks), Some((table, id)))
            }
            None => (None, None),
        };
        let plan = table
            .as_ref()
            .and_then(|(t, _)| self.plan_of(&statement, t));
        let batch_tables = match &statement {
            Statement::Batch { statements, .. } => statements
                .iter()
                .filter_map(|s| ast::table_of(s).map(|t| (s, t)))
                .map(|(s, t)| {
                    let table = self.table(t)?;
                    binds::check(s, &table)?;
                    Ok(table)
                })
                .collect::<Result<Vec<_>, CqlError>>()?,
            _ => Vec::new(),
        };
        Ok(Prepared {
            statement,
            keyspace,
            table,
            markers,
            plan,
            footprint,
            batch_tables,
            served: None,
        })
    }

    /// Whether `p` may still run here: the table it was prepared against has not been dropped,
    /// created again or had an option it applies altered since, nor the database reopened. (A
    /// server answers UNPREPARED for a statement that may not, so the driver prepares it again.)
    pub fn is_current(&self, p: &Prepared) -> bool {
        p.table
            .as_ref()
            .is_none_or(|(t, id)| self.check_pinned(t, *id).is_ok())
    }

    /// Executes a prepared statement with the serialized values of its `?` markers, in order
    /// (`None`: null).
    pub fn execute_prepared(
        &mut self,
        p: &Prepared,
        values: &[Option<&[u8]>],
    ) -> Result<CqlResult, CqlError> {
        if values.len() != p.markers {
            return Err(CqlError::invalid(format!(
                "the statement has {} bind markers, {} values were given",
                p.markers,
                values.len()
            )));
        }
        if let (Some(plan), Some((t, id))) = (&p.plan, &p.table) {
            let planned = match plan {
                plan::Plan::Insert(insert) => self.run_insert_plan(insert, t, *id, values)?,
                _ => self.run_prepared_select(plan, t, *id, values)?,
            };
            if let Some(result) = planned {
                // Its rows, if any, fit the page: none follow.
                (self.page, self.page_end) = (None, None);
                return Ok(result);
            }
        }
        self.binds = values.iter().map(|v| v.map(<[u8]>::to_vec)).collect();
        self.pinned = p.table.clone();
        let saved = self.keyspace.clone();
        if p.keyspace.is_some() {
            self.keyspace = p.keyspace.clone();
        }
        let result = match self.expand_in_markers(&p.statement) {
            Ok(Some(expanded)) => self.dispatch(&expanded),
            Ok(None) => self.dispatch(&p.statement),
            Err(e) => Err(e),
        };
        if !matches!(p.statement, Statement::Use(_)) {
            self.keyspace = saved;
        }
        self.pinned = None;
        self.binds.clear();
        result
    }

    /// Executes prepared writes (`INSERT`, `UPDATE`, `DELETE` of one table) as one batch: one
    /// validation, and one commit-log record per partition. A conditional statement's batch
    /// answers with its `[applied]` rows (see [`execute_batch_of`](Self::execute_batch_of)).
    pub fn execute_batch(
        &mut self,
        p: &Prepared,
        rows: &[&[Option<&[u8]>]],
    ) -> Result<CqlResult, CqlError> {
        let items: Vec<(&Prepared, &[Option<&[u8]>])> = rows.iter().map(|r| (p, *r)).collect();
        self.execute_batch_of(&items)
    }

    /// Executes prepared writes, each with its values, as one batch of one keyspace (the
    /// native protocol's BATCH): all of it is validated before any of it is applied. A batch
    /// holding conditional writes answers with its `[applied]` rows; any other, `Void`.
    // Long because prepared statements, planned or not, are validated in one loop that also
    // restores the session's state after it.
    pub fn execute_batch_of(
        &mut self,
        items: &[(&Prepared, &[Option<&[u8]>])],
    ) -> Result<CqlResult, CqlError> {
        let only_writes = || CqlError::invalid("only INSERT, UPDATE and DELETE can be in a BATCH");
        let Some(ks) = items.first().and_then(|(p, _)| p.keyspace.clone()) else {
            return if items.is_empty() {
                Ok(CqlResult::Void)
            } else {
                Err(only_writes())
            };
        };
        if items
            .iter()
            .any(|(p, _)| conditional::condition_of(&p.statement).is_some())
        {
            return self.prepared_conditional_batch(&ks, items);
        }
        self.counter_writes.get_mut().clear();
        let saved = self.keyspace.replace(ks.clone());
        // Each statement's table is the one it was prepared against.
        let counters = items
            .iter()
            .filter(|(p, _)| p.table.as_ref().is_some_and(|(t, _)| t.is_counter()))
            .count();
        let mut result = counter_write::check_batch_kind(None, items.len(), counters);
        let mut batch = BatchMutation::new();
        let mut buffers = plan::InsertBuffers::default();
        let mut checked: Option<&Prepared> = None;
        for (i, (p, values)) in items.iter().enumerate() {
            if result.is_err() {
                break;
            }
            if p.keyspace.as_deref() != Some(ks.as_str()) {
                result = Err(if p.keyspace.is_none() {
                    only_writes()
                } else {
                    CqlError::invalid("a BATCH here writes to one keyspace")
                });
                break;
            }
            if values.len() != p.markers {
                result = Err(CqlError::invalid(
                    "a batch row has the wrong number of values",
                ));
                break;
            }
            if p.served.is_some() {
                result = Err(CqlError::invalid(
                    "a BATCH here writes to CQL tables only, not to system tables or Thrift-era column families",
                ));
                break;
            }
            if let (Some(plan::Plan::Insert(plan)), Some((t, id))) = (&p.plan, &p.table) {
                // A batch of one statement's rows checks its table once.
                let check = match checked {
                    Some(c) if std::ptr::eq(c, *p) => Ok(()),
                    _ => self.check_pinned(t, *id),
                };
                checked = Some(*p);
                let planned = check.and_then(|()| {
                    self.add_planned_insert(plan, t, values, &mut batch, &mut buffers)
                });
                match planned {
                    Ok(true) => {
                        if i == 0 && items.len() > 1 {
                            // The rest of the batch is most likely rows of this shape: grow once.
                            let rest = items.len() - 1;
                            batch.reserve(rest * batch.len(), rest * batch.stored_bytes());
                        }
                        continue;
                    }
                    Ok(false) => {}
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            self.pinned = p.table.clone();
            self.binds = values.iter().map(|v| v.map(<[u8]>::to_vec)).collect();
            if let Err(e) = self.add_write(&p.statement, &ast::Using::default(), &mut batch) {
                result = Err(e);
                break;
            }
        }
        self.pinned = None;
        self.binds.clear();
        self.keyspace = saved;
        if let Err(e) = result {
            // Increments of a batch that failed go with it.
            self.counter_writes.get_mut().clear();
            return Err(e);
        }
        self.apply(&ks, &batch)?;
        Ok(CqlResult::Void)
    }

    /// A native protocol BATCH holding conditional writes: each statement checked against
    /// the table it was prepared for, then run as one conditional batch.
    fn prepared_conditional_batch(
        &mut self,
        ks: &str,
        items: &[(&Prepared, &[Option<&[u8]>])],
    ) -> Result<CqlResult, CqlError> {
        for (p, values) in items {
            if p.keyspace.as_deref() != Some(ks) {
                return Err(CqlError::invalid("a BATCH here writes to one keyspace"));
            }
            if values.len() != p.markers {
                return Err(CqlError::invalid(
                    "a batch row has the wrong number of values",
                ));
            }
            if let Some((t, id)) = &p.table {
                self.check_pinned(t, *id)?;
            }
        }
        let saved = self.keyspace.replace(ks.to_string());
        let batch: Vec<conditional::BatchItem<'_>> = items
            .iter()
            .map(|(p, values)| conditional::BatchItem {
                statement: &p.statement,
                values: Some(*values),
                pinned: p.table.clone(),
            })
            .collect();
        let result = self.conditional_batch(&batch, &ast::Using::default());
        self.keyspace = saved;
        result
    }

    /// Switches the keyspace in use without a `USE` statement (a server keeps it per
    /// connection and hands it to each request's session).
    pub fn set_keyspace(&mut self, keyspace: Option<String>) {
        self.keyspace = keyspace;
    }

    /// The timestamp of the writes that follow when they give none with `USING TIMESTAMP`
    /// (`None`: the database clock's, at each write). A server passes a driver's client-side
    /// timestamp here, as Cassandra uses it.
    pub fn set_default_timestamp(&mut self, timestamp: Option<i64>) {
        self.default_timestamp = timestamp;
    }

    /// Makes the next `SELECT` return one page: at most `page.size` rows, after the position
    /// an earlier page ended at. [`page_end`](Self::page_end) then says where it ended.
    pub fn set_page(&mut self, page: Option<PageRequest>) {
        self.page = page;
    }

    /// Where the last paged `SELECT` ended, when more rows may follow (`None`: it returned
    /// the last of them).
    pub fn page_end(&mut self) -> Option<Position> {
        self.page_end.take()
    }

    /// The keyspace in use.
    pub fn keyspace(&self) -> Option<&str> {
        self.keyspace.as_deref()
    }

    /// Parses and runs every statement of `text` in order, stopping at the first error (the
    /// statements before it have run).
    pub fn execute(&mut self, text: &str) -> Result<Vec<CqlResult>, CqlError> {
        if is_describe(text) {
            return served::describe(self.db, self.keyspace(), text).map(|r| vec![r]);
        }
        let mut out = Vec::new();
        for s in parse(text)? {
            out.push(self.run(&s)?);
        }
        Ok(out)
    }

    /// Runs one `SELECT` and returns its rows.
    pub fn query(&mut self, text: &str) -> Result<Rows, CqlError> {
        match self.execute(text)?.pop() {
            Some(CqlResult::Rows(r)) => Ok(r),
            _ => Err(CqlError::invalid("not a SELECT")),
        }
    }

    /// Runs one parsed statement (without bind markers).
    pub fn run(&mut self, stmt: &Statement) -> Result<CqlResult, CqlError> {
        self.dispatch(stmt)
    }

    fn dispatch(&mut self, stmt: &Statement) -> Result<CqlResult, CqlError> {
        let result = self.dispatch_statement(stmt);
        // Increments of a statement that failed before its batch applied go with it.
        if result.is_err() {
            self.counter_writes.get_mut().clear();
        }
        result
    }

    fn dispatch_statement(&mut self, stmt: &Statement) -> Result<CqlResult, CqlError> {
        if let Some(insert) = self.expand_json(stmt)? {
            return self.dispatch(&insert);
        }
        if let Statement::Select(s) = stmt {
            return self.run_select(stmt, s);
        }
        if let Some(result) = self.answer_served(stmt) {
            return result;
        }
        match stmt {
            Statement::Insert { table, .. }
            | Statement::Update { table, .. }
            | Statement::Delete { table, .. } => {
                if let Some(condition) = conditional::condition_of(stmt) {
                    return self.conditional_write(stmt, condition);
                }
                let ks = self.keyspace_of(table)?;
                let mut batch = BatchMutation::new();
                self.add_write(stmt, &ast::Using::default(), &mut batch)?;
                self.apply(&ks, &batch)?;
                Ok(CqlResult::Void)
            }
            Statement::Batch {
                statements,
                using,
                kind,
            } => self.run_batch(statements, using, *kind),
            _ => self.schema_statement(stmt),
        }
    }
}

#[cfg(test)]
mod tests;
