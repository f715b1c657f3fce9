//! What the `supercolumn` and `sstable-dump` binaries share: the shell and the output format of
//! rows (SPEC §8).

pub mod errors;
pub mod format;
pub mod shell;
