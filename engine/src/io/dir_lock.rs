//! The exclusive lock on a data directory: an OS lock (flock-style) on the directory itself,
//! which the operating system releases when its holder dies, so a crashed process never blocks
//! the next.
//!
//! The lock is taken on the directory, not on a file in it: a lock file can be deleted (or
//! replaced) while held, and a second process would then lock a new file of the same name and
//! run recovery under the first one's feet. A directory cannot be removed while it holds the
//! database, and renaming it moves the lock with it. `db.lock` is still created, empty, so a
//! user sees the directory is a database's; nothing depends on it.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

use crate::error::{Error, Result};
use crate::file_names::LOCK as MARKER;

/// Holds the lock until dropped.
#[derive(Debug)]
pub struct DirLock {
    _dir: File,
}

impl DirLock {
    /// Takes the lock on `dir`, or fails at once with [`Error::Locked`] if another process (or
    /// another open database in this one) holds it.
    pub fn acquire(dir: &Path) -> Result<DirLock> {
        let marker = dir.join(MARKER);
        // Opening a directory read-only gives a descriptor flock accepts (Linux and the BSDs).
        let handle = File::open(dir).map_err(|e| Error::io(dir, e))?;
        match handle.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(Error::Locked {
                    dir: dir.to_path_buf(),
                    lock: marker,
                })
            }
            Err(TryLockError::Error(e)) => return Err(Error::io(dir, e)),
        }
        // The marker is informational; failing to create it (a read-only mount) is not fatal.
        let _ = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&marker);
        Ok(DirLock { _dir: handle })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_even_after_the_marker_is_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let a = DirLock::acquire(dir.path()).unwrap();
        std::fs::remove_file(dir.path().join(MARKER)).unwrap();
        assert!(matches!(
            DirLock::acquire(dir.path()),
            Err(Error::Locked { .. })
        ));
        drop(a);
        DirLock::acquire(dir.path()).unwrap();
    }
}
