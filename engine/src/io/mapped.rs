//! A commit-log segment written through a shared memory mapping of its file (Cassandra's
//! segments are mapped too). An append is a copy into the page cache, with no system call: a
//! `write(2)` per acknowledged mutation was over a quarter of a single-row insert. The pages
//! belong to the kernel from the moment they are written, so what was appended survives the
//! process being killed exactly as written bytes do, and `sync` (`fdatasync`, which on Linux
//! writes back a file's pages dirtied through shared mappings as well) makes it durable.
//!
//! The file grows a step at a time with `posix_fallocate`, before any byte of the step is
//! stored: a full disk is an error from `append`, never a SIGBUS from a store into a hole. What
//! does not fit the mapping (a record larger than the segment), a large append, and an
//! `append_whole` (several records, which a kill must not cut between: a store into the mapping
//! can be cut anywhere, one `pwrite` of a few KiB cannot) are written with `pwrite` at the same
//! offset. Dropping the file trims it to what was appended; a killed process leaves the
//! zeros of its last step, which a segment reader takes for the end of what was written.
//!
//! This file moves bytes into a file; what they mean is the commit log's.

#![expect(
    unsafe_code,
    reason = "mapping the file, and posix_fallocate: an append without a system call"
)]

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{MmapMut, MmapOptions, UncheckedAdvice};
use parking_lot::Mutex;

use super::fs::WritableFile;

/// Bytes the file grows by at a time (and at most the zeros a killed process leaves).
const STEP: u64 = 1 << 20;

/// Appends at least this long are written with `pwrite`, not through the mapping.
const DIRECT: usize = 2048;

/// Bytes appended through mappings by this process, which `write(2)` counters cannot see.
static MAPPED_BYTES: AtomicU64 = AtomicU64::new(0);

/// Bytes this process has appended to files through memory mappings (commit-log records):
/// add it to the bytes passed to `write(2)` for everything the process wrote.
pub fn mapped_bytes_written() -> u64 {
    MAPPED_BYTES.load(Ordering::Relaxed)
}

/// The appender's side: the mapping and how far the file is allocated.
#[derive(Debug)]
struct Tail {
    map: Option<MmapMut>,
    /// The file's size: every mapped byte below it is backed by allocated blocks.
    allocated: u64,
    /// Bytes below this are written for good and unmapped from this process.
    released: u64,
}

/// A file appended to through a shared mapping of its first `capacity` bytes.
#[derive(Debug)]
pub struct MappedFile {
    file: File,
    tail: Mutex<Tail>,
    capacity: u64,
    len: AtomicU64,
}

impl MappedFile {
    /// Creates (or truncates) `path` for appending, mapping its first `capacity` bytes.
    pub fn create(path: &Path, capacity: u64) -> io::Result<MappedFile> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        let map_len = usize::try_from(capacity.max(1))
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "mapping too large"))?;
        // SAFETY: the file was just created (truncated) by this process, whose directory lock
        // keeps every other engine out of it; nothing else maps or writes it while the mapping
        // lives. Stores go only below the file's allocated size (`append`), so no access
        // touches a page past the end of the file.
        let map = unsafe { MmapOptions::new().len(map_len).map_mut(&file)? };
        Ok(MappedFile {
            file,
            tail: Mutex::new(Tail {
                map: Some(map),
                allocated: 0,
                released: 0,
            }),
            capacity: map_len as u64,
            len: AtomicU64::new(0),
        })
    }

    /// Allocates the file's blocks up to `end` (and its size with them).
    fn allocate(&self, tail: &mut Tail, end: u64) -> io::Result<()> {
        if end <= tail.allocated {
            return Ok(());
        }
        let to = end.div_ceil(STEP).saturating_mul(STEP).min(self.capacity);
        let (offset, len) = (tail.allocated, to - tail.allocated);
        let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len))
        else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "file too large",
            ));
        };
        // SAFETY: a plain system call on a file descriptor this struct owns; it reads no memory.
        let rc = unsafe { libc::posix_fallocate(self.file.as_raw_fd(), offset, len) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        tail.allocated = to;
        Ok(())
    }
}

/// Copies `from` into `to` front to back, so a process killed mid-copy leaves a prefix of it,
/// as a cut `write(2)` does: a segment reader takes what follows an intact record for a torn
/// tail only if no intact record follows it. (`memcpy` may store a buffer's first bytes last.)
fn store_in_order(to: &mut [u8], from: &[u8]) {
    let mut to_words = to.chunks_exact_mut(8);
    let mut from_words = from.chunks_exact(8);
    for (t, f) in (&mut to_words).zip(&mut from_words) {
        let word: [u8; 8] = [f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]];
        // SAFETY: `t` is 8 bytes of a live mutable slice ([u8; 8] has alignment 1); a volatile
        // store is neither merged with nor moved past its neighbours by the compiler.
        unsafe { t.as_mut_ptr().cast::<[u8; 8]>().write_volatile(word) };
    }
    for (t, f) in to_words
        .into_remainder()
        .iter_mut()
        .zip(from_words.remainder())
    {
        // SAFETY: as above, one byte.
        unsafe { std::ptr::from_mut(t).write_volatile(*f) };
    }
}

impl MappedFile {
    /// Appends `buf`, through the mapping when `mapped` and it fits, else with `pwrite`.
    fn append_as(&self, buf: &[u8], mapped: bool) -> io::Result<()> {
        let mut guard = self.tail.lock();
        let tail = &mut *guard;
        let start = self.len.load(Ordering::Relaxed);
        let end = start + buf.len() as u64;
        if mapped && end <= self.capacity {
            self.allocate(tail, end)?;
            let map = tail
                .map
                .as_mut()
                .ok_or_else(|| io::Error::other("appending to a closed file"))?;
            store_in_order(&mut map[start as usize..end as usize], buf);
            MAPPED_BYTES.fetch_add(buf.len() as u64, Ordering::Relaxed);
            // Whole steps behind the tail are never stored to again: unmapping them keeps the
            // process's resident set to one step, and spares a sync from write-protecting each
            // page it writes back (a TLB flush per page).
            let done = start / STEP * STEP;
            if done > tail.released {
                let from = tail.released;
                // SAFETY: MADV_DONTNEED on a shared file mapping only drops this process's page
                // table entries (a dirty entry marks its page dirty first); the bytes stay in the
                // file and its page cache. Nothing holds a reference into the range.
                let dropped = unsafe {
                    map.unchecked_advise_range(
                        UncheckedAdvice::DontNeed,
                        from as usize,
                        (done - from) as usize,
                    )
                };
                if dropped.is_ok() {
                    tail.released = done;
                }
            }
        } else {
            // A large append, or one past the mapping: the file takes it directly (the page
            // cache is shared with the mapping). One system call then costs less than a page
            // fault per 4 KiB the mapping would take.
            self.file.write_all_at(buf, start)?;
        }
        self.len.store(end, Ordering::Release);
        Ok(())
    }
}

impl WritableFile for MappedFile {
    fn append(&self, buf: &[u8]) -> io::Result<()> {
        self.append_as(buf, buf.len() < DIRECT)
    }

    fn append_whole(&self, buf: &[u8]) -> io::Result<()> {
        self.append_as(buf, false)
    }

    fn sync(&self) -> io::Result<()> {
        // Stores through the shared mapping dirty the file's pages, which fdatasync writes back
        // with the allocation that holds them.
        self.file.sync_data()
    }

    fn len(&self) -> u64 {
        self.len.load(Ordering::Relaxed)
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        let mut tail = self.tail.lock();
        drop(tail.map.take());
        let len = self.len.load(Ordering::Acquire);
        if tail.allocated > len {
            // Only zeros go; a failure leaves them, which a reader takes for the end.
            if let Err(e) = self.file.set_len(len) {
                tracing::warn!("trimming a commit log segment to {len} bytes failed: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn appends_land_in_the_file_and_closing_trims_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let f = MappedFile::create(&path, 3 * STEP).unwrap();
        let mut want = Vec::new();
        for i in 0..20_000u32 {
            let rec = vec![(i % 251) as u8 + 1; 1 + (i as usize % 300)];
            f.append(&rec).unwrap();
            want.extend_from_slice(&rec);
        }
        f.sync().unwrap();
        assert_eq!(f.len(), want.len() as u64);
        // What another reader (a replay after a kill) sees while the file is open: the bytes,
        // then zeros to the end of the last step.
        let seen = std::fs::read(&path).unwrap();
        assert_eq!(&seen[..want.len()], &want[..]);
        assert!(seen[want.len()..].iter().all(|&b| b == 0));
        assert_eq!(seen.len() as u64 % STEP, 0);
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), want);
    }

    #[test]
    fn what_passes_the_mapping_is_written_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let f = MappedFile::create(&path, 4096).unwrap();
        let a = vec![7u8; 4000];
        let b = vec![9u8; 10_000];
        let c = vec![3u8; 5];
        for x in [&a, &b, &c] {
            f.append(x).unwrap();
        }
        f.sync().unwrap();
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), [a, b, c].concat());
    }
}
