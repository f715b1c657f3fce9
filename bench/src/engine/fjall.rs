//! fjall under `stress`: its defaults (journal on, LZ4, bloom filters, leveled compaction) with
//! the shared block-cache budget. Point rows and wide rows live in two keyspaces; a cell's key is
//! row key ++ column name, so a wide row is a run of adjacent keys.

use std::path::Path;

use anyhow::Context;
use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};

use super::{cell_key, Durability, Engine, EngineConfig};

pub struct Fjall {
    db: Database,
    points: Keyspace,
    wide: Keyspace,
    durability: Durability,
}

impl Fjall {
    pub fn open(dir: &Path, config: EngineConfig) -> anyhow::Result<Fjall> {
        let db = Database::builder(dir)
            .cache_size(config.block_cache_bytes)
            .open()
            .with_context(|| format!("opening fjall in {}", dir.display()))?;
        let points = db.keyspace("points", KeyspaceCreateOptions::default)?;
        let wide = db.keyspace("wide", KeyspaceCreateOptions::default)?;
        Ok(Fjall {
            db,
            points,
            wide,
            durability: config.durability,
        })
    }

    fn acknowledge(&self) -> anyhow::Result<()> {
        if self.durability == Durability::Batch {
            self.db.persist(PersistMode::SyncAll)?;
        }
        Ok(())
    }
}

impl Engine for Fjall {
    fn put(&self, row: &[u8], column: &[u8], value: &[u8]) -> anyhow::Result<()> {
        self.points.insert(cell_key(row, column), value)?;
        self.acknowledge()
    }

    fn put_wide(&self, row: &[u8], cells: &[([u8; 8], Vec<u8>)]) -> anyhow::Result<()> {
        let mut batch = self.db.batch();
        for (name, value) in cells {
            batch.insert(&self.wide, cell_key(row, name), value.as_slice());
        }
        batch.commit()?;
        self.acknowledge()
    }

    fn get(&self, row: &[u8], column: &[u8]) -> anyhow::Result<bool> {
        Ok(self.points.get(cell_key(row, column))?.is_some())
    }

    fn slice(&self, row: &[u8], count: usize, reversed: bool) -> anyhow::Result<usize> {
        let iter = self.wide.prefix(row);
        let mut seen = 0;
        if reversed {
            for guard in iter.rev().take(count) {
                std::hint::black_box(guard.into_inner()?);
                seen += 1;
            }
        } else {
            for guard in iter.take(count) {
                std::hint::black_box(guard.into_inner()?);
                seen += 1;
            }
        }
        Ok(seen)
    }

    fn scan(&self, start: &[u8], rows: usize) -> anyhow::Result<usize> {
        let mut seen = 0;
        for guard in self.points.range(start.to_vec()..).take(rows) {
            std::hint::black_box(guard.into_inner()?);
            seen += 1;
        }
        Ok(seen)
    }

    fn flush(&self) -> anyhow::Result<()> {
        self.points.rotate_memtable_and_wait()?;
        Ok(self.wide.rotate_memtable_and_wait()?)
    }

    fn compact(&self) -> anyhow::Result<()> {
        self.flush()?;
        self.points.major_compact()?;
        Ok(self.wide.major_compact()?)
    }

    fn tables(&self) -> usize {
        self.points.table_count() + self.wide.table_count()
    }

    fn close(self: Box<Self>) -> anyhow::Result<()> {
        Ok(self.db.persist(PersistMode::SyncAll)?)
    }
}
