//! What the `supercolumn` and `sstable-dump` binaries share: the shell and the output format of
//! rows (SPEC §8); and, with `stress` too, how a tool turns on its log.

pub mod admin;
pub mod cql_shell;
pub mod dump_json;
pub mod errors;
pub mod export;
pub mod format;
pub mod import;
pub mod logging;
pub mod nodetool;
pub mod serve;
pub mod shell;
