//! The one door to the file system: every create, write, fsync, rename, remove, open, read and
//! listing of the engine's files goes through a [`FileSystem`], so a test can simulate power
//! loss in one place ([`FaultFs`]).

pub(crate) mod atomic_file;
pub(crate) mod dir_lock;
mod fault;
pub(crate) mod fs;
#[cfg(target_os = "linux")]
pub(crate) mod mapped;

pub use fault::{Fault, FaultFs, FsCall};
pub use fs::{DirEntry, FileSystem, RealFs, WritableFile};
#[cfg(target_os = "linux")]
pub use mapped::mapped_bytes_written;
