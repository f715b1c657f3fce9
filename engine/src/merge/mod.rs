//! The engine's iterator machinery (LevelDB's `table/merger.cc`, mini-lsm's `iterators/`):
//! sources of sorted entries and the k-way merges over them, used by reads, flushes and
//! compaction alike. Below every stage: it knows entries and keys, not memtables, files or
//! requests.

mod entries;
mod kmerge;
mod source;

pub use entries::merged_entries;
pub use kmerge::KMerge;
pub use source::{merged_deletion, EntryItem, RowSource, Visitor};
