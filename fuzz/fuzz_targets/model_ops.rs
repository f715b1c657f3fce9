//! Fuzz target `model_ops`: differential fuzzing. The bytes become a configuration and a
//! sequence of operations (writes with TTLs and explicit timestamps, deletions at every level,
//! batches, flushes, compactions, reopens, power cuts, injected I/O faults) run against the
//! engine and against the independent model of SPEC §3, comparing every read after every step
//! (`supercolumn_oracle::run_input`; `oracle/tests/model_ops.rs` runs the same body in
//! `cargo test`). A disagreement panics with the operations that led to it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use supercolumn_oracle::{run_input, Input};

fuzz_target!(|data: &[u8]| {
    let input = Input::from_bytes(data);
    if let Err(f) = run_input(&input) {
        panic!("{f}\nconfig: {:?}", input.config);
    }
});
