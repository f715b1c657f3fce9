//! The one door to the file system: every create, write, fsync, rename and remove of the engine
//! goes through here, so a later test layer can simulate power loss in one place.

pub mod atomic_file;
pub mod dir_lock;
