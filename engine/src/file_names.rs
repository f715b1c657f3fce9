//! Every name the engine gives a file or folder in a data directory, built and parsed in one
//! place (LevelDB's `filename.cc`): the catalog, the manifest, the lock marker, commit log
//! segments, SSTables, and the temporary names they are written under.
//!
//! Open deletes only files whose names this module recognises *and* that the manifest proves
//! obsolete or unfinished; a name it does not recognise is never the engine's. Nothing here
//! touches the file system.

use std::path::{Path, PathBuf};

/// The catalog (the schema in force).
pub const SCHEMA: &str = "SCHEMA.db";
/// The manifest (live SSTables, flush positions, the commit log's extent).
pub const MANIFEST: &str = "MANIFEST.db";
/// The marker beside a locked directory (the lock is on the directory itself).
pub const LOCK: &str = "db.lock";
/// The commit log's folder inside the data directory, unless `CommitLogDirectory` says elsewhere.
pub const COMMIT_LOG_DIR: &str = "commit-log";

const TEMP_SUFFIX: &str = ".tmp";
const SEGMENT_PREFIX: &str = "CommitLog-";
const SEGMENT_SUFFIX: &str = ".log";
const SSTABLE_SUFFIX: &str = "-Data.db";

/// The temporary name `name` is written under before it is renamed into place.
pub fn temp(name: &str) -> String {
    format!("{name}{TEMP_SUFFIX}")
}

/// The temporary path a file at `path` is written under.
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(TEMP_SUFFIX);
    PathBuf::from(name)
}

/// The name of commit log segment `seq` (zero-padded, so names sort as numbers).
pub fn segment(seq: u64) -> String {
    format!("{SEGMENT_PREFIX}{seq:020}{SEGMENT_SUFFIX}")
}

/// The sequence number of a segment's name, if it is one.
pub fn parse_segment(name: &str) -> Option<u64> {
    let digits = name
        .strip_prefix(SEGMENT_PREFIX)?
        .strip_suffix(SEGMENT_SUFFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The name of SSTable `generation` of column family `cf`.
pub fn sstable(cf: &str, generation: u64) -> String {
    format!("{cf}-{generation}{SSTABLE_SUFFIX}")
}

/// An SSTable name taken apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SstableName<'a> {
    /// The column family.
    pub cf: &'a str,
    /// The generation.
    pub generation: u64,
    /// Whether it is the temporary name of an SSTable being written.
    pub temp: bool,
}

/// Parses `<CF>-<generation>-Data.db`, or its temporary name. The CF part must be a valid
/// column family name (`[A-Za-z0-9_]{1,48}`, or an index's `<cf>.<index>`), so
/// `Standard1-backup.db` is not an SSTable.
pub fn parse_sstable(name: &str) -> Option<SstableName<'_>> {
    let (name, temp) = match name.strip_suffix(TEMP_SUFFIX) {
        Some(n) => (n, true),
        None => (name, false),
    };
    let stem = name.strip_suffix(SSTABLE_SUFFIX)?;
    let (cf, digits) = stem.rsplit_once('-')?;
    // A secondary index's hidden column family is `<cf>.<index>`.
    let named = is_identifier(cf)
        || cf
            .split_once('.')
            .is_some_and(|(base, index)| is_identifier(base) && is_identifier(index));
    if !named || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(SstableName {
        cf,
        generation: digits.parse().ok()?,
        temp,
    })
}

/// Whether `s` can name a keyspace or column family (SPEC §1): it then becomes a folder or a
/// file name, and nothing else may reach the file system.
pub fn is_identifier(s: &str) -> bool {
    !s.is_empty() && s.len() <= 48 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// An SSTable's path relative to the data directory, as the manifest records obsolete files.
pub fn sstable_relative(keyspace: &str, cf: &str, generation: u64) -> String {
    format!("{keyspace}/{}", sstable(cf, generation))
}

/// A path the manifest recorded relative to the data directory, if it has the shape of an
/// SSTable the engine wrote (`<Keyspace>/<CF>-<gen>-Data.db`); anything else is refused, so a
/// damaged or forged manifest cannot make open delete an arbitrary file.
pub fn resolve_sstable_relative(root: &Path, relative: &str) -> Option<PathBuf> {
    let (ks, file) = relative.split_once('/')?;
    let parsed = parse_sstable(file)?;
    (is_identifier(ks) && !parsed.temp).then(|| root.join(ks).join(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_names_roundtrip_and_sort() {
        assert_eq!(parse_segment(&segment(42)), Some(42));
        assert!(segment(9) < segment(10));
        assert_eq!(parse_segment("CommitLog-.log"), None);
        assert_eq!(parse_segment("CommitLog-12.log.tmp"), None);
        assert_eq!(parse_segment("CommitLog-1x.log"), None);
    }

    #[test]
    fn sstable_names_are_recognised_and_nothing_else() {
        assert_eq!(
            parse_sstable("Standard1-12-Data.db"),
            Some(SstableName {
                cf: "Standard1",
                generation: 12,
                temp: false
            })
        );
        assert!(parse_sstable("Standard1-12-Data.db.tmp").unwrap().temp);
        for foreign in [
            "Standard1-backup.db",
            "README.txt",
            "Standard1--Data.db",
            "Stan-dard1-3-Data.db",
            "-3-Data.db",
            "Standard1-3-Data.db.bak",
        ] {
            assert_eq!(parse_sstable(foreign), None, "{foreign}");
        }
    }

    #[test]
    fn relative_paths_must_look_like_sstables() {
        let root = Path::new("/d");
        assert_eq!(
            resolve_sstable_relative(root, &sstable_relative("Keyspace1", "Standard1", 3)),
            Some(PathBuf::from("/d/Keyspace1/Standard1-3-Data.db"))
        );
        for bad in [
            "../etc/passwd",
            "Keyspace1/../../x-1-Data.db",
            "Keyspace1/README.txt",
            "/abs/Standard1-1-Data.db",
            "Keyspace1/Standard1-1-Data.db.tmp",
        ] {
            assert_eq!(resolve_sstable_relative(root, bad), None, "{bad}");
        }
    }
}
