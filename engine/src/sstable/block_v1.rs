//! Format 1 data blocks, read only: a tag byte per item, `u32` lengths, the row sort key in every
//! row header, entries in the commit log's entry encoding. Layout in `engine/FORMAT.md`.

use super::block::{kind, BlockFormat, DataBlock, ItemAt};
use crate::codec::Reader;
use crate::error::FormatError;
use crate::model::cell::DeletionTime;
use crate::model::entry_codec::skip_entry;
use crate::model::partitioner::Partitioner;

const ROW: u8 = 1;
const ROW_CONTINUES: u8 = 2;
const ENTRY: u8 = 3;

/// Reads an optional deletion as format 1 writes it.
pub fn read_deletion(r: &mut Reader<'_>) -> Result<Option<DeletionTime>, FormatError> {
    r.opt(|r| {
        Ok(DeletionTime {
            marked_for_delete_at: r.u64()? as i64,
            local_deletion_time: r.u64()? as i64,
        })
    })
}

/// Checks a format 1 block's raw bytes: the first item must be a row header, rows and entries
/// within a row must ascend, and every item must decode.
pub fn parse(raw: Vec<u8>, partitioner: Partitioner) -> Result<DataBlock, FormatError> {
    let mut items: Vec<ItemAt> = Vec::new();
    let mut rows: Vec<u32> = Vec::new();
    {
        let mut r = Reader::new(&raw);
        let mut last_row: Option<&[u8]> = None;
        let mut last_entry: Option<&[u8]> = None;
        while r.remaining() > 0 {
            let tag = r.u8()?;
            let key_start = r.position() + 4;
            let key: &[u8];
            let flags;
            let body;
            match tag {
                ROW | ROW_CONTINUES => {
                    key = r.bytes()?;
                    body = r.position();
                    read_deletion(&mut r)?;
                    if last_row.is_some_and(|p| p >= key) {
                        return Err(r.error("rows out of order"));
                    }
                    if tag == ROW_CONTINUES && !items.is_empty() {
                        return Err(r.error("a continued row in the middle of a block"));
                    }
                    last_row = Some(key);
                    last_entry = None;
                    rows.push(items.len() as u32);
                    flags = if tag == ROW {
                        kind::ROW
                    } else {
                        kind::ROW_CONTINUES
                    };
                }
                ENTRY => {
                    if last_row.is_none() {
                        return Err(r.error("an entry before any row header"));
                    }
                    key = r.bytes()?;
                    body = r.position();
                    if key.is_empty() || last_entry.is_some_and(|p| p >= key) {
                        return Err(r.error("entries out of order"));
                    }
                    skip_entry(&mut r)?;
                    last_entry = Some(key);
                    flags = kind::V1_ENTRY;
                }
                t => return Err(r.error(format!("unknown item tag {t}"))),
            }
            items.push(ItemAt {
                flags,
                key_rebuilt: false,
                key_start: key_start as u32,
                key_len: key.len() as u32,
                body: body as u32,
                end: r.position() as u32,
            });
        }
        if items.is_empty() {
            return Err(r.error("an empty data block"));
        }
    }
    Ok(DataBlock {
        raw,
        keys: Vec::new(),
        items,
        rows,
        format: BlockFormat::V1(partitioner),
    })
}

/// Format 1's writers, kept for tests that build format 1 blocks and files.
#[cfg(test)]
pub mod write {
    use super::{ENTRY, ROW, ROW_CONTINUES};
    use crate::codec::Writer;
    use crate::model::cell::{DeletionTime, Entry};
    use crate::model::entry_codec::encode_entry_ref;

    /// Appends a row header.
    pub fn row(w: &mut Writer, sort_key: &[u8], deletion: Option<DeletionTime>, continued: bool) {
        w.u8(if continued { ROW_CONTINUES } else { ROW });
        w.bytes(sort_key);
        w.opt(deletion, |w, d| {
            w.u64(d.marked_for_delete_at as u64);
            w.u64(d.local_deletion_time as u64);
        });
    }

    /// Appends an entry.
    pub fn entry(w: &mut Writer, key: &[u8], entry: &Entry) {
        w.u8(ENTRY);
        w.bytes(key);
        encode_entry_ref(entry.as_ref(), w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Writer;
    use crate::model::cell::{Cell, Entry};
    use crate::sstable::block::{Item, ItemRef};

    fn items(raw: &[u8]) -> Result<Vec<Item>, FormatError> {
        let block = parse(raw.to_vec(), Partitioner::OrderPreserving)?;
        block
            .iter()
            .map(|i| {
                Ok(match i {
                    ItemRef::Row {
                        key,
                        stored_sort_key,
                        deletion,
                        continued,
                    } => Item::Row {
                        sort_key: stored_sort_key.unwrap_or(key).to_vec(),
                        key: key.to_vec(),
                        deletion,
                        continued,
                    },
                    ItemRef::Entry { key, value } => Item::Entry {
                        key: key.to_vec(),
                        entry: value.decode()?,
                    },
                })
            })
            .collect()
    }

    #[test]
    fn items_roundtrip_and_order_is_checked() {
        let mut w = Writer::default();
        write::row(&mut w, b"r1", None, true);
        write::entry(
            &mut w,
            b"a",
            &Entry::Cell(Cell::live(1, b"v".to_vec(), None)),
        );
        write::entry(&mut w, b"b", &Entry::Cell(Cell::tombstone(2, 3)));
        let d = DeletionTime {
            marked_for_delete_at: 5,
            local_deletion_time: 6,
        };
        write::row(&mut w, b"r2", Some(d), false);
        let got = items(&w.buf).unwrap();
        assert_eq!(got.len(), 4);
        assert!(matches!(&got[3], Item::Row { deletion: Some(x), .. } if *x == d));
        assert_eq!(
            got[1],
            Item::Entry {
                key: b"a".to_vec(),
                entry: Entry::Cell(Cell::live(1, b"v".to_vec(), None))
            }
        );

        let mut bad = Writer::default();
        write::row(&mut bad, b"r1", None, false);
        write::entry(&mut bad, b"b", &Entry::Cell(Cell::tombstone(2, 3)));
        write::entry(&mut bad, b"a", &Entry::Cell(Cell::tombstone(2, 3)));
        assert!(items(&bad.buf).is_err());
        assert!(
            parse(Vec::new(), Partitioner::Random).is_err(),
            "an empty block"
        );
    }

    #[test]
    fn rows_are_found_by_sort_key_and_the_client_key_is_split_off() {
        let p = Partitioner::Random;
        let mut w = Writer::default();
        let mut keys: Vec<Vec<u8>> = [&b"a"[..], b"b", b"c"]
            .iter()
            .map(|k| p.row_sort_key(k))
            .collect();
        keys.sort();
        for sk in &keys {
            write::row(&mut w, sk, None, false);
            write::entry(&mut w, b"x", &Entry::Cell(Cell::tombstone(3, 4)));
        }
        let block = parse(w.buf, p).unwrap();
        for sk in &keys {
            let (h, entries) = block.row(sk, p.key_part(sk)).unwrap();
            assert_eq!(entries.len(), 1);
            let ItemRef::Row {
                key,
                stored_sort_key,
                ..
            } = block.item(h)
            else {
                panic!("not a row")
            };
            assert_eq!(
                (key, stored_sort_key),
                (p.key_part(sk), Some(sk.as_slice()))
            );
        }
        assert!(block.row(&p.row_sort_key(b"d"), b"d").is_none());
    }
}
