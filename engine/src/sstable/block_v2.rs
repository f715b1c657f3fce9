//! Format 2 data blocks: building them (varint lengths, entry keys sharing a prefix with the
//! previous entry's, timestamps as deltas from the block's first) and checking them back into a
//! [`DataBlock`]. Layout in `engine/FORMAT.md`.

use std::cell::RefCell;

use super::block::{kind, BlockFormat, DataBlock, ItemAt};
use crate::codec::{Reader, Writer};
use crate::error::FormatError;
use crate::model::cell::{CellRef, CellValueRef, DeletionTime, EntryRef};

/// Reads a row's deletion (after a flags byte with [`kind::HAS_DELETION`]).
pub fn read_deletion(r: &mut Reader<'_>, base: i64) -> Result<DeletionTime, FormatError> {
    Ok(DeletionTime {
        marked_for_delete_at: base.wrapping_add(r.zigzag()?),
        local_deletion_time: r.zigzag()?,
    })
}

fn shared_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Builds one format 2 data block.
#[derive(Debug, Default)]
pub struct BlockBuilder {
    items: Writer,
    /// The block's timestamp base: the first timestamp written to it.
    base: Option<i64>,
    /// The previous entry's key, which the next one shares a prefix with.
    last_key: Vec<u8>,
    has_entry: bool,
}

impl BlockBuilder {
    /// Bytes of items so far.
    pub fn bytes(&self) -> usize {
        self.items.buf.len()
    }

    fn delta(&mut self, ts: i64) -> i64 {
        ts.wrapping_sub(*self.base.get_or_insert(ts))
    }

    /// Appends a row header.
    pub fn row(&mut self, key: &[u8], deletion: Option<DeletionTime>, continued: bool) {
        let k = if continued {
            kind::ROW_CONTINUES
        } else {
            kind::ROW
        };
        match deletion {
            None => {
                self.items.u8(k);
                self.items.vbytes(key);
            }
            Some(d) => {
                self.items.u8(k | kind::HAS_DELETION);
                self.items.vbytes(key);
                let delta = self.delta(d.marked_for_delete_at);
                self.items.zigzag(delta);
                self.items.zigzag(d.local_deletion_time);
            }
        }
    }

    /// Appends an entry of the current row.
    pub fn entry(&mut self, key: &[u8], entry: EntryRef<'_>) {
        let delta = self.delta(entry.timestamp());
        let w = &mut self.items;
        w.u8(match entry {
            EntryRef::Cell(CellRef {
                value: CellValueRef::Live { ttl: None, .. },
                ..
            }) => kind::LIVE,
            EntryRef::Cell(CellRef {
                value: CellValueRef::Live { ttl: Some(_), .. },
                ..
            }) => kind::LIVE_TTL,
            EntryRef::Cell(CellRef {
                value: CellValueRef::Tombstone { .. },
                ..
            }) => kind::TOMBSTONE,
            EntryRef::GroupDeletion(_) => kind::SUPER_DELETION,
        });
        let shared = if self.has_entry {
            shared_prefix(&self.last_key, key)
        } else {
            0
        };
        w.varint(shared as u64);
        w.vbytes(&key[shared..]);
        w.zigzag(delta);
        match entry {
            EntryRef::Cell(CellRef {
                value: CellValueRef::Live { value, ttl },
                ..
            }) => {
                if let Some(t) = ttl {
                    w.varint(u64::from(t.ttl));
                    w.zigzag(t.local_expiration_time);
                }
                w.vbytes(value);
            }
            EntryRef::Cell(CellRef {
                value:
                    CellValueRef::Tombstone {
                        local_deletion_time,
                    },
                ..
            }) => w.zigzag(local_deletion_time),
            EntryRef::GroupDeletion(d) => w.zigzag(d.local_deletion_time),
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.has_entry = true;
    }

    /// The block's raw bytes; the builder starts a new block.
    pub fn finish(&mut self) -> Vec<u8> {
        let mut out = Writer::default();
        out.buf.reserve(self.items.buf.len() + 10);
        out.zigzag(self.base.unwrap_or(0));
        out.buf.extend_from_slice(&self.items.buf);
        self.items.buf.clear();
        self.base = None;
        self.has_entry = false;
        out.buf
    }
}

/// Where the previous entry's key lies while parsing.
#[derive(Clone, Copy)]
struct KeyAt {
    rebuilt: bool,
    start: usize,
    len: usize,
}

/// Checks a format 2 block's raw bytes: the first item must be a row header, only the first
/// may continue a row, entry keys must share no more than the previous key has and ascend within
/// a row, and every field must decode. (Row order needs tokens the block does not store; the
/// iterators that walk rows in order check it as they derive them.)
pub fn parse(raw: Vec<u8>) -> Result<DataBlock, FormatError> {
    // The index is built in this thread's scratch vectors and copied out at its exact size:
    // growing vectors item by item cost a fifth of a point read of CQL rows (three items each),
    // and a block cache entry should not carry spare capacity.
    thread_local! {
        static SCRATCH: RefCell<Scratch> = RefCell::default();
    }
    SCRATCH.with(|scratch| {
        let mut fresh = Scratch::default();
        let mut guard = scratch.try_borrow_mut();
        let s = match guard.as_deref_mut() {
            Ok(s) => s,
            Err(_) => &mut fresh,
        };
        s.items.clear();
        s.rows.clear();
        s.keys.clear();
        let base = parse_into(&raw, s);
        let block = base.map(|base| DataBlock {
            keys: s.keys.clone(),
            items: s.items.clone(),
            rows: s.rows.clone(),
            raw,
            format: BlockFormat::V2 { base },
        });
        // A huge block's scratch is not kept for the thread's lifetime.
        if s.keys.capacity() + s.items.capacity() * 24 > 1 << 20 {
            *s = Scratch::default();
        }
        block
    })
}

/// A block index under construction.
#[derive(Default)]
struct Scratch {
    items: Vec<ItemAt>,
    rows: Vec<u32>,
    keys: Vec<u8>,
}

/// Checks `raw` into `s` (empty on entry); returns the block's timestamp base.
// Long because it checks a block field by field in the order FORMAT.md lays them out, each check
// naming what it found.
fn parse_into(raw: &[u8], s: &mut Scratch) -> Result<i64, FormatError> {
    let Scratch { items, rows, keys } = s;
    let mut r = Reader::new(raw);
    let base = r.zigzag()?;
    let mut prev: Option<KeyAt> = None;
    // Whether the previous entry belongs to the current row (for the order check).
    let mut in_row = false;
    while r.remaining() > 0 {
        let flags = r.u8()?;
        let k = flags & kind::MASK;
        if flags & !(kind::MASK | kind::HAS_DELETION) != 0
            || (flags & kind::HAS_DELETION != 0 && k > kind::ROW_CONTINUES)
        {
            return Err(r.error(format!("item flags {flags:#04x}")));
        }
        let item = match k {
            kind::ROW | kind::ROW_CONTINUES => {
                if k == kind::ROW_CONTINUES && !items.is_empty() {
                    return Err(r.error("a continued row in the middle of a block"));
                }
                let key_len = r.vlen()?;
                let key_start = r.position();
                r.take(key_len)?;
                if key_len == 0 {
                    return Err(r.error("an empty row key"));
                }
                let body = r.position();
                if flags & kind::HAS_DELETION != 0 {
                    read_deletion(&mut r, base)?;
                }
                rows.push(items.len() as u32);
                in_row = false;
                ItemAt {
                    flags,
                    key_rebuilt: false,
                    key_start: key_start as u32,
                    key_len: key_len as u32,
                    body: body as u32,
                    end: r.position() as u32,
                }
            }
            kind::LIVE..=kind::SUPER_DELETION => {
                if rows.is_empty() {
                    return Err(r.error("an entry before any row header"));
                }
                let shared = r.varint()?;
                let suffix_len = r.vlen()?;
                let suffix_start = r.position();
                let suffix = r.take(suffix_len)?;
                let key = match prev {
                    None if shared != 0 => {
                        return Err(r.error("the block's first entry shares a prefix"))
                    }
                    Some(p) if shared > p.len as u64 => {
                        return Err(r.error(format!(
                            "an entry shares {shared} bytes of a {}-byte key",
                            p.len
                        )))
                    }
                    Some(p) if shared > 0 => {
                        let start = keys.len();
                        let shared = shared as usize;
                        if p.rebuilt {
                            keys.extend_from_within(p.start..p.start + shared);
                        } else {
                            keys.extend_from_slice(&raw[p.start..p.start + shared]);
                        }
                        keys.extend_from_slice(suffix);
                        KeyAt {
                            rebuilt: true,
                            start,
                            len: shared + suffix_len,
                        }
                    }
                    _ => KeyAt {
                        rebuilt: false,
                        start: suffix_start,
                        len: suffix_len,
                    },
                };
                let bytes = |a: KeyAt| {
                    if a.rebuilt {
                        &keys[a.start..a.start + a.len]
                    } else {
                        &raw[a.start..a.start + a.len]
                    }
                };
                if key.len == 0 {
                    return Err(r.error("an empty entry key"));
                }
                if in_row && prev.is_some_and(|p| bytes(p) >= bytes(key)) {
                    return Err(r.error("entries out of order"));
                }
                let body = r.position();
                r.zigzag()?;
                match k {
                    kind::LIVE => {
                        r.vbytes()?;
                    }
                    kind::LIVE_TTL => {
                        r.varint32()?;
                        r.zigzag()?;
                        r.vbytes()?;
                    }
                    _ => {
                        r.zigzag()?;
                    }
                }
                prev = Some(key);
                in_row = true;
                ItemAt {
                    flags,
                    key_rebuilt: key.rebuilt,
                    key_start: key.start as u32,
                    key_len: key.len as u32,
                    body: body as u32,
                    end: r.position() as u32,
                }
            }
            _ => return Err(r.error(format!("unknown item kind {k}"))),
        };
        items.push(item);
    }
    if items.is_empty() {
        return Err(r.error("an empty data block"));
    }
    Ok(base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cell::{Cell, Entry, Ttl};
    use crate::sstable::block::ItemRef;

    fn d(a: i64, b: i64) -> DeletionTime {
        DeletionTime {
            marked_for_delete_at: a,
            local_deletion_time: b,
        }
    }

    fn sample() -> (Vec<u8>, Vec<(Vec<u8>, Entry)>) {
        let entries = vec![
            (
                b"col-a".to_vec(),
                Entry::Cell(Cell::live(1_700_000_000_000_000, b"v1".to_vec(), None)),
            ),
            (
                b"col-ab".to_vec(),
                Entry::Cell(Cell::live(
                    1_699_999_999_999_000,
                    vec![7; 300],
                    Some(Ttl {
                        ttl: 60,
                        local_expiration_time: 1_700_000_060,
                    }),
                )),
            ),
            (b"col-b".to_vec(), Entry::Cell(Cell::tombstone(i64::MIN, 5))),
            (b"z".to_vec(), Entry::GroupDeletion(d(i64::MAX, -3))),
        ];
        let mut b = BlockBuilder::default();
        b.row(b"row1", None, true);
        for (k, e) in &entries[..2] {
            b.entry(k, e.as_ref());
        }
        b.row(b"row2", Some(d(-7, 9)), false);
        for (k, e) in &entries[2..] {
            b.entry(k, e.as_ref());
        }
        (b.finish(), entries)
    }

    #[test]
    fn items_roundtrip_with_shared_prefixes_and_extreme_timestamps() {
        let (raw, entries) = sample();
        let block = parse(raw).unwrap();
        assert_eq!(block.len(), 6);
        let mut got = Vec::new();
        for i in block.iter() {
            if let ItemRef::Entry { key, value } = i {
                got.push((key.to_vec(), value.decode().unwrap()));
            }
        }
        assert_eq!(got, entries);
        let (h, e) = block.row(b"", b"row2").unwrap();
        assert_eq!((h, e), (3, 4..6));
        assert!(matches!(
            block.item(h),
            ItemRef::Row { key: b"row2", deletion: Some(x), continued: false, stored_sort_key: None } if x == d(-7, 9)
        ));
        assert!(matches!(
            block.item(0),
            ItemRef::Row {
                continued: true,
                ..
            }
        ));
        assert_eq!(block.entry_key(2), b"col-ab");
        assert_eq!(block.entry_key(3), b"", "a row header has no entry key");
        assert!(block.row(b"", b"row3").is_none());
    }

    #[test]
    fn rows_are_found_by_the_whole_key_not_its_first_word() {
        // Keys sharing their first 8 bytes, a prefix of another, shorter than a word, empty.
        let keys: [&[u8]; 6] = [
            b"wide-00000001",
            b"wide-00000002",
            b"wide-0000000",
            b"wide-000",
            b"w",
            b"wide-00000001x",
        ];
        let cell = Entry::Cell(Cell::live(1, b"v".to_vec(), None));
        let mut b = BlockBuilder::default();
        for k in keys {
            b.row(k, None, false);
            b.entry(b"c", cell.as_ref());
        }
        let block = parse(b.finish()).unwrap();
        for (i, k) in keys.iter().enumerate() {
            let (h, _) = block.row(b"", k).unwrap();
            assert_eq!(h, 2 * i, "{}", String::from_utf8_lossy(k));
        }
        for missing in [
            &b"wide-00000003"[..],
            b"wide-0000",
            b"",
            b"x",
            b"wide-00000001y",
        ] {
            assert!(block.row(b"", missing).is_none());
        }
    }

    #[test]
    fn truncations_inside_an_item_and_most_flips_are_refused_and_none_panics() {
        let (raw, _) = sample();
        let whole = parse(raw.clone()).unwrap();
        let ends: Vec<usize> = (0..whole.len())
            .map(|i| whole.items[i].end as usize)
            .collect();
        // A cut between items leaves a shorter valid block; the frame's checksum is what
        // refuses those. A cut inside an item must be refused here.
        for n in 0..raw.len() {
            if !ends.contains(&n) {
                assert!(parse(raw[..n].to_vec()).is_err(), "cut at {n}");
            }
        }
        for i in 0..raw.len() {
            for bit in 0..8 {
                let mut bad = raw.clone();
                bad[i] ^= 1 << bit;
                // Many flips still decode (a value byte); none may panic, and what decodes
                // must be readable item by item.
                if let Ok(b) = parse(bad) {
                    for it in b.iter() {
                        if let ItemRef::Entry { value, .. } = it {
                            let _ = value.decode();
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn disorder_and_bad_sharing_are_refused() {
        let e = Entry::Cell(Cell::tombstone(1, 1));
        let mut b = BlockBuilder::default();
        b.row(b"r", None, false);
        b.entry(b"b", e.as_ref());
        b.entry(b"a", e.as_ref());
        assert!(parse(b.finish()).is_err(), "entries out of order in a row");

        // A new row may start below the previous row's last entry.
        let mut b = BlockBuilder::default();
        b.row(b"r", None, false);
        b.entry(b"b", e.as_ref());
        b.row(b"s", None, false);
        b.entry(b"a", e.as_ref());
        assert!(parse(b.finish()).is_ok());

        let mut b = BlockBuilder::default();
        b.row(b"r", None, false);
        b.row(b"s", None, true);
        assert!(parse(b.finish()).is_err(), "a continued row inside a block");

        let mut b = BlockBuilder::default();
        b.entry(b"a", e.as_ref());
        assert!(parse(b.finish()).is_err(), "an entry before its row");

        // The first entry claims a shared prefix: flags, shared = 1, suffix "a".
        let mut w = Writer::default();
        w.zigzag(0);
        w.u8(kind::ROW);
        w.vbytes(b"r");
        w.u8(kind::TOMBSTONE);
        w.varint(1);
        w.vbytes(b"a");
        w.zigzag(0);
        w.zigzag(0);
        assert!(parse(w.buf).is_err());
    }
}
