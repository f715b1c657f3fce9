//! Snapshots, as `nodetool snapshot` takes them: the column families named are flushed, then
//! each one's live SSTables (the set its current view holds, which keeps them from being
//! deleted while they are linked) are hard-linked under
//! `<dir>/<Keyspace>/snapshots/<tag>/`, with a `manifest.txt` listing them. A snapshot costs
//! no copy and holds its files after compaction or a drop deletes the originals; clearing it
//! removes only its own links. The keyspace folder's scan at open skips the `snapshots`
//! directory; nothing here touches the manifest, the commit log or a live file.

use std::path::{Path, PathBuf};

use super::Database;
use crate::error::{Error, Result};

/// The directory under a keyspace's folder that holds its snapshots.
pub const SNAPSHOTS_DIR: &str = "snapshots";

/// The file in each snapshot that lists its SSTables, one name per line.
const MANIFEST: &str = "manifest.txt";

/// One keyspace's part of a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// The snapshot's tag.
    pub tag: String,
    /// The keyspace.
    pub keyspace: String,
    /// The SSTables linked (their file names).
    pub files: Vec<String>,
    /// Their bytes (on disk, shared with the live files until those are compacted away).
    pub bytes: u64,
}

impl Database {
    /// Takes snapshot `tag` of `keyspaces` (empty: every keyspace): flushes each column family
    /// and hard-links its live SSTables under `<Keyspace>/snapshots/<tag>/`. A tag already
    /// taken in one of them is refused before anything is linked.
    pub fn snapshot(&self, tag: &str, keyspaces: &[String]) -> Result<Vec<SnapshotInfo>> {
        check_tag(tag)?;
        let names = if keyspaces.is_empty() {
            self.keyspaces()
        } else {
            keyspaces.to_vec()
        };
        for ks in &names {
            self.describe_keyspace(ks)?;
            if self.snapshot_dir(ks, tag).exists() {
                return Err(Error::InvalidRequest(format!(
                    "Snapshot {tag} already exists."
                )));
            }
        }
        let mut out = Vec::with_capacity(names.len());
        for ks in &names {
            match self.snapshot_keyspace(ks, tag) {
                Ok(info) => out.push(info),
                Err(e) => {
                    // No half-taken snapshot is left to be listed as whole.
                    for k in &names {
                        let _ = std::fs::remove_dir_all(self.snapshot_dir(k, tag));
                    }
                    return Err(e);
                }
            }
        }
        Ok(out)
    }

    /// Keyspace `ks`'s part of snapshot `tag`: its column families and their indexes,
    /// flushed and linked.
    fn snapshot_keyspace(&self, ks: &str, tag: &str) -> Result<SnapshotInfo> {
        let fs = self.options().file_system.clone();
        let dir = self.snapshot_dir(ks, tag);
        fs.create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let mut info = SnapshotInfo {
            tag: tag.to_string(),
            keyspace: ks.to_string(),
            files: Vec::new(),
            bytes: 0,
        };
        let mut stores = Vec::new();
        for cf in self.cfs_of(ks, None)? {
            stores.extend(cf.indexes().iter().map(|i| i.store.clone()));
            stores.push(cf);
        }
        for cf in stores {
            self.inner.core.flush_cf(&cf)?;
            // None of them is deleted before it is linked.
            cf.with_live_sstables(|paths| -> Result<()> {
                for path in paths {
                    let name = file_name(path);
                    let to = dir.join(&name);
                    fs.hard_link(path, &to).map_err(|e| Error::io(&to, e))?;
                    info.bytes += path.metadata().map_or(0, |m| m.len());
                    info.files.push(name);
                }
                Ok(())
            })?;
        }
        info.files.sort();
        let list: String = info.files.iter().map(|f| format!("{f}\n")).collect();
        crate::io::atomic_file::replace(fs.as_ref(), &dir, MANIFEST, list.as_bytes())?;
        Ok(info)
    }

    /// The keyspaces with snapshots: those of the schema, and the folders of dropped ones
    /// whose snapshots stayed.
    fn snapshot_keyspaces(&self) -> Result<Vec<String>> {
        let mut names = self.keyspaces();
        let root = &self.inner.root;
        for entry in std::fs::read_dir(root).map_err(|e| Error::io(root, e))? {
            let entry = entry.map_err(|e| Error::io(root, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let has = crate::file_names::is_identifier(&name)
                && entry.path().join(SNAPSHOTS_DIR).is_dir();
            if has && !names.contains(&name) {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }

    /// Every snapshot of every keyspace, by keyspace then tag.
    pub fn list_snapshots(&self) -> Result<Vec<SnapshotInfo>> {
        let mut out = Vec::new();
        for ks in self.snapshot_keyspaces()? {
            let root = self.inner.root.join(&ks).join(SNAPSHOTS_DIR);
            for tag in sorted_dirs(&root)? {
                let dir = root.join(&tag);
                let mut info = SnapshotInfo {
                    tag,
                    keyspace: ks.clone(),
                    files: Vec::new(),
                    bytes: 0,
                };
                for entry in std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? {
                    let entry = entry.map_err(|e| Error::io(&dir, e))?;
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if name != MANIFEST {
                        info.bytes += entry.metadata().map_or(0, |m| m.len());
                        info.files.push(name);
                    }
                }
                info.files.sort();
                out.push(info);
            }
        }
        Ok(out)
    }

    /// Removes snapshot `tag` (`None`: every snapshot) of `keyspaces` (empty: every keyspace);
    /// answers how many keyspace snapshots were removed. Only a snapshot's own links go.
    pub fn clear_snapshot(&self, tag: Option<&str>, keyspaces: &[String]) -> Result<usize> {
        if let Some(t) = tag {
            check_tag(t)?;
        }
        let names = if keyspaces.is_empty() {
            self.snapshot_keyspaces()?
        } else {
            keyspaces.to_vec()
        };
        let mut removed = 0;
        for ks in &names {
            let root = self.inner.root.join(ks).join(SNAPSHOTS_DIR);
            // A dropped keyspace's snapshots are cleared too; an unknown name is an error.
            if !root.is_dir() {
                self.describe_keyspace(ks)?;
            }
            let tags = match tag {
                Some(t) => vec![t.to_string()],
                None => sorted_dirs(&root)?,
            };
            for t in tags {
                let dir = root.join(&t);
                if dir.is_dir() {
                    std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    fn snapshot_dir(&self, keyspace: &str, tag: &str) -> PathBuf {
        self.inner.root.join(keyspace).join(SNAPSHOTS_DIR).join(tag)
    }
}

/// A tag names one directory: letters, digits, `_`, `-` and `.`, not only dots, at most 255.
fn check_tag(tag: &str) -> Result<()> {
    let ok = (1..=255).contains(&tag.len())
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        && !tag.bytes().all(|b| b == b'.');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidRequest(format!(
            "snapshot tag '{tag}': letters, digits, '_', '-' and '.' only, 1 to 255 of them"
        )))
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The names of the directories in `dir`, sorted (none when it does not exist).
fn sorted_dirs(dir: &Path) -> Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    out.sort();
    Ok(out)
}
