//! The engine's error type: one enum for everything the public API can fail with.
//!
//! Each variant names the thing at fault (keyspace, column family, comparator, file, line) so a
//! caller can tell a user what to fix. Configuration errors keep their own type
//! ([`ConfError`]) and are wrapped here.

use std::path::PathBuf;

/// A mistake in a storage configuration, with where it is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}:{line}: <{element}>{}: {message}", .file.as_ref().map_or("storage-conf.xml".to_string(), |p| p.display().to_string()), .attribute.as_ref().map_or(String::new(), |a| format!(" attribute {a}")))]
pub struct ConfError {
    /// The file, when read from one.
    pub file: Option<PathBuf>,
    /// 1-based line number.
    pub line: u32,
    /// The element at fault.
    pub element: String,
    /// The attribute at fault, if it is one.
    pub attribute: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// What kind of name failed validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameKind {
    /// A column name (in a Standard CF) or a sub-column name (in a Super CF).
    Column,
    /// A super column name.
    SuperColumn,
    /// A column value, checked by the CF's `DefaultValidationClass`.
    Value,
}

impl std::fmt::Display for NameKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NameKind::Column => "column name",
            NameKind::SuperColumn => "super column name",
            NameKind::Value => "value",
        })
    }
}

/// Everything the engine's public API can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The keyspace does not exist.
    #[error("unknown keyspace '{0}'")]
    UnknownKeyspace(String),
    /// The column family does not exist in that keyspace.
    #[error("unknown column family '{column_family}' in keyspace '{keyspace}'")]
    UnknownColumnFamily {
        /// The keyspace that was searched.
        keyspace: String,
        /// The column family that was asked for.
        column_family: String,
    },
    /// A name or value does not fit the comparator (or validator) of its column family.
    #[error("invalid {kind} for {keyspace}.{column_family} ({comparator}): {reason}")]
    InvalidName {
        /// Keyspace of the column family.
        keyspace: String,
        /// The column family whose comparator rejected the name.
        column_family: String,
        /// The comparator (or validator) class name.
        comparator: String,
        /// Which name it was.
        kind: NameKind,
        /// Why it was rejected.
        reason: String,
    },
    /// A request that is malformed for reasons other than a name (a super column path against a
    /// Standard CF, an empty row key, a reversed slice whose start is below its finish, ...).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// A keyspace or column family name outside `[A-Za-z0-9_]{1,48}`.
    #[error("invalid {what} name '{name}': names are 1 to 48 characters of [A-Za-z0-9_]")]
    InvalidIdentifier {
        /// "keyspace" or "column family".
        what: &'static str,
        /// The rejected name.
        name: String,
    },
    /// A read through a secondary index whose build has not finished (Cassandra's
    /// `IndexNotAvailableException`, in its words).
    #[error("The secondary index '{index}' is not yet available")]
    IndexNotBuilt {
        /// The keyspace of the index.
        keyspace: String,
        /// The index's name.
        index: String,
    },
    /// A schema change that would clash with what exists (a duplicate keyspace or CF).
    #[error("schema: {0}")]
    Schema(String),
    /// The schema given at open conflicts with the one stored with the data.
    #[error("schema given at open conflicts with the stored schema: {0}")]
    SchemaConflict(String),
    /// The storage configuration (storage-conf.xml) is wrong.
    #[error(transparent)]
    Conf(#[from] ConfError),
    /// A write to the commit log (or its fsync) failed earlier; the database refuses writes until
    /// it is reopened, because retrying after a failed fsync can lose data silently.
    #[error("the database is read-only until reopened: {0}")]
    ReadOnly(String),
    /// The database is closing: background work in progress stops (a compaction's partial
    /// output is removed; its inputs stay live).
    #[error("the database is closing")]
    Closing,
    /// The data directory holds no database, and the options said not to create one
    /// ([`Options::create_if_missing`](crate::Options::create_if_missing)).
    #[error("no database at {}", .0.display())]
    NoDatabase(PathBuf),
    /// The data directory is in use by another process.
    #[error("data directory {} is in use by another process (lock file {})", .dir.display(), .lock.display())]
    Locked {
        /// The data directory.
        dir: PathBuf,
        /// The lock file that is held.
        lock: PathBuf,
    },
    /// A file failed its checks (magic, version, checksum, lengths, structure), or a file the
    /// data directory needs is missing.
    #[error("corrupt file {}{place}: {reason}", .path.display())]
    Corrupt {
        /// The file (only ever a path).
        path: PathBuf,
        /// Where in the file.
        place: Place,
        /// What kind of fault.
        kind: CorruptKind,
        /// What was wrong.
        reason: String,
    },
    /// A name stored in a column family does not decode under its comparator: only damaged data
    /// (or a comparator changed behind the data's back) holds one.
    #[error("column family {column_family} holds a name that does not decode: {reason}")]
    CorruptName {
        /// `Keyspace/ColumnFamily`.
        column_family: String,
        /// What was wrong.
        reason: String,
    },
    /// A background thread could not be started.
    #[error("could not start the {name} thread: {source}")]
    Thread {
        /// The thread's name.
        name: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// An I/O operation on a file failed.
    #[error("I/O error on {}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// What kind of fault a file has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CorruptKind {
    /// It ends before its structure does.
    Truncated,
    /// A checksum does not match.
    Checksum,
    /// It does not start (or end) with the format's magic number.
    BadMagic,
    /// Its format version is one this build does not read.
    UnknownVersion,
    /// Its structure is wrong (a length, an order, a tag, a reference).
    Malformed,
    /// It is not there, and the data directory needs it.
    Missing,
}

/// Where in a file a fault is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Place {
    /// The file as a whole.
    #[default]
    File,
    /// A byte offset.
    Offset(u64),
    /// An SSTable data block, by number.
    Block(u64),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::File => Ok(()),
            Place::Offset(o) => write!(f, " at offset {o}"),
            Place::Block(b) => write!(f, " in data block {b}"),
        }
    }
}

/// A fault a format's decoder found, before the file it is in is known: every decoder (codec,
/// segment, block, index, footer, bloom filter) reports this, and the layer holding the file
/// turns it into [`Error::Corrupt`] by adding the path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    /// What kind of fault.
    pub kind: CorruptKind,
    /// Where.
    pub place: Place,
    /// What was wrong.
    pub reason: String,
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.place {
            Place::File => f.write_str(&self.reason),
            p => write!(f, "{}: {}", p.to_string().trim_start(), self.reason),
        }
    }
}

impl std::error::Error for FormatError {}

impl FormatError {
    /// A fault of `kind` with no position yet.
    pub fn new(kind: CorruptKind, reason: impl Into<String>) -> Self {
        FormatError {
            kind,
            place: Place::File,
            reason: reason.into(),
        }
    }

    /// A malformed structure.
    pub fn malformed(reason: impl Into<String>) -> Self {
        Self::new(CorruptKind::Malformed, reason)
    }

    /// The same fault at `place` (an offset inside a part is shifted by the part's start).
    pub fn at(mut self, place: Place) -> Self {
        self.place = match (self.place, place) {
            (Place::Offset(inner), Place::Offset(base)) => Place::Offset(base + inner),
            (Place::Offset(_), p @ Place::Block(_)) => p,
            (Place::File, p) => p,
            (p, _) => p,
        };
        self
    }

    /// The same fault with what it means after its reason.
    pub fn also(mut self, consequence: &str) -> Self {
        self.reason = format!("{}; {consequence}", self.reason);
        self
    }

    /// The same fault with `context` before its reason.
    pub fn context(mut self, context: impl std::fmt::Display) -> Self {
        self.reason = format!("{context}: {}", self.reason);
        self
    }
}

impl Error {
    /// A decoder's fault, in the file at `path`.
    pub(crate) fn corrupt(path: impl Into<PathBuf>, e: FormatError) -> Self {
        Error::Corrupt {
            path: path.into(),
            place: e.place,
            kind: e.kind,
            reason: e.reason,
        }
    }

    /// A file the data directory needs that is not there.
    pub(crate) fn missing(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::Corrupt {
            path: path.into(),
            place: Place::File,
            kind: CorruptKind::Missing,
            reason: reason.into(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidRequest(msg.into())
    }
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
