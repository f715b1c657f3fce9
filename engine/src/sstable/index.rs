//! The block index of an SSTable: for each data block, the (row, entry) it starts at, the
//! deletion of that row, and where the block lies. Searches find the block holding a point of
//! a row without reading any data block.

use std::cmp::Ordering;

use super::block::{read_deletion, write_opt_deletion};
use crate::codec::{Reader, Writer};
use crate::error::FormatError;
use crate::model::cell::DeletionTime;
use crate::model::key_head::key_head;

/// One data block's index entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    /// Sort key of the block's first row.
    pub first_row: Vec<u8>,
    /// Key of the block's first entry; empty if the block starts with the row's header.
    pub first_entry: Vec<u8>,
    /// The deletion of the first row.
    pub deletion: Option<DeletionTime>,
    /// Offset of the block's framing in the file.
    pub offset: u64,
    /// Length of the framing and stored bytes.
    pub len: u32,
}

/// A point within a row, for searching.
#[derive(Clone, Copy, Debug)]
pub enum RowPoint<'a> {
    /// Before every entry of the row (its header).
    Start,
    /// The entry with this key.
    Key(&'a [u8]),
    /// After every entry of the row.
    End,
}

impl IndexEntry {
    /// Orders this block's start against a point of `row`.
    fn cmp_start(&self, row: &[u8], at: RowPoint<'_>) -> Ordering {
        self.first_row.as_slice().cmp(row).then_with(|| match at {
            RowPoint::Start => self.first_entry.len().min(1).cmp(&0),
            RowPoint::Key(k) => self.first_entry.as_slice().cmp(k),
            RowPoint::End => Ordering::Less,
        })
    }
}

/// The index of all data blocks, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockIndex {
    /// One entry per data block.
    pub entries: Vec<IndexEntry>,
    /// For a decoded index, the [`key_head`] of each entry's `first_row`, held
    /// side by side, so a search compares mostly within one array instead of
    /// following each entry's pointer to its key.
    heads: Vec<u128>,
}

impl BlockIndex {
    /// Encodes the index block's raw bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(self.entries.len() as u32);
        for e in &self.entries {
            w.bytes(&e.first_row);
            w.bytes(&e.first_entry);
            write_opt_deletion(&mut w, e.deletion);
            w.u64(e.offset);
            w.u32(e.len);
        }
        w.buf
    }

    /// Decodes an index, checking that blocks are in order, ascend by key, and lie within
    /// `data_start..data_end` of the file.
    pub fn decode(raw: &[u8], data_start: u64, data_end: u64) -> Result<BlockIndex, FormatError> {
        let mut r = Reader::new(raw);
        let n = r.count(4 + 4 + 1 + 8 + 4)?;
        let mut entries: Vec<IndexEntry> = Vec::with_capacity(n);
        let mut next_offset = data_start;
        for _ in 0..n {
            let e = IndexEntry {
                first_row: r.bytes()?.to_vec(),
                first_entry: r.bytes()?.to_vec(),
                deletion: read_deletion(&mut r)?,
                offset: r.u64()?,
                len: r.u32()?,
            };
            if e.offset != next_offset || e.offset + u64::from(e.len) > data_end {
                return Err(r.error(format!(
                    "block at {} of {} bytes does not follow the previous block",
                    e.offset, e.len
                )));
            }
            if let Some(prev) = entries.last() {
                let order = (prev.first_row.as_slice(), prev.first_entry.as_slice())
                    .cmp(&(e.first_row.as_slice(), e.first_entry.as_slice()));
                if order != Ordering::Less {
                    return Err(r.error("index entries out of order"));
                }
            }
            next_offset = e.offset + u64::from(e.len);
            entries.push(e);
        }
        if next_offset != data_end {
            return Err(r.error("the index does not cover the data blocks"));
        }
        if r.remaining() != 0 {
            return Err(r.error("trailing bytes after the index"));
        }
        let heads = entries.iter().map(|e| key_head(&e.first_row)).collect();
        Ok(BlockIndex { entries, heads })
    }

    /// The last block that starts at or before `at` of `row`, if any.
    pub fn seek(&self, row: &[u8], at: RowPoint<'_>) -> Option<usize> {
        // Blocks whose first row's head is below the row's start before it; above, after it;
        // only those with an equal head need the full comparison.
        let (lo, hi) = if self.heads.len() == self.entries.len() {
            let h = key_head(row);
            (
                self.heads.partition_point(|&x| x < h),
                self.heads.partition_point(|&x| x <= h),
            )
        } else {
            (0, self.entries.len())
        };
        let n = lo
            + self.entries[lo..hi].partition_point(|e| e.cmp_start(row, at) != Ordering::Greater);
        n.checked_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(row: &str, entry: &str, offset: u64) -> IndexEntry {
        IndexEntry {
            first_row: row.as_bytes().to_vec(),
            first_entry: entry.as_bytes().to_vec(),
            deletion: None,
            offset,
            len: 10,
        }
    }

    #[test]
    fn seeks_find_the_block_holding_a_point() {
        // Block 0 starts row a; block 1 continues a at "m"; block 2 starts row c.
        let idx = BlockIndex {
            entries: vec![e("a", "", 12), e("a", "m", 22), e("c", "", 32)],
            heads: Vec::new(),
        };
        assert_eq!(idx.seek(b"a", RowPoint::Start), Some(0));
        assert_eq!(idx.seek(b"a", RowPoint::Key(b"b")), Some(0));
        assert_eq!(idx.seek(b"a", RowPoint::Key(b"m")), Some(1));
        assert_eq!(idx.seek(b"a", RowPoint::End), Some(1));
        assert_eq!(idx.seek(b"b", RowPoint::Start), Some(1));
        assert_eq!(idx.seek(b"c", RowPoint::End), Some(2));
        assert_eq!(idx.seek(b"0", RowPoint::End), None);
        let back = BlockIndex::decode(&idx.encode(), 12, 42).unwrap();
        assert_eq!(back.entries, idx.entries);
        // The decoded index (which searches by heads) answers as the plain one does.
        for row in ["", "0", "a", "a\0", "b", "c", "c\0", "d"] {
            for at in [
                RowPoint::Start,
                RowPoint::Key(b"b"),
                RowPoint::Key(b"m"),
                RowPoint::End,
            ] {
                assert_eq!(
                    back.seek(row.as_bytes(), at),
                    idx.seek(row.as_bytes(), at),
                    "{row:?}"
                );
            }
        }
        assert!(BlockIndex::decode(&idx.encode(), 12, 41).is_err());
        assert!(BlockIndex::decode(&idx.encode(), 13, 42).is_err());
    }
}
