//! Replacing a small file atomically: write a temporary file, fsync it, rename it over the old
//! one, fsync the directory. After a crash the file is wholly old or wholly new.

use std::fs;
use std::path::Path;

use super::fs::FileSystem;
use crate::error::{Error, Result};

/// Replaces `dir/name` with `contents`, durably.
pub fn replace(fs: &dyn FileSystem, dir: &Path, name: &str, contents: &[u8]) -> Result<()> {
    let tmp = dir.join(crate::file_names::temp(name));
    let dst = dir.join(name);
    {
        let f = fs.create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        f.append(contents).map_err(|e| Error::io(&tmp, e))?;
        f.sync().map_err(|e| Error::io(&tmp, e))?;
    }
    fs.rename(&tmp, &dst).map_err(|e| Error::io(&dst, e))?;
    fs.sync_dir(dir).map_err(|e| Error::io(dir, e))
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
pub fn remove_leftover(fs: &dyn FileSystem, dir: &Path, name: &str) -> Result<()> {
    let tmp = dir.join(crate::file_names::temp(name));
    if !tmp.exists() {
        return Ok(());
    }
    fs.remove_file(&tmp).map_err(|e| Error::io(&tmp, e))?;
    fs.sync_dir(dir).map_err(|e| Error::io(dir, e))
}
