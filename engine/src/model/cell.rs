//! What is stored: cells (live or tombstone, with an optional TTL), deletion times of rows and
//! super columns, and the entries a stored row is made of.
//!
//! These are the engine's internal, already-validated forms; the public request and result types
//! live in [`crate::query`]. Names here are sort keys (see [`crate::model::comparator`]).

/// When something was deleted: the client's timestamp, and the server's local time (seconds) from
/// which the grace period is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DeletionTime {
    /// The deletion's timestamp: it shadows everything beneath it with a timestamp `<=` this.
    pub marked_for_delete_at: i64,
    /// Local time of the deletion, seconds since the epoch.
    pub local_deletion_time: i64,
}

impl DeletionTime {
    /// The later of two deletions (by timestamp, then by local deletion time), so merging is
    /// commutative and associative.
    pub fn merge(self, other: DeletionTime) -> DeletionTime {
        if (other.marked_for_delete_at, other.local_deletion_time)
            > (self.marked_for_delete_at, self.local_deletion_time)
        {
            other
        } else {
            self
        }
    }

    /// Merges two optional deletions.
    pub fn merge_opt(a: Option<DeletionTime>, b: Option<DeletionTime>) -> Option<DeletionTime> {
        match (a, b) {
            (Some(x), Some(y)) => Some(x.merge(y)),
            (x, None) => x,
            (None, y) => y,
        }
    }

    /// Whether this deletion hides a cell written at `timestamp` (a tie goes to the deletion).
    pub fn shadows(&self, timestamp: i64) -> bool {
        timestamp <= self.marked_for_delete_at
    }
}

/// A TTL: the seconds given at write time and the local time (seconds) the cell expires at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ttl {
    /// Seconds to live, as given by the client.
    pub ttl: u32,
    /// Seconds since the epoch at which the cell reads as deleted.
    pub local_expiration_time: i64,
}

/// A cell's payload.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CellValue {
    /// A value, possibly with a TTL.
    Live {
        /// The value bytes.
        value: Vec<u8>,
        /// The TTL, if the cell expires.
        ttl: Option<Ttl>,
    },
    /// A column tombstone.
    Tombstone {
        /// Local time of the deletion, seconds since the epoch.
        local_deletion_time: i64,
    },
}

/// One version of one column.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    /// The client's timestamp (microseconds by convention).
    pub timestamp: i64,
    /// Value or tombstone.
    pub value: CellValue,
}

impl Cell {
    /// A live cell.
    pub fn live(timestamp: i64, value: Vec<u8>, ttl: Option<Ttl>) -> Self {
        Cell {
            timestamp,
            value: CellValue::Live { value, ttl },
        }
    }

    /// A tombstone.
    #[cfg(test)]
    pub fn tombstone(timestamp: i64, local_deletion_time: i64) -> Self {
        Cell {
            timestamp,
            value: CellValue::Tombstone {
                local_deletion_time,
            },
        }
    }
}

/// A cell as stored, borrowed: what reconciling and reading need without copying the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellRef<'a> {
    /// The client's timestamp.
    pub timestamp: i64,
    /// Value or tombstone.
    pub value: CellValueRef<'a>,
}

/// A cell's payload, borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellValueRef<'a> {
    /// A value, possibly with a TTL.
    Live {
        /// The value bytes.
        value: &'a [u8],
        /// The TTL, if the cell expires.
        ttl: Option<Ttl>,
    },
    /// A column tombstone.
    Tombstone {
        /// Local time of the deletion, seconds since the epoch.
        local_deletion_time: i64,
    },
}

impl Cell {
    /// The cell, borrowed.
    pub fn as_ref(&self) -> CellRef<'_> {
        CellRef {
            timestamp: self.timestamp,
            value: match &self.value {
                CellValue::Live { value, ttl } => CellValueRef::Live { value, ttl: *ttl },
                CellValue::Tombstone {
                    local_deletion_time,
                } => CellValueRef::Tombstone {
                    local_deletion_time: *local_deletion_time,
                },
            },
        }
    }
}

impl CellRef<'_> {
    /// Whether the cell reads as deleted at `now_seconds`: a tombstone, or a TTL cell whose
    /// expiration time has come.
    pub fn is_deleted(&self, now_seconds: i64) -> bool {
        match &self.value {
            CellValueRef::Tombstone { .. } => true,
            CellValueRef::Live { ttl: Some(t), .. } => now_seconds >= t.local_expiration_time,
            CellValueRef::Live { ttl: None, .. } => false,
        }
    }

    /// The cell, owned.
    pub fn to_cell(self) -> Cell {
        Cell {
            timestamp: self.timestamp,
            value: match self.value {
                CellValueRef::Live { value, ttl } => CellValue::Live {
                    value: value.to_vec(),
                    ttl,
                },
                CellValueRef::Tombstone {
                    local_deletion_time,
                } => CellValue::Tombstone {
                    local_deletion_time,
                },
            },
        }
    }
}

/// An entry as stored, borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryRef<'a> {
    /// A column, or a sub-column of a super column.
    Cell(CellRef<'a>),
    /// The deletion of a group of entries: a whole super column, or in a Standard CF with a
    /// composite comparator every name under a composite prefix (see [`crate::model::cell_key`]).
    GroupDeletion(DeletionTime),
}

impl EntryRef<'_> {
    /// The entry, owned.
    pub fn to_entry(self) -> Entry {
        match self {
            EntryRef::Cell(c) => Entry::Cell(c.to_cell()),
            EntryRef::GroupDeletion(d) => Entry::GroupDeletion(d),
        }
    }

    /// The timestamp that decides what it shadows or is shadowed by.
    pub fn timestamp(self) -> i64 {
        match self {
            EntryRef::Cell(c) => c.timestamp,
            EntryRef::GroupDeletion(d) => d.marked_for_delete_at,
        }
    }
}

impl Entry {
    /// The entry, borrowed.
    pub fn as_ref(&self) -> EntryRef<'_> {
        match self {
            Entry::Cell(c) => EntryRef::Cell(c.as_ref()),
            Entry::GroupDeletion(d) => EntryRef::GroupDeletion(*d),
        }
    }
}

/// One entry of a stored row, under its key (see [`crate::model::cell_key`] for the key layout).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Entry {
    /// A column, or a sub-column of a super column.
    Cell(Cell),
    /// The deletion of a group of entries, stored under the group's key: a whole super column,
    /// or every name under a composite prefix (see [`crate::model::cell_key`]).
    GroupDeletion(DeletionTime),
}

/// An entry a reader is handed: lent from where it lies (a block in the cache), or owned where
/// it had to be built (a merge of versions), so a reader that keeps a value takes it without a
/// copy when it can.
#[derive(Debug)]
pub enum EntryIn<'a> {
    /// Borrowed from its source.
    Lent(EntryRef<'a>),
    /// Built for the reader.
    Owned(Entry),
}

/// A cell a reader is handed: borrowed from where it is stored (a memtable, a cached block),
/// or built for the reader (merged from several sources).
#[derive(Debug)]
pub enum CellIn<'a> {
    /// Borrowed from its source.
    Lent(CellRef<'a>),
    /// Built for the reader.
    Owned(Cell),
}

impl<'a> EntryIn<'a> {
    /// The cell, if the entry is one.
    pub fn into_cell(self) -> Option<CellIn<'a>> {
        match self {
            EntryIn::Lent(EntryRef::Cell(c)) => Some(CellIn::Lent(c)),
            EntryIn::Owned(Entry::Cell(c)) => Some(CellIn::Owned(c)),
            EntryIn::Lent(EntryRef::GroupDeletion(_)) | EntryIn::Owned(Entry::GroupDeletion(_)) => {
                None
            }
        }
    }
}

impl CellIn<'_> {
    /// The cell, borrowed.
    pub fn as_ref(&self) -> CellRef<'_> {
        match self {
            CellIn::Lent(c) => *c,
            CellIn::Owned(c) => c.as_ref(),
        }
    }

    /// A live cell's value (moved when owned, copied when lent) and TTL; `None` for a
    /// tombstone.
    pub fn into_live(self) -> Option<(Vec<u8>, Option<Ttl>)> {
        match self {
            CellIn::Lent(CellRef {
                value: CellValueRef::Live { value, ttl },
                ..
            }) => Some((value.to_vec(), ttl)),
            CellIn::Owned(Cell {
                value: CellValue::Live { value, ttl },
                ..
            }) => Some((value, ttl)),
            CellIn::Lent(_) | CellIn::Owned(_) => None,
        }
    }
}
