//! Replacing a small file atomically: write a temporary file, fsync it, rename it over the old
//! one, fsync the directory. After a crash the file is wholly old or wholly new.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Replaces `dir/name` with `contents`, durably.
pub fn replace(dir: &Path, name: &str, contents: &[u8]) -> Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let dst = dir.join(name);
    {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| Error::io(&tmp, e))?;
        f.write_all(contents).map_err(|e| Error::io(&tmp, e))?;
        f.sync_all().map_err(|e| Error::io(&tmp, e))?;
    }
    fs::rename(&tmp, &dst).map_err(|e| Error::io(&dst, e))?;
    sync_dir(dir)
}

/// Fsyncs a directory, so that creates, renames and removes in it are durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// Reads a whole file, or `None` if it does not exist.
pub fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Removes a leftover temporary file from an interrupted [`replace`], if any.
pub fn remove_leftover(dir: &Path, name: &str) -> Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    match fs::remove_file(&tmp) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(&tmp, e)),
    }
}
