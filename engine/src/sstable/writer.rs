//! Writes one SSTable in the current format (2) from rows given in order: data blocks cut near
//! the target size, then the block index, the row-key filter (sized up front, so no key is kept
//! until the end), and the footer. The file is written under a `.tmp`
//! name, fsynced, renamed into place and its directory fsynced; making it live (the manifest) is
//! the caller's step. All writes go through the [`FileSystem`] door.

use std::path::{Path, PathBuf};

use super::block_v2::BlockBuilder;
use super::filter::BlockedBloom;
use super::footer::{self, Footer};
use super::frame;
use super::index::IndexBuilder;
use crate::error::{Error, Result};
use crate::io::{FileSystem, WritableFile};
use crate::model::cell::{DeletionTime, EntryRef};
use crate::model::cell_key::{prefix_of_deletion, RANGE_DELETIONS};
use crate::model::partitioner::Partitioner;

/// The block size used when `ColumnIndexSizeInKB` is not configured.
///
/// Measured with `cargo bench -p supercolumn-bench --bench block_size` (200,000 rows of a 16-byte
/// key and a 100-byte value; random point reads, block cache off; median per read / bytes on
/// disk): 1 KiB 6.3 µs / 21.1 MB, 4 KiB 16.5 µs / 19.4 MB, 16 KiB 56 µs / 19.0 MB, 64 KiB 195 µs /
/// 17.8 MB. Read cost grows with the block because decoding a block allocates per item; 1 KiB
/// would be fastest today but quadruples the in-memory block index (about 60 MB per GB of data),
/// so 4 KiB stays the default and the block decoder is what must get faster.
pub const DEFAULT_BLOCK_SIZE: usize = 4 << 10;

/// How SSTables are written: the database's settings.
#[derive(Clone, Copy, Debug)]
pub struct TableOptions {
    /// Target bytes of a data block (`ColumnIndexSizeInKB`).
    pub block_size: usize,
    /// The row filter's false-positive rate (`BloomFilterFpChance`).
    pub bloom_fp: f64,
    /// The partitioner that orders the rows (recorded in the footer).
    pub partitioner: Partitioner,
    /// Whether blocks are LZ4-compressed where that saves space (off: stored raw).
    pub compress: bool,
}

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

/// Writes an SSTable in the current format.
#[derive(Debug)]
pub struct SstableWriter<'f> {
    fs: &'f dyn FileSystem,
    tmp: PathBuf,
    dest: PathBuf,
    file: Box<dyn WritableFile>,
    block_size: usize,
    compress: bool,
    block: BlockBuilder,
    /// Whether a block is open, and (first row, first entry, row deletion) of it.
    block_open: bool,
    block_first_row: Vec<u8>,
    block_first_entry: Vec<u8>,
    block_deletion: Option<DeletionTime>,
    /// Bytes of the block's opening row header, which do not count toward its size: a long row
    /// key repeated at each block of a wide row must not shrink the blocks.
    header_len: usize,
    finished: bool,
    /// The current row: sort key, key, deletion, and its last entry's key.
    row_open: bool,
    row_sort_key: Vec<u8>,
    row_key: Vec<u8>,
    row_deletion: Option<DeletionTime>,
    last_entry: Vec<u8>,
    index: IndexBuilder,
    offset: u64,
    filter: BlockedBloom,
    framed: Vec<u8>,
    footer: Footer,
}

impl<'f> SstableWriter<'f> {
    /// Starts writing the SSTable that will live at `dest`, sizing its row filter for at most
    /// `max_rows` rows (more still work, with more false positives).
    pub fn create(
        fs: &'f dyn FileSystem,
        dest: &Path,
        options: TableOptions,
        max_rows: u64,
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
            block_size: options.block_size.max(64),
            compress: options.compress,
            block: BlockBuilder::default(),
            block_open: false,
            block_first_row: Vec::new(),
            block_first_entry: Vec::new(),
            block_deletion: None,
            header_len: 0,
            finished: false,
            row_open: false,
            row_sort_key: Vec::new(),
            row_key: Vec::new(),
            row_deletion: None,
            last_entry: Vec::new(),
            index: IndexBuilder::default(),
            offset: header.len() as u64,
            filter: BlockedBloom::with_capacity(max_rows, options.bloom_fp),
            framed: Vec::new(),
            footer: Footer {
                min_timestamp: i64::MAX,
                max_timestamp: i64::MIN,
                version: footer::VERSION,
                partitioner: Some(options.partitioner),
                ..Footer::default()
            },
        })
    }

    fn note_timestamp(&mut self, ts: i64) {
        self.footer.min_timestamp = self.footer.min_timestamp.min(ts);
        self.footer.max_timestamp = self.footer.max_timestamp.max(ts);
    }

    /// Adds a row: its sort key, its key as the client gave it, its deletion, and its entries
    /// in key order. Rows must come in sort key order.
    pub fn add_row<'e>(
        &mut self,
        sort_key: &[u8],
        key: &[u8],
        deletion: Option<DeletionTime>,
        entries: impl IntoIterator<Item = (&'e [u8], EntryRef<'e>)>,
    ) -> Result<()> {
        self.start_row(sort_key, key, deletion)?;
        for (k, e) in entries {
            self.add_entry(k, e)?;
        }
        Ok(())
    }

    /// Starts a row; its entries follow with [`SstableWriter::add_entry`]. Rows must come in
    /// sort key order.
    pub fn start_row(
        &mut self,
        sort_key: &[u8],
        key: &[u8],
        deletion: Option<DeletionTime>,
    ) -> Result<()> {
        if self.row_open && self.row_sort_key.as_slice() >= sort_key {
            return Err(Error::invalid("SSTable rows must be added in order"));
        }
        if key.is_empty() {
            return Err(Error::invalid("an SSTable row needs a key"));
        }
        if self.block_full() {
            self.finish_block()?;
        }
        self.row_open = true;
        self.row_sort_key.clear();
        self.row_sort_key.extend_from_slice(sort_key);
        self.row_key.clear();
        self.row_key.extend_from_slice(key);
        self.row_deletion = deletion;
        self.last_entry.clear();
        if let Some(d) = deletion {
            self.note_timestamp(d.marked_for_delete_at);
        }
        let opens_block = !self.block_open;
        if opens_block {
            self.open_block(&[]);
        }
        self.block.row(key, deletion, false);
        if opens_block {
            self.header_len = self.block.bytes();
        }
        self.filter.insert(key);
        self.footer.rows += 1;
        Ok(())
    }

    fn open_block(&mut self, first_entry: &[u8]) {
        self.block_open = true;
        self.block_first_row.clear();
        self.block_first_row.extend_from_slice(&self.row_sort_key);
        self.block_first_entry.clear();
        self.block_first_entry.extend_from_slice(first_entry);
        self.block_deletion = self.row_deletion;
    }

    fn block_full(&self) -> bool {
        self.block.bytes() >= self.block_size + self.header_len
    }

    /// Adds an entry to the current row; entries must come in key order.
    pub fn add_entry(&mut self, key: &[u8], entry: EntryRef<'_>) -> Result<()> {
        if !self.row_open {
            return Err(Error::invalid("an entry before its row"));
        }
        if key.is_empty() || (!self.last_entry.is_empty() && self.last_entry.as_slice() >= key) {
            return Err(Error::invalid("SSTable entries must be added in order"));
        }
        if !self.block_open {
            // A block that opens inside a row repeats the row's header, so it reads alone.
            self.open_block(key);
            let row_key = std::mem::take(&mut self.row_key);
            self.block.row(&row_key, self.row_deletion, true);
            self.row_key = row_key;
            self.header_len = self.block.bytes();
        }
        self.block.entry(key, entry);
        self.last_entry.clear();
        self.last_entry.extend_from_slice(key);
        self.note_timestamp(entry.timestamp());
        // A super column's group key ends `00 01`, never like a prefix deletion's.
        if matches!(entry, EntryRef::GroupDeletion(_)) {
            if prefix_of_deletion(key).is_some() {
                self.footer.prefix_deletions = true;
            } else if key.starts_with(&RANGE_DELETIONS) {
                self.footer.range_deletions = true;
            }
        }
        self.footer.entries += 1;
        if self.block_full() {
            self.finish_block()?;
        }
        Ok(())
    }

    fn append_block(&mut self, raw: &[u8]) -> Result<(u64, u32)> {
        self.framed.clear();
        frame::frame(raw, self.compress, &mut self.framed);
        self.file
            .append(&self.framed)
            .map_err(|e| Error::io(&self.tmp, e))?;
        let at = self.offset;
        self.offset += self.framed.len() as u64;
        Ok((at, self.framed.len() as u32))
    }

    fn finish_block(&mut self) -> Result<()> {
        if !self.block_open {
            return Ok(());
        }
        self.block_open = false;
        let raw = self.block.finish();
        let (_, len) = self.append_block(&raw)?;
        self.index.add(
            &self.block_first_row,
            &self.block_first_entry,
            self.block_deletion,
            len,
        );
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
        let index_raw = std::mem::take(&mut self.index).finish();
        let (index_offset, index_len) = self.append_block(&index_raw)?;
        let filter = self.filter.encode();
        let (bloom_offset, bloom_len) = self.append_block(&filter)?;
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
