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
    match entry {
        EntryRef::Cell(CellRef {
            timestamp,
            value: CellValueRef::Live { value, ttl: None },
        }) => {
            w.u8(LIVE);
            w.u64(timestamp as u64);
            w.bytes(value);
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
            w.bytes(value);
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

/// Reads one entry written by [`encode_entry_ref`], borrowing its value from the reader's bytes.
pub fn decode_entry_ref<'a>(r: &mut Reader<'a>) -> Result<EntryRef<'a>, FormatError> {
    Ok(match r.u8()? {
        LIVE => {
            let timestamp = r.u64()? as i64;
            EntryRef::Cell(CellRef {
                timestamp,
                value: CellValueRef::Live {
                    value: r.bytes()?,
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
                    value: r.bytes()?,
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
