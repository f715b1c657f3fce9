//! The one door to the file system: every create, write, fsync, rename and remove of the engine
//! goes through a [`FileSystem`], so a test can simulate power loss in one place ([`FaultFs`]).

pub mod atomic_file;
pub mod dir_lock;
pub mod fault;
pub mod fs;
#[cfg(target_os = "linux")]
pub mod mapped;

pub use fault::{Fault, FaultFs, FsCall};
pub use fs::{FileSystem, RealFs, WritableFile};
