//! SSTables: immutable sorted files of rows, with a block index and a row-key bloom filter.
//! Formats in `engine/FORMAT.md`: this build writes format 2 and reads formats 1 and 2.

pub mod block;
mod block_v1;
mod block_v2;
pub mod bloom;
pub mod filter;
pub mod footer;
pub mod frame;
pub mod index;
pub mod iter;
pub mod reader;
pub mod writer;

pub use reader::{BlockCache, ReadContext, Sstable};
pub use writer::{SstableWriter, TableOptions, DEFAULT_BLOCK_SIZE};

#[cfg(test)]
mod tests;
