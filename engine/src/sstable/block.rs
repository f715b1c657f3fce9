//! A data block once checked and decoded, whatever format wrote it: its raw bytes, where each
//! item (row header or entry) lies in them, and the entry keys that prefix compression left
//! incomplete, rebuilt. The block cache holds these; reading one allocates nothing per item, and
//! an entry is decoded only when a query yields it.
//!
//! Parsing each format is [`super::block_v1`] and [`super::block_v2`]; the framing around the
//! raw bytes is [`super::frame`].

use crate::codec::Reader;
use crate::error::FormatError;
use crate::model::cell::{CellRef, CellValueRef, DeletionTime, Entry, EntryRef, Ttl};
use crate::model::entry_codec::decode_entry_ref;
use crate::model::partitioner::Partitioner;

/// Item kinds (format 2's numbering; format 1 items are mapped onto them).
pub(super) mod kind {
    pub const ROW: u8 = 0;
    pub const ROW_CONTINUES: u8 = 1;
    pub const LIVE: u8 = 2;
    pub const LIVE_TTL: u8 = 3;
    pub const TOMBSTONE: u8 = 4;
    pub const SUPER_DELETION: u8 = 5;
    /// A format 1 entry: its fields are the entry codec's, tag byte included.
    pub const V1_ENTRY: u8 = 6;
    /// Flag on a row item: it carries a deletion.
    pub const HAS_DELETION: u8 = 0x08;
    /// The kind bits of a flags byte.
    pub const MASK: u8 = 0x07;
}

/// Where one item lies: its kind, its key (in the raw bytes, or in the rebuilt keys), and its
/// fields after the key (`body..end` of the raw bytes).
#[derive(Clone, Copy, Debug)]
pub(super) struct ItemAt {
    pub flags: u8,
    pub key_rebuilt: bool,
    pub key_start: u32,
    pub key_len: u32,
    pub body: u32,
    pub end: u32,
}

impl ItemAt {
    fn is_row(&self) -> bool {
        self.flags & kind::MASK <= kind::ROW_CONTINUES
    }
}

/// How a block's items are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BlockFormat {
    /// Format 1: rows carry their sort key; the partitioner finds the client key in it.
    V1(Partitioner),
    /// Format 2: rows carry the client key; timestamps are deltas from `base`.
    V2 { base: i64 },
}

/// A checked data block.
#[derive(Debug)]
pub struct DataBlock {
    pub(super) raw: Vec<u8>,
    pub(super) keys: Vec<u8>,
    pub(super) items: Vec<ItemAt>,
    /// The numbers of the row-header items, ascending.
    pub(super) rows: Vec<u32>,
    pub(super) format: BlockFormat,
}

/// One item of a block, owned (for dumping and verifying files).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A row starts (or, with `continued`, goes on from an earlier block).
    Row {
        /// The row sort key.
        sort_key: Vec<u8>,
        /// The row key as the client gave it.
        key: Vec<u8>,
        /// The row's deletion.
        deletion: Option<DeletionTime>,
        /// Whether the row began in an earlier block.
        continued: bool,
    },
    /// An entry of the current row.
    Entry {
        /// The entry key.
        key: Vec<u8>,
        /// The entry.
        entry: Entry,
    },
}

/// One item of a [`DataBlock`], borrowed from it.
#[derive(Clone, Copy, Debug)]
pub enum ItemRef<'a> {
    /// A row starts (or, with `continued`, goes on from an earlier block).
    Row {
        /// The row key as the client gave it.
        key: &'a [u8],
        /// The row sort key, where the file stores it (format 1); format 2 files leave it to
        /// the partitioner.
        stored_sort_key: Option<&'a [u8]>,
        /// The row's deletion.
        deletion: Option<DeletionTime>,
        /// Whether the row began in an earlier block.
        continued: bool,
    },
    /// An entry of the current row, still encoded.
    Entry {
        /// The entry key.
        key: &'a [u8],
        /// The entry's fields ([`EntryBytes::decode_ref`] reads them).
        value: EntryBytes<'a>,
    },
}

/// An entry's fields as a block stores them.
#[derive(Clone, Copy, Debug)]
pub struct EntryBytes<'a> {
    kind: u8,
    base: i64,
    bytes: &'a [u8],
}

impl<'a> EntryBytes<'a> {
    /// The entry, borrowing its value from the block.
    #[inline]
    pub fn decode_ref(self) -> Result<EntryRef<'a>, FormatError> {
        let mut r = Reader::new(self.bytes);
        if self.kind == kind::V1_ENTRY {
            return decode_entry_ref(&mut r);
        }
        // Deltas wrap (FORMAT.md): extreme timestamps in one block still round-trip.
        let ts = self.base.wrapping_add(r.zigzag()?);
        Ok(match self.kind {
            kind::LIVE => EntryRef::Cell(CellRef {
                timestamp: ts,
                value: CellValueRef::Live {
                    value: r.vbytes()?,
                    ttl: None,
                },
            }),
            kind::LIVE_TTL => {
                let ttl = Ttl {
                    ttl: r.varint32()?,
                    local_expiration_time: r.zigzag()?,
                };
                EntryRef::Cell(CellRef {
                    timestamp: ts,
                    value: CellValueRef::Live {
                        value: r.vbytes()?,
                        ttl: Some(ttl),
                    },
                })
            }
            kind::TOMBSTONE => EntryRef::Cell(CellRef {
                timestamp: ts,
                value: CellValueRef::Tombstone {
                    local_deletion_time: r.zigzag()?,
                },
            }),
            kind::SUPER_DELETION => EntryRef::GroupDeletion(DeletionTime {
                marked_for_delete_at: ts,
                local_deletion_time: r.zigzag()?,
            }),
            k => return Err(r.error(format!("unknown item kind {k}"))),
        })
    }

    /// The entry, owned.
    pub fn decode(self) -> Result<Entry, FormatError> {
        self.decode_ref().map(EntryRef::to_entry)
    }
}

impl ItemRef<'_> {
    /// The entry of an `Entry` item, decoded (`None` for a row header).
    pub fn entry(self) -> Option<Result<Entry, FormatError>> {
        match self {
            ItemRef::Row { .. } => None,
            ItemRef::Entry { value, .. } => Some(value.decode()),
        }
    }
}

/// The first (up to) 8 bytes of `key` as a word, zero-padded.
fn first_word(key: &[u8]) -> u64 {
    match key.first_chunk::<8>() {
        Some(w) => u64::from_ne_bytes(*w),
        // Shorter keys byte by byte: a copy of a length not known here is a call.
        None => key
            .iter()
            .enumerate()
            .fold(0, |w, (i, &b)| w | u64::from(b) << (8 * i)),
    }
}

impl DataBlock {
    /// Checks and decodes a data block's raw bytes written in `format` (1 or 2).
    pub fn parse(
        raw: Vec<u8>,
        version: u32,
        partitioner: Partitioner,
    ) -> Result<DataBlock, FormatError> {
        match version {
            1 => super::block_v1::parse(raw, partitioner),
            _ => super::block_v2::parse(raw),
        }
    }

    fn key_of(&self, at: &ItemAt) -> &[u8] {
        let (s, n) = (at.key_start as usize, at.key_len as usize);
        if at.key_rebuilt {
            &self.keys[s..s + n]
        } else {
            &self.raw[s..s + n]
        }
    }

    /// The row with this key (and sort key): its header's item number, and the item numbers of
    /// its entries in this block (`first..end`).
    // `#[inline]` here and on `item` and `decode_ref`: a slice calls them per cell, and without
    // it LLVM inlines them across codegen units only by chance (CQL slices ran 5% slower when
    // unrelated code moved; `stress --workloads fillwide,slicehead`).
    #[inline]
    pub fn row(&self, sort_key: &[u8], key: &[u8]) -> Option<(usize, std::ops::Range<usize>)> {
        let r = match self.format {
            // Format 1 rows hold their sort keys: a binary search finds one.
            BlockFormat::V1(_) => self
                .rows
                .binary_search_by(|&h| self.key_of(&self.items[h as usize]).cmp(sort_key))
                .ok()?,
            // Format 2 rows hold client keys, ordered by a token they do not store: a block
            // holds a few dozen rows at most, and comparing keys for equality needs no token.
            // Their lengths and first words are compared inline first: a call to `memcmp` per
            // row was an eighth of a point read.
            BlockFormat::V2 { .. } => {
                let first = first_word(key);
                self.rows.iter().position(|&h| {
                    let at = &self.items[h as usize];
                    at.key_len as usize == key.len() && {
                        let k = self.key_of(at);
                        first_word(k) == first && k == key
                    }
                })?
            }
        };
        Some(self.span(r))
    }

    /// The item numbers of the block's row headers, ascending.
    pub fn row_headers(&self) -> &[u32] {
        &self.rows
    }

    /// The entries of the row whose header is item `header` (as a scan found it), or `None`
    /// if that item is no row header.
    pub fn row_at(&self, header: usize) -> Option<std::ops::Range<usize>> {
        let r = self.rows.binary_search(&u32::try_from(header).ok()?).ok()?;
        Some(self.span(r).1)
    }

    /// Row `r`'s header item and its entries.
    fn span(&self, r: usize) -> (usize, std::ops::Range<usize>) {
        let header = self.rows[r] as usize;
        let end = self
            .rows
            .get(r + 1)
            .map_or(self.items.len(), |&h| h as usize);
        (header, header + 1..end)
    }

    /// The key of entry item `i` (empty for a row header).
    pub fn entry_key(&self, i: usize) -> &[u8] {
        let at = &self.items[i];
        if at.is_row() {
            &[]
        } else {
            self.key_of(at)
        }
    }

    /// Items in the block.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Bytes the block holds in memory.
    pub fn memory(&self) -> usize {
        self.raw.capacity()
            + self.keys.capacity()
            + self.items.capacity() * std::mem::size_of::<ItemAt>()
            + self.rows.capacity() * std::mem::size_of::<u32>()
    }

    /// Item `i` (panics past [`DataBlock::len`], like indexing).
    #[inline]
    pub fn item(&self, i: usize) -> ItemRef<'_> {
        let at = self.items[i];
        let key = self.key_of(&at);
        let body = &self.raw[at.body as usize..at.end as usize];
        if at.is_row() {
            let continued = at.flags & kind::MASK == kind::ROW_CONTINUES;
            // Checked by `parse`; a failure here cannot happen, and reads as no deletion.
            let (key, stored_sort_key, deletion) = match self.format {
                BlockFormat::V1(p) => (
                    p.key_part(key),
                    Some(key),
                    super::block_v1::read_deletion(&mut Reader::new(body))
                        .ok()
                        .flatten(),
                ),
                BlockFormat::V2 { base } => (
                    key,
                    None,
                    if at.flags & kind::HAS_DELETION != 0 {
                        super::block_v2::read_deletion(&mut Reader::new(body), base).ok()
                    } else {
                        None
                    },
                ),
            };
            ItemRef::Row {
                key,
                stored_sort_key,
                deletion,
                continued,
            }
        } else {
            let base = match self.format {
                BlockFormat::V1(_) => 0,
                BlockFormat::V2 { base } => base,
            };
            ItemRef::Entry {
                key,
                value: EntryBytes {
                    kind: at.flags & kind::MASK,
                    base,
                    bytes: body,
                },
            }
        }
    }

    /// The items in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = ItemRef<'_>> + ExactSizeIterator + '_ {
        (0..self.items.len()).map(|i| self.item(i))
    }
}
