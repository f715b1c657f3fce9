//! The tools' log (`supercolumn`, `stress`): the engine's and the server's `tracing` events
//! (flushes, compactions, commit log replay, damaged files, slow operations, a server's
//! lifecycle) on stderr and, with a log directory, in files rotated daily. By default a tool
//! logs its warnings and errors only, so its output and one-line errors stay what scripts
//! expect; `serve` also logs its lifecycle (INFO). The levels can be changed while a server
//! runs (`nodetool setlogginglevel`): the filter is installed behind a reload handle, rebuilt
//! from the root level and the per-target levels kept here.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::Path;
use std::str::FromStr;
use std::sync::{Mutex, OnceLock};

use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, reload, EnvFilter, Registry};

/// Log files kept in a log directory (one a day): a week.
const KEPT_FILES: usize = 7;

/// Installs the subscriber with warnings and errors as the default level and no files.
pub fn init(verbose: u8) {
    // Without a directory nothing can fail.
    let _ = init_with(verbose, "warn", None);
}

/// Installs the subscriber: `-v` is info, `-vv` and more debug; without them `RUST_LOG`
/// decides (its usual syntax, e.g. `RUST_LOG=supercolumn=debug`); with neither, `default`
/// (`warn`, or `info` for a server). With `dir`, every event is also written to
/// `dir/supercolumn.YYYY-MM-DD.log`, a new file each day, the last week's kept.
pub fn init_with(verbose: u8, default: &str, dir: Option<&Path>) -> anyhow::Result<()> {
    let filter = match verbose {
        0 => match std::env::var("RUST_LOG") {
            Ok(spec) if !spec.trim().is_empty() => EnvFilter::new(spec),
            _ => EnvFilter::new(default),
        },
        1 => EnvFilter::new("info"),
        _ => EnvFilter::new("debug"),
    };
    let stderr = fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal());
    let file = match dir {
        Some(dir) => {
            let appender = RollingFileAppender::builder()
                .rotation(Rotation::DAILY)
                .filename_prefix("supercolumn")
                .filename_suffix("log")
                .max_log_files(KEPT_FILES)
                .build(dir)
                .map_err(|e| anyhow::anyhow!("log directory {}: {e}", dir.display()))?;
            Some(fmt::layer().with_writer(appender).with_ansi(false))
        }
        None => None,
    };
    let spec = filter.to_string();
    let (filter, handle) = reload::Layer::new(filter);
    // A second install (a test calling twice) keeps the first; nothing to report.
    if tracing_subscriber::registry()
        .with(filter)
        .with(stderr)
        .with(file)
        .try_init()
        .is_ok()
    {
        let _ = LEVELS.set(Levels {
            handle,
            directives: Mutex::new(BTreeMap::from([(String::new(), spec.clone())])),
            initial: spec,
        });
    }
    Ok(())
}

/// The installed filter's handle, and its directives: target (empty: the root) → level.
struct Levels {
    handle: reload::Handle<EnvFilter, Registry>,
    directives: Mutex<BTreeMap<String, String>>,
    /// The filter the process started with.
    initial: String,
}

static LEVELS: OnceLock<Levels> = OnceLock::new();

/// The levels in force, as (target, level): `ROOT` first (the default; it may itself be a
/// `RUST_LOG` spec), then each target set since.
pub fn levels() -> Vec<(String, String)> {
    let Some(l) = LEVELS.get() else {
        return Vec::new();
    };
    let d = l.directives.lock().unwrap_or_else(|e| e.into_inner());
    d.iter()
        .map(|(t, v)| {
            (
                if t.is_empty() {
                    "ROOT".into()
                } else {
                    t.clone()
                },
                v.clone(),
            )
        })
        .collect()
}

/// Sets `target`'s level (`ROOT` or empty: the default's) to `level` (`TRACE`, `DEBUG`, `INFO`,
/// `WARN`, `ERROR`, `OFF`, in any case); with neither, puts back the level the process
/// started with and drops every target's.
pub fn set_level(target: &str, level: &str) -> anyhow::Result<()> {
    let l = LEVELS
        .get()
        .ok_or_else(|| anyhow::anyhow!("this process has no log to set levels of"))?;
    let mut d = l.directives.lock().unwrap_or_else(|e| e.into_inner());
    if target.is_empty() && level.is_empty() {
        d.clear();
        d.insert(String::new(), l.initial.clone());
    } else {
        let parsed = LevelFilter::from_str(level).map_err(|_| {
            anyhow::anyhow!("unknown log level '{level}' (TRACE, DEBUG, INFO, WARN, ERROR, OFF)")
        })?;
        let ok_target = target
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        anyhow::ensure!(
            ok_target,
            "'{target}': a target is a Rust module path (supercolumn::db)"
        );
        let key = if target.eq_ignore_ascii_case("root") {
            ""
        } else {
            target
        };
        d.insert(key.to_string(), parsed.to_string().to_lowercase());
    }
    let spec: Vec<String> = d
        .iter()
        .map(|(t, v)| {
            if t.is_empty() {
                v.clone()
            } else {
                format!("{t}={v}")
            }
        })
        .collect();
    let filter = EnvFilter::try_new(spec.join(","))
        .map_err(|e| anyhow::anyhow!("log levels '{}': {e}", spec.join(",")))?;
    l.handle
        .reload(filter)
        .map_err(|e| anyhow::anyhow!("changing the log levels: {e}"))
}
