//! The block index of an SSTable: for each data block, the (row, entry) it starts at, the
//! deletion of that row, and where the block lies. Searches find the block holding a point of
//! a row without reading any data block.
//!
//! In memory the index is flat — every block's keys in one buffer, a fixed-size slot per block,
//! the heads of the first rows side by side — so a file's index is three allocations however many
//! blocks it has (a struct with two vectors per block cost ~160 bytes a block). Format 2's index
//! block is built as blocks are written ([`IndexBuilder`]); format 1's is read only.

use std::cmp::Ordering;

use super::block_v1;
use crate::codec::{Reader, Writer};
use crate::error::FormatError;
use crate::model::cell::DeletionTime;
use crate::model::key_head::key_head;

/// One data block's index entry, borrowed from the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexEntry<'a> {
    /// Sort key of the block's first row.
    pub first_row: &'a [u8],
    /// Key of the block's first entry; empty if the block starts with the row's header.
    pub first_entry: &'a [u8],
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

/// Orders a block's start (its first row and first entry) against a point of `row`.
fn cmp_start(first_row: &[u8], first_entry: &[u8], row: &[u8], at: RowPoint<'_>) -> Ordering {
    first_row.cmp(row).then_with(|| match at {
        RowPoint::Start => first_entry.len().min(1).cmp(&0),
        RowPoint::Key(k) => first_entry.cmp(k),
        RowPoint::End => Ordering::Less,
    })
}

/// Where one block's index entry lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    /// Offset of the first row's sort key in `keys` (the first entry's key follows it).
    key: u32,
    row_len: u32,
    entry_len: u32,
    len: u32,
    offset: u64,
}

/// The index of all data blocks, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockIndex {
    keys: Vec<u8>,
    slots: Vec<Slot>,
    /// The [`key_head`] of each block's first row, side by side, so a search compares mostly
    /// within one array instead of following each entry to its key.
    heads: Vec<u128>,
    /// The deletions of rows that open blocks, by block number (few rows have one).
    deletions: Vec<(u32, DeletionTime)>,
}

impl BlockIndex {
    /// Blocks in the file.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the file has no blocks.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Block `i`'s first row and first entry keys.
    fn keys_of(&self, s: &Slot) -> (&[u8], &[u8]) {
        let k = s.key as usize;
        let row_end = k + s.row_len as usize;
        (
            &self.keys[k..row_end],
            &self.keys[row_end..row_end + s.entry_len as usize],
        )
    }

    /// Block `i`'s entry.
    pub fn get(&self, i: usize) -> Option<IndexEntry<'_>> {
        let s = self.slots.get(i)?;
        let (first_row, first_entry) = self.keys_of(s);
        Some(IndexEntry {
            first_row,
            first_entry,
            deletion: self
                .deletions
                .binary_search_by_key(&(i as u32), |(b, _)| *b)
                .ok()
                .map(|j| self.deletions[j].1),
            offset: s.offset,
            len: s.len,
        })
    }

    /// Bytes the index holds in memory.
    #[cfg(test)]
    pub fn memory(&self) -> usize {
        self.keys.capacity()
            + self.slots.capacity() * std::mem::size_of::<Slot>()
            + self.heads.capacity() * 16
            + self.deletions.capacity() * std::mem::size_of::<(u32, DeletionTime)>()
    }

    /// Adds a block, checking that it follows the previous one in the file and in key order.
    fn push(
        &mut self,
        e: IndexEntry<'_>,
        next_offset: &mut u64,
        data_end: u64,
        r: &Reader<'_>,
    ) -> Result<(), FormatError> {
        if e.offset != *next_offset || e.offset + u64::from(e.len) > data_end {
            return Err(r.error(format!(
                "block at {} of {} bytes does not follow the previous block",
                e.offset, e.len
            )));
        }
        if let Some(prev) = self.get(self.len().wrapping_sub(1)) {
            let order = (prev.first_row, prev.first_entry).cmp(&(e.first_row, e.first_entry));
            if order != Ordering::Less {
                return Err(r.error("index entries out of order"));
            }
        }
        let key = u32::try_from(self.keys.len())
            .map_err(|_| r.error("an index of more than 4 GiB of keys"))?;
        if let Some(d) = e.deletion {
            self.deletions.push((self.slots.len() as u32, d));
        }
        self.keys.extend_from_slice(e.first_row);
        self.keys.extend_from_slice(e.first_entry);
        self.slots.push(Slot {
            key,
            row_len: e.first_row.len() as u32,
            entry_len: e.first_entry.len() as u32,
            len: e.len,
            offset: e.offset,
        });
        self.heads.push(key_head(e.first_row));
        *next_offset = e.offset + u64::from(e.len);
        Ok(())
    }

    fn finish(
        mut self,
        r: &Reader<'_>,
        next_offset: u64,
        data_end: u64,
    ) -> Result<Self, FormatError> {
        if next_offset != data_end {
            return Err(r.error("the index does not cover the data blocks"));
        }
        if r.remaining() != 0 {
            return Err(r.error("trailing bytes after the index"));
        }
        self.keys.shrink_to_fit();
        Ok(self)
    }

    /// Decodes a format 1 index, checking that blocks are in order, ascend by key, and lie
    /// within `data_start..data_end` of the file.
    pub fn decode_v1(
        raw: &[u8],
        data_start: u64,
        data_end: u64,
    ) -> Result<BlockIndex, FormatError> {
        let mut r = Reader::new(raw);
        let n = r.count(4 + 4 + 1 + 8 + 4)?;
        let mut index = BlockIndex::with_capacity(n, raw.len());
        let mut next_offset = data_start;
        for _ in 0..n {
            let e = IndexEntry {
                first_row: r.bytes()?,
                first_entry: r.bytes()?,
                deletion: block_v1::read_deletion(&mut r)?,
                offset: r.u64()?,
                len: r.u32()?,
            };
            index.push(e, &mut next_offset, data_end, &r)?;
        }
        index.finish(&r, next_offset, data_end)
    }

    /// Decodes a format 2 index (see [`BlockIndex::decode_v1`] for what is checked).
    pub fn decode_v2(
        raw: &[u8],
        data_start: u64,
        data_end: u64,
    ) -> Result<BlockIndex, FormatError> {
        let mut r = Reader::new(raw);
        let n = r.varint()?;
        // Each block's entry takes at least 5 bytes.
        if n.saturating_mul(5) > r.remaining() as u64 {
            return Err(r.error(format!("{n} index entries in {} bytes", r.remaining())));
        }
        let mut index = BlockIndex::with_capacity(n as usize, raw.len() * 2);
        let mut next_offset = data_start;
        let mut row: Vec<u8> = Vec::new();
        for _ in 0..n {
            let shared = r.varint()?;
            if shared > row.len() as u64 {
                return Err(r.error("an index entry shares more than the previous key has"));
            }
            row.truncate(shared as usize);
            row.extend_from_slice(r.vbytes()?);
            let first_entry = r.vbytes()?;
            let deletion = match r.u8()? {
                0 => None,
                1 => Some(DeletionTime {
                    marked_for_delete_at: r.zigzag()?,
                    local_deletion_time: r.zigzag()?,
                }),
                b => return Err(r.error(format!("deletion flag {b}"))),
            };
            let len = r.varint32()?;
            let e = IndexEntry {
                first_row: &row,
                first_entry,
                deletion,
                offset: next_offset,
                len,
            };
            index.push(e, &mut next_offset, data_end, &r)?;
        }
        index.finish(&r, next_offset, data_end)
    }

    fn with_capacity(blocks: usize, key_bytes: usize) -> BlockIndex {
        BlockIndex {
            keys: Vec::with_capacity(key_bytes),
            slots: Vec::with_capacity(blocks),
            heads: Vec::with_capacity(blocks),
            deletions: Vec::new(),
        }
    }

    /// The last block that starts at or before `at` of `row`, if any.
    pub fn seek(&self, row: &[u8], at: RowPoint<'_>) -> Option<usize> {
        // Blocks whose first row's head is below the row's start before it; above, after it;
        // only those with an equal head need the full comparison.
        let h = key_head(row);
        let lo = self.heads.partition_point(|&x| x < h);
        let hi = self.heads.partition_point(|&x| x <= h);
        let (mut lo, mut hi) = (lo, hi);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (first_row, first_entry) = self.keys_of(&self.slots[mid]);
            let at_or_before = cmp_start(first_row, first_entry, row, at) != Ordering::Greater;
            if at_or_before {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo.checked_sub(1)
    }
}

/// Builds a format 2 index block as data blocks are written.
#[derive(Debug, Default)]
pub struct IndexBuilder {
    body: Writer,
    count: u64,
    prev_row: Vec<u8>,
}

impl IndexBuilder {
    /// Adds the next data block's entry (its offset follows from the previous block's length).
    pub fn add(
        &mut self,
        first_row: &[u8],
        first_entry: &[u8],
        deletion: Option<DeletionTime>,
        len: u32,
    ) {
        let shared = self
            .prev_row
            .iter()
            .zip(first_row)
            .take_while(|(a, b)| a == b)
            .count();
        let w = &mut self.body;
        w.varint(shared as u64);
        w.vbytes(&first_row[shared..]);
        w.vbytes(first_entry);
        match deletion {
            None => w.u8(0),
            Some(d) => {
                w.u8(1);
                w.zigzag(d.marked_for_delete_at);
                w.zigzag(d.local_deletion_time);
            }
        }
        w.varint(u64::from(len));
        self.prev_row.clear();
        self.prev_row.extend_from_slice(first_row);
        self.count += 1;
    }

    /// The index block's raw bytes.
    pub fn finish(self) -> Vec<u8> {
        let mut w = Writer::default();
        w.varint(self.count);
        w.buf.extend_from_slice(&self.body.buf);
        w.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Block 0 starts row a; block 1 continues a at "m"; block 2 starts row c (deleted).
    fn sample() -> (Vec<u8>, u64, u64) {
        let mut b = IndexBuilder::default();
        b.add(b"a", b"", None, 10);
        b.add(b"a", b"m", None, 10);
        let d = DeletionTime {
            marked_for_delete_at: 4,
            local_deletion_time: -5,
        };
        b.add(b"c", b"", Some(d), 10);
        (b.finish(), 12, 42)
    }

    #[test]
    fn seeks_find_the_block_holding_a_point() {
        let (raw, start, end) = sample();
        let idx = BlockIndex::decode_v2(&raw, start, end).unwrap();
        assert_eq!(idx.len(), 3);
        assert_eq!(
            idx.get(1).map(|e| (e.first_row, e.first_entry, e.offset)),
            Some((&b"a"[..], &b"m"[..], 22))
        );
        assert_eq!(
            idx.get(2)
                .and_then(|e| e.deletion)
                .map(|d| d.local_deletion_time),
            Some(-5)
        );
        assert_eq!(idx.get(0).and_then(|e| e.deletion), None);
        assert_eq!(idx.seek(b"a", RowPoint::Start), Some(0));
        assert_eq!(idx.seek(b"a", RowPoint::Key(b"b")), Some(0));
        assert_eq!(idx.seek(b"a", RowPoint::Key(b"m")), Some(1));
        assert_eq!(idx.seek(b"a", RowPoint::End), Some(1));
        assert_eq!(idx.seek(b"b", RowPoint::Start), Some(1));
        assert_eq!(idx.seek(b"c", RowPoint::End), Some(2));
        assert_eq!(idx.seek(b"0", RowPoint::End), None);
        assert!(BlockIndex::decode_v2(&raw, start, end - 1).is_err());
        assert!(BlockIndex::decode_v2(&raw, start + 1, end).is_err());
    }

    /// The index stays resident for every open SSTable, so its cost per block is what lets a
    /// large database fit: a block opening a 16-byte row costs its key and 40 bytes (slot and
    /// search head), not the 130-odd of two `Vec`s and their heap blocks per entry.
    #[test]
    fn an_index_costs_its_keys_and_40_bytes_a_block() {
        let mut b = IndexBuilder::default();
        let blocks = 10_000u32;
        for i in 0..blocks {
            let row = [i.to_be_bytes(), [7; 4], [8; 4], [9; 4]].concat();
            b.add(&row, b"", None, 4096);
        }
        let raw = b.finish();
        let end = 16 + u64::from(blocks) * 4096;
        let idx = BlockIndex::decode_v2(&raw, 16, end).unwrap();
        assert_eq!(idx.len(), blocks as usize);
        let per_block = idx.memory() / blocks as usize;
        assert!(per_block <= 16 + 40, "{per_block} bytes per block");
    }

    #[test]
    fn a_format_1_index_reads_the_same() {
        let (raw, start, end) = sample();
        let v2 = BlockIndex::decode_v2(&raw, start, end).unwrap();
        let mut w = Writer::default();
        w.u32(v2.len() as u32);
        for i in 0..v2.len() {
            let e = v2.get(i).unwrap();
            w.bytes(e.first_row);
            w.bytes(e.first_entry);
            w.opt(e.deletion, |w, d| {
                w.u64(d.marked_for_delete_at as u64);
                w.u64(d.local_deletion_time as u64);
            });
            w.u64(e.offset);
            w.u32(e.len);
        }
        let v1 = BlockIndex::decode_v1(&w.buf, start, end).unwrap();
        assert_eq!(v1, v2);
    }

    #[test]
    fn damage_is_refused_without_panicking() {
        let (raw, start, end) = sample();
        for n in 0..raw.len() {
            assert!(
                BlockIndex::decode_v2(&raw[..n], start, end).is_err(),
                "cut at {n}"
            );
        }
        for i in 0..raw.len() {
            for bit in 0..8 {
                let mut bad = raw.clone();
                bad[i] ^= 1 << bit;
                let _ = BlockIndex::decode_v2(&bad, start, end);
            }
        }
        // Out of order: the second block starts before the first.
        let mut b = IndexBuilder::default();
        b.add(b"b", b"", None, 10);
        b.add(b"a", b"", None, 10);
        assert!(BlockIndex::decode_v2(&b.finish(), 12, 32).is_err());
    }
}
