//! Runs writes (`INSERT`, `UPDATE`, `DELETE`, `BATCH`) against a [`Database`] through its
//! public API: every write of one statement or batch goes into one
//! [`BatchMutation`], so it is validated whole before anything applies and each partition's
//! cells land in one commit-log record. Reads are `select.rs`'s, schema statements
//! `schema_change.rs`'s.

use std::sync::Arc;

use super::ast::{Assignment, Bind, Condition, Relation, Statement, TableName, Term, Using};
use super::collection::{CollectionOp, Target};
use super::error::CqlError;
use super::table::{Kind, Table};
use super::types::{CqlType, Literal};
use super::write_rows::Naming;
use super::{plan, Session};
use supercolumn::query::{ColumnPath, ColumnPathRef};
use supercolumn::{BatchMutation, WriteOptions};
use supercolumn::{ColumnFamilyHandle, Database};

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
        Table::from_cf(&ks, cf)?.map(Arc::new).ok_or_else(|| {
            CqlError::invalid(format!(
                "{ks}.{} is a column family without a CQL schema; use the shell for it",
                t.table
            ))
        })
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
        let store = self.db.column_family_handle(&t.keyspace, &t.name).ok()?;
        plan::Plan::of(statement, t, &store.definition().comparator)
    }

    pub(super) fn add_write(
        &self,
        stmt: &Statement,
        batch_using: &Using,
        batch: &mut BatchMutation,
    ) -> Result<(), CqlError> {
        match stmt {
            Statement::Insert {
                table,
                columns,
                values,
                using,
                condition,
            } => {
                refuse_conditional(condition)?;
                let t = self.table(table)?;
                if columns.len() != values.len() {
                    return Err(CqlError::invalid(format!(
                        "{} columns and {} values",
                        columns.len(),
                        values.len()
                    )));
                }
                let mut given: Vec<Option<Vec<u8>>> = vec![None; t.columns.len()];
                let mut named = vec![false; t.columns.len()];
                for (c, v) in columns.iter().zip(values) {
                    let (i, def) = t.column(c)?;
                    if named[i] {
                        return Err(CqlError::invalid(format!(
                            "Multiple definitions found for column {c}"
                        )));
                    }
                    named[i] = true;
                    given[i] = self.value(&def.ty, v, c)?;
                }
                let key = key_from(&t, &given)?;
                let clustering = clustering_from(&t, &given)?;
                let write = self.write_options(using, batch_using, &t)?;
                let write = self.stamped(write, &t);
                let cf = t.name.as_str();
                let ck: Vec<&[u8]> = clustering.iter().map(Vec::as_slice).collect();
                let marker = t.cell_name(&ck, "")?;
                batch.insert(&key, ColumnPathRef::new(cf).column(&marker), b"", write);
                for (i, def) in t.columns.iter().enumerate() {
                    if def.kind != Kind::Regular || !named[i] {
                        continue;
                    }
                    if def.ty.is_collection() {
                        let at = Target::new(&t, &key, &ck, def);
                        let op = CollectionOp::Replace(given[i].clone());
                        self.write_collection(batch, &at, &op, write)?;
                        continue;
                    }
                    let name = t.cell_name(&ck, &def.name)?;
                    match &given[i] {
                        Some(v) => {
                            batch.insert(&key, ColumnPathRef::new(cf).column(&name), v, write)
                        }
                        None => batch.remove(
                            &key,
                            ColumnPathRef::new(cf).column(&name),
                            write.timestamp,
                        ),
                    };
                }
                Ok(())
            }
            Statement::Update {
                table,
                using,
                assignments,
                relations,
                condition,
            } => {
                refuse_conditional(condition)?;
                let t = self.table(table)?;
                let write = self.write_options(using, batch_using, &t)?;
                let write = self.stamped(write, &t);
                let mut sets = Vec::new();
                let mut ops = Vec::new();
                for a in assignments {
                    let c = a.column();
                    let (_, def) = t.column(c)?;
                    if def.kind != Kind::Regular {
                        return Err(CqlError::invalid(format!(
                            "PRIMARY KEY part {c} found in SET part"
                        )));
                    }
                    let kind = match a {
                        Assignment::Set(..) => None,
                        Assignment::Add(..) => Some('+'),
                        Assignment::Prepend(..) => Some('<'),
                        Assignment::Discard(..) => Some('-'),
                        Assignment::SetElement(_, k, v) => {
                            ops.push((def, self.element_op(def, k, Some(v))?));
                            continue;
                        }
                    };
                    let term = a.terms()[0];
                    if def.ty.is_collection() {
                        ops.push((def, self.collection_op(def, kind, term)?));
                    } else if kind.is_some() {
                        return Err(CqlError::invalid(format!(
                            "invalid operation for non-collection column {c}"
                        )));
                    } else {
                        sets.push((def.name.clone(), self.value(&def.ty, term, c)?));
                    }
                }
                for (key, ck) in self.rows_named(&t, relations, Naming::Rows)? {
                    let ck: Vec<&[u8]> = ck.iter().map(Vec::as_slice).collect();
                    for (def, op) in &ops {
                        let at = Target::new(&t, &key, &ck, def);
                        self.write_collection(batch, &at, op, write)?;
                    }
                    for (col, v) in &sets {
                        let name = t.cell_name(&ck, col)?;
                        let path = ColumnPathRef::new(&t.name).column(&name);
                        match v {
                            Some(v) => batch.insert(&key, path, v, write),
                            None => batch.remove(&key, path, write.timestamp),
                        };
                    }
                }
                Ok(())
            }
            Statement::Delete {
                columns,
                table,
                using,
                relations,
                condition,
            } => {
                refuse_conditional(condition)?;
                if using.ttl.is_some() {
                    return Err(CqlError::invalid("a DELETE cannot have a TTL"));
                }
                let t = self.table(table)?;
                let write = self.write_options(using, batch_using, &t)?;
                // A deletion does not expire (the table's default TTL is for what is written).
                let write = WriteOptions {
                    ttl: None,
                    ..self.stamped(write, &t)
                };
                let ts = write.timestamp;
                let mut elements = Vec::new();
                for (c, e) in columns {
                    let (_, def) = t.column(c)?;
                    if let Some(e) = e {
                        elements.push((def, self.element_op(def, e, None)?));
                    }
                }
                let whole_partition = columns.is_empty()
                    && !relations.iter().any(|r| match r {
                        Relation::Compare(c, ..) | Relation::In(c, _) => t
                            .column(c)
                            .is_ok_and(|(_, d)| matches!(d.kind, Kind::Clustering(_))),
                        Relation::Token(..) => false,
                    });
                // Whole rows may be named by a clustering prefix: every row under it (a range
                // of rows, Cassandra's range tombstone over the prefix). Columns are deleted
                // from rows named whole.
                let naming = match (whole_partition, columns.is_empty()) {
                    (true, _) => Naming::Partitions,
                    (false, true) => Naming::Prefix,
                    (false, false) => Naming::Rows,
                };
                for (key, ck) in self.rows_named(&t, relations, naming)? {
                    if whole_partition {
                        batch.remove(&key, ColumnPath::new(&t.name), ts);
                        continue;
                    }
                    let ck: Vec<&[u8]> = ck.iter().map(Vec::as_slice).collect();
                    let mut names = Vec::new();
                    if columns.is_empty() {
                        // A whole CQL row: every cell under its clustering values, as
                        // Cassandra's range tombstone over the row (a partition without
                        // clustering columns is deleted whole, above).
                        batch.remove_prefix(
                            &key,
                            ColumnPath::new(&t.name).column(t.clustering_prefix(&ck)?),
                            ts,
                        );
                    } else {
                        let mut lists_done: Vec<&str> = Vec::new();
                        for (def, op) in &elements {
                            let at = Target::new(&t, &key, &ck, def);
                            if !matches!(def.ty, CqlType::List(_)) {
                                self.write_collection(batch, &at, op, write)?;
                                continue;
                            }
                            // A list's index deletions together, each after the ones before.
                            if lists_done.contains(&def.name.as_str()) {
                                continue;
                            }
                            lists_done.push(&def.name);
                            let indexes: Vec<&[u8]> = elements
                                .iter()
                                .filter(|(d, _)| d.name == def.name)
                                .filter_map(|(_, o)| match o {
                                    CollectionOp::SetElement(k, None) => Some(k.as_slice()),
                                    _ => None,
                                })
                                .collect();
                            self.delete_list_indexes(batch, &at, &indexes, write)?;
                        }
                        for (c, _) in columns.iter().filter(|(_, e)| e.is_none()) {
                            let (_, def) = t.column(c)?;
                            if def.kind != Kind::Regular {
                                return Err(CqlError::invalid(format!("invalid identifier {c} for deletion (it is part of the PRIMARY KEY)")));
                            }
                            names.push(def.name.clone());
                        }
                    }
                    for n in names {
                        let (_, def) = t.column(&n)?;
                        if def.ty.is_collection() {
                            // Every element: a range tombstone over the collection.
                            let mut prefix = ck.clone();
                            prefix.push(n.as_bytes());
                            batch.remove_prefix(
                                &key,
                                ColumnPath::new(&t.name).column(t.clustering_prefix(&prefix)?),
                                ts,
                            );
                            continue;
                        }
                        batch.remove(
                            &key,
                            ColumnPath::new(&t.name).column(t.cell_name(&ck, &n)?),
                            ts,
                        );
                    }
                }
                Ok(())
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
        if write.timestamp.is_some() || !t.columns.iter().any(|c| c.ty.is_collection()) {
            return write;
        }
        WriteOptions {
            timestamp: Some(self.db.options().clock.now_micros()),
            ..write
        }
    }

    /// Applies a batch of writes to the keyspace they share.
    pub(super) fn apply(
        db: &Database,
        keyspace: &str,
        batch: &BatchMutation,
    ) -> Result<(), CqlError> {
        if !batch.is_empty() {
            db.batch_mutate(keyspace, batch)?;
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
            Term::Literal(Literal::Now) if matches!(ty, CqlType::Timeuuid | CqlType::Uuid) => {
                Ok(Some(self.fresh_timeuuid().to_vec()))
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
    fn write_options(
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
            let v = u32::try_from(v)
                .ok()
                .filter(|v| *v <= 630_720_000)
                .ok_or_else(|| {
                    CqlError::invalid(format!("TTL must be 0 to 630720000 seconds, not {v}"))
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

fn key_from(t: &Table, given: &[Option<Vec<u8>>]) -> Result<Vec<u8>, CqlError> {
    let mut parts = Vec::new();
    for &i in &t.partition_key {
        match &given[i] {
            Some(v) if !v.is_empty() || t.partition_key.len() > 1 => parts.push(v.as_slice()),
            Some(_) => {
                return Err(CqlError::invalid(format!(
                    "key may not be empty ({})",
                    t.columns[i].name
                )))
            }
            None => {
                return Err(CqlError::invalid(format!(
                    "missing mandatory PRIMARY KEY part {}",
                    t.columns[i].name
                )))
            }
        }
    }
    t.row_key(&parts)
}

fn clustering_from(t: &Table, given: &[Option<Vec<u8>>]) -> Result<Vec<Vec<u8>>, CqlError> {
    t.clustering
        .iter()
        .map(|&i| {
            given[i].clone().ok_or_else(|| {
                CqlError::invalid(format!(
                    "missing mandatory PRIMARY KEY part {}",
                    t.columns[i].name
                ))
            })
        })
        .collect()
}
