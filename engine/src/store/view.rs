//! A column family's view: the memtables and SSTables a read consults, replaced whole (never
//! changed in place) by a memtable switch, a flush or a compaction, so a read sees one
//! consistent set. Readers take the current view without a lock or a shared reference count
//! (`arc_swap`'s load): every read of every thread used to take a read lock and clone an `Arc`
//! here, two writes to one cache line that all cores shared. Changes are serialized by a
//! mutex of their own. What a view holds is the store's business, not this file's.

use std::ops::{Deref, DerefMut};
use std::path::PathBuf;
use std::sync::Arc;

use arc_swap::{ArcSwap, Guard};
use parking_lot::{Mutex, MutexGuard};

use crate::commitlog::LogPosition;
use crate::error::{Error, FormatError, Result};
use crate::memtable::Memtable;
use crate::sstable::Sstable;

/// The sources a read consults, fixed for the read's duration.
#[derive(Debug, Default)]
pub(super) struct View {
    pub(super) active: Arc<Memtable>,
    /// Memtables waiting to be flushed, oldest first, each with the commit log position it
    /// covers up to.
    pub(super) frozen: Vec<(Arc<Memtable>, LogPosition)>,
    /// Live SSTables, oldest first.
    pub(super) sstables: Vec<Arc<Sstable>>,
    /// Live SSTables that failed their checks at open: (file, what is wrong). While any is
    /// here, reads of this CF report it rather than answer without it.
    pub(super) broken: Vec<(PathBuf, FormatError)>,
}

impl View {
    /// The first broken SSTable as an error, if there is one.
    pub(super) fn check_broken(&self) -> Result<()> {
        match self.broken.first() {
            None => Ok(()),
            Some((path, e)) => Err(Error::corrupt(path, e.clone())),
        }
    }
}

impl View {
    pub(super) fn memtables(&self) -> impl Iterator<Item = &Arc<Memtable>> {
        std::iter::once(&self.active).chain(self.frozen.iter().map(|(m, _)| m))
    }
}

/// The current view, and the lock its changes take.
#[derive(Debug)]
pub(super) struct ViewCell {
    current: ArcSwap<View>,
    changing: Mutex<()>,
}

impl ViewCell {
    pub(super) fn new(view: View) -> Self {
        ViewCell {
            current: ArcSwap::from_pointee(view),
            changing: Mutex::new(()),
        }
    }

    /// The current view, for a read: no lock, no reference count taken.
    pub(super) fn load(&self) -> Guard<Arc<View>> {
        self.current.load()
    }

    /// The current view, to change: whatever the guard holds when it drops becomes current.
    /// One change at a time; reads go on meanwhile, on the view before it.
    pub(super) fn write(&self) -> ViewWrite<'_> {
        let lock = self.changing.lock();
        ViewWrite {
            next: self.current.load_full(),
            cell: self,
            _lock: lock,
        }
    }
}

/// A change of view in progress (see [`ViewCell::write`]).
pub(super) struct ViewWrite<'a> {
    next: Arc<View>,
    cell: &'a ViewCell,
    _lock: MutexGuard<'a, ()>,
}

impl Deref for ViewWrite<'_> {
    type Target = Arc<View>;

    fn deref(&self) -> &Arc<View> {
        &self.next
    }
}

impl DerefMut for ViewWrite<'_> {
    fn deref_mut(&mut self) -> &mut Arc<View> {
        &mut self.next
    }
}

impl Drop for ViewWrite<'_> {
    fn drop(&mut self) {
        if !Arc::ptr_eq(&self.next, &self.cell.current.load()) {
            self.cell.current.store(self.next.clone());
        }
    }
}
