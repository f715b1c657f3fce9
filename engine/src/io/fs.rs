//! The file-system operations the engine performs, as a trait with two implementations: the real
//! one ([`RealFs`]) and, in [`crate::io::fault`], one that can simulate power loss.
//!
//! Every file operation of the engine on its data goes through here: creating, appending,
//! fsyncing, renaming and removing files, fsyncing directories, and opening, reading and
//! listing them. The reads have default implementations on the real file system, which the
//! fault-injecting one keeps: they must see what a power-loss test left behind. (A path's
//! existence is asked of the real file system directly; a configuration file a user names is
//! read by `options`, outside any database.)

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

/// A directory's entry, as [`FileSystem::read_dir`] lists it (whether it is a directory or a
/// file follows symbolic links).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// The entry's path (the directory's path joined with its name).
    pub path: PathBuf,
    /// Whether it is a directory.
    pub is_dir: bool,
    /// Whether it is a regular file.
    pub is_file: bool,
}

/// The engine's door to the file system.
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
    /// Makes `to` a second name of the file at `from` (a snapshot's link to a live SSTable;
    /// durable once `to`'s directory is synced).
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::hard_link(from, to)
    }
    /// Makes creates, renames and removes in `dir` durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Makes the bytes of an existing file durable (fsync), whoever wrote them: a commit-log
    /// segment a crashed process wrote and a replay has just read.
    fn sync_file(&self, path: &Path) -> io::Result<()>;
    /// Opens a file for reading, by positioned reads or from its start (an SSTable, a segment's
    /// header).
    fn open_read(&self, path: &Path) -> io::Result<File> {
        File::open(path)
    }
    /// A whole file's bytes (a commit-log segment, at replay).
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path)
    }
    /// The entries of a directory, in no particular order.
    fn read_dir(&self, dir: &Path) -> io::Result<Vec<DirEntry>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(dir)? {
            let path = entry?.path();
            out.push(DirEntry {
                is_dir: path.is_dir(),
                is_file: path.is_file(),
                path,
            });
        }
        Ok(out)
    }
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
