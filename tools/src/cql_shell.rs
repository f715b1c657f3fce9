//! `supercolumn cql`: cqlsh's place beside the shell. Statements run one by one as they are
//! read (a piped input's statements run before the rest has arrived), each one's output is
//! written before the next runs, and an error stops the run at the statement that failed (the
//! ones before it have run). `DESCRIBE` is the session's, as a server answers it, printed as
//! cqlsh does. Of cqlsh's own commands it has `HELP`, `EXPAND`, `CONSISTENCY` (one node: every
//! level reads and writes the one copy), `SOURCE` and `QUIT`; `PAGING`, `TRACING`, `COPY`,
//! `CAPTURE` and `LOGIN` are refused with a pointer to cqlsh against `serve`.

use std::io::{BufRead, Write};

use supercolumn::Database;
use supercolumn_cql::{self as cql, quote_ident, CqlResult, Session};

/// A statement failed; its error line is already written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a statement failed")]
pub struct Failed;

/// The outcome of feeding text: statements ran (and all succeeded), or one failed.
pub type Outcome = Result<(), Failed>;

/// A CQL shell over a session.
pub struct CqlShell<'db> {
    session: Session<'db>,
    quit: bool,
    /// `EXPAND ON`: rows printed one field a line.
    expand: bool,
    /// The level `CONSISTENCY` set (shown, and otherwise without effect on one node).
    consistency: String,
    /// `SOURCE` files being read, innermost last (a file that sources itself is refused).
    sourcing: Vec<std::path::PathBuf>,
}

/// The consistency levels cqlsh takes.
const LEVELS: &[&str] = &[
    "ANY",
    "ONE",
    "TWO",
    "THREE",
    "QUORUM",
    "ALL",
    "LOCAL_QUORUM",
    "EACH_QUORUM",
    "SERIAL",
    "LOCAL_SERIAL",
    "LOCAL_ONE",
];

/// What `HELP` prints.
const HELP: &str = "
Documented shell commands:
===========================
CONSISTENCY  DESCRIBE  DESC  EXPAND  EXIT  HELP  QUIT  SOURCE

CQL statements:
===============
CREATE KEYSPACE  ALTER KEYSPACE  DROP KEYSPACE  USE
CREATE TABLE  ALTER TABLE  DROP TABLE  TRUNCATE
SELECT  INSERT  UPDATE  DELETE  BATCH

Not here (use cqlsh against `supercolumn serve`): PAGING, TRACING, COPY, CAPTURE, LOGIN.
";

impl<'db> CqlShell<'db> {
    /// A shell starting in `keyspace`, if given.
    pub fn new(db: &'db Database, keyspace: Option<&str>) -> Result<Self, String> {
        let mut session = Session::new(db);
        if let Some(k) = keyspace {
            session
                .execute(&format!("USE {}", quote_ident(k)))
                .map_err(|e| e.to_string())?;
        }
        Ok(CqlShell {
            session,
            quit: false,
            expand: false,
            consistency: "ONE".into(),
            sourcing: Vec::new(),
        })
    }

    /// The keyspace in use.
    pub fn keyspace(&self) -> Option<&str> {
        self.session.keyspace()
    }

    /// Whether `quit`/`exit` was given.
    pub fn has_quit(&self) -> bool {
        self.quit
    }

    /// Runs the statements `pending` completes, leaving the unfinished rest in it.
    pub fn run_complete(
        &mut self,
        pending: &mut String,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Outcome {
        let (done, rest) = cql::split_statements(pending);
        *pending = rest;
        for s in done {
            self.run_one(&s, out, err)?;
            if self.quit {
                break;
            }
        }
        Ok(())
    }

    /// Runs all of `text`, the last statement with or without its `;`.
    pub fn run_text(&mut self, text: &str, out: &mut dyn Write, err: &mut dyn Write) -> Outcome {
        let mut pending = text.to_string();
        self.run_complete(&mut pending, out, err)?;
        if !self.quit && !pending.trim().is_empty() {
            self.run_one(&pending, out, err)?;
        }
        Ok(())
    }

    /// Runs statements from a stream as each one is complete.
    pub fn run_stream(
        &mut self,
        input: &mut dyn BufRead,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Outcome {
        let mut pending = String::new();
        let mut line = String::new();
        loop {
            line.clear();
            match input.read_line(&mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    let _ = writeln!(err, "error: reading standard input: {e}");
                    return Err(Failed);
                }
            }
            pending.push_str(&line);
            self.run_complete(&mut pending, out, err)?;
            if self.quit {
                return Ok(());
            }
        }
        if !pending.trim().is_empty() {
            self.run_one(&pending, out, err)?;
        }
        Ok(())
    }

    fn run_one(&mut self, text: &str, out: &mut dyn Write, err: &mut dyn Write) -> Outcome {
        let t = text.trim();
        if t.is_empty() {
            return Ok(());
        }
        let lower = t.to_ascii_lowercase();
        let first = lower.split_whitespace().next().unwrap_or("");
        let result = match first {
            "quit" | "exit" => {
                self.quit = true;
                return Ok(());
            }
            "describe" | "desc" => self.describe(t),
            "expand" => self.expand(&lower),
            "help" | "?" => Ok(HELP.to_string()),
            "consistency" => self.consistency(t),
            "source" => return self.source(t, out, err),
            "paging" | "tracing" | "copy" | "capture" | "login" => {
                Err(cql::CqlError::invalid(format!(
                    "{} is cqlsh's; this shell runs statements on the data directory itself: run \
                 `supercolumn serve` and cqlsh for it",
                    first.to_ascii_uppercase()
                )))
            }
            _ => self.session.execute(t).map(|rs| {
                rs.into_iter()
                    .filter_map(|r| match r {
                        CqlResult::Rows(rows) if self.expand => {
                            Some(format!("\n{}\n", rows.to_expanded()))
                        }
                        CqlResult::Rows(rows) => Some(format!("\n{}\n", rows.to_table())),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
        };
        match result {
            Ok(text) => {
                if !text.is_empty() {
                    let _ = writeln!(out, "{text}");
                }
                let _ = out.flush();
                Ok(())
            }
            Err(e) => {
                let _ = writeln!(err, "{}", one_line(&e.to_string()));
                let _ = err.flush();
                Err(Failed)
            }
        }
    }

    /// `EXPAND [ON | OFF]`, answered as cqlsh answers it.
    fn expand(&mut self, lower: &str) -> Result<String, cql::CqlError> {
        let words: Vec<&str> = lower.trim_end_matches(';').split_whitespace().collect();
        match words.as_slice() {
            [_] if self.expand => {
                Ok("Expanded output is currently enabled. Use EXPAND OFF to disable".into())
            }
            [_] => Ok("Expanded output is currently disabled. Use EXPAND ON to enable.".into()),
            [_, "on"] => {
                self.expand = true;
                Ok("Now Expanded output is enabled".into())
            }
            [_, "off"] => {
                self.expand = false;
                Ok("Disabled Expanded output.".into())
            }
            _ => Err(cql::CqlError::syntax(1, 8, "EXPAND takes ON or OFF")),
        }
    }

    /// `CONSISTENCY [level]`, answered as cqlsh answers it. One node holds the one copy, so
    /// every level reads and writes it alike.
    fn consistency(&mut self, text: &str) -> Result<String, cql::CqlError> {
        let words: Vec<&str> = text.trim_end_matches(';').split_whitespace().collect();
        match words.as_slice() {
            [_] => Ok(format!(
                "Current consistency level is {}.",
                self.consistency
            )),
            [_, level] if LEVELS.contains(&level.to_ascii_uppercase().as_str()) => {
                self.consistency = level.to_ascii_uppercase();
                Ok(format!("Consistency level set to {}.", self.consistency))
            }
            _ => Err(cql::CqlError::syntax(
                1,
                12,
                "Improper CONSISTENCY command.",
            )),
        }
    }

    /// `SOURCE 'file'`: the file's statements, run as if typed, stopping at the first error.
    fn source(&mut self, text: &str, out: &mut dyn Write, err: &mut dyn Write) -> Outcome {
        let arg = text["source".len()..].trim().trim_end_matches(';').trim();
        let name = arg.trim_matches(|c| c == '\'' || c == '"');
        let path = std::path::PathBuf::from(name);
        let fail = |err: &mut dyn Write, why: String| {
            let _ = writeln!(err, "{why}");
            Err(Failed)
        };
        if name.is_empty() {
            return fail(err, "SOURCE takes a file name: SOURCE 'file.cql'".into());
        }
        if self.sourcing.contains(&path) {
            return fail(err, format!("{name} is already being sourced"));
        }
        let contents = match std::fs::read_to_string(&path) {
            Ok(c) => c,
            Err(e) => return fail(err, format!("Could not open '{name}': {e}")),
        };
        self.sourcing.push(path);
        let ran = self.run_text(&contents, out, err);
        self.sourcing.pop();
        ran
    }

    /// `DESCRIBE …`, answered by the session as a server answers it (names, or the statements
    /// that recreate what is named), printed as cqlsh prints them.
    fn describe(&mut self, text: &str) -> Result<String, cql::CqlError> {
        let rows = match self.session.execute(text)?.pop() {
            Some(CqlResult::Rows(rows)) => rows,
            _ => return Ok(String::new()),
        };
        let shown = rows.displayed();
        let column = |name: &str| rows.columns().iter().position(|c| c.0 == name);
        let out = if let Some(at) = column("create_statement") {
            let statements: Vec<&str> = shown.iter().map(|r| r[at].as_str()).collect();
            statements.join("\n\n")
        } else if let Some(at) = column("name") {
            let names: Vec<&str> = shown.iter().map(|r| r[at].as_str()).collect();
            names.join("  ")
        } else {
            // DESCRIBE CLUSTER: one row of named values.
            let names: Vec<&String> = rows.columns().iter().map(|c| &c.0).collect();
            shown
                .first()
                .map(|r| {
                    let lines: Vec<String> = names
                        .iter()
                        .zip(r)
                        .map(|(n, v)| format!("{n}: {v}"))
                        .collect();
                    lines.join("\n")
                })
                .unwrap_or_default()
        };
        Ok(format!("\n{out}\n"))
    }
}

fn one_line(s: &str) -> String {
    s.lines().collect::<Vec<_>>().join(" ")
}
