//! Flushing a column family (LevelDB's `BuildTable`): each frozen memtable, oldest first, is
//! written to a new SSTable, made live in the manifest with the commit log position it covers,
//! then swapped into the view in place of the memtable.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::column_family::ColumnFamilyStore;
use super::view::View;
use crate::commitlog::LogPosition;
use crate::error::{Error, Result};
use crate::file_names;
use crate::memtable::Memtable;
use crate::sstable::{Sstable, SstableWriter};
use crate::stats::Bytes;

impl ColumnFamilyStore {
    /// Writes every frozen memtable to an SSTable, oldest first, making each live in the
    /// manifest; returns the commit log position this CF is now flushed to, if it moved. On an
    /// error the memtable stays frozen (and readable), to be flushed again later.
    pub fn flush_frozen(&self) -> Result<Option<LogPosition>> {
        let _one_at_a_time = self.flushing.lock();
        if self.dropped.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let mut flushed_to = None;
        loop {
            let Some((mem, position)) = self.view().frozen.first().cloned() else {
                break;
            };
            let started = std::time::Instant::now();
            let table = self.write_sstable(&mem)?;
            match &table {
                Some(t) => tracing::info!(
                    "flushed {}: {} rows, {} of memtable into {} ({}) in {} ms",
                    self.origin,
                    t.footer().rows,
                    Bytes(mem.live_bytes() as u64),
                    t.path().display(),
                    Bytes(t.bytes()),
                    started.elapsed().as_millis()
                ),
                None => tracing::info!("flushed {}: nothing live to write", self.origin),
            }
            let generation = table.as_ref().map(|t| t.generation());
            self.ctx.update_manifest(|m| {
                let e = self.manifest_entry(m);
                e.flushed_to = e.flushed_to.max(position);
                e.sstables.extend(generation);
            })?;
            let mut v = self.view.write();
            let mut sstables = v.sstables.clone();
            sstables.extend(table);
            *v = Arc::new(View {
                active: v.active.clone(),
                frozen: v.frozen.iter().skip(1).cloned().collect(),
                sstables,
                broken: v.broken.clone(),
            });
            drop(v);
            self.resize_key_cache();
            crate::stats::bump(&self.counters.local().flushes);
            flushed_to = Some(position);
        }
        Ok(flushed_to)
    }

    fn write_sstable(&self, mem: &Memtable) -> Result<Option<Arc<Sstable>>> {
        let fs = self.ctx.fs.as_ref();
        if !self.dir.exists() {
            fs.create_dir_all(&self.dir)
                .map_err(|e| Error::io(&self.dir, e))?;
            // The new directory's entry must be durable before anything in it is made live.
            fs.sync_dir(&self.ctx.root)
                .map_err(|e| Error::io(&self.ctx.root, e))?;
        }
        let generation = self.ctx.next_generation();
        let path = self
            .dir
            .join(file_names::sstable(&self.def.load().name, generation));
        let mut w = SstableWriter::create(fs, &path, self.table_options(), mem.rows())?;
        let mut rows = 0;
        let partitioner = self.ctx.partitioner;
        for row in mem.flush_rows(self.is_super()) {
            let mut entries = row.entries().peekable();
            if row.deletion.is_none() && entries.peek().is_none() {
                continue;
            }
            let key = partitioner.key_part(row.sort_key);
            w.add_row(row.sort_key, key, row.deletion, entries)?;
            rows += 1;
        }
        if rows == 0 {
            return Ok(None);
        }
        let written = w.finish()?;
        self.counters
            .local()
            .sstable_bytes_written
            .fetch_add(written.bytes, Ordering::Relaxed);
        Ok(Some(Arc::new(Sstable::open(
            fs,
            &written.path,
            generation,
            partitioner,
        )?)))
    }
}
