//! The tools' log (`supercolumn`, `stress`): the engine's and the server's `tracing` events
//! (flushes, compactions, commit log replay, damaged files, slow operations, a server's
//! lifecycle) on stderr and, with a log directory, in files rotated daily. By default a tool
//! logs its warnings and errors only, so its output and one-line errors stay what scripts
//! expect; `serve` also logs its lifecycle (INFO).

use std::io::IsTerminal;
use std::path::Path;

use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter};

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
    // A second install (a test calling twice) keeps the first; nothing to report.
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(stderr)
        .with(file)
        .try_init();
    Ok(())
}
