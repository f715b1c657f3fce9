//! The engine's reads of its own files go through the `FileSystem` door, as its writes do: a
//! file system that fails them makes `Database::open` fail with an I/O error naming the file,
//! and one that counts them sees the SSTables opened and the commit log read.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use supercolumn::io::{DirEntry, FileSystem, RealFs, WritableFile};
use supercolumn::{ColumnPath, Database, Error, Options, WriteOptions};

/// The real file system, with every read recorded, and the reads of paths holding `fail`
/// failed with EIO.
#[derive(Debug, Default)]
struct Reads {
    fail: Mutex<Option<&'static str>>,
    seen: Mutex<Vec<PathBuf>>,
}

impl Reads {
    fn check(&self, path: &Path) -> io::Result<()> {
        self.seen.lock().push(path.to_path_buf());
        match *self.fail.lock() {
            Some(part) if path.to_string_lossy().contains(part) => {
                Err(io::Error::other("injected read error"))
            }
            _ => Ok(()),
        }
    }

    fn saw(&self, part: &str) -> bool {
        self.seen
            .lock()
            .iter()
            .any(|p| p.to_string_lossy().contains(part))
    }
}

impl FileSystem for Reads {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        RealFs.create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        RealFs.create(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        RealFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        RealFs.remove_file(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        RealFs.sync_dir(dir)
    }
    fn sync_file(&self, path: &Path) -> io::Result<()> {
        RealFs.sync_file(path)
    }
    fn open_read(&self, path: &Path) -> io::Result<File> {
        self.check(path)?;
        RealFs.open_read(path)
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.check(path)?;
        RealFs.read(path)
    }
    fn read_dir(&self, dir: &Path) -> io::Result<Vec<DirEntry>> {
        self.check(dir)?;
        RealFs.read_dir(dir)
    }
}

fn options(fs: &Arc<Reads>) -> Options {
    let mut o = Options::default();
    o.file_system = fs.clone();
    o
}

/// A database with one flushed row and one row only in the commit log.
fn written(dir: &Path) {
    let db = Database::open(dir, Options::default()).unwrap();
    let path = ColumnPath::new("Standard1").column(b"c");
    db.insert("Keyspace1", b"flushed", &path, b"v", WriteOptions::at(1))
        .unwrap();
    db.flush("Keyspace1", Some("Standard1")).unwrap();
    db.insert("Keyspace1", b"logged", &path, b"v", WriteOptions::at(2))
        .unwrap();
}

#[test]
fn opening_reads_sstables_and_the_commit_log_through_the_file_system() {
    let dir = tempfile::tempdir().unwrap();
    written(dir.path());
    let fs = Arc::new(Reads::default());
    let db = Database::open(dir.path(), options(&fs)).unwrap();
    assert!(
        fs.saw("Standard1-"),
        "no SSTable was opened through the door"
    );
    assert!(fs.saw("CommitLog-"), "no segment was read through the door");
    let path = ColumnPath::new("Standard1").column(b"c");
    assert!(db.get("Keyspace1", b"flushed", &path).unwrap().is_some());
    assert!(db.get("Keyspace1", b"logged", &path).unwrap().is_some());
}

#[test]
fn a_failed_read_of_an_sstable_or_a_segment_is_an_io_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    written(dir.path());
    for part in ["Standard1-", "CommitLog-"] {
        let fs = Arc::new(Reads::default());
        *fs.fail.lock() = Some(part);
        match Database::open(dir.path(), options(&fs)) {
            Err(Error::Io { path, .. }) => {
                assert!(path.to_string_lossy().contains(part), "{}", path.display())
            }
            Err(e) => panic!("{part}: another error: {e}"),
            Ok(_) => panic!("{part}: opened although its read failed"),
        }
    }
}
