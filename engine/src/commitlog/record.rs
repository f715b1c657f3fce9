//! The payload of a commit log record: one row's mutation, across the column families of one
//! keyspace it touches, so it replays all or nothing.
//!
//! Layout in `engine/FORMAT.md`. Decoding trusts nothing: every length is bounded by the bytes
//! that remain, and unknown tags are errors.

use std::borrow::Cow;

use crate::codec::{Reader, Writer};
use crate::error::FormatError;
use crate::model::cell::{CellValueRef, EntryRef};
use crate::model::entry_codec::{
    decode_deletion, decode_entry_ref, encode_deletion, encode_entry_ref,
};
use crate::mutation::RowUpdate;

/// One row's mutation, as logged; decoded, it borrows from the record's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowMutation<'a> {
    /// The row key.
    pub key: Cow<'a, [u8]>,
    /// The update of each column family (by id) the mutation touches.
    pub updates: Vec<(u32, RowUpdate<'a>)>,
}

/// What the commit log appends as one record: a row's mutation, owned ([`RowMutation`]) or
/// borrowed from the writer's batch, so logging a write copies nothing but its encoding.
pub trait LogRecord {
    /// Appends the record's payload to `w`.
    fn encode(&self, w: &mut Writer);
    /// About how many bytes [`LogRecord::encode`] appends (room reserved up front).
    fn size_hint(&self) -> usize;
    /// Calls `f` with the id of each column family the record touches.
    fn each_column_family(&self, f: &mut dyn FnMut(u32));
}

/// One column family's part of a row's mutation, as a writer holds it.
pub trait LogUpdate {
    /// The column family's id.
    fn cf_id(&self) -> u32;
    /// The validated update.
    fn update(&self) -> &RowUpdate<'_>;
}

impl LogUpdate for (u32, RowUpdate<'_>) {
    fn cf_id(&self) -> u32 {
        self.0
    }

    fn update(&self) -> &RowUpdate<'_> {
        &self.1
    }
}

/// One row of a batch as the commit log records it, borrowed from the writer's batch.
pub struct RowWrite<'a, U> {
    /// The row key.
    pub key: &'a [u8],
    /// Each column family's update of the row.
    pub updates: &'a [U],
}

impl<U: LogUpdate> LogRecord for RowWrite<'_, U> {
    fn encode(&self, w: &mut Writer) {
        encode_parts(
            self.key,
            self.updates.iter().map(|u| (u.cf_id(), u.update())),
            w,
        );
    }

    fn size_hint(&self) -> usize {
        size_hint(self.key, self.updates.iter().map(LogUpdate::update))
    }

    fn each_column_family(&self, f: &mut dyn FnMut(u32)) {
        self.updates.iter().for_each(|u| f(u.cf_id()));
    }
}

impl LogRecord for RowMutation<'_> {
    fn encode(&self, w: &mut Writer) {
        self.as_write().encode(w);
    }

    fn size_hint(&self) -> usize {
        self.as_write().size_hint()
    }

    fn each_column_family(&self, f: &mut dyn FnMut(u32)) {
        self.as_write().each_column_family(f);
    }
}

impl<'a> RowMutation<'a> {
    fn as_write(&self) -> RowWrite<'_, (u32, RowUpdate<'a>)> {
        RowWrite {
            key: &self.key,
            updates: &self.updates,
        }
    }
}

/// Appends the encoding of `m` to `w`.
#[cfg(test)]
pub fn encode(m: &RowMutation<'_>, w: &mut Writer) {
    m.encode(w);
}

/// About how many bytes the encoding of row `key`'s updates takes.
fn size_hint<'u, 'a: 'u>(key: &[u8], updates: impl Iterator<Item = &'u RowUpdate<'a>>) -> usize {
    // Per entry: key and value lengths, tag, timestamp and TTL fields.
    const ENTRY_FIXED: usize = 4 + 1 + 8 + 4 + 8 + 4;
    let entries: usize = updates
        .flat_map(|u| u.entries.iter())
        .map(|(k, e)| {
            let value = match e {
                EntryRef::Cell(c) => match c.value {
                    CellValueRef::Live { value, .. } => value.len(),
                    CellValueRef::Tombstone { .. } => 8,
                },
                EntryRef::GroupDeletion(_) => 16,
            };
            ENTRY_FIXED + k.len() + value
        })
        .sum();
    4 + key.len() + 4 + 32 + entries
}

/// Appends the encoding of row `key`'s updates, by column family id.
fn encode_parts<'u, 'a: 'u>(
    key: &[u8],
    updates: impl ExactSizeIterator<Item = (u32, &'u RowUpdate<'a>)>,
    w: &mut Writer,
) {
    w.bytes(key);
    w.u32(updates.len() as u32);
    for (cf, u) in updates {
        w.u32(cf);
        w.opt(u.deletion, encode_deletion);
        w.u32(u.entries.len() as u32);
        for (key, entry) in &u.entries {
            w.bytes(key);
            encode_entry_ref(*entry, w);
        }
    }
}

/// Decodes a record payload, borrowing from it; the whole payload must be consumed.
pub fn decode(payload: &[u8]) -> Result<RowMutation<'_>, FormatError> {
    let mut r = Reader::new(payload);
    let key = Cow::Borrowed(r.bytes()?);
    let n = r.count(4 + 1 + 4)?;
    let mut updates = Vec::with_capacity(n);
    for _ in 0..n {
        let cf = r.u32()?;
        let deletion = r.opt(decode_deletion)?;
        let m = r.count(4 + 1)?;
        let mut entries = Vec::with_capacity(m);
        for _ in 0..m {
            let key = Cow::Borrowed(r.bytes()?);
            entries.push((key, decode_entry_ref(&mut r)?));
        }
        updates.push((cf, RowUpdate { deletion, entries }));
    }
    if r.remaining() != 0 {
        return Err(r.error("trailing bytes after the mutation"));
    }
    Ok(RowMutation { key, updates })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cell::{CellRef, DeletionTime, Ttl};

    fn cell(timestamp: i64, value: CellValueRef<'static>) -> EntryRef<'static> {
        EntryRef::Cell(CellRef { timestamp, value })
    }

    pub(crate) fn sample() -> RowMutation<'static> {
        let d = DeletionTime {
            marked_for_delete_at: -5,
            local_deletion_time: 1_700_000_000,
        };
        let live = |value| CellValueRef::Live { value, ttl: None };
        RowMutation {
            key: Cow::Borrowed(b"jsmith"),
            updates: vec![
                (
                    3,
                    RowUpdate {
                        deletion: Some(d),
                        entries: vec![
                            (Cow::Borrowed(b"first"), cell(7, live(b"John"))),
                            (
                                Cow::Borrowed(b"ttl"),
                                cell(
                                    8,
                                    CellValueRef::Live {
                                        value: b"",
                                        ttl: Some(Ttl {
                                            ttl: 60,
                                            local_expiration_time: 99,
                                        }),
                                    },
                                ),
                            ),
                            (
                                Cow::Borrowed(b"gone"),
                                cell(
                                    9,
                                    CellValueRef::Tombstone {
                                        local_deletion_time: 10,
                                    },
                                ),
                            ),
                        ],
                    },
                ),
                (
                    4,
                    RowUpdate {
                        deletion: None,
                        entries: vec![(Cow::Borrowed(b"sc\x00\x01"), EntryRef::GroupDeletion(d))],
                    },
                ),
            ],
        }
    }

    #[test]
    fn roundtrip() {
        let m = sample();
        let mut w = Writer::default();
        encode(&m, &mut w);
        assert_eq!(decode(&w.buf).unwrap(), m);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let mut w = Writer::default();
        encode(&sample(), &mut w);
        for n in 0..w.buf.len() {
            assert!(decode(&w.buf[..n]).is_err(), "truncated at {n}");
        }
    }
}
