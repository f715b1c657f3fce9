//! Writes one SSTable from rows given in order: data blocks cut near the target size, then the
//! block index, the bloom filter of row keys, and the footer. The file is written under a `.tmp`
//! name, fsynced, renamed into place and its directory fsynced; making it live (the manifest) is
//! the caller's step. All writes go through the [`FileSystem`] door.

use std::path::{Path, PathBuf};

use super::block::{self, write_entry, write_entry_encoded, write_row};
use super::bloom::RowBloom;
use super::footer::{self, Footer};
use super::index::{BlockIndex, IndexEntry};
use crate::codec::Writer;
use crate::error::{Error, Result};
use crate::io::{FileSystem, WritableFile};
use crate::model::cell::{DeletionTime, Entry};

/// The block size used when `ColumnIndexSizeInKB` is not configured.
///
/// Measured with `cargo bench -p supercolumn-bench --bench block_size` (200,000 rows of a 16-byte
/// key and a 100-byte value; random point reads, block cache off; median per read / bytes on
/// disk): 1 KiB 6.3 µs / 21.1 MB, 4 KiB 16.5 µs / 19.4 MB, 16 KiB 56 µs / 19.0 MB, 64 KiB 195 µs /
/// 17.8 MB. Read cost grows with the block because decoding a block allocates per item; 1 KiB
/// would be fastest today but quadruples the in-memory block index (about 60 MB per GB of data),
/// so 4 KiB stays the default and the block decoder is what must get faster.
pub const DEFAULT_BLOCK_SIZE: usize = 4 << 10;

/// What a finished SSTable holds, for the caller's bookkeeping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenTable {
    /// The live file.
    pub path: PathBuf,
    /// Rows written.
    pub rows: u64,
    /// Entries written.
    pub entries: u64,
    /// Bytes of the file.
    pub bytes: u64,
}

/// Writes an SSTable.
#[derive(Debug)]
pub struct SstableWriter<'f> {
    fs: &'f dyn FileSystem,
    tmp: PathBuf,
    dest: PathBuf,
    file: Box<dyn WritableFile>,
    block_size: usize,
    block: Writer,
    /// (first row, first entry, row deletion) of the block being built.
    block_start: Option<(Vec<u8>, Vec<u8>, Option<DeletionTime>)>,
    /// Bytes of the block's opening row header, which do not count toward its size: a long row
    /// key repeated at each block of a wide row must not shrink the blocks.
    header_len: usize,
    finished: bool,
    row: Option<(Vec<u8>, Option<DeletionTime>)>,
    index: BlockIndex,
    offset: u64,
    row_keys: Vec<Vec<u8>>,
    bloom_fp: f64,
    footer: Footer,
}

impl<'f> SstableWriter<'f> {
    /// Starts writing the SSTable that will live at `dest`.
    pub fn create(
        fs: &'f dyn FileSystem,
        dest: &Path,
        block_size: usize,
        bloom_fp: f64,
    ) -> Result<Self> {
        let tmp = crate::file_names::temp_path(dest);
        let file = fs.create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        let header = footer::header();
        file.append(&header).map_err(|e| Error::io(&tmp, e))?;
        Ok(SstableWriter {
            fs,
            tmp,
            dest: dest.to_path_buf(),
            file,
            block_size: block_size.max(64),
            block: Writer::default(),
            block_start: None,
            header_len: 0,
            finished: false,
            row: None,
            index: BlockIndex::default(),
            offset: header.len() as u64,
            row_keys: Vec::new(),
            bloom_fp,
            footer: Footer {
                min_timestamp: i64::MAX,
                max_timestamp: i64::MIN,
                ..Footer::default()
            },
        })
    }

    fn note_timestamp(&mut self, ts: i64) {
        self.footer.min_timestamp = self.footer.min_timestamp.min(ts);
        self.footer.max_timestamp = self.footer.max_timestamp.max(ts);
    }

    /// Adds a row: its sort key, its key as the client gave it (for the bloom filter), its
    /// deletion, and its entries in key order. Rows must come in sort key order.
    pub fn add_row<'e>(
        &mut self,
        sort_key: &[u8],
        key: &[u8],
        deletion: Option<DeletionTime>,
        entries: impl IntoIterator<Item = (&'e [u8], &'e Entry)>,
    ) -> Result<()> {
        self.start_row(sort_key, key, deletion)?;
        for (k, e) in entries {
            self.add_entry(k, e)?;
        }
        if self.block_full() {
            self.finish_block()?;
        }
        Ok(())
    }

    fn start_row(
        &mut self,
        sort_key: &[u8],
        key: &[u8],
        deletion: Option<DeletionTime>,
    ) -> Result<()> {
        if self
            .row
            .as_ref()
            .is_some_and(|(prev, _)| prev.as_slice() >= sort_key)
        {
            return Err(Error::invalid("SSTable rows must be added in order"));
        }
        self.row = Some((sort_key.to_vec(), deletion));
        if let Some(d) = deletion {
            self.note_timestamp(d.marked_for_delete_at);
        }
        let opens_block = self.block_start.is_none();
        if opens_block {
            self.block_start = Some((sort_key.to_vec(), Vec::new(), deletion));
        }
        write_row(&mut self.block, sort_key, deletion, false);
        if opens_block {
            self.header_len = self.block.buf.len();
        }
        self.row_keys.push(key.to_vec());
        self.footer.rows += 1;
        Ok(())
    }

    /// [`SstableWriter::add_row`] with entries already encoded by the entry codec: (key,
    /// encoded entry, its timestamp).
    pub fn add_row_encoded<'e>(
        &mut self,
        sort_key: &[u8],
        key: &[u8],
        deletion: Option<DeletionTime>,
        entries: impl IntoIterator<Item = (&'e [u8], &'e [u8], i64)>,
    ) -> Result<()> {
        self.start_row(sort_key, key, deletion)?;
        for (k, encoded, ts) in entries {
            self.open_block_in_row(k)?;
            write_entry_encoded(&mut self.block, k, encoded);
            self.entry_written(ts)?;
        }
        if self.block_full() {
            self.finish_block()?;
        }
        Ok(())
    }

    fn block_full(&self) -> bool {
        self.block.buf.len() >= self.block_size + self.header_len
    }

    fn add_entry(&mut self, key: &[u8], entry: &Entry) -> Result<()> {
        self.open_block_in_row(key)?;
        write_entry(&mut self.block, key, entry);
        self.entry_written(match entry {
            Entry::Cell(c) => c.timestamp,
            Entry::SuperColumnDeletion(d) => d.marked_for_delete_at,
        })
    }

    /// A block that opens inside a row repeats the row's header, so it reads alone.
    fn open_block_in_row(&mut self, key: &[u8]) -> Result<()> {
        if self.block_start.is_none() {
            let (row, deletion) = self
                .row
                .clone()
                .ok_or_else(|| Error::invalid("an entry before its row"))?;
            write_row(&mut self.block, &row, deletion, true);
            self.header_len = self.block.buf.len();
            self.block_start = Some((row, key.to_vec(), deletion));
        }
        Ok(())
    }

    fn entry_written(&mut self, timestamp: i64) -> Result<()> {
        self.note_timestamp(timestamp);
        self.footer.entries += 1;
        if self.block_full() {
            self.finish_block()?;
        }
        Ok(())
    }

    fn append_block(&mut self, raw: &[u8]) -> Result<(u64, u32)> {
        let mut framed = Vec::with_capacity(raw.len() / 2 + block::FRAME_LEN);
        block::frame(raw, &mut framed);
        self.file
            .append(&framed)
            .map_err(|e| Error::io(&self.tmp, e))?;
        let at = self.offset;
        self.offset += framed.len() as u64;
        Ok((at, framed.len() as u32))
    }

    fn finish_block(&mut self) -> Result<()> {
        let Some((first_row, first_entry, deletion)) = self.block_start.take() else {
            return Ok(());
        };
        let raw = std::mem::take(&mut self.block.buf);
        let (offset, len) = self.append_block(&raw)?;
        self.index.entries.push(IndexEntry {
            first_row,
            first_entry,
            deletion,
            offset,
            len,
        });
        Ok(())
    }

    /// Writes the index, filter and footer, and makes the file durable under its final name.
    /// A writer dropped before this (an error on the way) removes its temporary file.
    pub fn finish(mut self) -> Result<WrittenTable> {
        let dest = self.dest.clone();
        self.finish_block()?;
        if self.footer.rows == 0 {
            return Err(Error::invalid("an SSTable needs at least one row"));
        }
        let index_raw = self.index.encode();
        let (index_offset, index_len) = self.append_block(&index_raw)?;
        let keys: Vec<&[u8]> = self.row_keys.iter().map(Vec::as_slice).collect();
        let bloom = RowBloom::build(&keys, self.bloom_fp).to_bytes();
        let (bloom_offset, bloom_len) = self.append_block(&bloom)?;
        self.footer.index_offset = index_offset;
        self.footer.index_len = u64::from(index_len);
        self.footer.bloom_offset = bloom_offset;
        self.footer.bloom_len = u64::from(bloom_len);
        let f = self.footer.encode();
        self.file.append(&f).map_err(|e| Error::io(&self.tmp, e))?;
        self.file.sync().map_err(|e| Error::io(&self.tmp, e))?;
        let bytes = self.offset + f.len() as u64;
        self.finished = true;
        self.fs
            .rename(&self.tmp, &self.dest)
            .map_err(|e| Error::io(&self.dest, e))?;
        let dir = crate::io::fs::parent_dir(&self.dest);
        self.fs.sync_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(WrittenTable {
            path: dest,
            rows: self.footer.rows,
            entries: self.footer.entries,
            bytes,
        })
    }
}

impl Drop for SstableWriter<'_> {
    fn drop(&mut self) {
        if !self.finished {
            // Best effort: a leftover `.tmp` is also removed at the next open.
            let _ = self.fs.remove_file(&self.tmp);
        }
    }
}
