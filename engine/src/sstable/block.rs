//! SSTable blocks: the framing every block shares (lengths, compression, checksum) and the items
//! a data block holds (row headers and entries).
//!
//! Layout in `engine/FORMAT.md`. Reading checks the checksum and bounds every length (against
//! the file, and the raw length against what the stored bytes can decompress to) before
//! allocating.

use crate::codec::be32;
use crate::codec::{Reader, Writer};
use crate::error::{CorruptKind, FormatError};
use crate::model::cell::{DeletionTime, Entry};
use crate::model::entry_codec::{decode_entry, encode_entry, skip_entry};

/// Bytes of a block's framing before its stored bytes.
pub const FRAME_LEN: usize = 4 + 4 + 1 + 4;
/// LZ4 expands its input at most 255-fold: a raw length beyond that is impossible, so it can be
/// refused before allocating, whatever size values the writer was given.
const LZ4_MAX_RATIO: usize = 255;

const NONE: u8 = 0;
const LZ4: u8 = 1;

/// Frames `raw` as a block, compressed with LZ4 when that saves space.
pub fn frame(raw: &[u8], out: &mut Vec<u8>) {
    let compressed = lz4_flex::block::compress(raw);
    let (kind, stored): (u8, &[u8]) = if compressed.len() < raw.len() {
        (LZ4, &compressed)
    } else {
        (NONE, raw)
    };
    out.extend_from_slice(&(stored.len() as u32).to_be_bytes());
    out.extend_from_slice(&(raw.len() as u32).to_be_bytes());
    out.push(kind);
    let mut h = crc32fast::Hasher::new();
    h.update(&[kind]);
    h.update(stored);
    out.extend_from_slice(&h.finalize().to_be_bytes());
    out.extend_from_slice(stored);
}

/// The framed length of the block at the start of `bytes`.
pub fn framed_len(bytes: &[u8]) -> Result<usize, FormatError> {
    let truncated = || {
        FormatError::new(
            CorruptKind::Truncated,
            "block runs past the end of the file",
        )
    };
    if bytes.len() < FRAME_LEN {
        return Err(truncated());
    }
    let stored = be32(&bytes[0..4]) as usize;
    let total = FRAME_LEN.checked_add(stored).ok_or_else(truncated)?;
    if total > bytes.len() {
        return Err(truncated());
    }
    Ok(total)
}

/// Checks and decompresses the block at the start of `bytes`; returns its raw bytes.
pub fn unframe(bytes: &[u8]) -> Result<Vec<u8>, FormatError> {
    let total = framed_len(bytes)?;
    let raw_len = be32(&bytes[4..8]) as usize;
    let kind = bytes[8];
    let crc = be32(&bytes[9..13]);
    let stored = &bytes[FRAME_LEN..total];
    let mut h = crc32fast::Hasher::new();
    h.update(&[kind]);
    h.update(stored);
    if h.finalize() != crc {
        return Err(FormatError::new(
            CorruptKind::Checksum,
            "block checksum mismatch",
        ));
    }
    if raw_len
        > stored
            .len()
            .saturating_mul(LZ4_MAX_RATIO)
            .saturating_add(16)
    {
        return Err(FormatError::malformed(format!(
            "raw length {raw_len} from {} stored bytes",
            stored.len()
        )));
    }
    match kind {
        NONE if stored.len() == raw_len => Ok(stored.to_vec()),
        NONE => Err(FormatError::malformed("uncompressed lengths differ")),
        LZ4 => {
            let raw = lz4_flex::block::decompress(stored, raw_len)
                .map_err(|e| FormatError::malformed(format!("lz4: {e}")))?;
            if raw.len() != raw_len {
                return Err(FormatError::malformed("decompressed length differs"));
            }
            Ok(raw)
        }
        k => Err(FormatError::malformed(format!("compression {k}"))),
    }
}

/// One item of a data block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A row starts (or, with `continued`, goes on from an earlier block).
    Row {
        /// The row sort key.
        sort_key: Vec<u8>,
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

const ROW: u8 = 1;
const ROW_CONTINUES: u8 = 2;
const ENTRY: u8 = 3;

fn write_deletion(w: &mut Writer, d: Option<DeletionTime>) {
    w.opt(d, |w, d| {
        w.u64(d.marked_for_delete_at as u64);
        w.u64(d.local_deletion_time as u64);
    });
}

/// Reads an optional deletion written by the block or index encoders.
pub fn read_deletion(r: &mut Reader<'_>) -> Result<Option<DeletionTime>, FormatError> {
    r.opt(|r| {
        Ok(DeletionTime {
            marked_for_delete_at: r.u64()? as i64,
            local_deletion_time: r.u64()? as i64,
        })
    })
}

/// Appends a row header.
pub fn write_row(w: &mut Writer, sort_key: &[u8], deletion: Option<DeletionTime>, continued: bool) {
    w.u8(if continued { ROW_CONTINUES } else { ROW });
    w.bytes(sort_key);
    write_deletion(w, deletion);
}

/// Appends an entry.
pub fn write_entry(w: &mut Writer, key: &[u8], entry: &Entry) {
    w.u8(ENTRY);
    w.bytes(key);
    encode_entry(entry, w);
}

/// Appends an entry already encoded by the entry codec.
pub fn write_entry_encoded(w: &mut Writer, key: &[u8], encoded: &[u8]) {
    w.u8(ENTRY);
    w.bytes(key);
    w.buf.extend_from_slice(encoded);
}

/// Appends an optional deletion (for the index).
pub fn write_opt_deletion(w: &mut Writer, d: Option<DeletionTime>) {
    write_deletion(w, d);
}

/// Where one item lies in a block's raw bytes: its tag, its key (`key_start..key_end`), and
/// the rest of it (`key_end..end`: a row's deletion, or an entry's fields).
#[derive(Clone, Copy, Debug)]
struct ItemAt {
    tag: u8,
    key_start: u32,
    key_end: u32,
    end: u32,
}

/// One item of a [`DataBlock`], borrowed from it.
#[derive(Clone, Copy, Debug)]
pub enum ItemRef<'a> {
    /// A row starts (or, with `continued`, goes on from an earlier block).
    Row {
        /// The row sort key.
        sort_key: &'a [u8],
        /// The row's deletion.
        deletion: Option<DeletionTime>,
        /// Whether the row began in an earlier block.
        continued: bool,
    },
    /// An entry of the current row, still encoded.
    Entry {
        /// The entry key.
        key: &'a [u8],
        /// The encoded entry ([`ItemRef::entry`] decodes it).
        encoded: &'a [u8],
    },
}

impl ItemRef<'_> {
    /// The entry of an `Entry` item, decoded (`None` for a row header).
    pub fn entry(self) -> Option<Result<Entry, FormatError>> {
        match self {
            ItemRef::Row { .. } => None,
            ItemRef::Entry { encoded, .. } => Some(decode_entry(&mut Reader::new(encoded))),
        }
    }

    /// The item, owned.
    pub fn to_item(self) -> Result<Item, FormatError> {
        Ok(match self {
            ItemRef::Row {
                sort_key,
                deletion,
                continued,
            } => Item::Row {
                sort_key: sort_key.to_vec(),
                deletion,
                continued,
            },
            ItemRef::Entry { key, encoded } => Item::Entry {
                key: key.to_vec(),
                entry: decode_entry(&mut Reader::new(encoded))?,
            },
        })
    }
}

/// A checked data block: its raw bytes and where each item lies in them. Reading it allocates
/// nothing per item; an entry is decoded only when a query yields it.
#[derive(Debug)]
pub struct DataBlock {
    raw: Vec<u8>,
    items: Vec<ItemAt>,
    /// The numbers of the row-header items, ascending (so by sort key too).
    rows: Vec<u32>,
}

impl DataBlock {
    /// Checks a data block's raw bytes: the first item must be a row header, entries must
    /// ascend within a row, rows must ascend, and every item must decode.
    pub fn parse(raw: Vec<u8>) -> Result<DataBlock, FormatError> {
        let mut items: Vec<ItemAt> = Vec::new();
        let mut rows: Vec<u32> = Vec::new();
        {
            let mut r = Reader::new(&raw);
            let mut last_row: Option<&[u8]> = None;
            let mut last_entry: Option<&[u8]> = None;
            while r.remaining() > 0 {
                let tag = r.u8()?;
                let key_start = r.position() + 4;
                let key_end;
                match tag {
                    ROW | ROW_CONTINUES => {
                        let sort_key = r.bytes()?;
                        key_end = r.position();
                        read_deletion(&mut r)?;
                        if last_row.is_some_and(|p| p >= sort_key) {
                            return Err(r.error("rows out of order"));
                        }
                        if tag == ROW_CONTINUES && !items.is_empty() {
                            return Err(r.error("a continued row in the middle of a block"));
                        }
                        last_row = Some(sort_key);
                        last_entry = None;
                        rows.push(items.len() as u32);
                    }
                    ENTRY => {
                        if last_row.is_none() {
                            return Err(r.error("an entry before any row header"));
                        }
                        let key = r.bytes()?;
                        key_end = r.position();
                        if key.is_empty() || last_entry.is_some_and(|p| p >= key) {
                            return Err(r.error("entries out of order"));
                        }
                        skip_entry(&mut r)?;
                        last_entry = Some(key);
                    }
                    t => return Err(r.error(format!("unknown item tag {t}"))),
                }
                items.push(ItemAt {
                    tag,
                    key_start: key_start as u32,
                    key_end: key_end as u32,
                    end: r.position() as u32,
                });
            }
            if items.is_empty() {
                return Err(r.error("an empty data block"));
            }
        }
        Ok(DataBlock { raw, items, rows })
    }

    fn key_of(&self, i: usize) -> &[u8] {
        let at = self.items[i];
        &self.raw[at.key_start as usize..at.key_end as usize]
    }

    /// The row with this sort key: its header's item number, and the item numbers of its
    /// entries in this block (`first..end`).
    pub fn row(&self, sort_key: &[u8]) -> Option<(usize, std::ops::Range<usize>)> {
        let r = self
            .rows
            .binary_search_by(|&h| self.key_of(h as usize).cmp(sort_key))
            .ok()?;
        let header = self.rows[r] as usize;
        let end = self
            .rows
            .get(r + 1)
            .map_or(self.items.len(), |&h| h as usize);
        Some((header, header + 1..end))
    }

    /// The key of entry item `i` (empty for a row header).
    pub fn entry_key(&self, i: usize) -> &[u8] {
        match self.items[i].tag {
            ENTRY => self.key_of(i),
            _ => &[],
        }
    }

    /// Items in the block.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Bytes the block holds in memory.
    pub fn memory(&self) -> usize {
        self.raw.len()
            + self.items.len() * std::mem::size_of::<ItemAt>()
            + self.rows.len() * std::mem::size_of::<u32>()
    }

    /// Item `i` (panics past [`DataBlock::len`], like indexing).
    pub fn item(&self, i: usize) -> ItemRef<'_> {
        let at = self.items[i];
        let key = &self.raw[at.key_start as usize..at.key_end as usize];
        let rest = &self.raw[at.key_end as usize..at.end as usize];
        match at.tag {
            ENTRY => ItemRef::Entry { key, encoded: rest },
            tag => ItemRef::Row {
                sort_key: key,
                // Checked by `parse`; a failure here cannot happen, and reads as no deletion.
                deletion: read_deletion(&mut Reader::new(rest)).ok().flatten(),
                continued: tag == ROW_CONTINUES,
            },
        }
    }

    /// The items in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = ItemRef<'_>> + ExactSizeIterator + '_ {
        (0..self.items.len()).map(|i| self.item(i))
    }
}

/// Decodes a data block's raw bytes into owned items.
#[cfg(test)]
pub fn decode_items(raw: &[u8]) -> Result<Vec<Item>, FormatError> {
    let block = DataBlock::parse(raw.to_vec())?;
    block.iter().map(|i| i.to_item()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cell::Cell;

    #[test]
    fn frames_roundtrip_and_every_flipped_byte_is_caught() {
        let raw: Vec<u8> = b"abcabcabcabcabcabcabcabcabcabcabcabc".to_vec();
        let mut f = Vec::new();
        frame(&raw, &mut f);
        assert!(
            f.len() < raw.len() + FRAME_LEN,
            "compressible data is compressed"
        );
        assert_eq!(unframe(&f).unwrap(), raw);
        for i in 0..f.len() {
            let mut d = f.clone();
            d[i] ^= 0x10;
            assert!(unframe(&d).is_err(), "byte {i}");
        }
        for n in 0..f.len() {
            assert!(unframe(&f[..n]).is_err());
        }
    }

    #[test]
    fn items_roundtrip_and_order_is_checked() {
        let mut w = Writer::default();
        write_row(&mut w, b"r1", None, true);
        write_entry(
            &mut w,
            b"a",
            &Entry::Cell(Cell::live(1, b"v".to_vec(), None)),
        );
        write_entry(&mut w, b"b", &Entry::Cell(Cell::tombstone(2, 3)));
        let d = DeletionTime {
            marked_for_delete_at: 5,
            local_deletion_time: 6,
        };
        write_row(&mut w, b"r2", Some(d), false);
        let items = decode_items(&w.buf).unwrap();
        assert_eq!(items.len(), 4);
        assert!(matches!(&items[3], Item::Row { deletion: Some(x), .. } if *x == d));

        let mut bad = Writer::default();
        write_row(&mut bad, b"r1", None, false);
        write_entry(&mut bad, b"b", &Entry::Cell(Cell::tombstone(2, 3)));
        write_entry(&mut bad, b"a", &Entry::Cell(Cell::tombstone(2, 3)));
        assert!(decode_items(&bad.buf).is_err());
    }

    #[test]
    fn a_block_finds_its_rows_and_decodes_entries_on_demand() {
        let mut w = Writer::default();
        write_row(&mut w, b"a", None, false);
        write_entry(
            &mut w,
            b"1",
            &Entry::Cell(Cell::live(1, b"x".to_vec(), None)),
        );
        write_entry(
            &mut w,
            b"2",
            &Entry::Cell(Cell::live(2, b"y".to_vec(), None)),
        );
        let d = DeletionTime {
            marked_for_delete_at: 7,
            local_deletion_time: 8,
        };
        write_row(&mut w, b"b", Some(d), false);
        write_row(&mut w, b"c", None, false);
        write_entry(&mut w, b"9", &Entry::Cell(Cell::tombstone(3, 4)));
        let block = DataBlock::parse(w.buf).unwrap();
        assert_eq!(block.len(), 6);
        assert_eq!(block.row(b"a"), Some((0, 1..3)));
        assert_eq!(block.row(b"b"), Some((3, 4..4)));
        assert_eq!(block.row(b"c"), Some((4, 5..6)));
        assert_eq!(block.row(b"bb"), None);
        assert!(matches!(block.item(3), ItemRef::Row { deletion: Some(x), .. } if x == d));
        assert_eq!(block.entry_key(2), b"2");
        assert_eq!(block.entry_key(3), b"");
        let e = block.item(2).entry().unwrap().unwrap();
        assert_eq!(e, Entry::Cell(Cell::live(2, b"y".to_vec(), None)));
        assert!(block.item(0).entry().is_none());
        assert!(
            DataBlock::parse(Vec::new()).is_err(),
            "an empty block is refused"
        );
    }
}
