//! SSTables: immutable sorted files of rows, with a block index and a row-key bloom filter.
//! Formats in `engine/FORMAT.md`.

pub mod block;
pub mod bloom;
pub mod footer;
pub mod index;
pub mod reader;
pub mod writer;

pub use reader::{ReadContext, Sstable};
pub use writer::{SstableWriter, DEFAULT_BLOCK_SIZE};

/// The file name of SSTable `generation` of column family `cf`.
pub fn data_file_name(cf: &str, generation: u64) -> String {
    format!("{cf}-{generation}-Data.db")
}

#[cfg(test)]
mod tests;
