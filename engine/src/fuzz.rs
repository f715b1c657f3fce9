//! The bodies of the cargo-fuzz targets in `fuzz/`. Each takes arbitrary bytes and must return
//! (an answer or an error) without panicking, hanging, or allocating what the input merely
//! claims. The engine's own tests call them on random and mutated inputs, so CI exercises them
//! without a nightly compiler.

use crate::model::comparator::ComparatorRegistry;
use crate::options::StorageConf;

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

/// `sstable_read`: arbitrary bytes as an SSTable: open, then read every row the file claims,
/// forward and reversed, and point-read a few keys. Returns the entries read.
pub fn sstable_read(bytes: &[u8]) -> Result<u64, String> {
    use std::ops::Bound;

    use crate::cache::KeyCache;
    use crate::merge::RowSource;
    use crate::model::partitioner::RowKey;
    use crate::sstable::BlockCache;
    use crate::sstable::{ReadContext, Sstable};
    use crate::stats::Counters;

    let partitioner = crate::model::partitioner::Partitioner::Random;
    let t = Sstable::from_vec(
        bytes.to_vec(),
        std::path::Path::new("fuzz-sstable"),
        partitioner,
    )
    .map_err(|e| e.to_string())?;
    let (blocks, keys, counters) = (
        BlockCache::new(1 << 20),
        KeyCache::default(),
        Counters::default(),
    );
    keys.set_capacity(16);
    let ctx = ReadContext {
        blocks: &blocks,
        keys: &keys,
        counters: &counters,
    };
    let mut read = 0u64;
    let mut rows: Vec<Vec<u8>> = Vec::new();
    for row in t.rows_from(Bound::Unbounded, ctx) {
        // Each row as the scan found it, then again as a point read locates it.
        let row = row.map_err(|e| e.to_string())?;
        for item in row.scan(Bound::Unbounded, Bound::Unbounded, false) {
            item.map_err(|e| e.to_string())?;
            read += 1;
        }
        rows.push(row.sort_key().to_vec());
    }
    for sort_key in rows.iter().chain([b"".to_vec(), b"\xff".to_vec()].iter()) {
        // The fuzzer's rows have no partitioner: the sort key stands for the key too.
        let Some(pos) = t
            .locate(&RowKey::with_sort_key(sort_key, sort_key.clone()), &ctx)
            .map_err(|e| e.to_string())?
        else {
            continue;
        };
        let row = t.row(sort_key, pos, ctx);
        for reversed in [false, true] {
            for item in row.scan(Bound::Unbounded, Bound::Unbounded, reversed) {
                item.map_err(|e| e.to_string())?;
                read += 1;
            }
        }
        let mid = [0x80u8];
        for item in row.scan(Bound::Included(&mid), Bound::Unbounded, true) {
            item.map_err(|e| e.to_string())?;
        }
    }
    Ok(read)
}
