//! `MANIFEST.db`: which SSTables are live for each column family, and how far each CF's data is
//! flushed in the commit log. Replaced atomically after every flush, so after a crash the live
//! set is wholly the old one or wholly the new one. Layout in `engine/FORMAT.md`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::codec::{seal, unseal, DecodeError, Reader, Writer};
use crate::commitlog::LogPosition;
use crate::error::{Error, Result};
use crate::io::{atomic_file, FileSystem};

/// The file name of the manifest in the data directory.
pub const FILE_NAME: &str = "MANIFEST.db";
const MAGIC: &[u8; 8] = b"SCMANIFS";
/// The manifest format version.
pub const VERSION: u32 = 1;

/// One column family's entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CfManifest {
    /// Commit log records before this position are in SSTables.
    pub flushed_to: LogPosition,
    /// Live SSTable generations, oldest first.
    pub sstables: Vec<u64>,
}

/// The manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The generation the next SSTable gets.
    pub next_generation: u64,
    /// Per column family id.
    pub cfs: BTreeMap<u32, CfManifest>,
}

impl Manifest {
    /// Encodes the file.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Writer::default();
        p.u64(self.next_generation);
        p.u32(self.cfs.len() as u32);
        for (id, cf) in &self.cfs {
            p.u32(*id);
            p.u64(cf.flushed_to.segment);
            p.u64(cf.flushed_to.offset);
            p.u32(cf.sstables.len() as u32);
            for g in &cf.sstables {
                p.u64(*g);
            }
        }
        seal(MAGIC, VERSION, &p.buf)
    }

    /// Decodes the file; `path` names it in errors.
    pub fn decode(bytes: &[u8], path: &Path) -> Result<Manifest> {
        let corrupt = |reason: String| Error::Corrupt {
            path: path.to_path_buf(),
            reason,
        };
        let payload = unseal(bytes, MAGIC, VERSION, "manifest").map_err(corrupt)?;
        let decode = || -> std::result::Result<Manifest, DecodeError> {
            let mut r = Reader::new(payload);
            let next_generation = r.u64()?;
            let n = r.count(4 + 16 + 4)?;
            let mut cfs = BTreeMap::new();
            for _ in 0..n {
                let id = r.u32()?;
                let flushed_to = LogPosition {
                    segment: r.u64()?,
                    offset: r.u64()?,
                };
                let m = r.count(8)?;
                let mut sstables = Vec::with_capacity(m);
                for _ in 0..m {
                    let g = r.u64()?;
                    if g >= next_generation {
                        return Err(
                            r.error(format!("generation {g} is not below {next_generation}"))
                        );
                    }
                    sstables.push(g);
                }
                cfs.insert(
                    id,
                    CfManifest {
                        flushed_to,
                        sstables,
                    },
                );
            }
            if r.remaining() != 0 {
                return Err(r.error("trailing bytes"));
            }
            Ok(Manifest {
                next_generation,
                cfs,
            })
        };
        decode().map_err(|e| corrupt(e.to_string()))
    }

    /// Loads the manifest of `dir`, or an empty one if there is none yet.
    pub fn load(fs: &dyn FileSystem, dir: &Path) -> Result<Manifest> {
        atomic_file::remove_leftover(fs, dir, FILE_NAME)?;
        let path = dir.join(FILE_NAME);
        match atomic_file::read_if_exists(&path)? {
            None => Ok(Manifest {
                next_generation: 1,
                cfs: BTreeMap::new(),
            }),
            Some(b) => Self::decode(&b, &path),
        }
    }

    /// Stores the manifest in `dir`, atomically.
    pub fn store(&self, fs: &dyn FileSystem, dir: &Path) -> Result<()> {
        atomic_file::replace(fs, dir, FILE_NAME, &self.encode())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_damage_is_detected() {
        let mut m = Manifest {
            next_generation: 9,
            cfs: BTreeMap::new(),
        };
        m.cfs.insert(
            3,
            CfManifest {
                flushed_to: LogPosition {
                    segment: 2,
                    offset: 100,
                },
                sstables: vec![1, 4, 8],
            },
        );
        let b = m.encode();
        assert_eq!(Manifest::decode(&b, Path::new("M")).unwrap(), m);
        for i in 0..b.len() {
            let mut d = b.clone();
            d[i] ^= 0x08;
            assert!(Manifest::decode(&d, Path::new("M")).is_err(), "byte {i}");
        }
    }
}
