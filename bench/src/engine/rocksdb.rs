//! RocksDB (the `rocksdb` crate) under `stress`, set up as a fair user would: write-ahead log on,
//! the shared block-cache budget, a 10-bits-per-key bloom filter (the crate's default has none),
//! LZ4. Point rows go to the default column family, wide rows to `wide`; a cell's key is row key
//! ++ column name, so a wide row is a run of adjacent keys.

use std::path::Path;

use anyhow::Context;
use rocksdb::{
    BlockBasedOptions, BottommostLevelCompaction, Cache, ColumnFamilyDescriptor, CompactOptions,
    DBCompressionType, Options, WriteBatch, WriteOptions, DB, DEFAULT_COLUMN_FAMILY_NAME,
};

use super::{cell_key, Durability, Engine, EngineConfig};

const WIDE: &str = "wide";

pub struct Rocks {
    db: DB,
    write: WriteOptions,
}

impl Rocks {
    pub fn open(dir: &Path, config: EngineConfig) -> anyhow::Result<Rocks> {
        let cache = Cache::new_lru_cache(config.block_cache_bytes as usize);
        let mut table = BlockBasedOptions::default();
        table.set_block_cache(&cache);
        table.set_bloom_filter(10.0, false);
        let mut cf = Options::default();
        cf.set_block_based_table_factory(&table);
        cf.set_compression_type(DBCompressionType::Lz4);
        cf.set_bottommost_compression_type(DBCompressionType::Lz4);
        let mut db_opts = cf.clone();
        db_opts.create_if_missing(true);
        db_opts.create_missing_column_families(true);
        if let Some(m) = config.memtable_bytes {
            db_opts.set_db_write_buffer_size(m as usize);
        }
        let db = DB::open_cf_descriptors(
            &db_opts,
            dir,
            [
                ColumnFamilyDescriptor::new(DEFAULT_COLUMN_FAMILY_NAME, cf.clone()),
                ColumnFamilyDescriptor::new(WIDE, cf),
            ],
        )
        .with_context(|| format!("opening RocksDB in {}", dir.display()))?;
        let mut write = WriteOptions::default();
        write.set_sync(config.durability == Durability::Batch);
        Ok(Rocks { db, write })
    }

    fn family(&self, name: &str) -> anyhow::Result<&rocksdb::ColumnFamily> {
        self.db
            .cf_handle(name)
            .with_context(|| format!("RocksDB column family {name} is missing"))
    }
}

impl Engine for Rocks {
    fn put(&self, row: &[u8], column: &[u8], value: &[u8]) -> anyhow::Result<()> {
        let cf = self.family(DEFAULT_COLUMN_FAMILY_NAME)?;
        Ok(self
            .db
            .put_cf_opt(cf, cell_key(row, column), value, &self.write)?)
    }

    fn put_wide(&self, row: &[u8], cells: &[([u8; 8], Vec<u8>)]) -> anyhow::Result<()> {
        let cf = self.family(WIDE)?;
        let mut batch = WriteBatch::default();
        for (name, value) in cells {
            batch.put_cf(cf, cell_key(row, name), value);
        }
        Ok(self.db.write_opt(batch, &self.write)?)
    }

    fn get(&self, row: &[u8], column: &[u8]) -> anyhow::Result<bool> {
        let cf = self.family(DEFAULT_COLUMN_FAMILY_NAME)?;
        Ok(self
            .db
            .get_pinned_cf_opt(cf, cell_key(row, column), &Default::default())?
            .is_some())
    }

    fn slice(&self, row: &[u8], count: usize, reversed: bool) -> anyhow::Result<usize> {
        let mut it = self.db.raw_iterator_cf(self.family(WIDE)?);
        if reversed {
            it.seek_for_prev(cell_key(row, &[0xff; 8]));
        } else {
            it.seek(row);
        }
        let mut seen = 0;
        while seen < count && it.key().is_some_and(|k| k.starts_with(row)) {
            std::hint::black_box(it.value());
            seen += 1;
            if reversed {
                it.prev();
            } else {
                it.next();
            }
        }
        it.status()?;
        Ok(seen)
    }

    fn scan(&self, start: &[u8], rows: usize) -> anyhow::Result<usize> {
        let mut it = self
            .db
            .raw_iterator_cf(self.family(DEFAULT_COLUMN_FAMILY_NAME)?);
        it.seek(start);
        let mut seen = 0;
        while seen < rows && it.valid() {
            std::hint::black_box(it.value());
            seen += 1;
            it.next();
        }
        it.status()?;
        Ok(seen)
    }

    fn flush(&self) -> anyhow::Result<()> {
        for name in [DEFAULT_COLUMN_FAMILY_NAME, WIDE] {
            self.db.flush_cf(self.family(name)?)?;
        }
        Ok(())
    }

    fn compact(&self) -> anyhow::Result<()> {
        self.flush()?;
        let mut opts = CompactOptions::default();
        opts.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
        for name in [DEFAULT_COLUMN_FAMILY_NAME, WIDE] {
            self.db
                .compact_range_cf_opt(self.family(name)?, None::<&[u8]>, None::<&[u8]>, &opts);
        }
        Ok(())
    }

    fn tables(&self) -> usize {
        self.db.live_files().map_or(0, |f| f.len())
    }

    fn close(self: Box<Self>) -> anyhow::Result<()> {
        self.db.flush_wal(true)?;
        Ok(())
    }
}
