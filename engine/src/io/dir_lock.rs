//! The exclusive lock on a data directory: an OS file lock (flock-style) on `db.lock`, which the
//! operating system releases when its holder dies, so a crashed process never blocks the next.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Holds the lock until dropped.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
    path: PathBuf,
}

impl DirLock {
    /// Takes the lock on `dir`, or fails at once with [`Error::Locked`] if another process (or
    /// another open database in this one) holds it.
    pub fn acquire(dir: &Path) -> Result<DirLock> {
        let path = dir.join("db.lock");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(DirLock { _file: file, path }),
            Err(TryLockError::WouldBlock) => Err(Error::Locked {
                dir: dir.to_path_buf(),
                lock: path,
            }),
            Err(TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
