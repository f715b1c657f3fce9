//! The encoding of one entry of a row (a cell, a tombstone, a super column deletion), shared by
//! the commit log's records and the SSTable blocks (`engine/FORMAT.md`, "An entry").
//!
//! Decoding trusts nothing: every length is bounded by the bytes that remain, and unknown tags
//! are errors. This file knows entries, not records or blocks.

use crate::codec::{Reader, Writer};
use crate::error::FormatError;
use crate::model::cell::{CellRef, CellValueRef, DeletionTime, EntryRef, Ttl};

const LIVE: u8 = 0;
const LIVE_TTL: u8 = 1;
const TOMBSTONE: u8 = 2;
const SUPER_DELETION: u8 = 3;

/// Appends a deletion time (marked-for-delete-at, then local deletion time).
pub fn encode_deletion(w: &mut Writer, d: DeletionTime) {
    w.u64(d.marked_for_delete_at as u64);
    w.u64(d.local_deletion_time as u64);
}

/// Reads a deletion time written by [`encode_deletion`].
pub fn decode_deletion(r: &mut Reader<'_>) -> Result<DeletionTime, FormatError> {
    Ok(DeletionTime {
        marked_for_delete_at: r.u64()? as i64,
        local_deletion_time: r.u64()? as i64,
    })
}

/// Appends one entry (tag, then its fields); shared with the format 1 SSTable block.
pub fn encode_entry_ref(entry: EntryRef<'_>, w: &mut Writer) {
    encode_entry(entry, w, false);
}

/// Reads one entry written by [`encode_entry_ref`], borrowing its value from the reader's bytes.
pub fn decode_entry_ref<'a>(r: &mut Reader<'a>) -> Result<EntryRef<'a>, FormatError> {
    decode_entry(r, false)
}

/// Appends one entry, its value's length a varint when `varint_len` (version 3 commit log
/// records) or a `u32`.
pub fn encode_entry(entry: EntryRef<'_>, w: &mut Writer, varint_len: bool) {
    let value_bytes = |w: &mut Writer, v: &[u8]| {
        if varint_len {
            w.vbytes(v)
        } else {
            w.bytes(v)
        }
    };
    match entry {
        EntryRef::Cell(CellRef {
            timestamp,
            value: CellValueRef::Live { value, ttl: None },
        }) => {
            w.u8(LIVE);
            w.u64(timestamp as u64);
            value_bytes(w, value);
        }
        EntryRef::Cell(CellRef {
            timestamp,
            value:
                CellValueRef::Live {
                    value,
                    ttl: Some(t),
                },
        }) => {
            w.u8(LIVE_TTL);
            w.u64(timestamp as u64);
            w.u32(t.ttl);
            w.u64(t.local_expiration_time as u64);
            value_bytes(w, value);
        }
        EntryRef::Cell(CellRef {
            timestamp,
            value: CellValueRef::Tombstone {
                local_deletion_time,
            },
        }) => {
            w.u8(TOMBSTONE);
            w.u64(timestamp as u64);
            w.u64(local_deletion_time as u64);
        }
        EntryRef::GroupDeletion(d) => {
            w.u8(SUPER_DELETION);
            encode_deletion(w, d);
        }
    }
}

/// Reads one entry written by [`encode_entry`] with the same `varint_len`, borrowing its value
/// from the reader's bytes.
pub fn decode_entry<'a>(r: &mut Reader<'a>, varint_len: bool) -> Result<EntryRef<'a>, FormatError> {
    let value_bytes = |r: &mut Reader<'a>| if varint_len { r.vbytes() } else { r.bytes() };
    Ok(match r.u8()? {
        LIVE => {
            let timestamp = r.u64()? as i64;
            EntryRef::Cell(CellRef {
                timestamp,
                value: CellValueRef::Live {
                    value: value_bytes(r)?,
                    ttl: None,
                },
            })
        }
        LIVE_TTL => {
            let timestamp = r.u64()? as i64;
            let ttl = Ttl {
                ttl: r.u32()?,
                local_expiration_time: r.u64()? as i64,
            };
            EntryRef::Cell(CellRef {
                timestamp,
                value: CellValueRef::Live {
                    value: value_bytes(r)?,
                    ttl: Some(ttl),
                },
            })
        }
        TOMBSTONE => {
            let timestamp = r.u64()? as i64;
            EntryRef::Cell(CellRef {
                timestamp,
                value: CellValueRef::Tombstone {
                    local_deletion_time: r.u64()? as i64,
                },
            })
        }
        SUPER_DELETION => EntryRef::GroupDeletion(decode_deletion(r)?),
        t => return Err(r.error(format!("unknown entry tag {t}"))),
    })
}

/// Checks the entry at the reader's position and steps over it, allocating nothing (SSTable
/// blocks are checked whole when read, and entries decoded only when a query yields them).
pub fn skip_entry(r: &mut Reader<'_>) -> Result<(), FormatError> {
    match r.u8()? {
        LIVE => {
            r.u64()?;
            r.bytes()?;
        }
        LIVE_TTL => {
            r.take(8 + 4 + 8)?;
            r.bytes()?;
        }
        TOMBSTONE => {
            r.take(8 + 8)?;
        }
        SUPER_DELETION => {
            decode_deletion(r)?;
        }
        t => return Err(r.error(format!("unknown entry tag {t}"))),
    }
    Ok(())
}
