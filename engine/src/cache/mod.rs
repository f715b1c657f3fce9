//! The read caches: decompressed data blocks (shared by the database) and row positions (the
//! seeds' key cache, per column family).

pub mod block_cache;
pub mod key_cache;

pub use block_cache::{BlockCache, Charge};
pub use key_cache::{KeyCache, RowPosition};
