//! `supercolumn`: the command line of a supercolumn database — the shell (cassandra-cli 0.7's
//! statements, SPEC §8), statistics, and flush/compact for scripts.
//!
//! Long because it holds the command line of every subcommand, each a short block of options.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use supercolumn::{Database, Options, Partitioner, StorageConf};

use supercolumn_tools::cql_shell::CqlShell;
use supercolumn_tools::errors;
use supercolumn_tools::shell::{Pending, Shell};

#[derive(Parser)]
#[command(
    name = "supercolumn",
    version,
    about = "An embedded Cassandra-model storage engine"
)]
struct Cli {
    /// The data directory [default: the conf's DataFileDirectories, else ./supercolumn-data].
    #[arg(long, global = true)]
    data: Option<PathBuf>,
    /// A storage-conf.xml to open with (its schema is used for a new directory; the settings it
    /// names override the ones the database keeps).
    #[arg(long, global = true)]
    conf: Option<PathBuf>,
    /// Open even if the commit log is damaged or has gaps, dropping what is lost (each problem
    /// is printed); without it such a database is refused.
    #[arg(long, global = true)]
    ignore_replay_errors: bool,
    /// The partitioner of a new database: `murmur3` (Cassandra's default since 1.2: `token()`
    /// and a driver's token map match a cluster's), `random` (the default here, Cassandra
    /// 0.6/0.7's) or `ordered` (rows in key order). Fixed when the database is created; naming
    /// another for an existing one is refused.
    #[arg(long, global = true, value_parser = parse_partitioner)]
    partitioner: Option<Partitioner>,
    /// Log more of what the engine does (flushes, compactions, replay, slow operations) to
    /// stderr: -v for info, -vv for debug. `RUST_LOG` (e.g. `RUST_LOG=info`) does the same.
    /// Without either, warnings and errors are logged (and `serve`'s lifecycle).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Also write the log to files in this directory, a new one each day
    /// (`supercolumn.YYYY-MM-DD.log`), the last seven kept.
    #[arg(long, global = true)]
    log_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs shell statements: from -e, from -f, from piped standard input, or interactively.
    Shell {
        /// Statements to run (batch mode).
        #[arg(short = 'e', long = "execute")]
        execute: Option<String>,
        /// A file of statements to run (batch mode).
        #[arg(short = 'f', long = "file")]
        file: Option<PathBuf>,
        /// The keyspace to start in.
        #[arg(short = 'k', long = "keyspace")]
        keyspace: Option<String>,
    },
    /// Runs CQL statements (cqlsh's place): from -e, from -f, from piped standard input, or
    /// interactively.
    Cql {
        /// Statements to run.
        #[arg(short = 'e', long = "execute")]
        execute: Option<String>,
        /// A file of statements to run.
        #[arg(short = 'f', long = "file")]
        file: Option<PathBuf>,
        /// The keyspace to start in.
        #[arg(short = 'k', long = "keyspace")]
        keyspace: Option<String>,
    },
    /// Shows what each column family holds and what its reads and writes did.
    Stats {
        /// KEYSPACE or KEYSPACE.CF [default: every keyspace].
        target: Option<String>,
    },
    /// Flushes memtables to SSTables.
    Flush {
        /// KEYSPACE or KEYSPACE.CF [default: every keyspace].
        target: Option<String>,
    },
    /// Compacts: the minor compactions that are due, or with --major every SSTable into one.
    Compact {
        /// KEYSPACE or KEYSPACE.CF [default: every keyspace].
        target: Option<String>,
        /// Merge every SSTable of each column family (and purge tombstones past their grace).
        #[arg(long)]
        major: bool,
    },
    /// Lists keyspaces and their column families with their comparators.
    Schema,
    /// Serves the CQL native protocol (v3/v4), for cqlsh and the standard drivers, until
    /// SIGINT or SIGTERM.
    Serve {
        /// The address to listen on (loopback unless told otherwise).
        #[arg(long, default_value = "127.0.0.1:9042")]
        listen: std::net::SocketAddr,
        /// Connections served at once; more are closed as they arrive.
        #[arg(long, default_value_t = 2048)]
        max_connections: usize,
        /// Require a user name and password (PasswordAuthenticator); add users with
        /// `supercolumn add-user`.
        #[arg(long)]
        auth: bool,
        /// Also answer `supercolumn nodetool` and Prometheus (`GET /metrics`) over HTTP on this
        /// loopback address (Cassandra's JMX port is 7199).
        #[arg(long)]
        admin: Option<std::net::SocketAddr>,
    },
    /// Writes CQL that a Cassandra 4/5 cluster loads with `cqlsh -f`: the schema, then every
    /// live cell with its write time and remaining TTL (tombstones are not exported).
    Export {
        /// KEYSPACE or KEYSPACE.TABLE [default: every keyspace].
        target: Option<String>,
        /// The file to write [default: standard output].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Cassandra's nodetool commands, against a running `serve --admin ADDR` or, when none
    /// answers there, the data directory.
    Nodetool(supercolumn_tools::nodetool::Args),
    /// Loads a CSV file into a CQL table (cqlsh's `COPY … FROM`), or runs an `export` file (CQL
    /// statements) when no --table is given. Lines that cannot be read are reported by number
    /// and skipped; every other row is written whole. When a server holds the data directory,
    /// its admin address is asked to do it, and it reads the file itself.
    Import(supercolumn_tools::import::Args),
    /// Adds a user for `serve --auth` (or changes its password), reading the password from
    /// the first line of standard input; only its bcrypt hash is kept, in the data directory.
    AddUser {
        /// The user name.
        name: String,
    },
}

/// A partitioner by its short name or Cassandra's class name.
fn parse_partitioner(name: &str) -> Result<Partitioner, String> {
    match name.to_ascii_lowercase().as_str() {
        "murmur3" => Ok(Partitioner::Murmur3),
        "random" => Ok(Partitioner::Random),
        "ordered" | "opp" => Ok(Partitioner::OrderPreserving),
        _ => Partitioner::from_class_name(name)
            .ok_or_else(|| format!("unknown partitioner '{name}' (murmur3, random or ordered)")),
    }
}

/// What a command does with a data directory that holds no database.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Absent {
    /// Refuse it: the command only reads or maintains a database (`stats`, `schema`, `export`,
    /// `flush`, `compact`), and creating an empty one would only hide a wrong path.
    Refuse,
    /// Create one, and say so (the shells, `serve`, `add-user`).
    Create,
}

/// The options `--conf` and the command line give.
fn options(cli: &Cli) -> anyhow::Result<Options> {
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
    let mut options = options;
    options.commit_log_ignore_replay_errors = cli.ignore_replay_errors;
    if let Some(p) = cli.partitioner {
        options.partitioner = Some(p);
    }
    Ok(options)
}

/// The data directory: `--data`, else the configured one.
fn directory(cli: &Cli, options: &Options) -> PathBuf {
    match &cli.data {
        Some(dir) => dir.clone(),
        None => Database::configured_directory(options),
    }
}

fn open(cli: &Cli, absent: Absent) -> anyhow::Result<Database> {
    let mut options = options(cli)?;
    let dir = directory(cli, &options);
    let existed = Database::exists(&dir);
    options.create_if_missing = absent == Absent::Create;
    let db = match Database::open(&dir, options) {
        Err(supercolumn::Error::NoDatabase(_)) => anyhow::bail!(
            "no database at {}: this command reads an existing one (`supercolumn shell`, `cql` or `serve` creates one)",
            dir.display()
        ),
        other => other.context("opening the database")?,
    };
    if !existed {
        eprintln!("created a new database at {}", dir.display());
    }
    for line in db.replay_report() {
        eprintln!("warning: commit log replay dropped data: {line}");
    }
    Ok(db)
}

/// Whether opening failed because another process (a server) holds the directory.
fn locked(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<supercolumn::Error>(),
            Some(supercolumn::Error::Locked { .. })
        )
    })
}

/// The (keyspace, column family) pairs a target names.
fn targets(db: &Database, target: Option<&str>) -> anyhow::Result<Vec<(String, Option<String>)>> {
    Ok(match target {
        None => db.keyspaces().into_iter().map(|k| (k, None)).collect(),
        Some(t) => match t.split_once('.') {
            Some((k, c)) => vec![(k.to_string(), Some(c.to_string()))],
            None => vec![(t.to_string(), None)],
        },
    })
}

fn interactive(shell: &mut Shell) -> anyhow::Result<()> {
    let mut rl = rustyline::DefaultEditor::new().context("starting the line editor")?;
    let history = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".supercolumn_history"));
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    println!("Welcome to the supercolumn shell. Statements end with ';'; 'help;' lists them.");
    let mut pending = Pending::default();
    loop {
        let prompt = if pending.text.trim().is_empty() {
            format!("[default@{}] ", shell.keyspace().unwrap_or("unknown"))
        } else {
            "...\t".to_string()
        };
        match rl.readline(&prompt) {
            Ok(line) => {
                if pending.text.trim().is_empty()
                    && matches!(line.trim(), "quit" | "exit" | "quit;" | "exit;")
                {
                    break;
                }
                if !line.trim().is_empty() {
                    let _ = rl.add_history_entry(line.trim());
                }
                pending.text.push_str(&line);
                pending.text.push('\n');
                let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
                // Interactively, an error is reported and the shell goes on with the next line.
                if shell
                    .run_complete(&mut pending, &mut out, &mut err)
                    .is_err()
                {
                    pending = Pending::default();
                }
                if shell.has_quit() {
                    break;
                }
            }
            Err(rustyline::error::ReadlineError::Interrupted) => pending = Pending::default(),
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(e) => return Err(e).context("reading a line"),
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
    Ok(())
}

/// Runs `supercolumn cql`; an error already reported makes it `Err` with no message of its own.
fn run_cql(db: &Database, keyspace: Option<&str>, input: Option<Input>) -> anyhow::Result<()> {
    let mut shell = match CqlShell::new(db, keyspace) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            anyhow::bail!("{e}");
        }
    };
    let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
    let ran = match input {
        Some(Input::Text(text)) => shell.run_text(&text, &mut out, &mut err),
        Some(Input::Stdin) => shell.run_stream(&mut std::io::stdin().lock(), &mut out, &mut err),
        _ => return cql_interactive(&mut shell),
    };
    Ok(ran?)
}

fn cql_interactive(shell: &mut CqlShell<'_>) -> anyhow::Result<()> {
    let mut rl = rustyline::DefaultEditor::new().context("starting the line editor")?;
    let history =
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".supercolumn_cql_history"));
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    println!("Connected to supercolumn. Statements end with ';'.");
    let mut pending = String::new();
    loop {
        let prompt = match (pending.trim().is_empty(), shell.keyspace()) {
            (false, _) => "   ... ".to_string(),
            (true, Some(k)) => format!("cqlsh:{k}> "),
            (true, None) => "cqlsh> ".to_string(),
        };
        match rl.readline(&prompt) {
            Ok(line) => {
                if pending.trim().is_empty()
                    && matches!(line.trim().trim_end_matches(';'), "quit" | "exit")
                {
                    break;
                }
                if !line.trim().is_empty() {
                    let _ = rl.add_history_entry(line.trim());
                }
                pending.push_str(&line);
                pending.push('\n');
                let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
                // Interactively, an error is reported and the session goes on.
                if shell
                    .run_complete(&mut pending, &mut out, &mut err)
                    .is_err()
                {
                    pending.clear();
                }
                if shell.has_quit() {
                    break;
                }
            }
            Err(rustyline::error::ReadlineError::Interrupted) => pending.clear(),
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(e) => return Err(e).context("reading a line"),
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
    Ok(())
}

/// Where a shell's statements come from.
enum Input {
    Text(String),
    Stdin,
    Interactive,
}

// Long because it is one match over the subcommands, each arm reading its options and calling the
// module that does the work.
fn run(cli: Cli) -> anyhow::Result<()> {
    if let Command::Nodetool(args) = &cli.command {
        // A server holds the data directory while it runs: ask it first.
        let open = || open(&cli, Absent::Refuse);
        return supercolumn_tools::nodetool::main(args, &open, &mut std::io::stdout());
    }
    // Read what a command needs from elsewhere before the database is opened (or created).
    let input = match &cli.command {
        Command::Shell { execute, file, .. } | Command::Cql { execute, file, .. } => {
            Some(match (execute, file) {
                (Some(e), _) => Input::Text(e.clone()),
                (None, Some(f)) => Input::Text(
                    std::fs::read_to_string(f)
                        .with_context(|| format!("reading {}", f.display()))?,
                ),
                (None, None) if !std::io::stdin().is_terminal() => Input::Stdin,
                (None, None) => Input::Interactive,
            })
        }
        _ => None,
    };
    let absent = match &cli.command {
        Command::Shell { .. }
        | Command::Cql { .. }
        | Command::Serve { .. }
        | Command::AddUser { .. } => Absent::Create,
        // An export file makes its own keyspaces and tables; a CSV needs its table.
        Command::Import(args) if args.table.is_none() => Absent::Create,
        _ => Absent::Refuse,
    };
    let db = match open(&cli, absent) {
        Ok(db) => db,
        Err(e) if locked(&e) => match &cli.command {
            Command::Import(args) => {
                return args.run_through_server(&directory(&cli, &options(&cli)?))
            }
            _ => return Err(e),
        },
        Err(e) => return Err(e),
    };
    match &cli.command {
        Command::Shell { keyspace, .. } => {
            let mut shell = Shell::new(db.clone(), keyspace.clone());
            let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
            let ran = match input {
                Some(Input::Text(text)) => shell.run(&text, &mut out, &mut err),
                Some(Input::Stdin) => {
                    shell.run_stream(&mut std::io::stdin().lock(), &mut out, &mut err)
                }
                _ => {
                    interactive(&mut shell)?;
                    Ok(())
                }
            };
            if ran.is_err() {
                // The error line is already written; close cleanly, then exit non-zero.
                drop(shell);
                db.close().context("closing the database")?;
                std::process::exit(1);
            }
        }
        Command::Cql { keyspace, .. } => {
            let ran = run_cql(&db, keyspace.as_deref(), input);
            if ran.is_err() {
                db.close().context("closing the database")?;
                std::process::exit(1);
            }
            ran?;
        }
        Command::Stats { target } => {
            let mut out = std::io::stdout();
            writeln!(out, "Settings in force:")?;
            for l in db.options().settings_lines() {
                writeln!(out, "  {l}")?;
            }
            for (ks, cf) in targets(&db, target.as_deref())? {
                let cfs = match cf {
                    Some(c) => vec![c],
                    None => db
                        .describe_keyspace(&ks)?
                        .column_families
                        .into_iter()
                        .map(|c| c.name)
                        .collect(),
                };
                writeln!(out, "Keyspace: {ks}")?;
                for cf in cfs {
                    let s = db.column_family_stats(&ks, &cf)?;
                    let pct = |r: Option<f64>| {
                        r.map_or("n/a".to_string(), |r| format!("{:.1}%", r * 100.0))
                    };
                    writeln!(out, "  Column Family: {cf}")?;
                    writeln!(out, "    SSTable count: {}", s.sstables)?;
                    writeln!(
                        out,
                        "    Space used (live / total): {} / {} bytes",
                        s.sstable_bytes, s.total_bytes
                    )?;
                    writeln!(
                        out,
                        "    Memtable: {} bytes, {} operations",
                        s.memtable_bytes, s.memtable_operations
                    )?;
                    writeln!(
                        out,
                        "    Reads: {} (p50 {} us, p99 {} us, max {} us)",
                        s.reads.count, s.reads.p50_us, s.reads.p99_us, s.reads.max_us
                    )?;
                    writeln!(
                        out,
                        "    Writes: {} (p50 {} us, p99 {} us, max {} us)",
                        s.writes.count, s.writes.p50_us, s.writes.p99_us, s.writes.max_us
                    )?;
                    writeln!(
                        out,
                        "    Key cache: capacity {}, size {}, hit rate {}",
                        s.key_cache_capacity,
                        s.key_cache_size,
                        pct(s.key_cache_hit_rate())
                    )?;
                    writeln!(
                        out,
                        "    Block cache hit rate: {}",
                        pct(s.block_cache_hit_rate())
                    )?;
                    writeln!(
                        out,
                        "    Bloom filter: {} false positives, measured ratio {}",
                        s.bloom_false_positives,
                        pct(s.bloom_false_positive_ratio())
                    )?;
                    writeln!(
                        out,
                        "    Compactions: {} pending, {} completed, {} bytes compacted",
                        s.pending_compactions, s.compactions, s.bytes_compacted
                    )?;
                    writeln!(
                        out,
                        "    Write amplification: {}",
                        s.write_amplification()
                            .map_or("n/a".into(), |w| format!("{w:.2}"))
                    )?;
                }
            }
        }
        Command::Flush { target } => {
            for (ks, cf) in targets(&db, target.as_deref())? {
                db.flush(&ks, cf.as_deref())?;
                println!(
                    "Flushed {}.",
                    cf.map_or(ks.clone(), |c| format!("{ks}.{c}"))
                );
            }
        }
        Command::Compact { target, major } => {
            for (ks, cf) in targets(&db, target.as_deref())? {
                let name = cf.clone().map_or(ks.clone(), |c| format!("{ks}.{c}"));
                if *major {
                    db.compact(&ks, cf.as_deref())?;
                    println!("Compacted {name}.");
                } else {
                    let n = db.compact_pending(&ks, cf.as_deref())?;
                    println!("Ran {n} pending compactions of {name}.");
                }
            }
        }
        Command::Serve {
            listen,
            max_connections,
            auth,
            admin,
        } => return supercolumn_tools::serve::serve(db, *listen, *max_connections, *auth, *admin),
        Command::Export { target, out } => {
            // Rounded up: a TTL left is never longer than the engine would keep the cell.
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| {
                    (d.as_secs() + u64::from(d.subsec_nanos() > 0)) as i64
                });
            let stats = match out {
                Some(path) => {
                    let f = std::fs::File::create(path)
                        .with_context(|| format!("creating {}", path.display()))?;
                    let mut w = std::io::BufWriter::new(f);
                    let s = supercolumn_tools::export::export(&db, target.as_deref(), now, &mut w)?;
                    w.into_inner()
                        .map_err(|e| e.into_error())
                        .and_then(|f| f.sync_all())
                        .with_context(|| format!("writing {}", path.display()))?;
                    s
                }
                None => {
                    let mut w = std::io::BufWriter::new(std::io::stdout().lock());
                    let s = supercolumn_tools::export::export(&db, target.as_deref(), now, &mut w)?;
                    w.flush()?;
                    s
                }
            };
            eprintln!(
                "Exported {} keyspaces, {} tables, {} cells.",
                stats.keyspaces, stats.tables, stats.cells
            );
        }
        Command::Import(args) => args.run(&db)?,
        // Answered before the database is opened (above).
        Command::Nodetool(_) => {}
        Command::AddUser { name } => {
            let mut password = String::new();
            std::io::stdin()
                .read_line(&mut password)
                .context("reading the password")?;
            let password = password.trim_end_matches(['\r', '\n']);
            anyhow::ensure!(!password.is_empty(), "an empty password");
            let mut creds = supercolumn_server::auth::Credentials::load(db.path())?;
            creds.set_user(db.path(), name, password)?;
            println!("User {name} saved.");
        }
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
    db.close().context("closing the database")?;
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A server tells its lifecycle by default; the other commands only what went wrong.
    let default = match cli.command {
        Command::Serve { .. } => "info",
        _ => "warn",
    };
    let logging =
        supercolumn_tools::logging::init_with(cli.verbose, default, cli.log_dir.as_deref());
    match logging.and_then(|()| run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if errors::broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", errors::one_line(&e));
            ExitCode::FAILURE
        }
    }
}
