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

use std::hash::{Hash, Hasher};

use parking_lot::{Mutex, MutexGuard};

use super::ast::{Bind, Condition, Op, Relation, Select, Statement, Term, Using};
use super::error::CqlError;
use super::table::{Kind, Table};
use super::types::{matches_filter, CqlType};
use super::write_rows::Naming;
use super::{CqlResult, Rows, Session};
use crate::mutation::BatchMutation;

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

impl Session<'_> {
    /// Runs a conditional write; the answer is the `[applied]` row.
    pub(super) fn conditional_write(
        &mut self,
        stmt: &Statement,
        condition: &Condition,
    ) -> Result<CqlResult, CqlError> {
        let (table, using, relations) = match stmt {
            Statement::Insert {
                table,
                columns,
                values,
                using,
                ..
            } => {
                // The row an INSERT names: its key columns' values.
                let t = self.table(table)?;
                let named = columns
                    .iter()
                    .zip(values)
                    .filter(|(c, _)| t.column(c).is_ok_and(|(_, d)| d.kind != Kind::Regular))
                    .map(|(c, v)| Relation::Compare(c.clone(), Op::Eq, v.clone()))
                    .collect();
                (table, using, named)
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
            } => (table, using, relations.clone()),
            _ => return Err(CqlError::invalid("only a write can be conditional")),
        };
        if using.timestamp.is_some() {
            return Err(CqlError::invalid(
                "a conditional write cannot have a custom timestamp (USING TIMESTAMP)",
            ));
        }
        let ks = self.keyspace_of(table)?;
        let t = self.table(table)?;
        if let Condition::Columns(cs) = condition {
            for (c, ..) in cs {
                let (_, def) = t.column(c)?;
                if def.kind != Kind::Regular {
                    return Err(CqlError::invalid(format!(
                        "PRIMARY KEY column {c} cannot have IF conditions"
                    )));
                }
            }
        }
        let rows = self.rows_named(&t, &relations, Naming::Rows)?;
        let [(key, clustering)] = rows.as_slice() else {
            return Err(CqlError::invalid(
                "a conditional write names exactly one row, by its whole primary key",
            ));
        };
        let mut last = stripe(&ks, &t.name, key);
        let current = self.read_row(&t, key, clustering)?;
        let row = current.rows.first();
        let applied = match condition {
            Condition::NotExists => row.is_none(),
            Condition::Exists => row.is_some(),
            Condition::Columns(cs) => {
                let mut holds = true;
                for (c, op, term) in cs {
                    let (_, def) = t.column(c)?;
                    let want = self.value(&def.ty, term, c)?;
                    let at = current.columns.iter().position(|(n, _)| n == c);
                    let have = row.zip(at).and_then(|(r, i)| r[i].as_deref());
                    holds &= compare(&def.ty, have, *op, want.as_deref(), c)?;
                }
                holds
            }
        };
        if applied {
            let ts = self
                .db
                .options()
                .clock
                .now_micros()
                .max(last.saturating_add(1));
            *last = ts;
            // The write's timestamp is the lock's, whatever the client's default.
            let saved = self.default_timestamp.replace(ts);
            let mut batch = BatchMutation::new();
            let written = self
                .add_write(&unconditional(stmt), &Using::default(), &mut batch)
                .and_then(|()| Self::apply(self.db, &ks, &batch));
            self.default_timestamp = saved;
            written?;
        }
        Ok(CqlResult::Rows(answer(applied, condition, current)))
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
            .chain(&t.clustering)
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
            selectors: Vec::new(),
            relations,
            order_by: Vec::new(),
            per_partition_limit: None,
            limit: None,
            allow_filtering: false,
        };
        // The statement's own values are put back once the row is read.
        let saved = std::mem::replace(&mut self.binds, values);
        let rows = self.select(&select);
        self.binds = saved;
        rows
    }
}

/// Whether the current value `have` compares to `want` as `op` says (`null = null` holds; no
/// other comparison with a null does, and an ordering with a null is refused, as Cassandra's).
fn compare(
    ty: &CqlType,
    have: Option<&[u8]>,
    op: Op,
    want: Option<&[u8]>,
    column: &str,
) -> Result<bool, CqlError> {
    match (want, op) {
        (None, Op::Eq) => Ok(have.is_none()),
        (None, _) => Err(CqlError::invalid(format!(
            "invalid comparison with null for {column}"
        ))),
        (Some(w), _) => Ok(matches_filter(ty, have, op, w)),
    }
}

/// The `[applied]` row: alone when applied (and for `IF EXISTS`), else with what decided it.
fn answer(applied: bool, condition: &Condition, current: Rows) -> Rows {
    let flag = Some(vec![u8::from(applied)]);
    let mut columns = vec![("[applied]".to_string(), CqlType::Boolean)];
    let mut row = vec![flag];
    if !applied {
        let existing = current.rows.into_iter().next();
        match condition {
            Condition::Exists => {}
            Condition::NotExists => {
                if let Some(r) = existing {
                    columns.extend(current.columns);
                    row.extend(r);
                }
            }
            Condition::Columns(cs) => {
                for (c, ..) in cs {
                    if columns.iter().any(|(n, _)| n == c) {
                        continue;
                    }
                    if let Some(i) = current.columns.iter().position(|(n, _)| n == c) {
                        columns.push(current.columns[i].clone());
                        row.push(existing.as_ref().and_then(|r| r[i].clone()));
                    }
                }
            }
        }
    }
    Rows {
        columns,
        rows: vec![row],
    }
}
