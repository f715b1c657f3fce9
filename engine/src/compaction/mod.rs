//! Compaction: choosing SSTables to merge (size-tiered) and merging them.

pub mod size_tiered;
pub mod task;
