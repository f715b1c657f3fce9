//! The test oracle: an in-memory model of what SPEC §3 says a column family holds after any
//! sequence of writes, deletions at every level, TTLs, flushes, compactions, reopens and power
//! cuts, written from the SPEC and not from the engine's code; and a runner that drives the
//! engine and the model through the same operations, with injected I/O faults, and compares what
//! every read returns after every step: scans, slices, reads by name, and the rows a secondary
//! index on Standard1's `c0` finds for every value ever written to it.
//!
//! The engine's model test (`engine/tests/model.rs`, proptest), the `model_ops` fuzz target and
//! this crate's own seed test all run [`run`]. This crate uses only the engine's public API and
//! its test file system (`supercolumn::io::FaultFs`); the engine must never depend on it.

mod model_ops;
mod ops;
mod read;
mod runner;
mod spec;

pub use ops::{Col, Op};
pub use read::Seen;
pub use runner::{run, run_input, Config, Failure, Input, GRACE};
pub use spec::{Model, Ver, V};

/// How many distinct rows, columns, super columns and timestamps the operations use: few, so
/// that operations collide and every tie-break is reached.
pub mod bounds {
    /// Rows `r0`..`r4`.
    pub const ROWS: u8 = 5;
    /// Columns `c0`..`c3` (in Standard1, and in each super column of Super1).
    pub const COLS: u8 = 4;
    /// Super columns `s0`..`s2`.
    pub const SUPERS: u8 = 3;
    /// Timestamps 0..11.
    pub const TIMESTAMPS: u8 = 12;
    /// TTLs of 1..=5 seconds.
    pub const MAX_TTL: u8 = 5;
    /// Columns in one batch.
    pub const BATCH: usize = 4;
}
