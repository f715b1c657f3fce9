//! What the data is: comparators, cells, reconciliation, partitioners and the key layouts that
//! turn names and row keys into byte-ordered keys. Nothing here touches storage.

pub(crate) mod cell;
pub(crate) mod cell_key;
pub mod comparator;
pub(crate) mod entry_codec;
pub(crate) mod key_head;
pub(crate) mod murmur3;
pub mod partitioner;
pub(crate) mod range_deletions;
pub(crate) mod reconcile;
pub mod sort_key;
pub mod timeuuid;
pub mod vint;

pub use cell::{Cell, CellIn, CellRef, CellValue, CellValueRef, Ttl};
