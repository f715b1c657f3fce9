//! `MemtableTotalSpaceInMB` bounds the memory of all memtables together, frozen ones waiting
//! for their flush included: writers are slowed, never failed, and never let the total run
//! past the budget by more than one memtable's worth.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use supercolumn::{BatchMutation, ColumnPath, Database, Options, WriteOptions};

const KS: &str = "Keyspace1";
const BUDGET_MB: u32 = 32;

#[test]
fn five_million_columns_stay_within_the_memtable_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.memtable_total_space_mb = BUDGET_MB;
    // Only the total budget may trigger flushes: one memtable alone may hold twice of it.
    o.memtable_throughput_mb = 2 * BUDGET_MB;
    o.memtable_operations_millions = 100.0;
    let db = Database::open(dir.path(), o).unwrap();
    let budget = (BUDGET_MB as usize) << 20;
    let (rows, columns) = (50_000u64, 100u64);
    let mut peak = 0usize;
    for r in 0..rows {
        let key = format!("row{r:08}");
        let mut b = BatchMutation::new();
        for c in 0..columns {
            b.insert(
                &key,
                ColumnPath::new("Standard1").column(format!("col{c:04}")),
                [b'v'; 16],
                WriteOptions::at(1),
            );
        }
        db.batch_mutate(KS, &b).unwrap();
        if r % 8 == 0 {
            let total: usize = ["Standard1", "Standard2"]
                .iter()
                .map(|cf| db.column_family_stats(KS, cf).unwrap().memtable_bytes)
                .sum();
            peak = peak.max(total);
        }
    }
    eprintln!("peak memtable MiB {}", peak >> 20);
    let stats = db.column_family_stats(KS, "Standard1").unwrap();
    assert!(
        stats.flushes >= 5,
        "the budget made it flush: {}",
        stats.flushes
    );
    // "One memtable's worth": the active memtable keeps taking writes while the one frozen
    // at the budget is written out.
    assert!(
        peak <= 2 * budget,
        "memtables held {} MiB against a {BUDGET_MB} MiB budget",
        peak >> 20
    );
    assert!(
        peak > budget / 2,
        "the load reached the budget ({} MiB)",
        peak >> 20
    );
    // Everything written reads back.
    let last = format!("row{:08}", rows - 1);
    let col = db
        .get(KS, &last, &ColumnPath::new("Standard1").column("col0099"))
        .unwrap();
    assert!(col.is_some());
}
