//! `supercolumn`: the command-line entry to a supercolumn database.
//!
//! This first version opens a data directory (creating it with the embedded default schema, or
//! the schema of `--conf`) and describes its schema. The interactive shell and `sstable-dump`
//! arrive with the tools issue.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use supercolumn::{Database, Options, StorageConf};

#[derive(Parser)]
#[command(
    name = "supercolumn",
    version,
    about = "An embedded Cassandra-model storage engine"
)]
struct Cli {
    /// The data directory [default: ./supercolumn-data, or the conf's DataFileDirectories].
    #[arg(long, global = true)]
    data: Option<PathBuf>,
    /// A storage-conf.xml to open with.
    #[arg(long, global = true)]
    conf: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lists keyspaces and their column families with their comparators.
    Schema,
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let options = match &cli.conf {
        Some(path) => {
            let conf = StorageConf::load(path, &Default::default())
                .with_context(|| format!("reading {}", path.display()))?;
            for w in &conf.warnings {
                eprintln!("warning: {w}");
            }
            conf.options
        }
        None => Options::default(),
    };
    let db = match &cli.data {
        Some(dir) => Database::open(dir, options),
        None => Database::open_configured(options),
    }
    .context("opening the database")?;
    match cli.command {
        Command::Schema => {
            for ks in db.keyspaces() {
                let def = db.describe_keyspace(&ks)?;
                println!("Keyspace: {ks}");
                for cf in &def.column_families {
                    let sub = cf
                        .subcomparator
                        .as_ref()
                        .map(|s| format!(" / {}", s.name()))
                        .unwrap_or_default();
                    println!(
                        "  ColumnFamily: {} ({}, {}{sub})",
                        cf.name,
                        cf.column_type.as_str(),
                        cf.comparator.name()
                    );
                }
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
