//! Conditional writes — `INSERT … IF NOT EXISTS`, `UPDATE`/`DELETE … IF EXISTS` and
//! `… IF c op v AND …` — Cassandra's lightweight transactions on one node. The write names one
//! CQL row by its whole primary key; the row is read, the condition evaluated and, when it
//! holds, the write applied, all under a lock on the partition that every conditional write
//! of this process takes (so two `IF NOT EXISTS` of one row never both apply). As in
//! Cassandra, a plain write that races a conditional one is not ordered by that lock, and a
//! conditional write takes no `USING TIMESTAMP`: like Paxos's ballots, the timestamps of
//! successive conditional writes to a partition strictly increase, so a write that applies
//! is never shadowed by the one before it that fell in the same microsecond.
//!
//! The answer is Cassandra's: one row whose `[applied]` column says whether the write was
//! made and, when not, the values that decided it (the whole row for `IF NOT EXISTS`, the
//! conditioned columns otherwise).
//!
//! A `BATCH` holding conditional writes is one transaction on one partition of one table:
//! every condition is evaluated under the partition's lock and the batch applies whole only
//! if all of them hold. Not applied, it answers a row per CQL row that was checked and
//! exists, in clustering order, each with its key columns and the conditioned ones.
//!
//! Long because a conditional write's read, check and apply steps share their rows.

mod answer;
mod compare;

use std::hash::{Hash, Hasher};

use answer::{answer, batch_answer, statics_only};

use parking_lot::{Mutex, MutexGuard};

use super::ast::{Bind, Condition, Op, Relation, Select, Statement, TableName, Term, Using};
use super::error::CqlError;
use super::rows::Rows;
use super::session::{CqlResult, Session};
use super::table::{Kind, Table};
use super::types::Literal;
use super::write_rows::{names_every_row_whole, restricts_clustering, Naming};
use supercolumn::BatchMutation;

/// Locks striping the partitions conditional writes hold while they read and write, each
/// with the timestamp of the last conditional write under it.
static STRIPES: [Mutex<i64>; 64] = [const { Mutex::new(i64::MIN) }; 64];

fn stripe(keyspace: &str, table: &str, key: &[u8]) -> MutexGuard<'static, i64> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (keyspace, table, key).hash(&mut h);
    STRIPES[(h.finish() % STRIPES.len() as u64) as usize].lock()
}

/// The statement and its condition, if it is a conditional write.
pub(super) fn condition_of(stmt: &Statement) -> Option<&Condition> {
    match stmt {
        Statement::Insert { condition, .. }
        | Statement::Update { condition, .. }
        | Statement::Delete { condition, .. } => condition.as_ref(),
        _ => None,
    }
}

/// The statement without its condition: the write to make when it holds.
fn unconditional(stmt: &Statement) -> Statement {
    let mut s = stmt.clone();
    if let Statement::Insert { condition, .. }
    | Statement::Update { condition, .. }
    | Statement::Delete { condition, .. } = &mut s
    {
        *condition = None;
    }
    s
}

/// One statement of a batch: the values its markers take and the table it was prepared
/// against (`None`: the session's own, as for a batch given as text).
pub(super) struct BatchItem<'a> {
    pub statement: &'a Statement,
    pub values: Option<&'a [Option<&'a [u8]>]>,
    pub pinned: Option<(std::sync::Arc<Table>, u64)>,
}

impl Session<'_> {
    /// The table a write names, its `USING`, and the relations naming its rows (an INSERT's:
    /// its key columns' values).
    fn target<'s>(
        &self,
        stmt: &'s Statement,
    ) -> Result<(&'s TableName, &'s Using, Vec<Relation>), CqlError> {
        match stmt {
            Statement::Insert {
                table,
                columns,
                values,
                using,
                ..
            } => {
                let t = self.table(table)?;
                let named = columns
                    .iter()
                    .zip(values)
                    .filter(|(c, _)| t.column(c).is_ok_and(|(_, d)| d.kind != Kind::Regular))
                    .map(|(c, v)| Relation::Compare(c.clone(), Op::Eq, v.clone()))
                    .collect();
                Ok((table, using, named))
            }
            Statement::Update {
                table,
                using,
                relations,
                ..
            }
            | Statement::Delete {
                table,
                using,
                relations,
                ..
            } => Ok((table, using, relations.clone())),
            _ => Err(CqlError::invalid(
                "only INSERT, UPDATE and DELETE can be conditional or in a BATCH",
            )),
        }
    }

    /// The one CQL row a conditional write names, after checking what it may not carry.
    fn conditioned_row(
        &self,
        t: &Table,
        (using, rows_deleted, word): (&Using, bool, &str),
        relations: &[Relation],
        condition: &Condition,
    ) -> Result<(Vec<u8>, Vec<Vec<u8>>), CqlError> {
        if using.timestamp.is_some() {
            return Err(CqlError::invalid(
                "a conditional write cannot have a custom timestamp (USING TIMESTAMP)",
            ));
        }
        if let Condition::Columns(cs) = condition {
            for c in cs.iter().map(|c| &c.column) {
                let (_, def) = t.column(c)?;
                if def.kind != Kind::Regular {
                    return Err(CqlError::invalid(format!(
                        "PRIMARY KEY column {c} cannot have IF conditions"
                    )));
                }
            }
        }
        if rows_deleted && !names_every_row_whole(t, relations) {
            return Err(CqlError::invalid(
                "DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to delete non static columns",
            ));
        }
        let clustering_in = relations.iter().any(|r| match r {
            Relation::In(c, _) | Relation::InMarker(c, _) => t
                .column(c)
                .is_ok_and(|(_, d)| matches!(d.kind, Kind::Clustering(_))),
            Relation::MultiIn(..) => true,
            _ => false,
        });
        if clustering_in {
            let what = if word == "DELETE" {
                "deletions"
            } else {
                "updates"
            };
            return Err(CqlError::invalid(format!(
                "IN on the clustering key columns is not supported with conditional {what}"
            )));
        }
        // A write of a partition's static columns names no row: its conditions may name only
        // static columns, and are checked against the partition's statics.
        let partition_only = t.has_statics() && !restricts_clustering(t, relations);
        if partition_only {
            if let Some(c) = condition.terms().map(|(c, _)| c).find(|c| !t.is_static(c)) {
                return Err(CqlError::invalid(format!(
                    "a condition on the non-static column {c} needs the row's whole primary key"
                )));
            }
        }
        let naming = if partition_only {
            Naming::Partitions
        } else {
            Naming::Rows
        };
        let mut rows = self.rows_named(t, relations, naming, word)?;
        match rows.pop() {
            Some(row) if rows.is_empty() => Ok(row),
            _ => Err(CqlError::invalid(
                "a conditional write names exactly one row, by its whole primary key",
            )),
        }
    }

    /// Whether `condition` holds of `current`, the row as `SELECT *` read it.
    fn holds(&self, t: &Table, condition: &Condition, current: &Rows) -> Result<bool, CqlError> {
        let row = current.first();
        Ok(match condition {
            Condition::NotExists => row.is_none(),
            Condition::Exists => row.is_some(),
            Condition::Columns(cs) => {
                let mut holds = true;
                for cc in cs {
                    holds &= self.column_holds(t, cc, current)?;
                }
                holds
            }
        })
    }

    /// The timestamp a conditional write takes under the lock holding `last` (the lock keeps
    /// it only if the write applies).
    fn next_timestamp(&self, last: i64) -> i64 {
        let now = self.db.options().clock.now_micros();
        now.max(last.saturating_add(1))
    }

    /// The writes of `items` without their conditions, at `ts`: every statement is built (and
    /// so checked) whether or not the conditions then hold, as Cassandra checks a statement
    /// before it reads.
    fn unconditional_writes(
        &mut self,
        items: &[BatchItem<'_>],
        batch_using: &Using,
        ts: i64,
    ) -> Result<BatchMutation, CqlError> {
        let saved = self.default_timestamp.replace(ts);
        let mut batch = BatchMutation::new();
        let mut built = Ok(());
        for item in items {
            self.bind_item(item);
            built = self.add_write(&unconditional(item.statement), batch_using, &mut batch);
            if built.is_err() {
                break;
            }
        }
        self.default_timestamp = saved;
        built.map(|()| batch)
    }

    /// Runs a conditional write; the answer is the `[applied]` row.
    pub(super) fn conditional_write(
        &mut self,
        stmt: &Statement,
        condition: &Condition,
    ) -> Result<CqlResult, CqlError> {
        let (table, using, relations) = self.target(stmt)?;
        let ks = self.keyspace_of(table)?;
        let t = self.table(table)?;
        refuse_counters(&t)?;
        let rows_deleted = deletes_rows(stmt, &t);
        let (key, clustering) =
            self.conditioned_row(&t, (using, rows_deleted, word(stmt)), &relations, condition)?;
        let mut last = stripe(&ks, &t.name, &key);
        let ts = self.next_timestamp(*last);
        let item = BatchItem {
            statement: stmt,
            values: None,
            pinned: None,
        };
        // The write's timestamp is the lock's, whatever the client's default.
        let batch = self.unconditional_writes(&[item], &Using::default(), ts)?;
        let current = self.read_conditioned(&t, &key, &clustering, condition)?;
        let applied = self.holds(&t, condition, &current)?;
        if applied {
            self.apply(&ks, &batch)?;
            *last = ts;
        }
        Ok(CqlResult::Rows(answer(applied, condition, current)))
    }

    /// Runs a `BATCH` holding conditional writes: the statements must write one partition of
    /// one table, and apply together only if every condition holds.
    pub(super) fn conditional_batch(
        &mut self,
        items: &[BatchItem<'_>],
        batch_using: &Using,
    ) -> Result<CqlResult, CqlError> {
        if batch_using.timestamp.is_some() {
            return Err(CqlError::invalid(
                "a conditional BATCH cannot have a custom timestamp (USING TIMESTAMP)",
            ));
        }
        let saved = (
            self.binds.clone(),
            self.default_timestamp,
            self.pinned.clone(),
        );
        let result = self.run_conditional_batch(items, batch_using);
        (self.binds, self.default_timestamp, self.pinned) = saved;
        result
    }

    /// Puts an item's values and table in place of the session's (when it has its own).
    fn bind_item(&mut self, item: &BatchItem<'_>) {
        if let Some(v) = item.values {
            self.binds = v.iter().map(|v| v.map(<[u8]>::to_vec)).collect();
        }
        if item.pinned.is_some() {
            self.pinned.clone_from(&item.pinned);
        }
    }

    // Long because a conditional batch reads each row once, evaluates every condition and then
    // applies all or nothing, and those steps share their rows.
    fn run_conditional_batch(
        &mut self,
        items: &[BatchItem<'_>],
        batch_using: &Using,
    ) -> Result<CqlResult, CqlError> {
        let mut target: Option<(String, std::sync::Arc<Table>, Vec<u8>)> = None;
        // Per conditional statement: its item, the row it names, its condition.
        let mut checks: Vec<(usize, Vec<Vec<u8>>, &Condition)> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let stmt = item.statement;
            self.bind_item(item);
            let (table, using, relations) = self.target(stmt)?;
            let ks = self.keyspace_of(table)?;
            let t = self.table(table)?;
            refuse_counters(&t)?;
            if let Some((k, t0, _)) = &target {
                if (k, &t0.name) != (&ks, &t.name) {
                    return Err(CqlError::invalid(
                        "a BATCH with conditions cannot span multiple tables",
                    ));
                }
            }
            let keys: Vec<Vec<u8>> = match condition_of(stmt) {
                Some(c) => {
                    let rows_deleted = deletes_rows(stmt, &t);
                    let (key, clustering) =
                        self.conditioned_row(&t, (using, rows_deleted, word(stmt)), &relations, c)?;
                    for (_, _, earlier) in checks.iter().filter(|(_, o, _)| *o == clustering) {
                        refuse_mixed(earlier, c).map_err(CqlError::invalid)?;
                    }
                    checks.push((i, clustering, c));
                    vec![key]
                }
                None => {
                    if using.timestamp.is_some() {
                        return Err(CqlError::invalid(
                            "a statement of a conditional BATCH cannot have a custom timestamp (USING TIMESTAMP)",
                        ));
                    }
                    let named = self.rows_named(&t, &relations, Naming::Partitions, word(stmt))?;
                    named.into_iter().map(|(k, _)| k).collect()
                }
            };
            for key in keys {
                match &target {
                    Some((_, _, k)) if *k != key => {
                        return Err(CqlError::invalid(
                            "a BATCH with conditions cannot span multiple partitions",
                        ))
                    }
                    Some(_) => {}
                    None => target = Some((ks.clone(), t.clone(), key)),
                }
            }
        }
        let Some((ks, t, key)) = target else {
            return Err(CqlError::invalid("a conditional BATCH writes nothing"));
        };
        let mut last = stripe(&ks, &t.name, &key);
        let ts = self.next_timestamp(*last);
        let batch = self.unconditional_writes(items, batch_using, ts)?;
        // Each row checked, read once, in the order first checked.
        let mut read: Vec<(Vec<Vec<u8>>, Rows)> = Vec::new();
        let mut applied = true;
        for (i, clustering, condition) in &checks {
            self.bind_item(&items[*i]);
            let at = match read.iter().position(|(c, _)| c == clustering) {
                Some(at) => at,
                None => {
                    let rows = self.read_conditioned(&t, &key, clustering, condition)?;
                    read.push((clustering.clone(), rows));
                    read.len() - 1
                }
            };
            // Every condition is evaluated (and its values checked), not just up to a failure.
            applied &= self.holds(&t, condition, &read[at].1)?;
        }
        if applied {
            self.apply(&ks, &batch)?;
            *last = ts;
        }
        let conditions: Vec<&Condition> = checks.iter().map(|(_, _, c)| *c).collect();
        Ok(CqlResult::Rows(batch_answer(
            applied,
            &t,
            &conditions,
            read,
        )))
    }

    /// The row a condition is checked against: the CQL row at `key` and `clustering`, or,
    /// when it does not exist and the condition names a static column, the partition's
    /// statics (its clustering and regular columns null), which Cassandra compares then. A
    /// write of a partition's statics alone (no clustering) is checked against its statics
    /// only: none live is no row, as for `IF NOT EXISTS`.
    fn read_conditioned(
        &mut self,
        t: &Table,
        key: &[u8],
        clustering: &[Vec<u8>],
        condition: &Condition,
    ) -> Result<Rows, CqlError> {
        if clustering.is_empty() && t.has_statics() {
            let partition = self.read_row(t, key, &[])?;
            return Ok(statics_only(t, &partition));
        }
        let rows = self.read_row(t, key, clustering)?;
        let on_statics = matches!(condition, Condition::Columns(_))
            && condition.terms().any(|(c, _)| t.is_static(c));
        if !rows.is_empty() || clustering.is_empty() || !on_statics {
            return Ok(rows);
        }
        let partition = self.read_row(t, key, &[])?;
        Ok(statics_only(t, &partition))
    }

    /// The CQL row at `key` and `clustering`, every column, as `SELECT *` reads it.
    fn read_row(
        &mut self,
        t: &Table,
        key: &[u8],
        clustering: &[Vec<u8>],
    ) -> Result<Rows, CqlError> {
        let mut values: Vec<Option<Vec<u8>>> = t.split_row_key(key).into_iter().map(Some).collect();
        values.extend(clustering.iter().cloned().map(Some));
        let relations = t
            .partition_key
            .iter()
            .chain(t.clustering.iter().take(clustering.len()))
            .enumerate()
            .map(|(n, &i)| {
                let name = t.columns[i].name.clone();
                Relation::Compare(name, Op::Eq, Term::Bind(Bind::Positional(n)))
            })
            .collect();
        let select = Select {
            table: super::ast::TableName {
                keyspace: Some(t.keyspace.clone()),
                table: t.name.clone(),
            },
            distinct: false,
            json: false,
            selectors: Vec::new(),
            aliases: Vec::new(),
            relations,
            group_by: Vec::new(),
            order_by: Vec::new(),
            per_partition_limit: None,
            // A partition's statics come with its first row (or alone, when it has none).
            limit: clustering
                .is_empty()
                .then(|| Term::Literal(Literal::Number("1".into()))),
            allow_filtering: false,
        };
        // The statement's own values are put back once the row is read.
        let saved = std::mem::replace(&mut self.binds, values);
        let rows = self.select(&select);
        self.binds = saved;
        rows
    }
}

/// Cassandra's refusal of a condition on a counter table.
fn refuse_counters(t: &Table) -> Result<(), CqlError> {
    if t.is_counter() {
        return Err(CqlError::invalid(
            "Conditional updates are not supported on counter tables",
        ));
    }
    Ok(())
}

/// Refuses two conditions on one row of a batch that Cassandra does not combine: `IF NOT
/// EXISTS` with anything but itself.
fn refuse_mixed(a: &Condition, b: &Condition) -> Result<(), &'static str> {
    match (a, b) {
        (Condition::NotExists, Condition::NotExists) => Ok(()),
        (Condition::NotExists, Condition::Exists) | (Condition::Exists, Condition::NotExists) => {
            Err("Cannot mix IF EXISTS and IF NOT EXISTS conditions for the same row")
        }
        (Condition::NotExists, _) | (_, Condition::NotExists) => {
            Err("Cannot mix IF conditions and IF NOT EXISTS for the same row")
        }
        _ => Ok(()),
    }
}

/// Whether `stmt` is a `DELETE` of rows or of non-static columns (what must name whole rows
/// to be conditional), not of a partition's static columns alone.
/// The statement's kind as Cassandra names it in its refusals.
fn word(stmt: &Statement) -> &'static str {
    match stmt {
        Statement::Delete { .. } => "DELETE",
        _ => "UPDATE",
    }
}

fn deletes_rows(stmt: &Statement, t: &Table) -> bool {
    match stmt {
        Statement::Delete { columns, .. } => {
            columns.is_empty() || columns.iter().any(|(c, _)| !t.is_static(c))
        }
        _ => false,
    }
}
