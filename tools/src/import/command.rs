//! `supercolumn import`'s command line: the file, the CSV options and, for a data directory a
//! server holds, the admin address that server is asked through. The import itself is
//! `mod.rs`'s, run here or by the server.

use std::path::{Path, PathBuf};

use anyhow::Context;
use supercolumn::Database;

use super::{print, run, CsvOptions, Summary};

/// `supercolumn import`'s options.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The file: CSV with --table, else CQL statements.
    pub file: PathBuf,
    /// KEYSPACE.TABLE the CSV fills.
    #[arg(long)]
    pub table: Option<String>,
    /// The first line names the columns.
    #[arg(long)]
    pub header: bool,
    /// The field delimiter (one character).
    #[arg(long, default_value = ",")]
    pub delimiter: char,
    /// The text that means null.
    #[arg(long, default_value = "")]
    pub null: String,
    /// The columns the fields fill, comma-separated [default: the header's, else every
    /// column: partition key, clustering, the others by name].
    #[arg(long, value_delimiter = ',')]
    pub columns: Option<Vec<String>>,
    /// The admin address of the server that holds the data directory, if one does.
    #[command(flatten)]
    pub admin: crate::nodetool::AdminArgs,
}

impl Args {
    /// The CSV options given.
    fn csv(&self) -> anyhow::Result<CsvOptions> {
        let delimiter = u8::try_from(self.delimiter)
            .map_err(|_| anyhow::anyhow!("the delimiter must be one ASCII character"))?;
        Ok(CsvOptions {
            header: self.header,
            delimiter,
            null: self.null.clone(),
            columns: self.columns.clone(),
            progress: true,
            keep_rejected: usize::MAX,
        })
    }

    /// Imports into `db`, the data directory opened here.
    pub fn run(&self, db: &Database) -> anyhow::Result<()> {
        run(db, &self.file, self.table.as_deref(), &self.csv()?)
    }

    /// Has the server that holds the data directory `dir` import, after checking that the
    /// server at the admin address is that one.
    pub fn run_through_server(&self, dir: &Path) -> anyhow::Result<()> {
        let password = self.admin.password()?;
        let to = Server {
            admin: &self.admin.address(),
            login: self.admin.username.as_deref().zip(password.as_deref()),
        };
        through_server(&to, dir, &self.file, self.table.as_deref(), &self.csv()?)
    }
}

/// Where a running server is asked to import: its admin address and the login it needs.
struct Server<'a> {
    admin: &'a str,
    login: Option<(&'a str, &'a str)>,
}

/// Asks the server at `to` to import `path` (made absolute: the server reads it) into
/// `table`, once it has said that it serves the data directory `dir`; prints its summary.
fn through_server(
    to: &Server<'_>,
    dir: &Path,
    path: &Path,
    table: Option<&str>,
    o: &CsvOptions,
) -> anyhow::Result<()> {
    use crate::nodetool::ask;
    let unanswered = || {
        anyhow::anyhow!(
            "{} is in use by a server, and none answers at its admin address {} (--host, --port)",
            dir.display(),
            to.admin
        )
    };
    let info = ask(to.admin, to.login, ("GET", "info", &Vec::new())).ok_or_else(unanswered)??;
    let served = info["data_directory"].as_str().unwrap_or_default();
    let same = |a: &Path| a.canonicalize().ok();
    anyhow::ensure!(
        same(Path::new(served)).is_some() && same(Path::new(served)) == same(dir),
        "the server at {} serves {served}, not {}",
        to.admin,
        dir.display()
    );
    let file = path
        .canonicalize()
        .with_context(|| format!("opening {}", path.display()))?;
    let mut query = vec![
        ("file", file.display().to_string()),
        ("header", o.header.to_string()),
        ("delimiter", o.delimiter.to_string()),
        ("null", o.null.clone()),
    ];
    query.extend(table.map(|t| ("table", t.to_string())));
    query.extend(o.columns.as_ref().map(|c| ("columns", c.join(","))));
    let answer = ask(to.admin, to.login, ("POST", "import", &query)).ok_or_else(unanswered)??;
    let summary: Summary = serde_json::from_value(answer).context("the server's import summary")?;
    print(path, &summary)
}
