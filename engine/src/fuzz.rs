//! The bodies of the cargo-fuzz targets in `fuzz/`. Each takes arbitrary bytes and must return
//! (an answer or an error) without panicking, hanging, or allocating what the input merely
//! claims. The engine's own tests call them on random and mutated inputs, so CI exercises them
//! without a nightly compiler.

use crate::model::comparator::ComparatorRegistry;
use crate::schema::StorageConf;

/// `commitlog_replay`: arbitrary bytes as a commit log segment. Returns the records read.
pub fn commitlog_replay(bytes: &[u8]) -> Result<u64, String> {
    crate::commitlog::replay::fuzz_segment(bytes)
}

/// `storage_conf`: arbitrary bytes as storage-conf.xml. Returns the keyspaces defined.
pub fn storage_conf(bytes: &[u8]) -> Result<usize, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
    StorageConf::parse(text, &ComparatorRegistry::default())
        .map(|c| c.options.keyspaces.map_or(0, |k| k.len()))
        .map_err(|e| e.to_string())
}
