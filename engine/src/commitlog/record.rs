//! The payload of a commit log record: one row's mutation, across the column families of one
//! keyspace it touches, so it replays all or nothing.
//!
//! Layout in `engine/FORMAT.md`: segments of version 3 (what this build writes) hold lengths,
//! counts and ids as varints; versions 1 and 2 held them as `u32` (read still). Decoding
//! trusts nothing: every length is bounded by the bytes that remain, and unknown tags are
//! errors.

use std::borrow::Cow;

use crate::codec::{Reader, Writer};
use crate::error::FormatError;
use crate::model::cell::{CellValueRef, EntryRef};
use crate::model::entry_codec::{decode_deletion, decode_entry, encode_deletion, encode_entry};
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
    /// Calls `f` with the id of each column family whose contents are derived from this
    /// update (its secondary indexes): replay rebuilds them from the record, so the record's
    /// segment is kept until they are flushed too.
    fn each_dependent(&self, _f: &mut dyn FnMut(u32)) {}
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
        for u in self.updates {
            f(u.cf_id());
            u.each_dependent(f);
        }
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

/// Appends the encoding of row `key`'s updates, by column family id (version 3: a point
/// write's record is 18 bytes shorter than with `u32` lengths, a tenth of the log).
fn encode_parts<'u, 'a: 'u>(
    key: &[u8],
    updates: impl ExactSizeIterator<Item = (u32, &'u RowUpdate<'a>)>,
    w: &mut Writer,
) {
    w.vbytes(key);
    w.varint(updates.len() as u64);
    for (cf, u) in updates {
        w.varint(u64::from(cf));
        w.opt(u.deletion, encode_deletion);
        w.varint(u.entries.len() as u64);
        for (key, entry) in &u.entries {
            w.vbytes(key);
            encode_entry(*entry, w, true);
        }
    }
}

/// Decodes a record payload of a segment of format `version`, borrowing from it; the whole
/// payload must be consumed.
pub fn decode(payload: &[u8], version: u32) -> Result<RowMutation<'_>, FormatError> {
    let compact = version >= 3;
    let mut r = Reader::new(payload);
    let key = Cow::Borrowed(bytes(&mut r, compact)?);
    // The least an update and an entry take: their counts are bounded by what remains.
    let n = if compact {
        r.vcount(3)?
    } else {
        r.count(4 + 1 + 4)?
    };
    let mut updates = Vec::with_capacity(n);
    for _ in 0..n {
        let cf = if compact { r.varint32()? } else { r.u32()? };
        let deletion = r.opt(decode_deletion)?;
        let m = if compact {
            r.vcount(2)?
        } else {
            r.count(4 + 1)?
        };
        let mut entries = Vec::with_capacity(m);
        for _ in 0..m {
            let key = Cow::Borrowed(bytes(&mut r, compact)?);
            entries.push((key, decode_entry(&mut r, compact)?));
        }
        updates.push((cf, RowUpdate { deletion, entries }));
    }
    if r.remaining() != 0 {
        return Err(r.error("trailing bytes after the mutation"));
    }
    Ok(RowMutation { key, updates })
}

/// Bytes with a varint length (version 3) or a `u32` one.
fn bytes<'a>(r: &mut Reader<'a>, compact: bool) -> Result<&'a [u8], FormatError> {
    if compact {
        r.vbytes()
    } else {
        r.bytes()
    }
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
        assert_eq!(decode(&w.buf, 3).unwrap(), m);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let mut w = Writer::default();
        encode(&sample(), &mut w);
        for n in 0..w.buf.len() {
            assert!(decode(&w.buf[..n], 3).is_err(), "truncated at {n}");
        }
    }

    /// The payload a version 1 or 2 segment holds: every length, count and id a `u32`.
    fn encode_v2(m: &RowMutation<'_>) -> Vec<u8> {
        let mut w = Writer::default();
        w.bytes(&m.key);
        w.u32(m.updates.len() as u32);
        for (cf, u) in &m.updates {
            w.u32(*cf);
            w.opt(u.deletion, encode_deletion);
            w.u32(u.entries.len() as u32);
            for (key, entry) in &u.entries {
                w.bytes(key);
                encode_entry(*entry, &mut w, false);
            }
        }
        w.buf
    }

    #[test]
    fn version_2_payloads_are_read_and_are_longer() {
        let m = sample();
        let old = encode_v2(&m);
        assert_eq!(decode(&old, 2).unwrap(), m);
        assert_eq!(decode(&old, 1).unwrap(), m);
        // Read with the other format's rules, this payload is an error (a segment's records are
        // always read with the rules its header names).
        let mut w = Writer::default();
        encode(&m, &mut w);
        assert!(decode(&old, 3).is_err());
        assert!(decode(&w.buf, 2).is_err());
        // A point write (16-byte key, 8-byte name, 100-byte value) loses 18 bytes.
        let point = RowMutation {
            key: Cow::Borrowed(&[1u8; 16]),
            updates: vec![(
                1,
                RowUpdate {
                    deletion: None,
                    entries: vec![(
                        Cow::Borrowed(&[2u8; 8]),
                        cell(
                            5,
                            CellValueRef::Live {
                                value: &[7u8; 100],
                                ttl: None,
                            },
                        ),
                    )],
                },
            )],
        };
        let mut w = Writer::default();
        encode(&point, &mut w);
        assert_eq!(encode_v2(&point).len() - w.buf.len(), 18);
    }

    #[test]
    fn a_count_past_the_payload_is_refused_before_allocating() {
        let mut w = Writer::default();
        w.vbytes(b"k");
        w.varint(u64::MAX);
        assert!(decode(&w.buf, 3).is_err());
        let mut w = Writer::default();
        w.vbytes(b"k");
        w.varint(1);
        w.varint(1);
        w.u8(0);
        w.varint(1 << 40);
        assert!(decode(&w.buf, 3).is_err());
    }
}
