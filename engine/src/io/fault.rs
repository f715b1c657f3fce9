//! A file system that can "lose power", for tests of what the engine fsyncs.
//!
//! It writes through to real files, and remembers what is not yet durable: bytes appended after a
//! file's last fsync, and creates, renames and removes in a directory not fsynced since. On
//! [`FaultFs::lose_power`] it forgets exactly those, leaving the real files as a machine would
//! find them after a power cut (LevelDB's fault-injection environment works this way, with
//! renames and removes added). It can also fail writes and syncs on demand, like a full disk, or
//! fail one chosen call (the Nth create, append, fsync, rename, remove or directory fsync,
//! optionally only under a path) with EIO or ENOSPC and go on working, like a transient fault.
//! Removed and replaced files are parked in a hidden directory until their removal is durable.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock, RwLockReadGuard};

use super::fs::{parent_dir, FileSystem, WritableFile};

#[derive(Debug)]
enum DirOp {
    CreateDir {
        path: PathBuf,
    },
    Create {
        path: PathBuf,
    },
    Rename {
        from: PathBuf,
        to: PathBuf,
        displaced: Option<PathBuf>,
    },
    Remove {
        path: PathBuf,
        parked: PathBuf,
    },
}

impl DirOp {
    fn dir(&self) -> PathBuf {
        match self {
            DirOp::CreateDir { path } | DirOp::Create { path } | DirOp::Remove { path, .. } => {
                parent_dir(path)
            }
            DirOp::Rename { to, .. } => parent_dir(to),
        }
    }
}

/// A kind of file-system call, for [`Fault`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsCall {
    /// `create_dir_all`.
    CreateDir,
    /// Creating (or truncating) a file.
    Create,
    /// Appending to a file.
    Append,
    /// Fsyncing a file.
    Sync,
    /// A rename.
    Rename,
    /// A remove.
    Remove,
    /// Fsyncing a directory.
    SyncDir,
}

/// One call to fail, once: the `nth` (counting from 0) call of kind `call` (any kind when
/// `None`) on a path under `under` (any when `None`), with `kind` (`StorageFull` for ENOSPC,
/// `Other` for EIO). Later calls succeed again.
#[derive(Clone, Debug)]
pub struct Fault {
    /// Which matching call fails.
    pub nth: u64,
    /// The kind of call, or any.
    pub call: Option<FsCall>,
    /// Only calls on paths under this one.
    pub under: Option<PathBuf>,
    /// The error returned.
    pub kind: io::ErrorKind,
}

impl Fault {
    /// The `nth` call of any kind anywhere, failing with EIO.
    pub fn eio(nth: u64) -> Fault {
        Fault {
            nth,
            call: None,
            under: None,
            kind: io::ErrorKind::Other,
        }
    }

    /// The `nth` call of any kind anywhere, failing with ENOSPC.
    pub fn enospc(nth: u64) -> Fault {
        Fault {
            kind: io::ErrorKind::StorageFull,
            ..Fault::eio(nth)
        }
    }

    fn matches(&self, call: FsCall, path: &Path) -> bool {
        self.call.is_none_or(|c| c == call)
            && self.under.as_ref().is_none_or(|u| path.starts_with(u))
    }
}

#[derive(Debug, Default)]
struct State {
    /// Durable length of each live file, by path.
    synced: HashMap<PathBuf, u64>,
    /// Durable length of parked files (removed or replaced, not yet durably).
    parked_synced: HashMap<PathBuf, u64>,
    /// Directory operations not yet made durable, oldest first.
    pending: Vec<DirOp>,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    park_dir: PathBuf,
    next_park: AtomicU64,
    fail_writes: AtomicBool,
    /// Writes and syncs allowed before failing (u64::MAX: never).
    budget: AtomicU64,
    /// Off between `lose_power` and `power_on`: every operation fails, so a database that
    /// "died" cannot write anything while it is torn down.
    off: AtomicBool,
    /// Held shared by each operation and exclusively by `lose_power`.
    power: RwLock<()>,
    /// The one call to fail, with how many matching calls are still to pass before it.
    one: Mutex<Option<(Fault, u64)>>,
    /// Calls made, of every kind.
    calls: AtomicU64,
    /// What the injected one-call fault hit, once it has.
    hit: Mutex<Option<(FsCall, PathBuf)>>,
}

impl Shared {
    /// Starts an operation: it fails if the power is off (or a failure is due), and the power
    /// cannot go out until the returned guard is dropped. An operation so lies wholly before a
    /// cut or fails: an fsync that returned is never undone by a cut that began before it
    /// recorded what it covered, and no write lands in a file after the cut truncated it.
    fn begin(&self, call: FsCall, path: &Path) -> io::Result<RwLockReadGuard<'_, ()>> {
        let guard = self.power.read();
        self.check()?;
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut one = self.one.lock();
        if let Some((fault, left)) = one.as_mut().filter(|(f, _)| f.matches(call, path)) {
            if *left > 0 {
                *left -= 1;
            } else {
                let kind = fault.kind;
                *one = None;
                *self.hit.lock() = Some((call, path.to_path_buf()));
                let what = if kind == io::ErrorKind::StorageFull {
                    "ENOSPC"
                } else {
                    "EIO"
                };
                return Err(io::Error::new(
                    kind,
                    format!("injected {what} on {call:?} of {}", path.display()),
                ));
            }
        }
        Ok(guard)
    }

    fn check(&self) -> io::Result<()> {
        if self.off.load(Ordering::SeqCst) {
            return Err(io::Error::other("injected power loss: the machine is off"));
        }
        if self.fail_writes.load(Ordering::SeqCst) {
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                "injected failure: no space left on device",
            ));
        }
        let left = self.budget.load(Ordering::SeqCst);
        if left != u64::MAX {
            if left == 0 {
                self.fail_writes.store(true, Ordering::SeqCst);
                return self.check();
            }
            self.budget.store(left - 1, Ordering::SeqCst);
        }
        Ok(())
    }
}

/// A file system whose unsynced effects can be lost on demand. Clones share one state.
#[derive(Debug, Clone)]
pub struct FaultFs {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct FaultFile {
    file: File,
    path: PathBuf,
    len: AtomicU64,
    shared: Arc<Shared>,
}

impl WritableFile for FaultFile {
    fn append(&self, buf: &[u8]) -> io::Result<()> {
        let _power = self.shared.begin(FsCall::Append, &self.path)?;
        (&self.file).write_all(buf)?;
        self.len.fetch_add(buf.len() as u64, Ordering::SeqCst);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        let _power = self.shared.begin(FsCall::Sync, &self.path)?;
        // What is appended before the sync begins is what it covers.
        let len = self.len.load(Ordering::SeqCst);
        self.file.sync_data()?;
        let mut st = self.shared.state.lock();
        // The file may have been renamed since it was opened: find it by its durable entry.
        if let Some(synced) = st.synced.get_mut(&self.path) {
            *synced = (*synced).max(len);
        }
        Ok(())
    }

    fn len(&self) -> u64 {
        self.len.load(Ordering::SeqCst)
    }
}

impl FaultFs {
    /// A fault file system that parks removed files under `park_dir` (outside the data).
    pub fn new(park_dir: impl Into<PathBuf>) -> io::Result<FaultFs> {
        let park_dir = park_dir.into();
        fs::create_dir_all(&park_dir)?;
        Ok(FaultFs {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                park_dir,
                next_park: AtomicU64::new(0),
                fail_writes: AtomicBool::new(false),
                budget: AtomicU64::new(u64::MAX),
                off: AtomicBool::new(false),
                power: RwLock::new(()),
                one: Mutex::new(None),
                calls: AtomicU64::new(0),
                hit: Mutex::new(None),
            }),
        })
    }

    /// Makes every later write and sync fail (a full disk) until [`FaultFs::heal`].
    pub fn fail_from_now(&self) {
        self.shared.fail_writes.store(true, Ordering::SeqCst);
    }

    /// Lets `n` more writes or syncs succeed, then fails the rest.
    pub fn fail_after(&self, n: u64) {
        self.shared.budget.store(n, Ordering::SeqCst);
    }

    /// How many bytes of the file at `path` a power cut would keep (its last synced length);
    /// `None` for a file this file system did not create or whose creation is not durable.
    pub fn synced_len(&self, path: &Path) -> Option<u64> {
        self.shared.state.lock().synced.get(path).copied()
    }

    /// Fails one call, as `fault` says; the calls after it succeed.
    pub fn fail_one(&self, fault: Fault) {
        let left = fault.nth;
        *self.shared.one.lock() = Some((fault, left));
        *self.shared.hit.lock() = None;
    }

    /// The call the fault of [`FaultFs::fail_one`] hit, once it has.
    pub fn hit(&self) -> Option<(FsCall, PathBuf)> {
        self.shared.hit.lock().clone()
    }

    /// Calls made so far, of every kind (the size of a fault matrix over a workload).
    pub fn calls(&self) -> u64 {
        self.shared.calls.load(Ordering::SeqCst)
    }

    /// Ends injected failures.
    pub fn heal(&self) {
        *self.shared.one.lock() = None;
        self.shared.budget.store(u64::MAX, Ordering::SeqCst);
        self.shared.fail_writes.store(false, Ordering::SeqCst);
    }

    fn park(&self, path: &Path) -> io::Result<PathBuf> {
        let n = self.shared.next_park.fetch_add(1, Ordering::SeqCst);
        let parked = self.shared.park_dir.join(format!("parked-{n}"));
        fs::rename(path, &parked)?;
        Ok(parked)
    }

    /// Cuts the power: forgets everything not durable (truncates each file to its last synced
    /// length, then undoes creates, renames and removes whose directory was not synced since,
    /// newest first) and leaves the power off, so every later operation fails until
    /// [`FaultFs::power_on`]. Drop the "crashed" database while the power is off.
    pub fn lose_power(&self) -> io::Result<()> {
        let _no_operation_in_flight = self.shared.power.write();
        self.shared.off.store(true, Ordering::SeqCst);
        let mut st = self.shared.state.lock();
        for (path, len) in st.synced.iter().chain(st.parked_synced.iter()) {
            if let Ok(f) = OpenOptions::new().write(true).open(path) {
                f.set_len(*len)?;
            }
        }
        let pending = std::mem::take(&mut st.pending);
        for op in pending.into_iter().rev() {
            match op {
                DirOp::Create { path } => {
                    let _ = fs::remove_file(&path);
                    st.synced.remove(&path);
                }
                DirOp::CreateDir { path } => {
                    let _ = fs::remove_dir_all(&path);
                    st.synced.retain(|p, _| !p.starts_with(&path));
                }
                DirOp::Rename {
                    from,
                    to,
                    displaced,
                } => {
                    fs::rename(&to, &from)?;
                    if let Some(len) = st.synced.remove(&to) {
                        st.synced.insert(from, len);
                    }
                    if let Some(p) = displaced {
                        fs::rename(&p, &to)?;
                        if let Some(len) = st.parked_synced.remove(&p) {
                            st.synced.insert(to, len);
                        }
                    }
                }
                DirOp::Remove { path, parked } => {
                    fs::rename(&parked, &path)?;
                    if let Some(len) = st.parked_synced.remove(&parked) {
                        st.synced.insert(path, len);
                    }
                }
            }
        }
        for p in st.parked_synced.keys() {
            let _ = fs::remove_file(p);
        }
        st.parked_synced.clear();
        self.heal();
        Ok(())
    }

    /// Turns the power back on after [`FaultFs::lose_power`].
    pub fn power_on(&self) {
        self.shared.off.store(false, Ordering::SeqCst);
    }
}

impl FileSystem for FaultFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let _power = self.shared.begin(FsCall::CreateDir, path)?;
        // Each directory made here is forgotten in a power cut unless its parent is synced.
        let mut missing = Vec::new();
        let mut p = path;
        while !p.exists() {
            missing.push(p.to_path_buf());
            match p.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => p = parent,
                _ => break,
            }
        }
        fs::create_dir_all(path)?;
        let mut st = self.shared.state.lock();
        for dir in missing.into_iter().rev() {
            st.pending.push(DirOp::CreateDir { path: dir });
        }
        Ok(())
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let _power = self.shared.begin(FsCall::Create, path)?;
        let mut st = self.shared.state.lock();
        if path.exists() && st.synced.contains_key(path) {
            // Truncating an existing file: its old bytes are gone for good.
            st.synced.insert(path.to_path_buf(), 0);
        } else {
            st.synced.insert(path.to_path_buf(), 0);
            st.pending.push(DirOp::Create {
                path: path.to_path_buf(),
            });
        }
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(Box::new(FaultFile {
            file,
            path: path.to_path_buf(),
            len: AtomicU64::new(0),
            shared: self.shared.clone(),
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let _power = self.shared.begin(FsCall::Rename, to)?;
        let mut st = self.shared.state.lock();
        let displaced = if to.exists() {
            let p = self.park(to)?;
            if let Some(len) = st.synced.remove(to) {
                st.parked_synced.insert(p.clone(), len);
            }
            Some(p)
        } else {
            None
        };
        fs::rename(from, to)?;
        if let Some(len) = st.synced.remove(from) {
            st.synced.insert(to.to_path_buf(), len);
        }
        st.pending.push(DirOp::Rename {
            from: from.to_path_buf(),
            to: to.to_path_buf(),
            displaced,
        });
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let _power = self.shared.begin(FsCall::Remove, path)?;
        let mut st = self.shared.state.lock();
        let parked = self.park(path)?;
        if let Some(len) = st.synced.remove(path) {
            st.parked_synced.insert(parked.clone(), len);
        }
        st.pending.push(DirOp::Remove {
            path: path.to_path_buf(),
            parked,
        });
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let _power = self.shared.begin(FsCall::SyncDir, dir)?;
        File::open(dir)?.sync_all()?;
        let mut st = self.shared.state.lock();
        let (done, keep): (Vec<DirOp>, Vec<DirOp>) = std::mem::take(&mut st.pending)
            .into_iter()
            .partition(|op| op.dir() == dir);
        st.pending = keep;
        for op in done {
            let parked = match op {
                DirOp::Remove { parked, .. } => Some(parked),
                DirOp::Rename { displaced, .. } => displaced,
                DirOp::Create { .. } | DirOp::CreateDir { .. } => None,
            };
            if let Some(p) = parked {
                st.parked_synced.remove(&p);
                let _ = fs::remove_file(&p);
            }
        }
        Ok(())
    }

    fn sync_file(&self, path: &Path) -> io::Result<()> {
        let _power = self.shared.begin(FsCall::Sync, path)?;
        let file = File::open(path)?;
        file.sync_data()?;
        let len = file.metadata()?.len();
        if let Some(synced) = self.shared.state.lock().synced.get_mut(path) {
            *synced = (*synced).max(len);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(p: &Path) -> Option<Vec<u8>> {
        fs::read(p).ok()
    }

    #[test]
    fn one_chosen_call_fails_once_and_the_rest_go_on() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (root.path().join("a"), root.path().join("sub"));
        fs::create_dir_all(&b).unwrap();
        let ffs = FaultFs::new(root.path().join("park")).unwrap();
        // The second sync under `sub`, with ENOSPC: syncs elsewhere do not count.
        ffs.fail_one(Fault {
            nth: 1,
            call: Some(FsCall::Sync),
            under: Some(b.clone()),
            kind: io::ErrorKind::StorageFull,
        });
        let (f, g) = (ffs.create(&a).unwrap(), ffs.create(&b.join("x")).unwrap());
        for _ in 0..3 {
            f.sync().unwrap();
        }
        g.append(b"1").unwrap();
        g.sync().unwrap();
        assert_eq!(ffs.hit(), None);
        let e = g.sync().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        assert!(e.to_string().contains("ENOSPC"), "{e}");
        assert_eq!(ffs.hit(), Some((FsCall::Sync, b.join("x"))));
        g.append(b"2").unwrap();
        g.sync().unwrap();
        assert_eq!(
            ffs.calls(),
            10,
            "2 creates, 2 appends, 6 syncs (the failed one too)"
        );
    }

    #[test]
    fn unsynced_bytes_and_entries_are_forgotten() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("d");
        fs::create_dir_all(&dir).unwrap();
        let ffs = FaultFs::new(root.path().join("park")).unwrap();

        // Durable file: created, written, synced, directory synced.
        let a = dir.join("a");
        let f = ffs.create(&a).unwrap();
        f.append(b"durable").unwrap();
        f.sync().unwrap();
        f.append(b"-lost").unwrap();
        ffs.sync_dir(&dir).unwrap();
        // A file whose creation is never made durable.
        let b = dir.join("b");
        let g = ffs.create(&b).unwrap();
        g.append(b"x").unwrap();
        g.sync().unwrap();
        drop((f, g));
        ffs.lose_power().unwrap();
        assert_eq!(read(&a).unwrap(), b"durable");
        assert_eq!(read(&b), None);
    }

    #[test]
    fn unsynced_renames_and_removes_are_undone() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("d");
        fs::create_dir_all(&dir).unwrap();
        let ffs = FaultFs::new(root.path().join("park")).unwrap();
        let (old, tmp, gone) = (
            dir.join("MANIFEST"),
            dir.join("MANIFEST.tmp"),
            dir.join("gone"),
        );
        for (p, body) in [(&old, &b"v1"[..]), (&gone, b"keep me")] {
            let f = ffs.create(p).unwrap();
            f.append(body).unwrap();
            f.sync().unwrap();
        }
        ffs.sync_dir(&dir).unwrap();
        let f = ffs.create(&tmp).unwrap();
        f.append(b"v2").unwrap();
        f.sync().unwrap();
        drop(f);
        ffs.rename(&tmp, &old).unwrap();
        ffs.remove_file(&gone).unwrap();
        assert_eq!(read(&old).unwrap(), b"v2");
        ffs.lose_power().unwrap();
        assert_eq!(read(&old).unwrap(), b"v1");
        assert_eq!(read(&gone).unwrap(), b"keep me");
        assert_eq!(
            read(&tmp),
            None,
            "the temporary file's creation was never durable"
        );
        assert!(
            ffs.create(&tmp).is_err(),
            "nothing works while the power is off"
        );
        ffs.power_on();

        // The same, with the directory synced: everything sticks.
        let f = ffs.create(&tmp).unwrap();
        f.append(b"v3").unwrap();
        f.sync().unwrap();
        drop(f);
        ffs.rename(&tmp, &old).unwrap();
        ffs.remove_file(&gone).unwrap();
        ffs.sync_dir(&dir).unwrap();
        ffs.lose_power().unwrap();
        ffs.power_on();
        assert_eq!(read(&old).unwrap(), b"v3");
        assert_eq!(read(&gone), None);
    }

    #[test]
    fn a_new_directory_is_forgotten_unless_its_parent_is_synced() {
        let root = tempfile::tempdir().unwrap();
        let ffs = FaultFs::new(root.path().join("park")).unwrap();
        let (a, b) = (root.path().join("a"), root.path().join("b"));
        ffs.create_dir_all(&a).unwrap();
        ffs.create_dir_all(&b).unwrap();
        ffs.sync_dir(root.path()).unwrap();
        let f = ffs.create(&b.join("f")).unwrap();
        f.sync().unwrap();
        ffs.sync_dir(&b).unwrap();
        ffs.create_dir_all(&root.path().join("c")).unwrap();
        drop(f);
        ffs.lose_power().unwrap();
        ffs.power_on();
        assert!(a.exists() && b.join("f").exists());
        assert!(!root.path().join("c").exists());
    }

    #[test]
    fn injected_failures_fail_writes_until_healed() {
        let root = tempfile::tempdir().unwrap();
        let ffs = FaultFs::new(root.path().join("park")).unwrap();
        let f = ffs.create(&root.path().join("f")).unwrap();
        ffs.fail_after(1);
        f.append(b"ok").unwrap();
        let e = f.append(b"no").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        assert!(f.sync().is_err());
        ffs.heal();
        f.append(b"again").unwrap();
    }
}
