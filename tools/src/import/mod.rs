//! `supercolumn import`: CSV files into a CQL table, as cqlsh's `COPY … FROM` reads them
//! (a header line or not, a delimiter, the text that means null, the columns the fields fill),
//! at engine speed: each field is read by its column's type (`value_from_text`), and the rows
//! go in through one prepared `INSERT`, a batch of rows at a time. A line that cannot be read
//! (a wrong field count, a value its type refuses, a missing key) is rejected whole and
//! reported by its line number; every other row is written. An `export` file (CQL statements)
//! runs statement by statement instead. A running server does the same on its own database
//! when asked through its admin address (`command.rs`), reading the file itself.

mod command;
pub use command::Args;

use std::fs::File;
use std::io::{BufReader, IsTerminal};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use supercolumn::Database;
use supercolumn_cql::{quote_ident, value_from_text, CqlType, Prepared, Session, Table};

/// How a CSV file is laid out (`COPY FROM`'s options).
#[derive(Debug, Clone)]
pub struct CsvOptions {
    /// The first line names the columns.
    pub header: bool,
    pub delimiter: u8,
    /// A field equal to this is null (cqlsh's default: the empty string).
    pub null: String,
    /// The columns the fields fill, in order [default: the header's names, else every
    /// column in the table's order: partition key, clustering, the others by name].
    pub columns: Option<Vec<String>>,
    /// Show a progress bar on a terminal (a server importing for a client shows none).
    pub progress: bool,
    /// The rejected lines kept with their reasons (all are counted): a server keeps only what
    /// it sends back, so a file of bad lines grows nothing in it.
    pub keep_rejected: usize,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            header: false,
            delimiter: b',',
            null: String::new(),
            columns: None,
            progress: false,
            keep_rejected: usize::MAX,
        }
    }
}

/// What an import did.
#[derive(Debug, Default)]
pub struct Report {
    pub rows: u64,
    /// The lines refused (their numbers, from 1) and why, up to the options' `keep_rejected`.
    pub rejected: Vec<(u64, String)>,
    /// Lines refused in all.
    pub rejected_total: u64,
    keep: usize,
    pub elapsed: Duration,
}

impl Report {
    /// Line `line` is refused for `why`.
    fn reject(&mut self, line: u64, why: String) {
        self.rejected_total += 1;
        if self.rejected.len() < self.keep {
            self.rejected.push((line, why));
        }
    }
}

/// What an import did, as it is printed and as a server sends it back.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// Statements run from an export file (then nothing else is set).
    pub statements: Option<usize>,
    pub rows: u64,
    /// Lines refused, with why: all of them, or at most [`REJECTED_SENT`] from a server.
    pub rejected: Vec<(u64, String)>,
    /// Lines refused in all.
    pub rejected_total: u64,
    pub seconds: f64,
}

/// The rejected lines a server sends back at most (their count is always whole): a file of
/// nothing but bad lines would otherwise be sent back whole, each with its reason.
pub const REJECTED_SENT: usize = 1_000;

/// Rows written per batch: large enough that a batch's fixed cost vanishes, small enough that
/// a rejected row costs little to find.
const BATCH_ROWS: usize = 500;

/// `supercolumn import`: the CSV file `path` into `table` (`KEYSPACE.TABLE`), each rejected
/// line and a summary on stderr, an error if any line was rejected; without a table, the
/// statements of an export file.
pub fn run(db: &Database, path: &Path, table: Option<&str>, o: &CsvOptions) -> anyhow::Result<()> {
    print(path, &summary(db, path, table, o)?)
}

/// What importing `path` into `table` (none: an export file's statements) did.
pub fn summary(
    db: &Database,
    path: &Path,
    table: Option<&str>,
    o: &CsvOptions,
) -> anyhow::Result<Summary> {
    let Some(table) = table else {
        let n = import_cql(db, path)?;
        return Ok(Summary {
            statements: Some(n),
            ..Summary::default()
        });
    };
    let (ks, t) = table
        .split_once('.')
        .ok_or_else(|| anyhow::anyhow!("--table takes KEYSPACE.TABLE, not '{table}'"))?;
    let r = import_csv(db, ks, t, path, o)?;
    Ok(Summary {
        statements: None,
        rows: r.rows,
        rejected_total: r.rejected_total,
        rejected: r.rejected,
        seconds: r.elapsed.as_secs_f64(),
    })
}

/// Prints what an import of `path` did on stderr; an error if any line was rejected.
pub fn print(path: &Path, s: &Summary) -> anyhow::Result<()> {
    if let Some(n) = s.statements {
        eprintln!("Ran {n} statements from {}.", path.display());
        return Ok(());
    }
    for (line, why) in &s.rejected {
        eprintln!("{}:{line}: rejected: {why}", path.display());
    }
    let unsent = s.rejected_total.saturating_sub(s.rejected.len() as u64);
    if unsent > 0 {
        eprintln!("… and {unsent} more lines rejected (a server sends {REJECTED_SENT} of them).");
    }
    eprintln!(
        "Imported {} rows from {} in {:.1} s ({:.0} rows/s); {} lines rejected.",
        s.rows,
        path.display(),
        s.seconds,
        s.rows as f64 / s.seconds.max(1e-9),
        s.rejected_total
    );
    anyhow::ensure!(s.rejected_total == 0, "{} lines rejected", s.rejected_total);
    Ok(())
}

/// Imports the CSV file `path` into `keyspace.table`.
pub fn import_csv(
    db: &Database,
    keyspace: &str,
    table: &str,
    path: &Path,
    o: &CsvOptions,
) -> anyhow::Result<Report> {
    let started = Instant::now();
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(false)
        .delimiter(o.delimiter)
        .flexible(true)
        .from_reader(BufReader::with_capacity(1 << 20, file));
    let mut records = csv.records();
    let header = if o.header {
        match records.next() {
            Some(r) => Some(r.context("reading the header line")?),
            None => None,
        }
    } else {
        None
    };
    let mut session = Session::new(db);
    let t = table_of(&mut session, keyspace, table)?;
    let columns: Vec<String> = match (&o.columns, &header) {
        (Some(c), _) => c.clone(),
        (None, Some(h)) => h.iter().map(|s| s.trim().to_string()).collect(),
        (None, None) => default_columns(&t),
    };
    let insert = insert_of(&session, keyspace, table, &columns)?;
    let types: Vec<CqlType> = columns
        .iter()
        .map(|c| t.column(c).map(|(_, d)| d.ty.clone()))
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let bar = if o.progress {
        progress(size)
    } else {
        ProgressBar::hidden()
    };
    let mut report = Report {
        keep: o.keep_rejected,
        ..Report::default()
    };
    let mut batch = Batch::default();
    for record in records {
        let record = record.with_context(|| format!("reading {}", path.display()))?;
        let line = record.position().map_or(0, |p| p.line());
        match row_of(&record, &columns, &types, &o.null) {
            Ok(values) => batch.rows.push((line, values)),
            Err(why) => report.reject(line, why),
        }
        if batch.rows.len() == BATCH_ROWS {
            batch.write(&mut session, &insert, &mut report);
            bar.set_position(record.position().map_or(0, |p| p.byte()));
        }
    }
    batch.write(&mut session, &insert, &mut report);
    bar.finish_and_clear();
    report.rejected.sort();
    report.elapsed = started.elapsed();
    Ok(report)
}

/// Runs an `export` file (CQL statements) against the database; returns the statements run.
pub fn import_cql(db: &Database, path: &Path) -> anyhow::Result<usize> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut session = Session::new(db);
    let mut count = 0;
    let (statements, rest) = supercolumn_cql::split_statements(&text);
    anyhow::ensure!(
        rest.trim().is_empty(),
        "{}: the last statement has no ';'",
        path.display()
    );
    for statement in statements {
        session
            .execute(&statement)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        count += 1;
    }
    Ok(count)
}

fn table_of(session: &mut Session<'_>, keyspace: &str, table: &str) -> anyhow::Result<Table> {
    let probe = format!(
        "SELECT * FROM {}.{} LIMIT 1",
        quote_ident(keyspace),
        quote_ident(table)
    );
    let p = session
        .prepare(&probe)
        .map_err(|e| anyhow::anyhow!("{keyspace}.{table}: {e}"))?;
    p.table()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("{keyspace}.{table} is not a CQL table"))
}

fn insert_of(
    session: &Session<'_>,
    keyspace: &str,
    table: &str,
    columns: &[String],
) -> anyhow::Result<Prepared> {
    let names: Vec<String> = columns.iter().map(|c| quote_ident(c)).collect();
    let marks = vec!["?"; columns.len()].join(", ");
    let text = format!(
        "INSERT INTO {}.{} ({}) VALUES ({marks})",
        quote_ident(keyspace),
        quote_ident(table),
        names.join(", ")
    );
    session
        .prepare(&text)
        .map_err(|e| anyhow::anyhow!("{keyspace}.{table}: {e}"))
}

/// Every column in the table's order: partition key, clustering, then the others by name.
fn default_columns(t: &Table) -> Vec<String> {
    t.partition_key
        .iter()
        .chain(&t.clustering)
        .copied()
        .chain(t.regular_sorted())
        .map(|i| t.columns[i].name.clone())
        .collect()
}

/// One line's values, or why it is refused.
fn row_of(
    record: &csv::StringRecord,
    columns: &[String],
    types: &[CqlType],
    null: &str,
) -> Result<Vec<Option<Vec<u8>>>, String> {
    if record.len() != columns.len() {
        return Err(format!(
            "{} fields, {} columns",
            record.len(),
            columns.len()
        ));
    }
    record
        .iter()
        .zip(columns.iter().zip(types))
        .map(|(field, (column, ty))| {
            if field == null {
                return Ok(None);
            }
            value_from_text(ty, field, column).map_err(|e| e.to_string())
        })
        .collect()
}

/// Rows read and not yet written, each with its line.
#[derive(Default)]
struct Batch {
    rows: Vec<(u64, Vec<Option<Vec<u8>>>)>,
}

impl Batch {
    /// Writes the rows as one batch; if the engine refuses it (a row without its key, say),
    /// each row on its own, so only the rows at fault are rejected.
    fn write(&mut self, session: &mut Session<'_>, insert: &Prepared, report: &mut Report) {
        if self.rows.is_empty() {
            return;
        }
        let values: Vec<Vec<Option<&[u8]>>> = self
            .rows
            .iter()
            .map(|(_, r)| r.iter().map(Option::as_deref).collect())
            .collect();
        let refs: Vec<&[Option<&[u8]>]> = values.iter().map(Vec::as_slice).collect();
        if session.execute_batch(insert, &refs).is_ok() {
            report.rows += refs.len() as u64;
        } else {
            for ((line, _), row) in self.rows.iter().zip(&refs) {
                match session.execute_prepared(insert, row) {
                    Ok(_) => report.rows += 1,
                    Err(e) => report.reject(*line, e.to_string()),
                }
            }
        }
        self.rows.clear();
    }
}

/// A bar over the file's bytes, on a terminal only.
fn progress(size: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(size);
    bar.set_style(
        ProgressStyle::with_template(
            "importing [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec}, ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_keeps_the_rejected_lines_it_may_and_counts_them_all() {
        let mut r = Report {
            keep: 2,
            ..Report::default()
        };
        for line in 1..=5 {
            r.reject(line, format!("bad {line}"));
        }
        assert_eq!(r.rejected_total, 5);
        assert_eq!(
            r.rejected,
            [(1, "bad 1".to_string()), (2, "bad 2".to_string())]
        );
    }
}
