//! Password authentication (`serve --auth`, Cassandra's PasswordAuthenticator over SASL PLAIN):
//! the users and their bcrypt hashes, kept in `auth.credentials` in the data directory (a
//! versioned text file written to a temporary name, fsynced and renamed, so a crash leaves the
//! old file or the new one), and the check of a client's PLAIN token. No password is stored or
//! logged in the clear.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file's name in the data directory.
pub const FILE_NAME: &str = "auth.credentials";
const HEADER: &str = "supercolumn-credentials 1";
/// bcrypt's cost, as Cassandra's default (2^10 rounds).
const COST: u32 = 10;
/// The longest password: every byte of it counts (bcrypt's limit).
pub const MAX_PASSWORD: usize = 72;

/// The authenticator class a client is told to use.
pub const AUTHENTICATOR: &str = "org.apache.cassandra.auth.PasswordAuthenticator";

/// What went wrong with the credentials.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not one this server wrote.
    #[error("{path}: line {line}: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A user name that cannot be stored.
    #[error(
        "invalid user name '{0}': 1 to 64 characters, none of them ':' or a control character"
    )]
    Name(String),
    /// Hashing failed.
    #[error("hashing the password: {0}")]
    Hash(String),
    /// bcrypt reads only the first 72 bytes of a password: a longer one would let any text
    /// after byte 72 pass, so it is refused rather than cut.
    #[error("the password is {0} bytes long; the most bcrypt checks is {MAX_PASSWORD} bytes")]
    PasswordTooLong(usize),
}

/// The users a server accepts.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    users: BTreeMap<String, String>,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= 64
        && !name.chars().any(|c| c == ':' || c.is_control())
}

impl Credentials {
    /// Loads the credentials kept in `data_dir` (none yet: no users).
    pub fn load(data_dir: &Path) -> Result<Credentials, AuthError> {
        let path = data_dir.join(FILE_NAME);
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Credentials::default()),
            Err(source) => return Err(AuthError::Io { path, source }),
        };
        let corrupt = |line: usize, message: &str| AuthError::Corrupt {
            path: path.clone(),
            line,
            message: message.to_string(),
        };
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            return Err(corrupt(
                1,
                "not a supercolumn credentials file of version 1",
            ));
        }
        let mut users = BTreeMap::new();
        for (i, l) in lines.enumerate() {
            let (name, hash) = l
                .split_once(':')
                .ok_or_else(|| corrupt(i + 2, "expected name:hash"))?;
            if !valid_name(name) || !hash.starts_with("$2") {
                return Err(corrupt(i + 2, "expected name:bcrypt-hash"));
            }
            users.insert(name.to_string(), hash.to_string());
        }
        Ok(Credentials { users })
    }

    /// Whether any user exists.
    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }

    /// Adds or replaces a user, and saves the file durably.
    pub fn set_user(
        &mut self,
        data_dir: &Path,
        name: &str,
        password: &str,
    ) -> Result<(), AuthError> {
        if !valid_name(name) {
            return Err(AuthError::Name(name.to_string()));
        }
        if password.len() > MAX_PASSWORD {
            return Err(AuthError::PasswordTooLong(password.len()));
        }
        // Within 72 bytes bcrypt reads every byte (its terminating zero may fall outside).
        let hash = bcrypt::hash(password, COST).map_err(|e| AuthError::Hash(e.to_string()))?;
        self.users.insert(name.to_string(), hash);
        self.save(data_dir)
    }

    fn save(&self, data_dir: &Path) -> Result<(), AuthError> {
        let path = data_dir.join(FILE_NAME);
        let tmp = data_dir.join(format!("{FILE_NAME}.tmp"));
        let io = |source| AuthError::Io {
            path: path.clone(),
            source,
        };
        let mut text = format!("{HEADER}\n");
        for (n, h) in &self.users {
            text.push_str(&format!("{n}:{h}\n"));
        }
        let mut f = fs::File::create(&tmp).map_err(io)?;
        f.write_all(text.as_bytes()).map_err(io)?;
        f.sync_all().map_err(io)?;
        fs::rename(&tmp, &path).map_err(io)?;
        fs::File::open(data_dir)
            .and_then(|d| d.sync_all())
            .map_err(io)
    }

    /// The user a SASL PLAIN token (`authzid \0 user \0 password`) names, if it names one.
    pub fn user_of(token: &[u8]) -> Option<&str> {
        std::str::from_utf8(token.split(|&b| b == 0).nth(1)?).ok()
    }

    /// Checks a SASL PLAIN token (`authzid \0 user \0 password`): the user it names, when the
    /// password is right. A password over 72 bytes never is (no stored one is that long, and
    /// bcrypt would compare only its first 72 bytes).
    pub fn check(&self, token: &[u8]) -> Option<String> {
        let mut parts = token.split(|&b| b == 0);
        let (_authzid, user, password) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let user = std::str::from_utf8(user).ok()?;
        let password = std::str::from_utf8(password).ok()?;
        // An unknown user costs a bcrypt too: the time taken does not tell which users exist.
        static UNKNOWN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        let (hash, known) = match self.users.get(user) {
            Some(h) => (h.as_str(), true),
            None => (
                UNKNOWN
                    .get_or_init(|| bcrypt::hash("no such user", COST).ok())
                    .as_deref()?,
                false,
            ),
        };
        let ok = password.len() <= MAX_PASSWORD && bcrypt::verify(password, hash).unwrap_or(false);
        (ok && known).then(|| user.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_survive_a_reload_and_only_the_right_password_passes() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Credentials::load(dir.path()).unwrap();
        assert!(c.is_empty());
        c.set_user(dir.path(), "alice", "s3cret").unwrap();
        let c = Credentials::load(dir.path()).unwrap();
        assert_eq!(c.check(b"\0alice\0s3cret").as_deref(), Some("alice"));
        assert_eq!(c.check(b"\0alice\0wrong"), None);
        assert_eq!(c.check(b"\0bob\0s3cret"), None);
        assert_eq!(c.check(b"garbage"), None);
        let text = fs::read_to_string(dir.path().join(FILE_NAME)).unwrap();
        assert!(!text.contains("s3cret"));
        fs::write(dir.path().join(FILE_NAME), "something else\n").unwrap();
        assert!(matches!(
            Credentials::load(dir.path()),
            Err(AuthError::Corrupt { line: 1, .. })
        ));
        assert!(Credentials::default()
            .set_user(dir.path(), "a:b", "x")
            .is_err());
    }

    #[test]
    fn a_password_over_72_bytes_is_refused_and_no_suffix_past_72_passes() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Credentials::default();
        let long = "p".repeat(80);
        assert!(matches!(
            c.set_user(dir.path(), "carol", &long),
            Err(AuthError::PasswordTooLong(80))
        ));
        let exact = "q".repeat(72);
        c.set_user(dir.path(), "carol", &exact).unwrap();
        let token = |p: &str| format!("\0carol\0{p}").into_bytes();
        assert_eq!(c.check(&token(&exact)).as_deref(), Some("carol"));
        // Before, bcrypt compared the first 72 bytes only: any suffix passed.
        assert_eq!(c.check(&token(&format!("{exact}anything"))), None);
        assert_eq!(Credentials::user_of(&token("x")), Some("carol"));
    }
}
