//! What the data is: comparators, cells, reconciliation, partitioners and the key layouts that
//! turn names and row keys into byte-ordered keys. Nothing here touches storage.

pub mod cell;
pub mod cell_key;
pub mod comparator;
pub mod murmur3;
pub mod partitioner;
pub mod reconcile;
pub mod sort_key;
pub mod timeuuid;
