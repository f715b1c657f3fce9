//! The batch a user fills and [`Database::batch_mutate`](crate::Database::batch_mutate) applies.
//!
//! A batch keeps every byte it is given (row keys, column family names, names, values) in one
//! buffer and each mutation as a few offsets into it, and stores a row key or a column family
//! name once for a run of mutations that repeat it; so filling a batch costs a copy of the
//! bytes and no allocation per mutation. It owns no validation: that is the parent module's.

use std::fmt;
use std::sync::Arc;

use super::{SortedName, WriteOptions};
use crate::model::comparator::Comparator;
use crate::query::{AsColumnPath, ColumnPath, ColumnPathRef};

/// One change to one row, owned: the form [`BatchMutation::push`] takes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mutation {
    /// Writes a column (Standard CF) or a sub-column (Super CF): the path names the column.
    Insert {
        /// Where: CF, super column (Super CFs), column.
        path: ColumnPath,
        /// The value.
        value: Vec<u8>,
        /// Timestamp and TTL.
        write: WriteOptions,
    },
    /// Deletes what the path names: the row (CF only), a super column, or a column.
    Remove {
        /// What to delete.
        path: ColumnPath,
        /// The deletion's timestamp; `None`: now.
        timestamp: Option<i64>,
    },
    /// Deletes every column of a Standard CF with a `CompositeType` comparator whose name begins
    /// with the components of the path's column and has more components than it (a CQL row, a
    /// collection): a range tombstone over a composite prefix.
    RemovePrefix {
        /// The CF and the composite prefix (its components' end-of-component bytes are ignored).
        path: ColumnPath,
        /// The deletion's timestamp; `None`: now.
        timestamp: Option<i64>,
    },
    /// Deletes every non-static column of a Standard CF with a `CompositeType` comparator whose
    /// name lies from `start` to `finish`, both inclusive in the comparator's order (a bound's
    /// end-of-component byte makes it strict; empty: open on that side): a range tombstone,
    /// CQL's `DELETE … WHERE k = ? AND c >= ? AND c < ?`.
    RemoveRange {
        /// The CF.
        column_family: String,
        /// The first name deleted, a composite name or bound (empty: from the first).
        start: Vec<u8>,
        /// The last name deleted (empty: to the last).
        finish: Vec<u8>,
        /// The deletion's timestamp; `None`: now.
        timestamp: Option<i64>,
    },
}

impl Mutation {
    /// An insert, for [`BatchMutation::push`].
    pub fn insert(path: ColumnPath, value: impl AsRef<[u8]>, write: WriteOptions) -> Self {
        Mutation::Insert {
            path,
            value: value.as_ref().to_vec(),
            write,
        }
    }
}

/// One change to one row as a batch holds it: borrowed from the batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MutationRef<'a> {
    /// Writes a column (Standard CF) or a sub-column (Super CF).
    Insert {
        /// Where: CF, super column (Super CFs), column.
        path: ColumnPathRef<'a>,
        /// The value.
        value: &'a [u8],
        /// Timestamp and TTL.
        write: WriteOptions,
    },
    /// Deletes what the path names.
    Remove {
        /// What to delete.
        path: ColumnPathRef<'a>,
        /// The deletion's timestamp; `None`: now.
        timestamp: Option<i64>,
    },
    /// Deletes every column under the composite prefix the path's column names.
    RemovePrefix {
        /// The CF and the prefix.
        path: ColumnPathRef<'a>,
        /// The deletion's timestamp; `None`: now.
        timestamp: Option<i64>,
    },
    /// Deletes every non-static column from `start` to `finish` (see [`Mutation::RemoveRange`]).
    RemoveRange {
        /// The CF.
        path: ColumnPathRef<'a>,
        /// The first name deleted (empty: from the first).
        start: &'a [u8],
        /// The last name deleted (empty: to the last).
        finish: &'a [u8],
        /// The deletion's timestamp; `None`: now.
        timestamp: Option<i64>,
    },
}

impl<'a> MutationRef<'a> {
    /// The path the mutation names.
    pub fn path(&self) -> ColumnPathRef<'a> {
        match *self {
            MutationRef::Insert { path, .. }
            | MutationRef::Remove { path, .. }
            | MutationRef::RemovePrefix { path, .. }
            | MutationRef::RemoveRange { path, .. } => path,
        }
    }

    /// An owned copy.
    pub fn to_mutation(&self) -> Mutation {
        match *self {
            MutationRef::Insert { path, value, write } => Mutation::Insert {
                path: path.to_owned_path(),
                value: value.to_vec(),
                write,
            },
            MutationRef::Remove { path, timestamp } => Mutation::Remove {
                path: path.to_owned_path(),
                timestamp,
            },
            MutationRef::RemovePrefix { path, timestamp } => Mutation::RemovePrefix {
                path: path.to_owned_path(),
                timestamp,
            },
            MutationRef::RemoveRange {
                path,
                start,
                finish,
                timestamp,
            } => Mutation::RemoveRange {
                column_family: path.column_family.to_string(),
                start: start.to_vec(),
                finish: finish.to_vec(),
                timestamp,
            },
        }
    }
}

/// Where some bytes sit in the batch's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    at: usize,
    len: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Insert {
        value: Span,
        write: WriteOptions,
    },
    Remove {
        timestamp: Option<i64>,
    },
    RemovePrefix {
        timestamp: Option<i64>,
    },
    /// The start is the item's column; the finish is here.
    RemoveRange {
        finish: Span,
        timestamp: Option<i64>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Item {
    key: Span,
    column_family: Span,
    super_column: Option<Span>,
    column: Option<Span>,
    /// The sort key of an insert's name, when it came built (see
    /// [`BatchMutation::insert_sorted`]), and the comparator it was built for (an index into
    /// `BatchMutation::built_for`).
    sort_key: Option<(Span, u32)>,
    op: Op,
}

/// A sorted insert's sort key and the comparator its name was built for, as
/// [`BatchMutation::iter_sorted`] yields them.
pub(crate) type Sorted<'b> = Option<(&'b [u8], Option<&'b Arc<dyn Comparator>>)>;

/// A comparator a [`SortedName`] was built for, compared by identity: the name's sort key is
/// taken as given only by a column family whose comparator is this very one.
#[derive(Clone, Debug)]
struct BuiltFor(Arc<dyn Comparator>);

impl PartialEq for BuiltFor {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for BuiltFor {}

/// Many mutations over many rows and column families of one keyspace, applied by
/// [`Database::batch_mutate`](crate::Database::batch_mutate). All mutations of one row of one
/// column family apply atomically; the whole batch is validated before any of it is applied.
///
/// Paths may be owned ([`ColumnPath`]) or borrowed ([`ColumnPathRef`], which copies nothing
/// until the batch stores the bytes):
///
/// ```
/// use supercolumn::{BatchMutation, ColumnPath, ColumnPathRef, WriteOptions};
/// let mut b = BatchMutation::new();
/// b.insert("jsmith", ColumnPath::new("Standard1").column("first"), "John", WriteOptions::now());
/// for i in 0u64..100 {
///     let name = i.to_be_bytes();
///     b.insert("events", ColumnPathRef::new("Wide1").column(&name), "x", WriteOptions::now());
/// }
/// assert_eq!(b.len(), 101);
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct BatchMutation {
    bytes: Vec<u8>,
    items: Vec<Item>,
    /// The comparators the sorted names of `items` were built for.
    built_for: Vec<BuiltFor>,
}

impl BatchMutation {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an insert.
    pub fn insert(
        &mut self,
        key: impl AsRef<[u8]>,
        path: impl AsColumnPath,
        value: impl AsRef<[u8]>,
        write: WriteOptions,
    ) -> &mut Self {
        let (key, path, value) = (key.as_ref(), path.as_column_path(), value.as_ref());
        // One allocation for all of it (a batch of one insert would otherwise grow twice).
        self.bytes.reserve(
            value.len()
                + key.len()
                + path.column_family.len()
                + path.super_column.map_or(0, <[u8]>::len)
                + path.column.map_or(0, <[u8]>::len),
        );
        let value = self.store(value);
        self.add(key, path, Op::Insert { value, write });
        self
    }

    /// Adds an insert into a Standard column family of a name built with its sort key (a
    /// [`SortedName`]): for a caller that writes many names sharing a prefix (CQL's planned
    /// writes). When the column family's comparator is the very one the name was built for,
    /// applying it takes the sort key as given (the name was validated as it was built);
    /// otherwise (the table was altered since, say) the name is validated and its sort key
    /// checked as [`insert`](Self::insert) would encode it.
    pub fn insert_sorted(
        &mut self,
        key: &[u8],
        column_family: &str,
        name: &SortedName,
        value: &[u8],
        write: WriteOptions,
    ) -> &mut Self {
        let (bytes, sort_key) = (name.name(), name.sort_key());
        self.bytes
            .reserve(value.len() + bytes.len() + sort_key.len());
        let value = self.store(value);
        let path = ColumnPathRef::new(column_family).column(bytes);
        self.add(key, path, Op::Insert { value, write });
        let sort_key = self.store(sort_key);
        let built_for = match name.comparator() {
            Some(c) => self.built_for_index(c),
            None => u32::MAX,
        };
        if let Some(item) = self.items.last_mut() {
            item.sort_key = Some((sort_key, built_for));
        }
        self
    }

    fn built_for_index(&mut self, c: &Arc<dyn Comparator>) -> u32 {
        // A batch's names are built for one or two tables' comparators.
        let i = match self.built_for.iter().position(|b| Arc::ptr_eq(&b.0, c)) {
            Some(i) => i,
            None => {
                self.built_for.push(BuiltFor(c.clone()));
                self.built_for.len() - 1
            }
        };
        u32::try_from(i).unwrap_or(u32::MAX)
    }

    /// Adds a deletion of a row, super column or column.
    pub fn remove(
        &mut self,
        key: impl AsRef<[u8]>,
        path: impl AsColumnPath,
        timestamp: Option<i64>,
    ) -> &mut Self {
        self.add(
            key.as_ref(),
            path.as_column_path(),
            Op::Remove { timestamp },
        );
        self
    }

    /// Adds a deletion of every column under a composite prefix (see
    /// [`Mutation::RemovePrefix`]).
    pub fn remove_prefix(
        &mut self,
        key: impl AsRef<[u8]>,
        path: impl AsColumnPath,
        timestamp: Option<i64>,
    ) -> &mut Self {
        self.add(
            key.as_ref(),
            path.as_column_path(),
            Op::RemovePrefix { timestamp },
        );
        self
    }

    /// Adds a deletion of every non-static column of `column_family` from `start` to `finish`
    /// (see [`Mutation::RemoveRange`]).
    pub fn remove_range(
        &mut self,
        key: impl AsRef<[u8]>,
        column_family: &str,
        start: &[u8],
        finish: &[u8],
        timestamp: Option<i64>,
    ) -> &mut Self {
        let finish = self.store(finish);
        let path = ColumnPathRef::new(column_family).column(start);
        self.add(key.as_ref(), path, Op::RemoveRange { finish, timestamp });
        self
    }

    /// Adds any mutation.
    pub fn push(&mut self, key: impl AsRef<[u8]>, mutation: Mutation) -> &mut Self {
        match mutation {
            Mutation::Insert { path, value, write } => self.insert(key, &path, value, write),
            Mutation::Remove { path, timestamp } => self.remove(key, &path, timestamp),
            Mutation::RemovePrefix { path, timestamp } => self.remove_prefix(key, &path, timestamp),
            Mutation::RemoveRange {
                column_family,
                start,
                finish,
                timestamp,
            } => self.remove_range(key, &column_family, &start, &finish, timestamp),
        }
    }

    /// Makes room for `mutations` more mutations holding `bytes` more bytes of keys, names
    /// and values, so a batch filled in a loop grows once.
    pub fn reserve(&mut self, mutations: usize, bytes: usize) -> &mut Self {
        self.items.reserve(mutations);
        self.bytes.reserve(bytes);
        self
    }

    /// Empties the batch, keeping its room (a caller that fills one batch per statement).
    #[inline]
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.items.clear();
        self.built_for.clear();
    }

    /// Bytes of room the batch holds, used or not.
    #[inline]
    pub fn capacity_bytes(&self) -> usize {
        self.bytes.capacity() + self.items.capacity() * std::mem::size_of::<Item>()
    }

    /// Bytes of keys, names and values held (what [`reserve`](Self::reserve) counts).
    #[inline]
    pub fn stored_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Number of mutations.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The mutations with their row keys, in the order added.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], MutationRef<'_>)> {
        self.iter_sorted().map(|(key, m, _)| (key, m))
    }

    /// The mutations with their row keys and, for inserts added by
    /// [`insert_sorted`](Self::insert_sorted), their names' sort keys and the comparator they
    /// were built for.
    pub(crate) fn iter_sorted(&self) -> impl Iterator<Item = (&[u8], MutationRef<'_>, Sorted<'_>)> {
        self.items.iter().map(|item| {
            let path = ColumnPathRef {
                column_family: self.name(item.column_family),
                super_column: item.super_column.map(|s| self.get(s)),
                column: item.column.map(|s| self.get(s)),
            };
            let m = match item.op {
                Op::Insert { value, write } => MutationRef::Insert {
                    path,
                    value: self.get(value),
                    write,
                },
                Op::Remove { timestamp } => MutationRef::Remove { path, timestamp },
                Op::RemovePrefix { timestamp } => MutationRef::RemovePrefix { path, timestamp },
                Op::RemoveRange { finish, timestamp } => MutationRef::RemoveRange {
                    start: path.column.unwrap_or_default(),
                    path: ColumnPathRef {
                        column: None,
                        ..path
                    },
                    finish: self.get(finish),
                    timestamp,
                },
            };
            let sorted = item.sort_key.map(|(s, b)| {
                let built_for = self.built_for.get(b as usize).map(|b| &b.0);
                (self.get(s), built_for)
            });
            (self.get(item.key), m, sorted)
        })
    }

    fn get(&self, s: Span) -> &[u8] {
        &self.bytes[s.at..s.at + s.len]
    }

    fn name(&self, s: Span) -> &str {
        // Stored from a `&str` by `add`, so always whole UTF-8.
        std::str::from_utf8(self.get(s)).unwrap_or_default()
    }

    fn store(&mut self, b: &[u8]) -> Span {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(b);
        Span { at, len: b.len() }
    }

    /// `b` where the last mutation stored it (a run of writes to one row or CF), else a copy.
    fn store_shared(&mut self, b: &[u8], last: Option<Span>) -> Span {
        match last {
            Some(s) if self.get(s) == b => s,
            _ => self.store(b),
        }
    }

    fn add(&mut self, key: &[u8], path: ColumnPathRef<'_>, op: Op) {
        let last = self.items.last().copied();
        let key = self.store_shared(key, last.map(|l| l.key));
        let column_family =
            self.store_shared(path.column_family.as_bytes(), last.map(|l| l.column_family));
        let super_column = path.super_column.map(|s| self.store(s));
        let column = path.column.map(|c| self.store(c));
        self.items.push(Item {
            key,
            column_family,
            super_column,
            column,
            sort_key: None,
            op,
        });
    }
}

impl fmt::Debug for BatchMutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_gives_back_what_was_added_in_order() {
        let mut b = BatchMutation::new();
        let name = 7u64.to_be_bytes();
        b.insert(
            "r1",
            ColumnPath::new("Standard1").column("a"),
            "1",
            WriteOptions::at(5),
        );
        b.insert(
            "r1",
            ColumnPathRef::new("Standard1").column(&name),
            "",
            WriteOptions::now(),
        );
        b.remove("r2", ColumnPath::new("Super1").super_column("sc"), Some(9));
        b.push(
            "r1",
            Mutation::insert(
                ColumnPath::new("Super1").super_column("sc").column("c"),
                "v",
                WriteOptions::now().with_ttl(3),
            ),
        );
        b.remove("r3", ColumnPathRef::new("Standard1"), None);
        let got: Vec<(Vec<u8>, Mutation)> = b
            .iter()
            .map(|(k, m)| (k.to_vec(), m.to_mutation()))
            .collect();
        let want = vec![
            (
                b"r1".to_vec(),
                Mutation::insert(
                    ColumnPath::new("Standard1").column("a"),
                    "1",
                    WriteOptions::at(5),
                ),
            ),
            (
                b"r1".to_vec(),
                Mutation::insert(
                    ColumnPath::new("Standard1").column(name),
                    "",
                    WriteOptions::now(),
                ),
            ),
            (
                b"r2".to_vec(),
                Mutation::Remove {
                    path: ColumnPath::new("Super1").super_column("sc"),
                    timestamp: Some(9),
                },
            ),
            (
                b"r1".to_vec(),
                Mutation::insert(
                    ColumnPath::new("Super1").super_column("sc").column("c"),
                    "v",
                    WriteOptions::now().with_ttl(3),
                ),
            ),
            (
                b"r3".to_vec(),
                Mutation::Remove {
                    path: ColumnPath::new("Standard1"),
                    timestamp: None,
                },
            ),
        ];
        assert_eq!(got, want);
        assert_eq!(b.len(), 5);
    }

    #[test]
    fn a_run_of_writes_to_one_row_stores_its_key_and_column_family_once() {
        let mut b = BatchMutation::new();
        for i in 0u64..100 {
            let name = i.to_be_bytes();
            b.insert(
                "row",
                ColumnPathRef::new("Wide1").column(&name),
                [1u8; 8],
                WriteOptions::now(),
            );
        }
        assert_eq!(b.bytes.len(), "row".len() + "Wide1".len() + 100 * 16);
    }
}
