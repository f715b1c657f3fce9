//! The errors of the CQL layer, of Cassandra's kinds (the native protocol's error codes), each
//! with a one-line message; a syntax error names its line and column.

use supercolumn::Error;

/// What went wrong with a CQL statement.
#[derive(Debug, thiserror::Error)]
pub enum CqlError {
    /// The text does not parse (code 0x2000).
    #[error("SyntaxException: line {line}:{col} {message}")]
    Syntax {
        /// 1-based line of the offending token.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What was expected or found.
        message: String,
    },
    /// The statement parses but cannot be executed as asked (code 0x2200).
    #[error("InvalidRequest: {0}")]
    Invalid(String),
    /// The keyspace or table does not exist (code 0x2300).
    #[error("InvalidRequest: unconfigured {0}")]
    Unconfigured(String),
    /// A prepared statement's table was dropped or truncated since (a new column family
    /// took its name), or its options were altered (a new default TTL): prepare it again (a
    /// server answers UNPREPARED, code 0x2500).
    #[error("InvalidRequest: {0}")]
    Stale(String),
    /// The statement may not touch what it names: a write to a system keyspace (code
    /// 0x2100).
    #[error("Unauthorized: {0}")]
    Unauthorized(String),
    /// The schema change would make a table Cassandra's configuration checks refuse (code
    /// 0x2300, Cassandra's `ConfigurationException`): a counter column added to a table of
    /// other columns, or the other way round.
    #[error("ConfigurationException: {0}")]
    Config(String),
    /// The keyspace or table already exists (code 0x2400).
    #[error("AlreadyExists: {0}")]
    AlreadyExists(String),
    /// The engine refused or failed the operation.
    #[error("{0}")]
    Engine(#[from] Error),
}

impl CqlError {
    /// A syntax error at `line:col`.
    pub fn syntax(line: usize, col: usize, message: impl Into<String>) -> Self {
        CqlError::Syntax {
            line,
            col,
            message: message.into(),
        }
    }

    /// An invalid request.
    pub fn invalid(message: impl Into<String>) -> Self {
        CqlError::Invalid(message.into())
    }

    /// A `USING TIMESTAMP` of the one value Cassandra refuses (the long minimum).
    pub fn timestamp_out_of_bound() -> Self {
        CqlError::invalid(format!(
            "Out of bound timestamp, must be in [{}, {}]",
            i64::MIN + 1,
            i64::MAX
        ))
    }

    /// The native protocol's error code for this error.
    pub fn code(&self) -> u32 {
        match self {
            CqlError::Syntax { .. } => 0x2000,
            CqlError::Unauthorized(_) => 0x2100,
            CqlError::Invalid(_) => 0x2200,
            CqlError::Unconfigured(_) | CqlError::Config(_) => 0x2300,
            CqlError::AlreadyExists(_) => 0x2400,
            CqlError::Stale(_) => 0x2500,
            CqlError::Engine(e) if refuses_input(e) => 0x2200,
            CqlError::Engine(Error::IndexNotBuilt { .. }) => 0x1300,
            CqlError::Engine(_) => 0x0000,
        }
    }

    /// Whether this is the server's own failure (a damaged file, an I/O error, a database
    /// closing or read-only), not a refusal of what the statement asked.
    pub fn is_server_fault(&self) -> bool {
        self.code() == 0x0000
    }
}

/// Whether the engine refused the input (a name, a key, a value, a schema change) rather than
/// failed on its own account.
fn refuses_input(e: &Error) -> bool {
    matches!(
        e,
        Error::UnknownKeyspace(_)
            | Error::UnknownColumnFamily { .. }
            | Error::InvalidName { .. }
            | Error::InvalidRequest(_)
            | Error::InvalidIdentifier { .. }
            | Error::Schema(_)
            | Error::Conf(_)
    )
}
