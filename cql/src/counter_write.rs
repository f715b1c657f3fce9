//! Writes to counter tables, as Cassandra takes them: `UPDATE … SET c = c + n` (or `- n`) adds
//! to each counter of each row its `WHERE` names, through the engine's increments
//! (`Database::add_counters`, which counts an acknowledged increment exactly once); a counter
//! cannot be set, inserted, given a timestamp or a TTL; a `DELETE` of counters outranks every
//! later increment; and a batch holds counters only if it is a `COUNTER` batch, and then
//! nothing else. The increments of a statement or batch wait in the session until the batch
//! they belong to is applied (`execute.rs`).

use super::ast::{Assignment, BatchKind, Relation, Using};
use super::error::CqlError;
use super::session::Session;
use super::table::{Kind, Table};
use super::types::CqlType;
use super::write_rows::Naming;
use supercolumn::query::ColumnPath;
use supercolumn::Increment;

/// Cassandra's refusal of a counter write given its own timestamp or TTL.
pub(super) fn refuse_using(using: &Using, batch: &Using) -> Result<(), CqlError> {
    if using.timestamp.is_some() || batch.timestamp.is_some() {
        return Err(CqlError::invalid(
            "Cannot provide custom timestamp for counter updates",
        ));
    }
    if using.ttl.is_some() || batch.ttl.is_some() {
        return Err(CqlError::invalid(
            "Cannot provide custom TTL for counter updates",
        ));
    }
    Ok(())
}

impl Session<'_> {
    /// The increments of an `UPDATE` of counter table `t`, kept until its batch is applied.
    pub(super) fn add_counter_update(
        &self,
        t: &Table,
        assignments: &[Assignment],
        relations: &[Relation],
        naming: Naming,
    ) -> Result<(), CqlError> {
        let mut deltas = Vec::with_capacity(assignments.len());
        for a in assignments {
            let c = a.column();
            let (_, def) = t.column(c)?;
            if def.kind != Kind::Regular {
                return Err(CqlError::invalid(format!(
                    "PRIMARY KEY part {c} found in SET part"
                )));
            }
            let (term, sign) = match a {
                Assignment::Add(_, term) => (term, 1),
                Assignment::Discard(_, term) => (term, -1),
                Assignment::Set(..) => {
                    return Err(CqlError::invalid(format!(
                        "Cannot set the value of counter column {c} (counters can only be incremented/decremented, not set)"
                    )))
                }
                _ => {
                    return Err(CqlError::invalid(format!(
                        "Invalid operation for counter column {c}"
                    )))
                }
            };
            let v = self.value(&CqlType::Counter, term, c)?.ok_or_else(|| {
                CqlError::invalid("Invalid null value for counter increment/decrement")
            })?;
            let n =
                i64::from_be_bytes(v.as_slice().try_into().map_err(|_| {
                    CqlError::invalid(format!("invalid value for {c}: not a bigint"))
                })?);
            deltas.push((def.name.clone(), n.wrapping_mul(sign)));
        }
        let mut out = Vec::new();
        for (key, ck) in self.rows_named(t, relations, naming, "UPDATE")? {
            let ck: Vec<&[u8]> = ck.iter().map(Vec::as_slice).collect();
            for (column, delta) in &deltas {
                out.push(Increment {
                    key: key.clone(),
                    path: ColumnPath::new(&t.name).column(t.cell_name(&ck, column)?),
                    delta: *delta,
                });
            }
        }
        self.counter_writes.borrow_mut().extend(out);
        Ok(())
    }
}

/// Refuses a batch mixing counter and other writes, or of the wrong kind for them
/// (Cassandra's rules and words): `counters` of its `statements` write counter tables. `kind`
/// is `None` for a protocol batch, whose kind this crate is not told.
pub(super) fn check_batch_kind(
    kind: Option<BatchKind>,
    statements: usize,
    counters: usize,
) -> Result<(), CqlError> {
    let others = statements - counters;
    match kind {
        Some(BatchKind::Logged) if counters > 0 => Err(CqlError::invalid(
            "Cannot include a counter statement in a logged batch",
        )),
        Some(BatchKind::Counter) if others > 0 => Err(CqlError::invalid(
            "Cannot include non-counter statement in a counter batch",
        )),
        _ if counters > 0 && others > 0 => Err(CqlError::invalid(
            "Counter and non-counter mutations cannot exist in the same batch",
        )),
        _ => Ok(()),
    }
}
