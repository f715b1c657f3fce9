//! Nothing to build: this crate's tests (`tests/scylla.rs`) drive `supercolumn serve` with the
//! Rust `scylla` driver, which only this crate depends on.
