//! `supercolumn nodetool COMMAND`: Cassandra's nodetool commands against a running `serve`
//! (its `--admin` address), or, when no server answers there, against the data directory
//! itself. Either way the answer is the same JSON (`admin/report.rs`), printed in nodetool's
//! shapes by `print.rs`.

mod print;

use anyhow::Context;
use serde_json::Value;
use supercolumn::Database;

use crate::admin::report;
use print::{
    clientstats, compactionstats, info, listsnapshots, snapshot_taken, status, tablestats, tpstats,
    which_keyspaces,
};

/// The commands.
#[derive(Debug, Clone, PartialEq, clap::Subcommand)]
pub enum NodeCommand {
    /// This node: state, address, load, tokens, ownership, host ID.
    Status,
    /// Identity, load, uptime and the key cache.
    Info,
    /// Per table: SSTables, space, memtable, reads and writes with latencies, bloom filter,
    /// caches, compactions (`ks` or `ks.table`; none: every table).
    Tablestats { targets: Vec<String> },
    /// The compactions due, and those running with their progress.
    Compactionstats,
    /// The background pools and the server's request pool: active, pending, completed and
    /// blocked tasks.
    Tpstats,
    /// The clients connected to the server, per user; `--all`: each connection.
    Clientstats {
        /// Each connection: address, protocol version, user, requests, driver.
        #[arg(long)]
        all: bool,
    },
    /// Flushes the memtables of the tables named (none: every table).
    Flush { targets: Vec<String> },
    /// Runs a major compaction of the tables named (none: every table).
    Compact { targets: Vec<String> },
    /// Flushes the keyspaces named (none: every keyspace) and hard-links their SSTables under
    /// `<data>/<keyspace>/snapshots/<tag>/`.
    Snapshot {
        /// The snapshot's name (default: the time in milliseconds).
        #[arg(short = 't', long = "tag")]
        tag: Option<String>,
        keyspaces: Vec<String>,
    },
    /// The snapshots taken, per keyspace and table, with their sizes.
    Listsnapshots,
    /// Stops serving CQL (connections closed once their requests finish) and flushes every
    /// memtable; the server then waits for SIGTERM or SIGINT to close the database.
    Drain,
    /// The log levels in force: the root's, then each target's set since.
    Getlogginglevels,
    /// Traces this fraction (0 to 1) of the requests no client asked to trace, into
    /// `system_traces`.
    Settraceprobability { probability: f64 },
    /// The fraction `settraceprobability` set.
    Gettraceprobability,
    /// Sets a target's log level (`supercolumn::db DEBUG`; `ROOT` the default's); with
    /// neither, puts back the levels the server started with.
    Setlogginglevel {
        target: Option<String>,
        level: Option<String>,
    },
    /// Removes a snapshot (`-t tag`) or every one (`--all`) of the keyspaces named (none: all).
    Clearsnapshot {
        /// The snapshot to remove.
        #[arg(short = 't', long = "tag")]
        tag: Option<String>,
        /// Every snapshot.
        #[arg(long)]
        all: bool,
        keyspaces: Vec<String>,
    },
}

/// Where the commands go.
pub struct Target<'a> {
    /// The admin address of a running server.
    pub admin: &'a str,
    /// The user name and password a server started with `--auth` asks for.
    pub login: Option<(&'a str, &'a str)>,
    /// Opens the data directory (refusing one that holds no database), for when no server
    /// answers at `admin`.
    pub open: &'a dyn Fn() -> anyhow::Result<Database>,
}

/// Where a running server's admin address is, and the login it asks for.
#[derive(Debug, Clone, clap::Args)]
pub struct AdminArgs {
    /// The admin address of a running server.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    #[arg(long, default_value_t = 7199)]
    pub port: u16,
    /// The user to log in as, when the server runs with --auth.
    #[arg(short = 'u', long = "username")]
    pub username: Option<String>,
    /// Its password (with -u; read from the standard input when not given).
    #[arg(long)]
    pub password: Option<String>,
}

impl AdminArgs {
    /// `host:port`.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The password for `-u NAME`: the one given, else the standard input's first line.
    pub fn password(&self) -> anyhow::Result<Option<String>> {
        Ok(match (&self.username, &self.password) {
            (Some(_), None) => {
                let mut p = String::new();
                std::io::stdin()
                    .read_line(&mut p)
                    .context("reading the password")?;
                Some(p.trim_end_matches(['\r', '\n']).to_string())
            }
            (_, p) => p.clone(),
        })
    }
}

/// `supercolumn nodetool`'s command line.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub admin: AdminArgs,
    #[command(subcommand)]
    pub command: NodeCommand,
}

/// Runs the command `args` gives against its server, or the data directory `open` opens
/// when none answers, printing the answer to `out`.
pub fn main(
    args: &Args,
    open: &dyn Fn() -> anyhow::Result<Database>,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    let password = args.admin.password()?;
    let to = Target {
        admin: &args.admin.address(),
        login: args.admin.username.as_deref().zip(password.as_deref()),
        open,
    };
    run(&args.command, &to, out)
}

/// Runs `command`, printing its answer to `out`.
pub fn run(
    command: &NodeCommand,
    to: &Target<'_>,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    if let NodeCommand::Clearsnapshot {
        tag: None,
        all: false,
        ..
    } = command
    {
        anyhow::bail!("Specify snapshot name or --all");
    }
    let answer = match online(command, to.admin, to.login) {
        Some(answer) => answer?,
        None => offline(command, to.open)?,
    };
    let text = match command {
        NodeCommand::Status => status(&answer),
        NodeCommand::Info => info(&answer),
        NodeCommand::Tablestats { .. } => tablestats(&answer),
        NodeCommand::Compactionstats => compactionstats(&answer),
        NodeCommand::Tpstats => tpstats(&answer),
        NodeCommand::Clientstats { all } => clientstats(&answer, *all),
        NodeCommand::Flush { .. } | NodeCommand::Compact { .. } => String::new(),
        NodeCommand::Snapshot { keyspaces, .. } => snapshot_taken(&answer, keyspaces),
        NodeCommand::Listsnapshots => listsnapshots(&answer),
        NodeCommand::Setlogginglevel { .. }
        | NodeCommand::Drain
        | NodeCommand::Settraceprobability { .. } => String::new(),
        NodeCommand::Gettraceprobability => {
            format!(
                "Current trace probability: {}\n",
                answer.as_f64().unwrap_or(0.0)
            )
        }
        NodeCommand::Getlogginglevels => {
            let mut out = format!("\n{:<50}{:>10}\n", "Logger Name", "Log Level");
            for l in answer.as_array().into_iter().flatten() {
                out += &format!(
                    "{:<50}{:>10}\n",
                    l["target"].as_str().unwrap_or(""),
                    l["level"].as_str().unwrap_or("").to_uppercase()
                );
            }
            out
        }
        NodeCommand::Clearsnapshot { tag, keyspaces, .. } => format!(
            "Requested clearing snapshot(s) for [{}] with [{}]\n",
            which_keyspaces(keyspaces),
            tag.as_deref()
                .map_or("all snapshots".into(), |t| format!("snapshots named {t}"))
        ),
    };
    write!(out, "{text}")?;
    Ok(())
}

/// A request's query: (name, value) pairs, encoded by the HTTP client.
pub type Query = Vec<(&'static str, String)>;

/// The request a command makes: method, path and query.
fn request(command: &NodeCommand) -> (&'static str, &'static str, Query) {
    let q = |t: &[String]| vec![("targets", t.join(","))];
    let snap = |tag: &Option<String>, ks: &[String]| {
        let mut q = q(ks);
        q.extend(tag.clone().map(|t| ("tag", t)));
        q
    };
    match command {
        NodeCommand::Status => ("GET", "status", Vec::new()),
        NodeCommand::Info => ("GET", "info", Vec::new()),
        NodeCommand::Tablestats { targets } => ("GET", "tablestats", q(targets)),
        NodeCommand::Compactionstats => ("GET", "compactionstats", Vec::new()),
        NodeCommand::Tpstats => ("GET", "tpstats", Vec::new()),
        NodeCommand::Clientstats { .. } => ("GET", "clientstats", Vec::new()),
        NodeCommand::Flush { targets } => ("POST", "flush", q(targets)),
        NodeCommand::Compact { targets } => ("POST", "compact", q(targets)),
        NodeCommand::Snapshot { tag, keyspaces } => ("POST", "snapshot", snap(tag, keyspaces)),
        NodeCommand::Listsnapshots => ("GET", "listsnapshots", Vec::new()),
        NodeCommand::Getlogginglevels => ("GET", "logginglevels", Vec::new()),
        NodeCommand::Drain => ("POST", "drain", Vec::new()),
        NodeCommand::Settraceprobability { probability } => (
            "POST",
            "traceprobability",
            vec![("value", probability.to_string())],
        ),
        NodeCommand::Gettraceprobability => ("GET", "traceprobability", Vec::new()),
        NodeCommand::Setlogginglevel { target, level } => (
            "POST",
            "logginglevel",
            vec![
                ("target", target.clone().unwrap_or_default()),
                ("level", level.clone().unwrap_or_default()),
            ],
        ),
        NodeCommand::Clearsnapshot {
            tag,
            keyspaces,
            all,
        } => {
            let mut q = snap(tag, keyspaces);
            q.push(("all", all.to_string()));
            ("POST", "clearsnapshot", q)
        }
    }
}

/// The server's answer, or `None` when none listens at `admin`.
fn online(
    command: &NodeCommand,
    admin: &str,
    login: Option<(&str, &str)>,
) -> Option<anyhow::Result<Value>> {
    let (method, path, query) = request(command);
    ask(admin, login, (method, path, &query))
}

/// The JSON answer of the server at `admin` to `method /path?query`, or `None` when none
/// listens there.
pub fn ask(
    admin: &str,
    login: Option<(&str, &str)>,
    (method, path, query): (&str, &str, &Query),
) -> Option<anyhow::Result<Value>> {
    let url = format!("http://{admin}/{path}");
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(std::time::Duration::from_secs(2))
        // A major compaction of a large table takes its time; a stuck server does not hold
        // the command forever.
        .timeout(std::time::Duration::from_secs(3600))
        .build();
    let mut req = agent.request(method, &url);
    for (k, v) in query {
        req = req.query(k, v);
    }
    if let Some((user, password)) = login {
        use base64::Engine;
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        req = req.set("Authorization", &format!("Basic {basic}"));
    }
    match req.call() {
        Ok(r) => Some(
            r.into_string()
                .context("reading the answer")
                .and_then(|t| serde_json::from_str(&t).context("the answer is not JSON")),
        ),
        Err(ureq::Error::Status(_, r)) => {
            let why = r.into_string().unwrap_or_default();
            Some(Err(anyhow::anyhow!("{why}")))
        }
        Err(ureq::Error::Transport(t)) if t.kind() == ureq::ErrorKind::ConnectionFailed => None,
        Err(e) => Some(Err(anyhow::anyhow!("{admin}: {e}"))),
    }
}

/// The same answer from the data directory, which no server holds.
fn offline(
    command: &NodeCommand,
    open: &dyn Fn() -> anyhow::Result<Database>,
) -> anyhow::Result<Value> {
    let db = open()?;
    let answer = match command {
        NodeCommand::Status => report::status(&db, None)?,
        NodeCommand::Info => report::info(&db, None, 0)?,
        NodeCommand::Tablestats { targets } => report::tablestats(&db, targets)?,
        NodeCommand::Compactionstats => report::compactionstats(&db)?,
        NodeCommand::Tpstats => report::tpstats(&db, None),
        // No server: no clients.
        NodeCommand::Clientstats { .. } => Value::Array(Vec::new()),
        NodeCommand::Snapshot { tag, keyspaces } => {
            report::snapshot(&db, tag.as_deref(), keyspaces)?
        }
        NodeCommand::Listsnapshots => report::listsnapshots(&db)?,
        // With no server, flushing is all a drain has to do.
        NodeCommand::Drain => {
            db.flush_all()?;
            Value::Null
        }
        NodeCommand::Getlogginglevels
        | NodeCommand::Setlogginglevel { .. }
        | NodeCommand::Settraceprobability { .. }
        | NodeCommand::Gettraceprobability => {
            anyhow::bail!(
                "log levels and tracing are a running server's: start `serve --admin ADDR` and ask it"
            )
        }
        NodeCommand::Clearsnapshot { tag, keyspaces, .. } => {
            report::clearsnapshot(&db, tag.as_deref(), keyspaces)?
        }
        NodeCommand::Flush { targets } | NodeCommand::Compact { targets } => {
            let flush = matches!(command, NodeCommand::Flush { .. });
            for (ks, cf) in report::tables(&db, targets)? {
                if flush {
                    db.flush(&ks, Some(&cf))?;
                } else {
                    db.compact(&ks, Some(&cf))?;
                }
            }
            Value::Null
        }
    };
    db.close()?;
    Ok(answer)
}
