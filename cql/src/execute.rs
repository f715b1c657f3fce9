//! Runs writes (`INSERT`, `UPDATE`, `DELETE`, `BATCH`) against a [`Database`] through its
//! public API: every write of one statement or batch goes into one
//! [`BatchMutation`], so it is validated whole before anything applies and each partition's
//! cells land in one commit-log record. Reads are `select.rs`'s, schema statements
//! `schema_change.rs`'s.

use std::sync::Arc;

use super::ast::{Bind, Condition, Relation, Statement, TableName, Term, Using};
use super::error::CqlError;
use super::functions::fold;
use super::json_insert;
use super::parser::MAX_IN_COMBINATIONS;
use super::plan;
use super::session::Session;
use super::table::Table;
use super::types::{CqlType, Literal};
use super::user_types::UserTypes;
use super::write::Written;
use supercolumn::ColumnFamilyHandle;
use supercolumn::{BatchMutation, WriteOptions};

impl Session<'_> {
    /// The keyspace a statement's table lives in.
    pub(super) fn keyspace_of(&self, t: &TableName) -> Result<String, CqlError> {
        t.keyspace
            .clone()
            .or_else(|| self.keyspace.clone())
            .ok_or_else(|| {
                CqlError::invalid(
                    "no keyspace has been specified: USE a keyspace, or name it (ks.table)",
                )
            })
    }

    /// The CQL table a statement names (a prepared statement's own, while it executes).
    pub(super) fn table(&self, t: &TableName) -> Result<Arc<Table>, CqlError> {
        let ks = self.keyspace_of(t)?;
        if let Some((p, id)) = self
            .pinned
            .as_ref()
            .filter(|(p, _)| p.name == t.table && p.keyspace == ks)
        {
            self.check_pinned(p, *id)?;
            return Ok(p.clone());
        }
        let def = self
            .db
            .describe_keyspace(&ks)
            .map_err(|_| CqlError::Unconfigured(format!("keyspace {ks}")))?;
        let cf = def
            .column_family(&t.table)
            .ok_or_else(|| CqlError::Unconfigured(format!("table {}", t.table)))?;
        Table::from_cf(&ks, cf, &UserTypes::of(&def)?)?
            .map(Arc::new)
            .ok_or_else(|| {
                CqlError::invalid(format!(
                    "{ks}.{} is a column family without a CQL schema; use the shell for it",
                    t.table
                ))
            })
    }

    /// The user types of keyspace `ks`.
    pub(super) fn user_types(&self, ks: &str) -> Result<UserTypes, CqlError> {
        let def = self
            .db
            .describe_keyspace(ks)
            .map_err(|_| CqlError::Unconfigured(format!("keyspace {ks}")))?;
        UserTypes::of(&def)
    }

    /// Adds the writes of an `INSERT`, `UPDATE` or `DELETE` to `batch`.
    /// Fails when the table a statement was prepared against (with column family id `id`) has
    /// been dropped, or dropped and created again (with a new id).
    pub(super) fn check_pinned(&self, t: &Table, id: u64) -> Result<(), CqlError> {
        self.pinned_store(t, id).map(drop)
    }

    /// The store of the table a statement was prepared against, as [`check_pinned`]
    /// (Self::check_pinned) finds it: a planned read goes on to read it without a second
    /// lookup.
    pub(super) fn pinned_store(&self, t: &Table, id: u64) -> Result<ColumnFamilyHandle, CqlError> {
        let store = self
            .db
            .column_family_handle(&t.keyspace, &t.name)
            .map_err(|_| CqlError::Unconfigured(format!("table {}.{}", t.keyspace, t.name)))?;
        if store.version() != id {
            return Err(CqlError::Stale(format!(
                "table {}.{} changed since the statement was prepared: prepare it again",
                t.keyspace, t.name
            )));
        }
        Ok(store)
    }

    /// The plan of a statement prepared against `t` (`plan.rs`), built with the comparator
    /// its column family has now.
    pub(super) fn plan_of(&self, statement: &Statement, t: &Table) -> Option<plan::Plan> {
        // The planned shapes read and write one row's cells; a table with static columns
        // also has the partition's, which the general paths read and write. After a drop,
        // the general paths also hide the dropped columns' cells.
        if t.has_statics() || t.has_dropped() || t.is_counter() {
            return None;
        }
        let store = self.db.column_family_handle(&t.keyspace, &t.name).ok()?;
        plan::Plan::of(statement, t, &store.definition().comparator)
    }

    /// Adds the cells of one `INSERT`, `UPDATE` or `DELETE` (not conditional) to `batch`;
    /// `batch_using` is its `BATCH`'s `USING`, if it is in one.
    pub(super) fn add_write(
        &self,
        stmt: &Statement,
        batch_using: &Using,
        batch: &mut BatchMutation,
    ) -> Result<(), CqlError> {
        if let Some(insert) = self.expand_json(stmt)? {
            return self.add_write(&insert, batch_using, batch);
        }
        match stmt {
            Statement::Insert {
                table,
                columns,
                values,
                using,
                condition,
            } => {
                refuse_conditional(condition)?;
                let write = Written {
                    table,
                    using,
                    batch_using,
                };
                self.add_insert(&write, columns, values, batch)
            }
            Statement::Update {
                table,
                using,
                assignments,
                relations,
                condition,
            } => {
                refuse_conditional(condition)?;
                let write = Written {
                    table,
                    using,
                    batch_using,
                };
                self.add_update(&write, assignments, relations, batch)
            }
            Statement::Delete {
                columns,
                table,
                using,
                relations,
                condition,
            } => {
                refuse_conditional(condition)?;
                let write = Written {
                    table,
                    using,
                    batch_using,
                };
                self.add_delete(&write, columns, relations, batch)
            }
            _ => Err(CqlError::invalid(
                "only INSERT, UPDATE and DELETE can be in a BATCH",
            )),
        }
    }

    /// `write` with its timestamp fixed now when the table has collections: replacing a
    /// collection deletes its old elements at the write's timestamp − 1, so the timestamp must
    /// be known before the batch is applied.
    pub(super) fn stamped(&self, write: WriteOptions, t: &Table) -> WriteOptions {
        if write.timestamp.is_some() || !t.columns.iter().any(|c| c.ty.is_multi_cell()) {
            return write;
        }
        WriteOptions {
            timestamp: Some(self.db.options().clock.now_micros()),
            ..write
        }
    }

    /// Applies a batch of writes to the keyspace they share, with the counter increments
    /// its statements left in the session (a batch holds one kind or the other).
    pub(super) fn apply(&self, keyspace: &str, batch: &BatchMutation) -> Result<(), CqlError> {
        if !batch.is_empty() {
            self.db.batch_mutate(keyspace, batch)?;
        }
        let increments = std::mem::take(&mut *self.counter_writes.borrow_mut());
        if !increments.is_empty() {
            self.db.add_counters(keyspace, &increments)?;
        }
        Ok(())
    }

    /// A term's bytes for a column of type `ty` (`None`: null).
    pub(super) fn value(
        &self,
        ty: &CqlType,
        term: &Term,
        column: &str,
    ) -> Result<Option<Vec<u8>>, CqlError> {
        match term {
            Term::Literal(lit) if lit.has_call() => {
                ty.encode(&fold(lit, ty, &self.functions())?, column)
            }
            Term::Literal(lit) => ty.encode(lit, column),
            Term::Bind(b) => match self.bound(b)? {
                None => Ok(None),
                Some(bytes) => {
                    let invalid =
                        |e: String| CqlError::invalid(format!("invalid value for {column}: {e}"));
                    ty.check(bytes).map_err(invalid)?;
                    let canonical = ty.canonical(bytes).map_err(invalid)?;
                    Ok(Some(canonical.unwrap_or_else(|| bytes.to_vec())))
                }
            },
        }
    }

    /// The `INSERT` an `INSERT … JSON` stands for, with the values bound to the statement;
    /// any other statement as it is.
    pub(super) fn expand_json(&self, stmt: &Statement) -> Result<Option<Statement>, CqlError> {
        let Statement::InsertJson {
            table,
            json,
            default_unset,
            using,
            condition,
        } = stmt
        else {
            return Ok(None);
        };
        let t = self.table(table)?;
        let text = match json {
            Term::Literal(Literal::Str(s)) => s.clone(),
            Term::Literal(_) => return Err(CqlError::invalid("INSERT … JSON takes a string")),
            Term::Bind(_) => {
                let bytes = self
                    .value(&CqlType::Text, json, "[json]")?
                    .ok_or_else(|| CqlError::invalid("Got null for INSERT JSON values"))?;
                String::from_utf8(bytes)
                    .map_err(|_| CqlError::invalid("INSERT … JSON takes UTF-8 text"))?
            }
        };
        let (columns, values) = json_insert::columns_of(&t, &text, *default_unset)?;
        Ok(Some(Statement::Insert {
            table: table.clone(),
            columns,
            values,
            using: using.clone(),
            condition: condition.clone(),
        }))
    }

    /// `stmt` with each `IN ?` (its table's) replaced by the values of the list bound to it,
    /// each checked against its column's type; `None` when it has none.
    pub(super) fn expand_in_markers(
        &self,
        stmt: &Statement,
    ) -> Result<Option<Statement>, CqlError> {
        let expand = |rs: &mut Vec<Relation>, t: &Table| -> Result<(), CqlError> {
            for r in rs.iter_mut() {
                let Relation::InMarker(c, b) = r else {
                    continue;
                };
                let (_, d) = t.column(c)?;
                let list = self
                    .bound(b)?
                    .ok_or_else(|| CqlError::invalid(format!("Invalid null value for {c}")))?;
                let values = CqlType::List(Box::new(d.ty.clone()))
                    .elements(list)
                    .map_err(|e| CqlError::invalid(format!("invalid IN list for {c}: {e}")))?;
                let terms = values
                    .into_iter()
                    .map(|(v, _)| Term::Literal(Literal::Typed(d.ty.clone(), Some(v))))
                    .collect();
                *r = Relation::In(c.clone(), terms);
            }
            Ok(())
        };
        let marked = |rs: &[Relation]| rs.iter().any(|r| matches!(r, Relation::InMarker(..)));
        // Most statements have none: they are not copied.
        let any = match stmt {
            Statement::Select(s) => marked(&s.relations),
            Statement::Update { relations, .. } | Statement::Delete { relations, .. } => {
                marked(relations)
            }
            _ => false,
        };
        if !any {
            return Ok(None);
        }
        let mut stmt = stmt.clone();
        let (relations, table) = match &mut stmt {
            Statement::Select(s) if marked(&s.relations) => (&mut s.relations, &s.table),
            Statement::Update {
                relations, table, ..
            }
            | Statement::Delete {
                relations, table, ..
            } if marked(relations) => (relations, &*table),
            _ => return Ok(None),
        };
        let t = self.table(table)?;
        expand(relations, &t)?;
        // The bound lists are bounded as listed ones are when parsed: each combination of IN
        // values is a read or write of its own.
        let product = relations.iter().fold(1usize, |n, r| match r {
            Relation::In(_, vs) => n.saturating_mul(vs.len()),
            Relation::MultiIn(_, vs) => n.saturating_mul(vs.len()),
            _ => n,
        });
        if product > MAX_IN_COMBINATIONS {
            return Err(CqlError::invalid(format!(
                "at most {MAX_IN_COMBINATIONS} combinations of IN values (these make {product})"
            )));
        }
        Ok(Some(stmt))
    }

    /// The serialized value bound to a marker (`None`: null).
    fn bound(&self, b: &Bind) -> Result<Option<&[u8]>, CqlError> {
        self.binds
            .get(b.index())
            .map(Option::as_deref)
            .ok_or_else(|| match b {
                Bind::Positional(i) => {
                    CqlError::invalid(format!("no value for bind marker {}", i + 1))
                }
                Bind::Named(_, n) => CqlError::invalid(format!("no value for bind marker :{n}")),
            })
    }

    /// A write's timestamp and TTL; without `USING TTL`, the table's `default_time_to_live`.
    pub(super) fn write_options(
        &self,
        using: &Using,
        batch: &Using,
        t: &Table,
    ) -> Result<WriteOptions, CqlError> {
        let mut w = match self.default_timestamp {
            Some(t) => WriteOptions::at(t),
            None => WriteOptions::now(),
        };
        if let Some(ts) = using.timestamp.as_ref().or(batch.timestamp.as_ref()) {
            let v = self.integer(ts, "TIMESTAMP")?;
            if v == i64::MIN {
                return Err(CqlError::timestamp_out_of_bound());
            }
            w = WriteOptions::at(v);
        }
        if let Some(ttl) = using.ttl.as_ref().or(batch.ttl.as_ref()) {
            let v = self.integer(ttl, "TTL")?;
            // Cassandra's words and bound (20 years).
            if v < 0 {
                return Err(CqlError::invalid(format!(
                    "A TTL must be greater or equal to 0, but was {v}"
                )));
            }
            let v = u32::try_from(v)
                .ok()
                .filter(|v| *v <= 630_720_000)
                .ok_or_else(|| {
                    CqlError::invalid(format!(
                        "ttl is too large. requested ({v}) maximum (630720000)"
                    ))
                })?;
            if v > 0 {
                w = w.with_ttl(v);
            }
        } else if t.options.default_ttl > 0 {
            w = w.with_ttl(t.options.default_ttl);
        }
        Ok(w)
    }

    /// An integer term (`LIMIT`, `TTL`, `TIMESTAMP`): a number, or a bound int or bigint.
    pub(super) fn integer(&self, term: &Term, what: &str) -> Result<i64, CqlError> {
        match term {
            Term::Literal(Literal::Number(n)) => n
                .parse()
                .map_err(|_| CqlError::invalid(format!("{what} must be an integer, not {n}"))),
            Term::Literal(_) => Err(CqlError::invalid(format!("{what} must be an integer"))),
            Term::Bind(b) => match self.bound(b)? {
                Some(v) => match <[u8; 8]>::try_from(v) {
                    Ok(b) => Ok(i64::from_be_bytes(b)),
                    Err(_) => <[u8; 4]>::try_from(v)
                        .map(|b| i64::from(i32::from_be_bytes(b)))
                        .map_err(|_| CqlError::invalid(format!("{what} must be an int or bigint"))),
                },
                None => Err(CqlError::invalid(format!("{what} cannot be null"))),
            },
        }
    }
}

/// A row key and the clustering values of one CQL row in it.
fn refuse_conditional(condition: &Option<Condition>) -> Result<(), CqlError> {
    if condition.is_some() {
        return Err(CqlError::invalid(
            "a conditional write (IF …) cannot be part of a BATCH here; nothing was written",
        ));
    }
    Ok(())
}
