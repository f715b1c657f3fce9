//! A small, read-only inspection API for tools (`sstable-dump`): open one SSTable file without
//! taking the data directory's lock or changing anything, find its column family's definition
//! and partitioner in the directory's catalog, and read its rows with names decoded, a single
//! row through the bloom filter and index, a full verification, and summary statistics.
//!
//! This is the only door from outside the engine to its files; it exposes rows, not formats.
//!
//! Long because the dumped form of each kind of entry, and the decoding that makes it, are
//! kept beside the reads that find them: one door, read in one place.

use std::ops::Bound;
use std::path::{Path, PathBuf};

use crate::cache::KeyCache;
use crate::comparator::ComparatorRegistry;
use crate::error::{Error, FormatError, Result};
use crate::merge::RowSource;
use crate::model::cell::{CellValue, DeletionTime, Entry};
use crate::model::cell_key;
use crate::model::partitioner::{Partitioner, RowKey};
use crate::schema::catalog::Catalog;
use crate::schema::{ColumnFamilyDef, ColumnType, KeyspaceDef};
use crate::sstable::block::Item;
use crate::sstable::{BlockCache, ReadContext, Sstable};
use crate::stats::Counters;

/// One entry of a dumped row, names decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DumpEntry {
    /// A live column (or sub-column, with its super column's name).
    Column {
        /// The super column, in a Super CF.
        super_column: Option<Vec<u8>>,
        /// The column's name.
        name: Vec<u8>,
        /// Its value.
        value: Vec<u8>,
        /// Its timestamp.
        timestamp: i64,
        /// (TTL seconds, local expiration time) if it expires.
        ttl: Option<(u32, i64)>,
    },
    /// A column tombstone.
    Tombstone {
        /// The super column, in a Super CF.
        super_column: Option<Vec<u8>>,
        /// The column's name.
        name: Vec<u8>,
        /// The deletion's timestamp.
        timestamp: i64,
        /// Local deletion time, seconds.
        local_deletion_time: i64,
    },
    /// Every column under a composite prefix deleted (a CQL row or collection).
    PrefixDeletion {
        /// The prefix, a composite name of fewer components than the comparator's.
        prefix: Vec<u8>,
        /// The deletion's timestamp.
        marked_for_delete_at: i64,
        /// Local deletion time, seconds.
        local_deletion_time: i64,
    },
    /// Every non-static column between two composite bounds deleted (a CQL range deletion).
    RangeDeletion {
        /// The first name deleted, a composite name or bound (empty: from the first).
        start: Vec<u8>,
        /// The last name deleted (empty: to the last).
        finish: Vec<u8>,
        /// The deletion's timestamp.
        marked_for_delete_at: i64,
        /// Local deletion time, seconds.
        local_deletion_time: i64,
    },
    /// A whole super column deleted.
    SuperColumnDeletion {
        /// The super column's name.
        name: Vec<u8>,
        /// The deletion's timestamp.
        marked_for_delete_at: i64,
        /// Local deletion time, seconds.
        local_deletion_time: i64,
    },
}

/// One dumped row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpRow {
    /// The row key as the client gave it.
    pub key: Vec<u8>,
    /// The row deletion: (timestamp, local deletion time).
    pub deletion: Option<(i64, i64)>,
    /// Its entries in order.
    pub entries: Vec<DumpEntry>,
}

/// Summary statistics of one SSTable.
#[derive(Clone, Debug, PartialEq)]
pub struct FileStats {
    /// The format version.
    pub version: u32,
    /// Rows.
    pub rows: u64,
    /// Entries (columns, tombstones, super column deletions).
    pub entries: u64,
    /// Smallest and largest timestamp.
    pub timestamps: (i64, i64),
    /// Data blocks.
    pub blocks: usize,
    /// Bloom filter bits and hash functions.
    pub bloom_bits: u64,
    /// Bloom filter hash functions.
    pub bloom_hashes: u32,
    /// The filter's expected false-positive rate for its rows.
    pub bloom_expected_fp: f64,
    /// Raw ÷ stored bytes of the data blocks.
    pub compression_ratio: f64,
    /// Bytes of the file.
    pub bytes: u64,
}

/// Where an SSTable file belongs: its keyspace and column family, from its path.
pub fn locate_file(path: &Path) -> Option<(PathBuf, String, String)> {
    let name = path.file_name()?.to_str()?;
    let cf = crate::file_names::parse_sstable(name)?.cf.to_string();
    let ks_dir = path.parent()?;
    let keyspace = ks_dir.file_name()?.to_str()?.to_string();
    let root = ks_dir.parent()?.to_path_buf();
    Some((root, keyspace, cf))
}

/// The column family definition and partitioner recorded for a file's directory, if the data
/// directory has a catalog that names it.
pub fn column_family_of(
    path: &Path,
    registry: &ComparatorRegistry,
) -> Result<Option<(ColumnFamilyDef, Partitioner)>> {
    let Some((_, _, cf)) = locate_file(path) else {
        return Ok(None);
    };
    Ok(keyspace_of(path, registry)?
        .and_then(|(k, partitioner)| k.column_family(&cf).cloned().map(|d| (d, partitioner))))
}

/// The definition of the keyspace an SSTable at `path` belongs to (as
/// [`column_family_of`] finds it), for what a keyspace holds besides its column families
/// (its CQL types).
pub fn keyspace_of(
    path: &Path,
    registry: &ComparatorRegistry,
) -> Result<Option<(KeyspaceDef, Partitioner)>> {
    let Some((root, keyspace, _)) = locate_file(path) else {
        return Ok(None);
    };
    let cat_path = root.join(crate::schema::catalog::FILE_NAME);
    let Some(bytes) = crate::io::atomic_file::read_if_exists(&cat_path)? else {
        return Ok(None);
    };
    let cat = Catalog::decode(&bytes, &cat_path, registry)?;
    Ok(cat
        .keyspaces
        .into_iter()
        .find(|k| k.name == keyspace)
        .map(|k| (k, cat.partitioner)))
}

/// An SSTable opened for inspection.
pub struct SstableFile {
    table: Sstable,
    def: ColumnFamilyDef,
    partitioner: Partitioner,
}

impl SstableFile {
    /// Opens `path`, reading names and values by `def` and row keys by `partitioner`. Checks
    /// the header, footer, index and bloom filter; data blocks are checked as they are read.
    pub fn open(
        path: &Path,
        def: ColumnFamilyDef,
        partitioner: Partitioner,
    ) -> Result<SstableFile> {
        Ok(SstableFile {
            table: Sstable::open_as_written(path, partitioner)?,
            def,
            partitioner,
        })
    }

    fn corrupt(&self, reason: String) -> Error {
        Error::corrupt(self.table.path(), FormatError::malformed(reason))
    }

    /// Checks that the file's rows are ordered by this partitioner (its first row's sort key is
    /// what the partitioner makes of its key): reading a file by the wrong one finds nothing.
    pub fn check_partitioner(&self) -> Result<()> {
        if self.table.footer().partitioner.is_some() {
            let written = self.table.partitioner();
            if written == self.partitioner {
                return Ok(());
            }
            return Err(self.wrong_partitioner(Some(written)));
        }
        let first = self.table.items().find_map(|i| match i {
            Ok((_, Item::Row { sort_key, .. })) => Some(Ok(sort_key)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        });
        let Some(sort_key) = first.transpose()? else {
            return Ok(());
        };
        // A hashing partitioner's sort keys carry the key's token, which is recognisable; the
        // order-preserving one's are the keys themselves, so any key fits it.
        let fits = |p: Partitioner| p.row_sort_key(p.key_part(&sort_key)) == sort_key;
        let hashed = [Partitioner::Random, Partitioner::Murmur3]
            .into_iter()
            .find(|p| fits(*p));
        let wrong = match hashed {
            Some(p) => p != self.partitioner,
            None => !fits(self.partitioner),
        };
        if wrong {
            return Err(self.wrong_partitioner(hashed));
        }
        Ok(())
    }

    fn wrong_partitioner(&self, written: Option<Partitioner>) -> Error {
        Error::invalid(format!(
            "{}: its rows are not ordered by {}{}; give the partitioner the data was written \
             with (--partitioner)",
            self.table.path().display(),
            self.partitioner.class_name(),
            written.map_or(String::new(), |p| format!(" but by {}", p.class_name()))
        ))
    }

    /// The error of a stored name that does not decode under the column family's comparators.
    fn undecodable(&self, e: crate::comparator::MarshalError) -> Error {
        let names = match self.def.column_type {
            ColumnType::Standard => self.def.comparator.name(),
            ColumnType::Super => format!(
                "{} / {}",
                self.def.comparator.name(),
                self.def.subcomparator().name()
            ),
        };
        Error::invalid(format!(
            "{}: a stored name does not decode as {names} ({e}): the file was written with \
             another comparator (give the right --comparator), or is damaged",
            self.table.path().display()
        ))
    }

    /// A Standard column family's group deletion: of a range, or of a prefix.
    fn decode_deletion(&self, key: &[u8], d: &DeletionTime) -> Result<DumpEntry> {
        let decode = |sort_key: &[u8]| -> Result<Vec<u8>> {
            let mut name = Vec::new();
            if !sort_key.is_empty() {
                self.def
                    .comparator
                    .decode_sort_key(sort_key, &mut name)
                    .map_err(|e| self.undecodable(e))?;
            }
            Ok(name)
        };
        let (marked_for_delete_at, local_deletion_time) =
            (d.marked_for_delete_at, d.local_deletion_time);
        if let Some((start, finish)) = cell_key::range_of_deletion(key) {
            return Ok(DumpEntry::RangeDeletion {
                start: decode(&start)?,
                finish: decode(&finish)?,
                marked_for_delete_at,
                local_deletion_time,
            });
        }
        let p = cell_key::prefix_of_deletion(key)
            .ok_or_else(|| self.corrupt("malformed prefix deletion key".into()))?;
        Ok(DumpEntry::PrefixDeletion {
            prefix: decode(p)?,
            marked_for_delete_at,
            local_deletion_time,
        })
    }

    fn decode_entry(&self, key: &[u8], entry: &Entry) -> Result<DumpEntry> {
        let bad = |e| self.undecodable(e);
        if let (ColumnType::Standard, Entry::GroupDeletion(d)) = (self.def.column_type, entry) {
            return self.decode_deletion(key, d);
        }
        let (sc, name_key) = match self.def.column_type {
            ColumnType::Standard => (None, key),
            ColumnType::Super => {
                let plen = cell_key::group_prefix_len(key)
                    .ok_or_else(|| self.corrupt("malformed super column key".into()))?;
                let sk = cell_key::super_column_sort_key(&key[..plen])
                    .ok_or_else(|| self.corrupt("malformed super column key".into()))?;
                let mut sc = Vec::new();
                self.def
                    .comparator
                    .decode_sort_key(&sk, &mut sc)
                    .map_err(bad)?;
                (Some(sc), &key[plen..])
            }
        };
        let names = match self.def.column_type {
            ColumnType::Standard => self.def.comparator.clone(),
            ColumnType::Super => self.def.subcomparator(),
        };
        let mut name = Vec::new();
        if let Entry::Cell(_) = entry {
            names.decode_sort_key(name_key, &mut name).map_err(bad)?;
        }
        Ok(match entry {
            Entry::Cell(c) => match &c.value {
                CellValue::Live { value, ttl } => DumpEntry::Column {
                    super_column: sc,
                    name,
                    value: value.clone(),
                    timestamp: c.timestamp,
                    ttl: ttl.map(|t| (t.ttl, t.local_expiration_time)),
                },
                CellValue::Tombstone {
                    local_deletion_time,
                } => DumpEntry::Tombstone {
                    super_column: sc,
                    name,
                    timestamp: c.timestamp,
                    local_deletion_time: *local_deletion_time,
                },
            },
            Entry::GroupDeletion(d) => DumpEntry::SuperColumnDeletion {
                name: sc.unwrap_or_default(),
                marked_for_delete_at: d.marked_for_delete_at,
                local_deletion_time: d.local_deletion_time,
            },
        })
    }

    /// Every row of the file, in order.
    pub fn rows(&self) -> impl Iterator<Item = Result<DumpRow>> + '_ {
        let mut items = self.table.items().peekable();
        std::iter::from_fn(move || {
            let mut row: Option<DumpRow> = None;
            loop {
                match items.peek() {
                    None => return row.map(Ok),
                    Some(Err(_)) => {
                        return match items.next() {
                            Some(Err(e)) => Some(Err(e)),
                            _ => None,
                        }
                    }
                    Some(Ok((
                        _,
                        Item::Row {
                            continued: false, ..
                        },
                    ))) if row.is_some() => {
                        return row.map(Ok);
                    }
                    _ => {}
                }
                let Some(Ok((_, item))) = items.next() else {
                    return row.map(Ok);
                };
                match item {
                    Item::Row {
                        sort_key, deletion, ..
                    } => {
                        if row.is_none() {
                            row = Some(DumpRow {
                                key: self.partitioner.key_part(&sort_key).to_vec(),
                                deletion: deletion.map(|d: DeletionTime| {
                                    (d.marked_for_delete_at, d.local_deletion_time)
                                }),
                                entries: Vec::new(),
                            });
                        }
                    }
                    Item::Entry { key, entry } => {
                        let e = match self.decode_entry(&key, &entry) {
                            Ok(e) => e,
                            Err(err) => return Some(Err(err)),
                        };
                        if let Some(r) = row.as_mut() {
                            r.entries.push(e);
                        }
                    }
                }
            }
        })
    }

    /// The row with this key, found through the bloom filter and the index.
    pub fn row(&self, key: &[u8]) -> Result<Option<DumpRow>> {
        let (blocks, keys, counters) =
            (BlockCache::new(0), KeyCache::default(), Counters::default());
        let ctx = ReadContext {
            blocks: &blocks,
            keys: &keys,
            counters: &counters,
        };
        let row = RowKey::new(self.partitioner, key);
        let Some(pos) = self.table.locate(&row, &ctx)? else {
            return Ok(None);
        };
        let src = self.table.row(row.sort_key(), pos, ctx);
        let mut entries = Vec::new();
        for item in src.scan(Bound::Unbounded, Bound::Unbounded, false) {
            let (k, e) = item?;
            entries.push(self.decode_entry(&k, &e)?);
        }
        Ok(Some(DumpRow {
            key: key.to_vec(),
            deletion: pos
                .deletion
                .map(|d| (d.marked_for_delete_at, d.local_deletion_time)),
            entries,
        }))
    }

    /// Reads every block, checking every checksum and the sort order of rows and entries
    /// within and across blocks; the first fault names the file and the block.
    pub fn verify(&self) -> Result<u64> {
        let mut last: Option<(Vec<u8>, Vec<u8>)> = None;
        let mut row: Vec<u8> = Vec::new();
        let mut n = 0u64;
        for item in self.table.items() {
            let (block, item) = item?;
            let at = match &item {
                Item::Row {
                    sort_key,
                    continued,
                    ..
                } => {
                    if *continued && *sort_key != row {
                        return Err(self.corrupt(format!(
                            "data block {block}: continues a row that was not open"
                        )));
                    }
                    self.verify_row_key(block, sort_key)?;
                    row = sort_key.clone();
                    (sort_key.clone(), Vec::new())
                }
                Item::Entry { key, .. } => (row.clone(), key.clone()),
            };
            // A "row continues" header repeats a row already open: the order check compares the
            // next entry with the previous block's last one, so the header leaves `last` alone.
            if matches!(
                &item,
                Item::Row {
                    continued: true,
                    ..
                }
            ) {
                continue;
            }
            if let Some(prev) = &last {
                if *prev >= at {
                    return Err(self.corrupt(format!("data block {block}: items out of order")));
                }
            }
            if let Item::Entry { key, entry } = &item {
                self.decode_entry(key, entry)
                    .map_err(|e| self.corrupt(format!("data block {block}: {e}")))?;
                n += 1;
            }
            last = Some(at);
        }
        if n != self.table.footer().entries {
            return Err(self.corrupt(format!(
                "the footer counts {} entries, the blocks hold {n}",
                self.table.footer().entries
            )));
        }
        Ok(n)
    }

    /// What reads rely on of a row's sort key: it holds a valid row key, its token is that
    /// key's under the partitioner, and the bloom filter admits the key.
    fn verify_row_key(&self, block: usize, sort_key: &[u8]) -> Result<()> {
        let key = self.partitioner.key_part(sort_key);
        let at = |m: String| self.corrupt(format!("data block {block}: {m}"));
        crate::mutation::validate_key(key).map_err(|e| at(format!("a row's key: {e}")))?;
        if self.partitioner.row_sort_key(key) != sort_key {
            return Err(at(format!(
                "row {} is not where {} puts it (its token does not match its key)",
                crate::comparator::builtin::to_hex(key),
                self.partitioner.class_name()
            )));
        }
        if !self.table.may_contain(key) {
            return Err(at(format!(
                "row {} is missing from the bloom filter, so reads cannot find it",
                crate::comparator::builtin::to_hex(key)
            )));
        }
        Ok(())
    }

    /// Summary statistics.
    pub fn stats(&self) -> FileStats {
        let f = self.table.footer();
        let (bits, hashes) = self.table.bloom_shape();
        let (stored, raw) = self.table.data_sizes();
        let k = f64::from(hashes);
        let per_key = bits as f64 / (f.rows.max(1) as f64);
        FileStats {
            version: self.table.version(),
            rows: f.rows,
            entries: f.entries,
            timestamps: (f.min_timestamp, f.max_timestamp),
            blocks: self.table.block_count(),
            bloom_bits: bits,
            bloom_hashes: hashes,
            bloom_expected_fp: (1.0 - (-k / per_key).exp()).powf(k),
            compression_ratio: if stored == 0 {
                1.0
            } else {
                raw as f64 / stored as f64
            },
            bytes: self.table.bytes(),
        }
    }
}
