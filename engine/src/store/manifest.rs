//! `MANIFEST.db`: which SSTables are live for each column family, how far each CF's data is
//! flushed in the commit log, which commit log segments must exist, and which files are
//! obsolete (replaced or dropped, to be deleted). Replaced atomically after every change, so
//! after a crash it is wholly the old one or wholly the new one. Layout in `engine/FORMAT.md`.
//!
//! The manifest is the proof open relies on before it deletes anything: a file is removed only
//! if the manifest lists it as obsolete, or it is an SSTable name the engine generated after the
//! manifest was last written (an interrupted flush or compaction).

use std::collections::BTreeMap;
use std::path::Path;

use crate::codec::{seal, unseal, Reader, Writer};
use crate::commitlog::LogPosition;
use crate::error::FormatError;
use crate::error::{Error, Result};
use crate::file_names;
use crate::io::{atomic_file, FileSystem};

/// The file name of the manifest in the data directory.
pub const FILE_NAME: &str = file_names::MANIFEST;
const MAGIC: &[u8; 8] = b"SCMANIFS";
/// The manifest format version this build writes; it reads 1 too.
pub const VERSION: u32 = 2;

/// One column family's entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CfManifest {
    /// The keyspace (its folder); empty in entries read from a version 1 manifest.
    pub keyspace: String,
    /// The column family's name (its files' prefix); empty from a version 1 manifest.
    pub name: String,
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
    /// Every commit log segment from this one on must exist: older ones are provably flushed
    /// and may be deleted. 0: no bound known (a version 1 manifest).
    pub log_oldest: u64,
    /// The first segment the log started at its last open; it must exist while the log holds
    /// it. 0: unknown.
    pub log_start: u64,
    /// Per column family id.
    pub cfs: BTreeMap<u32, CfManifest>,
    /// Files no longer live (paths relative to the data directory, `Keyspace/CF-gen-Data.db`),
    /// deleted once no reader holds them; open deletes any still there.
    pub obsolete: Vec<String>,
}

impl Manifest {
    /// The manifest of a new database.
    pub fn new() -> Manifest {
        Manifest {
            next_generation: 1,
            ..Manifest::default()
        }
    }

    /// Encodes the file.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Writer::default();
        p.u64(self.next_generation);
        p.u64(self.log_oldest);
        p.u64(self.log_start);
        p.u32(self.cfs.len() as u32);
        for (id, cf) in &self.cfs {
            p.u32(*id);
            p.str(&cf.keyspace);
            p.str(&cf.name);
            p.u64(cf.flushed_to.segment);
            p.u64(cf.flushed_to.offset);
            p.u32(cf.sstables.len() as u32);
            for g in &cf.sstables {
                p.u64(*g);
            }
        }
        p.u32(self.obsolete.len() as u32);
        for o in &self.obsolete {
            p.str(o);
        }
        seal(MAGIC, VERSION, &p.buf)
    }

    /// Decodes the file; `path` names it in errors.
    pub fn decode(bytes: &[u8], path: &Path) -> Result<Manifest> {
        let (version, payload) =
            unseal(bytes, MAGIC, 1..=VERSION, "manifest").map_err(|e| Error::corrupt(path, e))?;
        decode_payload(version, payload).map_err(|e| Error::corrupt(path, e))
    }

    /// Loads the manifest of `dir`, or `None` if there is none.
    pub fn load(fs: &dyn FileSystem, dir: &Path) -> Result<Option<Manifest>> {
        atomic_file::remove_leftover(fs, dir, FILE_NAME)?;
        let path = dir.join(FILE_NAME);
        atomic_file::read_if_exists(&path)?
            .map(|b| Self::decode(&b, &path))
            .transpose()
    }

    /// Stores the manifest in `dir`, atomically.
    pub fn store(&self, fs: &dyn FileSystem, dir: &Path) -> Result<()> {
        atomic_file::replace(fs, dir, FILE_NAME, &self.encode())
    }
}

fn decode_payload(version: u32, payload: &[u8]) -> std::result::Result<Manifest, FormatError> {
    let mut r = Reader::new(payload);
    let next_generation = r.u64()?;
    let (log_oldest, log_start) = if version >= 2 {
        (r.u64()?, r.u64()?)
    } else {
        (0, 0)
    };
    let n = r.count(4 + 16 + 4)?;
    let mut cfs = BTreeMap::new();
    for _ in 0..n {
        let id = r.u32()?;
        let (keyspace, name) = if version >= 2 {
            (r.str()?.to_string(), r.str()?.to_string())
        } else {
            (String::new(), String::new())
        };
        let flushed_to = LogPosition {
            segment: r.u64()?,
            offset: r.u64()?,
        };
        let m = r.count(8)?;
        let mut sstables = Vec::with_capacity(m);
        for _ in 0..m {
            let g = r.u64()?;
            if g >= next_generation {
                return Err(r.error(format!("generation {g} is not below {next_generation}")));
            }
            sstables.push(g);
        }
        if cfs
            .insert(
                id,
                CfManifest {
                    keyspace,
                    name,
                    flushed_to,
                    sstables,
                },
            )
            .is_some()
        {
            return Err(r.error(format!("column family id {id} appears twice")));
        }
    }
    let mut obsolete = Vec::new();
    if version >= 2 {
        let n = r.count(4)?;
        obsolete.reserve(n);
        for _ in 0..n {
            obsolete.push(r.str()?.to_string());
        }
    }
    if r.remaining() != 0 {
        return Err(r.error("trailing bytes"));
    }
    Ok(Manifest {
        next_generation,
        log_oldest,
        log_start,
        cfs,
        obsolete,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        let mut m = Manifest {
            next_generation: 9,
            log_oldest: 4,
            log_start: 6,
            ..Manifest::default()
        };
        m.cfs.insert(
            3,
            CfManifest {
                keyspace: "Keyspace1".into(),
                name: "Standard1".into(),
                flushed_to: LogPosition {
                    segment: 2,
                    offset: 100,
                },
                sstables: vec![1, 4, 8],
            },
        );
        m.obsolete.push("Keyspace1/Standard1-2-Data.db".into());
        m
    }

    #[test]
    fn roundtrip_and_damage_is_detected() {
        let m = sample();
        let b = m.encode();
        assert_eq!(Manifest::decode(&b, Path::new("M")).unwrap(), m);
        for i in 0..b.len() {
            let mut d = b.clone();
            d[i] ^= 0x08;
            assert!(Manifest::decode(&d, Path::new("M")).is_err(), "byte {i}");
        }
    }

    #[test]
    fn version_1_is_read_without_names_or_log_bounds() {
        // The version 1 layout: generation, then per CF id, position and generations.
        let mut p = Writer::default();
        p.u64(9);
        p.u32(1);
        p.u32(3);
        p.u64(2);
        p.u64(100);
        p.u32(2);
        p.u64(1);
        p.u64(4);
        let m = Manifest::decode(&seal(MAGIC, 1, &p.buf), Path::new("M")).unwrap();
        assert_eq!((m.log_oldest, m.log_start), (0, 0));
        assert_eq!(m.cfs[&3].sstables, [1, 4]);
        assert!(m.cfs[&3].name.is_empty() && m.obsolete.is_empty());
    }
}
