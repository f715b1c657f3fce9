//! A `BEGIN … BATCH … APPLY BATCH` statement: its kind checked against what it writes
//! (counters only in a `COUNTER` batch, `counter_write.rs`), a batch with conditions handed to
//! `conditional.rs`, any other built into one engine batch of one keyspace and applied whole.
//! A protocol BATCH of prepared statements is `lib.rs`'s.

use super::ast::{BatchKind, Statement, TableName, Using};
use super::conditional::BatchItem;
use super::counter_write::check_batch_kind;
use super::error::CqlError;
use super::session::{CqlResult, Session};
use supercolumn::BatchMutation;

impl Session<'_> {
    /// Runs a `BATCH` of `statements` with the batch's `using`.
    pub(super) fn run_batch(
        &mut self,
        statements: &[Statement],
        using: &Using,
        kind: BatchKind,
    ) -> Result<CqlResult, CqlError> {
        // Each table looked up once, however many of the batch's statements write it.
        let mut tables: Vec<(&TableName, bool)> = Vec::new();
        let mut counters = 0;
        for s in statements {
            let (Statement::Insert { table, .. }
            | Statement::InsertJson { table, .. }
            | Statement::Update { table, .. }
            | Statement::Delete { table, .. }) = s
            else {
                continue;
            };
            let counter = match tables.iter().find(|(t, _)| *t == table) {
                Some((_, c)) => *c,
                None => {
                    let c = self.table(table)?.is_counter();
                    tables.push((table, c));
                    c
                }
            };
            counters += usize::from(counter);
        }
        check_batch_kind(Some(kind), statements.len(), counters)?;
        if statements
            .iter()
            .any(|s| super::conditional::condition_of(s).is_some())
        {
            let items: Vec<BatchItem<'_>> = statements
                .iter()
                .map(|statement| BatchItem {
                    statement,
                    values: None,
                    pinned: None,
                })
                .collect();
            return self.conditional_batch(&items, using);
        }
        let mut keyspace: Option<String> = None;
        let mut batch = BatchMutation::new();
        for s in statements {
            let (Statement::Insert { table, .. }
            | Statement::Update { table, .. }
            | Statement::Delete { table, .. }) = s
            else {
                return Err(CqlError::invalid(
                    "only INSERT, UPDATE and DELETE can be in a BATCH",
                ));
            };
            let ks = self.keyspace_of(table)?;
            if keyspace.as_ref().is_some_and(|k| *k != ks) {
                return Err(CqlError::invalid("a BATCH here writes to one keyspace"));
            }
            keyspace = Some(ks);
            self.add_write(s, using, &mut batch)?;
        }
        if let Some(ks) = keyspace {
            self.apply(&ks, &batch)?;
        }
        Ok(CqlResult::Void)
    }
}
