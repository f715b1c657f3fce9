//! Reads an SSTable with positioned reads (`pread`): opens and checks it (header, footer,
//! index, bloom filter), finds rows (bloom filter → key cache → block index), and reads its
//! blocks through the block cache. Streaming rows and entries out of it is `iter.rs`.
//!
//! Not `mmap`: pages of a mapped file count in the process's resident memory for as long as
//! they stay mapped, so a compaction or a read-heavy phase grew the footprint by the size of
//! the data it touched (1M rows: peak 363 MiB mapped, against 131 MiB read with `pread`). The
//! operating system's page cache still holds the file; the engine holds only the block cache.
//!
//! Every fault (checksum, impossible length, truncation, disorder) is an [`Error::Corrupt`]
//! naming the file and the block; nothing here panics on file contents.
//!
//! Long because opening and checking a file and finding a row in it share the file's index, filter
//! and caches.

use std::cell::RefCell;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::block::{DataBlock, Item, ItemRef};
use super::bloom::RowBloom;
use super::filter::{BlockedBloom, RowFilter};
use super::footer::{Footer, FOOTER_LEN, HEADER_LEN, HEADER_MAGIC, MIN_FOOTER_LEN};
use super::frame;
use super::index::{BlockIndex, RowPoint};
use crate::cache::{Charge, KeyCache, RowPosition};
use crate::error::{CorruptKind, Error, FormatError, Place, Result};
use crate::io::FileSystem;
use crate::model::partitioner::{Partitioner, RowKey, SortKey};
use crate::stats::{bump, Counters};
use crate::trace;

/// Gives every opened SSTable a process-unique id for cache keys.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A decoded block, and what it costs the cache.
#[derive(Debug)]
pub struct CachedBlock {
    /// The checked block.
    pub block: DataBlock,
    /// Bytes charged against the cache's capacity.
    pub charge: usize,
}

impl Charge for CachedBlock {
    fn charge(&self) -> usize {
        self.charge
    }
}

/// The database's cache of data blocks.
pub type BlockCache = crate::cache::BlockCache<CachedBlock>;

/// What a read of an SSTable consults and counts.
#[derive(Clone, Copy, Debug)]
pub struct ReadContext<'a> {
    /// The database's block cache.
    pub blocks: &'a BlockCache,
    /// The column family's key cache.
    pub keys: &'a KeyCache,
    /// The column family's counters.
    pub counters: &'a Counters,
}

/// The bytes of an SSTable: the open file, or (for the fuzz targets, under the `testing`
/// feature) bytes in memory.
#[derive(Debug)]
enum Bytes {
    File {
        file: File,
        len: u64,
    },
    #[cfg(feature = "testing")]
    Owned(Vec<u8>),
}

impl Bytes {
    fn len(&self) -> u64 {
        match self {
            Bytes::File { len, .. } => *len,
            #[cfg(feature = "testing")]
            Bytes::Owned(v) => v.len() as u64,
        }
    }

    /// Fills `buf` from `offset`; `None` if that runs past the end of the file.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Option<std::io::Result<()>> {
        let end = offset.checked_add(buf.len() as u64)?;
        if end > self.len() {
            return None;
        }
        Some(match self {
            Bytes::File { file, .. } => file.read_exact_at(buf, offset),
            #[cfg(feature = "testing")]
            Bytes::Owned(v) => {
                buf.copy_from_slice(&v[offset as usize..end as usize]);
                Ok(())
            }
        })
    }
}

thread_local! {
    /// Each thread's buffer for a block's stored bytes on their way to being checked and
    /// decompressed, so a block read allocates only what the block keeps.
    static READ_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// An open SSTable. Once compaction has replaced it ([`Sstable::mark_obsolete`]), its file is
/// removed when the last reader lets go of it.
#[derive(Debug)]
pub struct Sstable {
    path: PathBuf,
    generation: u64,
    id: u64,
    map: Bytes,
    pub(super) index: BlockIndex,
    filter: RowFilter,
    footer: Footer,
    pub(super) partitioner: Partitioner,
    /// Set once replaced: how to remove the file.
    obsolete: OnceLock<Obsolete>,
}

/// What an SSTable replaced by compaction (or dropped) needs to remove its file once the last
/// reader lets go of it.
pub struct Obsolete {
    /// The file-system door.
    pub fs: Arc<dyn FileSystem>,
    /// Bytes awaiting removal (this file's are added now, taken off once it is gone).
    pub pending_bytes: Arc<AtomicU64>,
    /// Told the file's path once its removal is durable.
    pub on_removed: Arc<dyn Fn(&Path) + Send + Sync>,
}

impl std::fmt::Debug for Obsolete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Obsolete").finish_non_exhaustive()
    }
}

impl Drop for Sstable {
    fn drop(&mut self) {
        if let Some(o) = self.obsolete.get() {
            // Already listed as obsolete in the manifest: a file left behind by a failure here
            // is removed at the next open.
            let dir = crate::io::fs::parent_dir(&self.path);
            match o
                .fs
                .remove_file(&self.path)
                .and_then(|()| o.fs.sync_dir(&dir))
            {
                Ok(()) => (o.on_removed)(&self.path),
                Err(e) => tracing::warn!("removing {}: {e}", self.path.display()),
            }
            o.pending_bytes.fetch_sub(self.map.len(), Ordering::Relaxed);
        }
    }
}

impl Sstable {
    /// Opens (through `fs`) and checks an SSTable file whose rows are ordered by `partitioner`
    /// (a format 2 file that records another is refused).
    pub fn open(
        fs: &dyn FileSystem,
        path: &Path,
        generation: u64,
        partitioner: Partitioner,
    ) -> Result<Sstable> {
        let file = fs.open_read(path).map_err(|e| Error::io(path, e))?;
        Self::open_with(file, path, generation, partitioner, true)
    }

    /// Opens an SSTable by the partitioner its footer records, or `fallback` for a format 1
    /// file, which records none (for inspection tools, which say what they found, of a file
    /// that may be in no database).
    pub fn open_as_written(path: &Path, fallback: Partitioner) -> Result<Sstable> {
        let file = crate::io::RealFs
            .open_read(path)
            .map_err(|e| Error::io(path, e))?;
        Self::open_with(file, path, 0, fallback, false)
    }

    fn open_with(
        mut file: File,
        path: &Path,
        generation: u64,
        partitioner: Partitioner,
        strict: bool,
    ) -> Result<Sstable> {
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        // Say "not an SSTable" when that is what it is, before judging its size.
        let mut magic = [0u8; 8];
        if len >= 8
            && std::io::Read::read_exact(&mut file, &mut magic).is_ok()
            && &magic != HEADER_MAGIC
        {
            return Err(Error::corrupt(
                path,
                FormatError::new(
                    CorruptKind::BadMagic,
                    "not a supercolumn SSTable (bad magic)",
                ),
            ));
        }
        if len < HEADER_LEN + MIN_FOOTER_LEN {
            return Err(Error::corrupt(
                path,
                FormatError::new(
                    CorruptKind::Truncated,
                    format!("{len} bytes is too short for an SSTable"),
                ),
            ));
        }
        Self::from_bytes(
            Bytes::File { file, len },
            path,
            generation,
            partitioner,
            strict,
        )
    }

    /// Opens SSTable bytes held in memory; `path` only names them in errors.
    #[cfg(feature = "testing")]
    pub fn from_vec(bytes: Vec<u8>, path: &Path, partitioner: Partitioner) -> Result<Sstable> {
        Self::from_bytes(Bytes::Owned(bytes), path, 0, partitioner, true)
    }

    fn from_bytes(
        map: Bytes,
        path: &Path,
        generation: u64,
        partitioner: Partitioner,
        strict: bool,
    ) -> Result<Sstable> {
        let len = map.len();
        let corrupt = |e: FormatError| Error::corrupt(path, e);
        let read = |offset: u64, n: u64, what: &str| -> Result<Vec<u8>> {
            let n = usize::try_from(n)
                .map_err(|_| corrupt(FormatError::malformed(format!("{what} of {n} bytes"))))?;
            let mut buf = vec![0u8; n];
            match map.read_at(offset, &mut buf) {
                Some(Ok(())) => Ok(buf),
                Some(Err(e)) => Err(Error::io(path, e)),
                None => Err(corrupt(
                    FormatError::new(CorruptKind::Truncated, format!("{what} runs past the end"))
                        .at(Place::Offset(offset)),
                )),
            }
        };
        let head = read(0, HEADER_LEN.min(len), "header")?;
        let tail_at = len.saturating_sub(FOOTER_LEN);
        let tail = read(tail_at, len - tail_at, "footer")?;
        let footer = Footer::decode(&head, &tail, len).map_err(corrupt)?;
        let recorded = footer.partitioner.filter(|p| *p != partitioner);
        let partitioner = match recorded {
            Some(p) if !strict => p,
            _ => partitioner,
        };
        if let Some(p) = recorded.filter(|_| strict) {
            return Err(corrupt(FormatError::malformed(format!(
                "its rows are ordered by {}, this database's by {}",
                p.class_name(),
                partitioner.class_name()
            ))));
        }
        let index_at = Place::Offset(footer.index_offset);
        let index_framed = read(footer.index_offset, footer.index_len, "index block")?;
        let index_raw = frame::unframe(&index_framed)
            .map_err(|e| corrupt(e.context("index block").at(index_at)))?;
        let index = if footer.version == 1 {
            BlockIndex::decode_v1(&index_raw, HEADER_LEN, footer.index_offset)
        } else {
            BlockIndex::decode_v2(&index_raw, HEADER_LEN, footer.index_offset)
        }
        .map_err(|e| corrupt(e.context("index block")))?;
        let bloom_at = Place::Offset(footer.bloom_offset);
        let bloom_framed = read(footer.bloom_offset, footer.bloom_len, "bloom filter block")?;
        let bloom_raw = frame::unframe(&bloom_framed)
            .map_err(|e| corrupt(e.context("bloom filter block").at(bloom_at)))?;
        let filter = if footer.version == 1 {
            RowBloom::from_bytes(bloom_raw).map(RowFilter::V1)
        } else {
            BlockedBloom::decode(&bloom_raw).map(RowFilter::V2)
        }
        .map_err(|e| corrupt(e.context("bloom filter block").at(bloom_at)))?;
        if index.is_empty() {
            return Err(corrupt(FormatError::malformed(
                "an SSTable without data blocks",
            )));
        }
        Ok(Sstable {
            path: path.to_path_buf(),
            generation,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            map,
            index,
            filter,
            footer,
            partitioner,
            obsolete: OnceLock::new(),
        })
    }

    /// Marks the SSTable replaced (the manifest already lists it as obsolete): its file goes
    /// when the last reader drops it.
    pub fn mark_obsolete(&self, obsolete: Obsolete) {
        let pending = obsolete.pending_bytes.clone();
        if self.obsolete.set(obsolete).is_ok() {
            pending.fetch_add(self.map.len(), Ordering::Relaxed);
        }
    }

    /// The partitioner ordering the rows.
    pub fn partitioner(&self) -> Partitioner {
        self.partitioner
    }

    /// Whether the row key may be here (the bloom filter's answer; false means absent).
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.filter.may_contain(key)
    }

    /// The sort key of a row header item of this file.
    pub fn sort_key_of(&self, item: &ItemRef<'_>) -> Option<SortKey> {
        match *item {
            ItemRef::Row {
                stored_sort_key: Some(s),
                ..
            } => Some(SortKey::from_slice(s)),
            ItemRef::Row { key, .. } => Some(self.partitioner.sort_key(key)),
            ItemRef::Entry { .. } => None,
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The generation (from the file name).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The process-unique id used in cache keys.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Bytes of the file.
    pub fn bytes(&self) -> u64 {
        self.map.len()
    }

    /// The footer's summary.
    pub fn footer(&self) -> &Footer {
        &self.footer
    }

    /// Every item of every data block, in file order, reading each block directly (no cache):
    /// for dumping and verifying whole files.
    pub fn items(&self) -> impl Iterator<Item = Result<(usize, Item)>> + '_ {
        (0..self.block_count()).flat_map(move |i| match self.read_block(i) {
            Ok(b) => b
                .block
                .iter()
                .map(|it| {
                    let item = match it {
                        ItemRef::Row {
                            key,
                            deletion,
                            continued,
                            ..
                        } => Item::Row {
                            sort_key: self.sort_key_of(&it).unwrap_or_default().to_vec(),
                            key: key.to_vec(),
                            deletion,
                            continued,
                        },
                        ItemRef::Entry { key, value } => Item::Entry {
                            key: key.to_vec(),
                            entry: value
                                .decode()
                                .map_err(|e| self.fault(e.at(Place::Block(i as u64))))?,
                        },
                    };
                    Ok((i, item))
                })
                .collect::<Vec<_>>(),
            Err(e) => vec![Err(e)],
        })
    }

    /// The format version.
    pub fn version(&self) -> u32 {
        self.footer.version
    }

    /// Bytes of the data blocks as stored (compressed) and raw.
    pub fn data_sizes(&self) -> (u64, u64) {
        let mut stored = 0u64;
        let mut raw = 0u64;
        for e in (0..self.index.len()).filter_map(|i| self.index.get(i)) {
            stored += u64::from(e.len);
            let mut b = [0u8; 4];
            if let Some(Ok(())) = self.map.read_at(e.offset + 4, &mut b) {
                raw += u64::from(u32::from_be_bytes(b));
            }
        }
        (stored, raw)
    }

    /// Bits in the bloom filter and its number of hash functions.
    pub fn bloom_shape(&self) -> (u64, u32) {
        self.filter.shape()
    }

    /// Data blocks in the file.
    pub fn block_count(&self) -> usize {
        self.index.len()
    }

    /// A decoder's fault, in this file.
    pub(super) fn fault(&self, e: FormatError) -> Error {
        Error::corrupt(&self.path, e)
    }

    /// Data block `i`, from the block cache or read, checked and decoded.
    pub fn block(&self, i: usize, ctx: &ReadContext<'_>) -> Result<Arc<CachedBlock>> {
        let key = (self.id, i as u32);
        if let Some(b) = ctx.blocks.get(key) {
            bump(&ctx.counters.local().block_cache_hits);
            trace::event(|| {
                format!(
                    "Block {i} of sstable {} found in the block cache",
                    self.generation()
                )
            });
            return Ok(b);
        }
        bump(&ctx.counters.local().block_cache_misses);
        let b = Arc::new(self.read_block(i)?);
        trace::event(|| {
            format!(
                "Read block {i} of sstable {} from disk and checked it",
                self.generation()
            )
        });
        bump(&ctx.counters.local().blocks_read);
        let evicted = ctx.blocks.insert(key, b.clone());
        ctx.counters
            .local()
            .block_cache_evictions
            .fetch_add(evicted, Ordering::Relaxed);
        Ok(b)
    }

    /// Reads block `i` from the file, bypassing the cache.
    pub fn read_block(&self, i: usize) -> Result<CachedBlock> {
        let e = self
            .index
            .get(i)
            .ok_or_else(|| self.fault(FormatError::malformed(format!("no data block {i}"))))?;
        let at = |e: FormatError| self.fault(e.at(Place::Block(i as u64)));
        let raw = READ_BUF.with(|buf| {
            let mut framed = buf.borrow_mut();
            framed.clear();
            framed.resize(e.len as usize, 0);
            match self.map.read_at(e.offset, &mut framed) {
                Some(Ok(())) => {}
                Some(Err(err)) => return Err(Error::io(&self.path, err)),
                None => {
                    return Err(at(FormatError::new(
                        CorruptKind::Truncated,
                        "out of the file",
                    )))
                }
            }
            if frame::framed_len(&framed).map_err(at)? != framed.len() {
                return Err(at(FormatError::malformed("length differs from the index")));
            }
            frame::unframe(&framed).map_err(at)
        })?;
        let block = DataBlock::parse(raw, self.footer.version, self.partitioner).map_err(at)?;
        // The block must start where the index says.
        let starts_right = match (block.item(0), e.first_entry.is_empty()) {
            (
                ItemRef::Row {
                    key,
                    stored_sort_key,
                    continued,
                    ..
                },
                starts_row,
            ) => {
                let same_row = match stored_sort_key {
                    Some(s) => s == e.first_row,
                    None => key == self.partitioner.key_part(e.first_row),
                };
                same_row && continued != starts_row
            }
            _ => false,
        };
        let first_entry_right = e.first_entry.is_empty()
            || (block.len() > 1
                && matches!(block.item(1), ItemRef::Entry { key, .. } if key == e.first_entry));
        if !starts_right || !first_entry_right {
            return Err(at(FormatError::malformed(
                "does not start where the index says",
            )));
        }
        Ok(CachedBlock {
            charge: block.memory() + 64,
            block,
        })
    }

    /// Where row `sort_key` (client key `key`) lies, or `None` if it is not here. Consults the
    /// bloom filter, then the key cache, then the index, counting each.
    pub fn locate(&self, row: &RowKey<'_>, ctx: &ReadContext<'_>) -> Result<Option<RowPosition>> {
        let key = row.key();
        bump(&ctx.counters.local().bloom_checks);
        if !self.filter.may_contain(key) {
            bump(&ctx.counters.local().bloom_negatives);
            trace::event(|| format!("Bloom filter allows skipping sstable {}", self.generation()));
            return Ok(None);
        }
        if let Some(pos) = ctx.keys.get(self.id, key) {
            bump(&ctx.counters.local().key_cache_hits);
            trace::event(|| format!("Key cache hit for sstable {}", self.generation()));
            return Ok(Some(pos));
        }
        bump(&ctx.counters.local().key_cache_misses);
        let pos = self.search(row.sort_key(), ctx)?;
        match pos {
            Some(p) => {
                trace::event(|| {
                    format!(
                        "Partition index found the row in sstable {}",
                        self.generation()
                    )
                });
                if ctx.keys.insert(self.id, key, p) {
                    bump(&ctx.counters.local().key_cache_evictions);
                }
            }
            None => {
                bump(&ctx.counters.local().bloom_false_positives);
                trace::event(|| {
                    format!("Partition index: the row is not in sstable {} (a bloom filter false positive)", self.generation())
                });
            }
        }
        Ok(pos)
    }

    fn search(&self, sort_key: &[u8], ctx: &ReadContext<'_>) -> Result<Option<RowPosition>> {
        bump(&ctx.counters.local().index_searches);
        let Some(end) = self.index.seek(sort_key, RowPoint::End) else {
            return Ok(None);
        };
        let Some(e) = self.index.get(end) else {
            return Ok(None);
        };
        if e.first_row == sort_key {
            // The row runs into block `end`, so it is here, and the index has its deletion.
            let start = self.index.seek(sort_key, RowPoint::Start).unwrap_or(end);
            return Ok(Some(RowPosition {
                start_block: start as u32,
                end_block: end as u32,
                deletion: e.deletion,
                header: None,
            }));
        }
        // Otherwise the row, if here, lies wholly inside block `end`.
        let b = self.block(end, ctx)?;
        let key = self.partitioner.key_part(sort_key);
        Ok(b.block
            .row(sort_key, key)
            .and_then(|(header, _)| match b.block.item(header) {
                ItemRef::Row { deletion, .. } => Some(RowPosition {
                    start_block: end as u32,
                    end_block: end as u32,
                    deletion,
                    header: u32::try_from(header).ok(),
                }),
                ItemRef::Entry { .. } => None,
            }))
    }
}
