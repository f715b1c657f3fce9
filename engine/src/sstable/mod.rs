//! SSTables: immutable sorted files of rows, with a block index and a row-key bloom filter.
//! Formats in `engine/FORMAT.md`.

pub mod block;
pub mod bloom;
pub mod footer;
pub mod index;
pub mod iter;
pub mod reader;
pub mod writer;

pub use reader::{BlockCache, ReadContext, Sstable};
pub use writer::{SstableWriter, DEFAULT_BLOCK_SIZE};

#[cfg(test)]
mod tests;
