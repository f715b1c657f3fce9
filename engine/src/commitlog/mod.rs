//! The commit log: one per database, shared by all column families, in segments.
//!
//! A row's mutation is one record, appended before it reaches a memtable, so a crash loses
//! nothing that was acknowledged. Writers commit in groups (LevelDB's `DBImpl::Write`, RocksDB's
//! `WriteThread`): each encodes its records itself, then queues them; the first in line leads,
//! takes everything queued, appends it with one write, and in `batch` mode fsyncs once, outside
//! the append lock, for the whole group, then wakes the others and hands the lead to whoever
//! queued meanwhile. In `periodic` mode a background thread fsyncs every period.
//! An I/O error on append or fsync poisons the log: every later write fails until the database is
//! reopened, because retrying an fsync after a failure can silently lose data.
//!
//! The log owns its segment files (creating, rolling, deleting); what a record means is the
//! caller's business ([`record`]); reading segments back is [`replay`].

mod group;
pub mod record;
pub mod replay;
pub mod segment;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::file_names;
use crate::io::{FileSystem, WritableFile};
use crate::options::CommitLogSync;
#[cfg(test)]
use record::RowMutation;

/// A place in the commit log: a segment and a byte offset in it. Ordered as the log is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LogPosition {
    /// Segment sequence number.
    pub segment: u64,
    /// Byte offset in the segment.
    pub offset: u64,
}

/// Segments taken out of the log, to be deleted once the manifest no longer needs them.
#[derive(Debug, Default)]
#[must_use = "retired segments are deleted only by CommitLog::delete"]
pub struct Retired {
    /// The oldest segment the log still holds: every segment from it on must exist.
    pub oldest_kept: u64,
    /// The retired segments' files.
    pub paths: Vec<PathBuf>,
}

impl Retired {
    /// Whether nothing was retired.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }
}

#[derive(Debug)]
struct LiveSegment {
    path: PathBuf,
    /// Column families with records in this segment not yet flushed, each with the offset of
    /// its last record here: a flush covering that offset makes the segment clean for it.
    dirty: BTreeMap<u32, u64>,
}

#[derive(Debug)]
struct WriterState {
    file: Arc<dyn WritableFile>,
    seq: u64,
    written: u64,
    synced: u64,
    segments: BTreeMap<u64, LiveSegment>,
    /// Where the first group whose write failed began: its records may be in the log without
    /// being in any memtable, so no flush may claim to cover them.
    unapplied_from: Option<LogPosition>,
}

impl WriterState {
    /// Notes that the group that began at `at` failed after (perhaps) writing its records.
    fn unapplied(&mut self, at: LogPosition) {
        self.unapplied_from = Some(self.unapplied_from.map_or(at, |u| u.min(at)));
    }
}

#[derive(Debug)]
struct Shared {
    dir: PathBuf,
    fs: Arc<dyn FileSystem>,
    segment_size: u64,
    sync: CommitLogSync,
    state: Mutex<WriterState>,
    /// Writers waiting to be committed, and whether one of them is leading.
    queue: Mutex<group::Queue>,
    /// The leader's buffer for a group's records, kept between groups.
    group_buf: Mutex<Vec<u8>>,
    /// Set by the first I/O failure; the reason is kept for every later refusal.
    failure: Mutex<Option<String>>,
    failed: AtomicBool,
    stop: Mutex<bool>,
    stop_cv: Condvar,
}

/// The commit log of a database.
#[derive(Debug)]
pub struct CommitLog {
    shared: Arc<Shared>,
    syncer: Mutex<Option<JoinHandle<()>>>,
}

impl Shared {
    fn poison(&self, what: &str, path: &Path, e: &std::io::Error) -> Error {
        let reason = format!("{what} {} failed: {e}", path.display());
        let mut f = self.failure.lock();
        if f.is_none() {
            *f = Some(reason.clone());
        }
        self.failed.store(true, Ordering::SeqCst);
        tracing::error!("commit log poisoned: {reason}");
        Error::ReadOnly(reason)
    }

    fn check(&self) -> Result<()> {
        if self.failed.load(Ordering::SeqCst) {
            let reason = self.failure.lock().clone().unwrap_or_default();
            return Err(Error::ReadOnly(reason));
        }
        Ok(())
    }

    fn segment_path(&self, seq: u64) -> PathBuf {
        self.dir.join(file_names::segment(seq))
    }

    /// Creates segment `seq`, durably, recording that its predecessor's intact records end at
    /// `prev_end`.
    fn open_segment(&self, seq: u64, prev_end: u64) -> Result<Arc<dyn WritableFile>> {
        let path = self.segment_path(seq);
        // Room for a full segment, the record that rolls it and the end marker.
        let capacity = self.segment_size + self.segment_size / 8 + 4096;
        let f: Arc<dyn WritableFile> = self
            .fs
            .create_log(&path, capacity)
            .map_err(|e| self.poison("creating", &path, &e))?
            .into();
        f.append(&segment::header(seq, prev_end))
            .and_then(|()| f.sync())
            .map_err(|e| self.poison("writing the header of", &path, &e))?;
        self.fs
            .sync_dir(&self.dir)
            .map_err(|e| self.poison("syncing the directory of", &path, &e))?;
        Ok(f)
    }

    /// Fsyncs the current segment up to what is written.
    fn sync_locked(&self, st: &mut WriterState) -> Result<()> {
        // Never retry an fsync after a failure: the kernel may have dropped the dirty pages.
        self.check()?;
        if st.synced < st.written {
            let path = self.segment_path(st.seq);
            st.file
                .sync()
                .map_err(|e| self.poison("fsync of", &path, &e))?;
            st.synced = st.written;
        }
        Ok(())
    }
}

impl CommitLog {
    /// Opens a log in `dir` whose first segment is `first_seq` (above every existing segment);
    /// `prev_end` is where the intact records of segment `first_seq - 1` end, if it exists (0
    /// if not). `existing` are segments already replayed, with the column families whose data
    /// they hold that no flush covers yet; they are released once those CFs flush.
    pub fn open(
        dir: &Path,
        fs: Arc<dyn FileSystem>,
        segment_size_mb: u32,
        sync: CommitLogSync,
        first_seq: u64,
        prev_end: u64,
        existing: BTreeMap<u64, (PathBuf, BTreeSet<u32>)>,
    ) -> Result<CommitLog> {
        // Replayed segments: their records all precede anything written from now on.
        if !dir.exists() {
            fs.create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            // The directory's own entry must be durable before any segment in it is trusted.
            let parent = crate::io::fs::parent_dir(dir);
            fs.sync_dir(&parent).map_err(|e| Error::io(&parent, e))?;
        }
        let segment_size = (u64::from(segment_size_mb.max(1)) << 20).max(segment::HEADER_LEN * 2);
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            fs,
            segment_size,
            sync,
            state: Mutex::new(WriterState {
                file: Arc::new(Closed),
                seq: first_seq,
                written: 0,
                synced: 0,
                segments: BTreeMap::new(),
                unapplied_from: None,
            }),
            queue: Mutex::new(group::Queue::default()),
            group_buf: Mutex::new(Vec::new()),
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
            stop: Mutex::new(false),
            stop_cv: Condvar::new(),
        });
        {
            let mut st = shared.state.lock();
            for (seq, (path, dirty)) in existing {
                let dirty = dirty.into_iter().map(|cf| (cf, u64::MAX - 1)).collect();
                st.segments.insert(seq, LiveSegment { path, dirty });
            }
            st.file = shared.open_segment(first_seq, prev_end)?;
            st.written = segment::HEADER_LEN;
            st.synced = segment::HEADER_LEN;
            st.segments.insert(
                first_seq,
                LiveSegment {
                    path: shared.segment_path(first_seq),
                    dirty: BTreeMap::new(),
                },
            );
        }
        let syncer = match sync {
            CommitLogSync::Periodic { period_ms } => {
                let s = shared.clone();
                let period = Duration::from_millis(period_ms.max(1));
                Some(
                    std::thread::Builder::new()
                        .name("commitlog-sync".into())
                        .spawn(move || periodic_sync(&s, period))
                        .map_err(|e| Error::io(dir, e))?,
                )
            }
            CommitLogSync::Batch { .. } => None,
        };
        Ok(CommitLog {
            shared,
            syncer: Mutex::new(syncer),
        })
    }

    /// Appends one row's mutation; returns the position of its record. In batch mode it returns
    /// once the record is durable.
    #[cfg(test)]
    pub fn append(&self, m: &RowMutation) -> Result<LogPosition> {
        let positions = self.append_all(std::slice::from_ref(m))?;
        Ok(positions[0].0)
    }

    /// Appends `bytes` (framed records) to the current segment; `several` (records) are appended whole, in one
    /// system call, so a killed process leaves all of them or none (SPEC makes each row's
    /// mutation atomic, and a multi-row batch is then never left half applied by a kill).
    fn write_locked(&self, st: &mut WriterState, bytes: &[u8], several: bool) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let sh = &self.shared;
        let appended = if several {
            st.file.append_whole(bytes)
        } else {
            st.file.append(bytes)
        };
        appended.map_err(|e| sh.poison("appending to", &sh.segment_path(st.seq), &e))?;
        st.written += bytes.len() as u64;
        Ok(())
    }

    /// Starts the next segment. The old one is synced first, so the new header's claim of how
    /// far it runs is true on disk; then the new one is made durable; then the old one is
    /// closed with the end-of-segment marker, which tells replay the new one must exist.
    fn roll(&self, st: &mut WriterState) -> Result<()> {
        let sh = &self.shared;
        sh.sync_locked(st)?;
        let (old, next) = (st.seq, st.seq + 1);
        let file = sh.open_segment(next, st.written)?;
        let old_path = sh.segment_path(old);
        st.file
            .append(&segment::end_marker(old))
            .and_then(|()| st.file.sync())
            .map_err(|e| sh.poison("closing", &old_path, &e))?;
        st.file = file;
        st.seq = next;
        st.written = segment::HEADER_LEN;
        st.synced = segment::HEADER_LEN;
        st.segments.insert(
            next,
            LiveSegment {
                path: sh.segment_path(next),
                dirty: BTreeMap::new(),
            },
        );
        Ok(())
    }

    /// The position the next record will start at (at most): what a memtable switched now
    /// covers. After a failed write, never past that write's records: they reached the log but
    /// no memtable, and the next open must replay them whole, for every column family.
    pub fn current_position(&self) -> LogPosition {
        let st = self.shared.state.lock();
        let now = LogPosition {
            segment: st.seq,
            offset: st.written,
        };
        st.unapplied_from.map_or(now, |u| u.min(now))
    }

    /// Fsyncs everything appended so far.
    pub fn sync(&self) -> Result<()> {
        self.shared.check()?;
        let mut st = self.shared.state.lock();
        self.shared.sync_locked(&mut st)
    }

    /// Records that column family `cf` has flushed everything logged before `upto`, and takes
    /// the segments no column family needs any more out of the log. They are not deleted yet:
    /// the caller first records in the manifest that the log now starts at
    /// [`Retired::oldest_kept`] (so a missing segment below it is not mistaken for lost data),
    /// then calls [`CommitLog::delete`].
    pub fn release(&self, cf: u32, upto: LogPosition) -> Result<Retired> {
        let mut st = self.shared.state.lock();
        for (seq, seg) in st.segments.iter_mut() {
            let covered = match seg.dirty.get(&cf) {
                Some(last) => *seq < upto.segment || (*seq == upto.segment && *last < upto.offset),
                None => false,
            };
            if covered {
                seg.dirty.remove(&cf);
            }
        }
        self.retire_locked(&mut st)
    }

    /// Takes out of the log every segment no column family needs. A current segment that holds
    /// records, none of them needed any more, is rolled over first so it can go too: deleted
    /// data must not linger in the log.
    fn retire_locked(&self, st: &mut WriterState) -> Result<Retired> {
        let sh = &self.shared;
        let current = st.seq;
        let current_clean = st
            .segments
            .get(&current)
            .is_some_and(|s| s.dirty.is_empty());
        if current_clean && st.written > segment::HEADER_LEN && !sh.failed.load(Ordering::SeqCst) {
            self.roll(st)?;
        }
        let live = st.seq;
        // Only the oldest segments go, up to the first one still needed: replay proves the log
        // whole by its segment numbers running on from the oldest, so a clean segment after a
        // needed one waits for it (or a crash would leave a gap that open rightly refuses).
        let doomed: Vec<u64> = st
            .segments
            .iter()
            .take_while(|(seq, seg)| **seq < live && seg.dirty.is_empty())
            .map(|(seq, _)| *seq)
            .collect();
        let paths = doomed
            .iter()
            .filter_map(|seq| st.segments.remove(seq).map(|s| s.path))
            .collect();
        Ok(Retired {
            oldest_kept: st.segments.keys().next().copied().unwrap_or(live),
            paths,
        })
    }

    /// Deletes retired segments (once the manifest's bound is past them).
    pub fn delete(&self, retired: &Retired) -> Result<()> {
        if retired.paths.is_empty() {
            return Ok(());
        }
        let sh = &self.shared;
        for p in &retired.paths {
            match sh.fs.remove_file(p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(p, e)),
            }
        }
        sh.fs.sync_dir(&sh.dir).map_err(|e| Error::io(&sh.dir, e))
    }

    /// Takes out of the log the segments no column family needs (after replay, say).
    pub fn retire_unneeded(&self) -> Result<Retired> {
        let mut st = self.shared.state.lock();
        self.retire_locked(&mut st)
    }

    /// Forgets a dropped column family: no segment waits for it any more.
    pub fn forget(&self, cf: u32) -> Result<Retired> {
        self.release(
            cf,
            LogPosition {
                segment: u64::MAX,
                offset: 0,
            },
        )
    }

    /// The segment files the log still holds, oldest first.
    #[cfg(test)]
    pub fn segment_paths(&self) -> Vec<PathBuf> {
        let st = self.shared.state.lock();
        st.segments.values().map(|s| s.path.clone()).collect()
    }

    /// Whether an I/O failure has made the log (and so the database) read-only.
    pub fn is_poisoned(&self) -> bool {
        self.shared.failed.load(Ordering::SeqCst)
    }

    /// Stops the background syncer and fsyncs what is written.
    pub fn close(&self) -> Result<()> {
        *self.shared.stop.lock() = true;
        self.shared.stop_cv.notify_all();
        if let Some(h) = self.syncer.lock().take() {
            let _ = h.join();
        }
        if self.is_poisoned() {
            return Ok(());
        }
        self.sync()
    }
}

impl Drop for CommitLog {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

fn periodic_sync(sh: &Shared, period: Duration) {
    let mut stop = sh.stop.lock();
    while !*stop {
        sh.stop_cv.wait_for(&mut stop, period);
        if *stop {
            break;
        }
        if sh.failed.load(Ordering::SeqCst) {
            continue;
        }
        // The fsync runs outside the append lock, so writers are not held up by it.
        let (file, seq, written) = {
            let st = sh.state.lock();
            if st.synced >= st.written {
                continue;
            }
            (st.file.clone(), st.seq, st.written)
        };
        match file.sync() {
            Ok(()) => {
                let mut st = sh.state.lock();
                if st.seq == seq {
                    st.synced = st.synced.max(written);
                }
            }
            // The log is poisoned; writers see it on their next append.
            Err(e) => drop(sh.poison("fsync of", &sh.segment_path(seq), &e)),
        }
    }
}

/// A placeholder file for the instant before the first segment is open.
#[derive(Debug)]
struct Closed;

impl WritableFile for Closed {
    fn append(&self, _: &[u8]) -> std::io::Result<()> {
        Err(std::io::Error::other("commit log segment not open"))
    }
    fn sync(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn len(&self) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests;
