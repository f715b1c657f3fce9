//! Counters: increments of 64-bit counts held in ordinary columns, applied as Cassandra's
//! leader replica applies them. An increment reads the column's current count under a lock,
//! adds to it, and writes the new total as a plain column through the commit log; so what the
//! log replays after a crash is a total, never an increment, and replaying it twice gives the
//! same count (an acknowledged increment is counted exactly once). The lock (one of a fixed
//! set, chosen by the column's hash) makes concurrent increments of one column add up. A
//! counter deleted stays deleted: its tombstone (written by the caller) outranks every later
//! total, as Cassandra's counter tombstones do.
//!
//! This file owns the read-add-write; it must not touch the write path's validation or the
//! log (it goes through [`Database::get`] and [`Database::batch_mutate`]).

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use parking_lot::{const_mutex, Mutex, MutexGuard};

use super::Database;
use crate::error::{Error, Result};
use crate::mutation::{BatchMutation, WriteOptions};
use crate::query::ColumnPath;

/// Locks serialising the read-add-write of counters, striped by column.
const STRIPES: usize = 256;
static LOCKS: [Mutex<()>; STRIPES] = [const { const_mutex(()) }; STRIPES];

/// One increment: a counter column of a row, and what to add to it (negative: subtract).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Increment {
    /// The row key.
    pub key: Vec<u8>,
    /// The column family and column (a Standard column family's).
    pub path: ColumnPath,
    /// What to add.
    pub delta: i64,
}

fn stripe(keyspace: &str, i: &Increment) -> usize {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (keyspace, &i.key, &i.path.column_family, &i.path.column).hash(&mut h);
    (h.finish() % STRIPES as u64) as usize
}

impl Database {
    /// Adds each increment to its counter column (a missing one counts from 0), all as one
    /// batch: the new totals are written together, each at a timestamp past the total it
    /// replaces. Two increments of one column in `increments` both count. A counter's value is
    /// its 8-byte big-endian count; a column holding anything else is an error naming it.
    pub fn add_counters(&self, keyspace: &str, increments: &[Increment]) -> Result<()> {
        if increments.is_empty() {
            return Ok(());
        }
        let mut stripes: Vec<usize> = increments.iter().map(|i| stripe(keyspace, i)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        // In ascending order: two batches of increments never wait on each other in a cycle.
        let _held: Vec<MutexGuard<'_, ()>> = stripes.iter().map(|&s| LOCKS[s].lock()).collect();
        let now = self.now().micros;
        // Each column once, its deltas summed (in the order first met; a hash finds it, so a
        // batch of many increments costs no more than their number).
        let mut totals: Vec<(&Increment, i64)> = Vec::with_capacity(increments.len());
        let mut seen: HashMap<(&[u8], &ColumnPath), usize> = HashMap::new();
        for inc in increments {
            match seen.entry((inc.key.as_slice(), &inc.path)) {
                Entry::Occupied(at) => {
                    let sum = &mut totals[*at.get()].1;
                    *sum = sum.wrapping_add(inc.delta);
                }
                Entry::Vacant(slot) => {
                    slot.insert(totals.len());
                    totals.push((inc, inc.delta));
                }
            }
        }
        let mut batch = BatchMutation::new();
        for (inc, delta) in totals {
            let (count, timestamp) = match self.get(keyspace, &inc.key, &inc.path)? {
                None => (0, i64::MIN),
                Some(found) => {
                    let c = found.as_column().ok_or_else(|| not_a_count(&inc.path))?;
                    let count = <[u8; 8]>::try_from(c.value.as_slice())
                        .map_err(|_| not_a_count(&inc.path))?;
                    (i64::from_be_bytes(count), c.timestamp)
                }
            };
            // Java's long arithmetic, as Cassandra's counters: an overflow wraps.
            let total = count.wrapping_add(delta);
            let at = now.max(timestamp.saturating_add(1));
            batch.insert(
                &inc.key,
                &inc.path,
                total.to_be_bytes(),
                WriteOptions::at(at),
            );
        }
        self.batch_mutate(keyspace, &batch)
    }
}

fn not_a_count(path: &ColumnPath) -> Error {
    Error::invalid(format!(
        "column {} of {} does not hold a counter's 8-byte count",
        path.column
            .as_deref()
            .map_or_else(String::new, |c| String::from_utf8_lossy(c).into_owned()),
        path.column_family
    ))
}
