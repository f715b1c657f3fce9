//! One row of a memtable: its deletion and its entries, reconciled on the way in, and its view
//! as a [`RowSource`] for reads. The lock around it (in [`MemRow`]) is what makes a row mutation
//! visible all at once.

use std::borrow::Cow;
use std::ops::Bound;

use parking_lot::RwLock;

use crate::error::Result;
use crate::merge::{EntryItem, RowSource};
use crate::model::cell::{DeletionTime, Entry};
use crate::model::cell_key;
use crate::model::reconcile::supersedes;
use crate::mutation::RowUpdate;

use super::entries::Entries;

/// Rough fixed cost of an entry in memory, for accounting.
const ENTRY_OVERHEAD: usize = 48;

/// One row in a memtable.
#[derive(Debug)]
pub struct MemRow {
    /// The row's contents (the row key is the map's [`RowKey`](super::RowKey)).
    pub data: RwLock<RowData>,
}

/// A row's contents: its deletion and its entries by key.
#[derive(Debug, Default)]
pub struct RowData {
    /// The row tombstone, if any.
    pub deletion: Option<DeletionTime>,
    /// Entries by key (see [`crate::model::cell_key`]).
    pub entries: Entries,
}

fn entry_size(key: &[u8], e: &Entry) -> isize {
    let body = match e {
        Entry::Cell(c) => c.heap_size(),
        Entry::SuperColumnDeletion(_) => std::mem::size_of::<DeletionTime>(),
    };
    (ENTRY_OVERHEAD + key.len() + body) as isize
}

fn entry_timestamp(e: &Entry) -> i64 {
    match e {
        Entry::Cell(c) => c.timestamp,
        Entry::SuperColumnDeletion(d) => d.marked_for_delete_at,
    }
}

impl RowData {
    /// Applies an update; returns the change in bytes held.
    pub fn apply(&mut self, update: &RowUpdate, is_super: bool) -> isize {
        let mut delta = 0isize;
        if let Some(d) = update.deletion {
            let merged = DeletionTime::merge_opt(self.deletion, Some(d));
            self.deletion = merged;
            if let Some(m) = merged {
                self.entries.retain(|k, e| {
                    let keep = !m.shadows(entry_timestamp(e));
                    if !keep {
                        delta -= entry_size(k, e);
                    }
                    keep
                });
            }
        }
        for (key, entry) in &update.entries {
            if self
                .deletion
                .is_some_and(|d| d.shadows(entry_timestamp(entry)))
            {
                continue;
            }
            match entry {
                Entry::SuperColumnDeletion(d) => delta += self.apply_super_deletion(key, *d),
                Entry::Cell(cell) => {
                    if is_super && self.shadowed_by_super_column(key, cell.timestamp) {
                        continue;
                    }
                    match self.entries.get_mut(key.as_slice()) {
                        Some(Entry::Cell(old)) => {
                            if supersedes(cell, old) {
                                delta += cell.heap_size() as isize - old.heap_size() as isize;
                                *old = cell.clone();
                            }
                        }
                        _ => {
                            delta += entry_size(key, entry);
                            if let Some(old) = self.entries.insert(key.clone(), entry.clone()) {
                                delta -= entry_size(key, &old);
                            }
                        }
                    }
                }
            }
        }
        delta
    }

    fn shadowed_by_super_column(&self, key: &[u8], timestamp: i64) -> bool {
        let Some(plen) = cell_key::group_prefix_len(key) else {
            return false;
        };
        matches!(self.entries.get(&key[..plen]), Some(Entry::SuperColumnDeletion(d)) if d.shadows(timestamp))
    }

    fn apply_super_deletion(&mut self, prefix: &[u8], d: DeletionTime) -> isize {
        let mut delta = 0isize;
        if cell_key::group_prefix_len(prefix) != Some(prefix.len()) {
            // Validation and replay never let such a key through; refuse rather than panic.
            return 0;
        }
        let merged = match self.entries.get(prefix) {
            Some(Entry::SuperColumnDeletion(old)) => old.merge(d),
            _ => {
                let e = Entry::SuperColumnDeletion(d);
                delta += entry_size(prefix, &e);
                d
            }
        };
        self.entries
            .insert(prefix.to_vec(), Entry::SuperColumnDeletion(merged));
        let end = cell_key::group_end(prefix);
        let doomed: Vec<Vec<u8>> = self
            .entries
            .range(Bound::Excluded(prefix), Bound::Excluded(end.as_slice()))
            .filter(|(_, e)| merged.shadows(entry_timestamp(e)))
            .map(|(k, _)| k.to_vec())
            .collect();
        for k in doomed {
            if let Some(e) = self.entries.remove(&k) {
                delta -= entry_size(&k, &e);
            }
        }
        delta
    }
}

impl RowSource for RowData {
    fn deletion(&self) -> Result<Option<DeletionTime>> {
        Ok(self.deletion)
    }

    fn scan<'s>(
        &'s self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        reversed: bool,
    ) -> Box<dyn Iterator<Item = Result<EntryItem<'s>>> + 's> {
        let it = self
            .entries
            .range(lo, hi)
            .map(|(k, e)| Ok((Cow::Borrowed(k), Cow::Borrowed(e))));
        if reversed {
            Box::new(it.rev())
        } else {
            Box::new(it)
        }
    }
}
