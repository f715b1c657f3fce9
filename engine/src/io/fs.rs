//! The file-system operations the engine performs, as a trait with two implementations: the real
//! one ([`RealFs`]) and, in [`crate::io::fault`], one that can simulate power loss.
//!
//! Only effects that durability depends on go through here: creating, appending, fsyncing,
//! renaming and removing files, and fsyncing directories. Reads (`pread` of SSTables) use the real
//! files directly, as they must see what a power-loss test left behind.

use std::fmt::Debug;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A file open for appending. One writer appends at a time (its owner serializes them); a
/// sync may run while it does, and covers at least everything appended before it began.
pub trait WritableFile: Send + Sync + Debug {
    /// Appends `buf`.
    fn append(&self, buf: &[u8]) -> io::Result<()>;
    /// Appends `buf` in one system call, so a process killed meanwhile leaves all of it or none
    /// (a store into a mapping may be cut anywhere). A plain `write(2)` already is one.
    fn append_whole(&self, buf: &[u8]) -> io::Result<()> {
        self.append(buf)
    }
    /// Makes everything appended so far durable (fsync).
    fn sync(&self) -> io::Result<()>;
    /// Bytes in the file (durable or not).
    fn len(&self) -> u64;
    /// Whether the file is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The engine's door to the file system for everything durability depends on.
pub trait FileSystem: Send + Sync + Debug {
    /// Creates a directory and its parents (the creation is durable once the parent is synced).
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Creates (or truncates) a file for appending.
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;
    /// Creates (or truncates) a commit-log segment for appending, expected to hold about
    /// `capacity` bytes: the real file system maps it into memory, others append.
    fn create_log(&self, path: &Path, capacity: u64) -> io::Result<Box<dyn WritableFile>> {
        let _ = capacity;
        self.create(path)
    }
    /// Renames a file within its directory, replacing any file at `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Removes an empty directory (a dropped keyspace's). Nothing depends on its durability:
    /// a directory left behind by a power cut holds no file and is harmless.
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_dir(path)
    }
    /// Makes creates, renames and removes in `dir` durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Makes the bytes of an existing file durable (fsync), whoever wrote them: a commit-log
    /// segment a crashed process wrote and a replay has just read.
    fn sync_file(&self, path: &Path) -> io::Result<()>;
}

/// The operating system's file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealFs;

#[derive(Debug)]
struct RealFile {
    file: File,
    len: AtomicU64,
}

impl WritableFile for RealFile {
    fn append(&self, buf: &[u8]) -> io::Result<()> {
        (&self.file).write_all(buf)?;
        self.len.fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn len(&self) -> u64 {
        self.len.load(Ordering::Relaxed)
    }
}

impl FileSystem for RealFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::create_dir_all(path)
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(Box::new(RealFile {
            file,
            len: AtomicU64::new(0),
        }))
    }

    #[cfg(target_os = "linux")]
    fn create_log(&self, path: &Path, capacity: u64) -> io::Result<Box<dyn WritableFile>> {
        match super::mapped::MappedFile::create(path, capacity) {
            Ok(f) => Ok(Box::new(f)),
            // A file system that cannot map files still takes appends.
            Err(e) => {
                tracing::warn!(
                    "{} cannot be mapped ({e}): appending instead",
                    path.display()
                );
                self.create(path)
            }
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }

    fn sync_file(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_data()
    }
}

/// The directory a path's entry lives in (for `sync_dir` after a create, rename or remove).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
