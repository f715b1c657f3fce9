//! The tools' log (`supercolumn`, `stress`): the engine's `tracing` events (flushes, compactions, commit log replay, slow
//! operations) on stderr, when the user asks with `-v` or `RUST_LOG`. Quiet otherwise, so a
//! tool's output and its one-line errors stay what scripts expect.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Installs the subscriber: `-v` is info, `-vv` and more debug; without them `RUST_LOG`
/// decides (its usual syntax, e.g. `RUST_LOG=supercolumn=debug`); with neither, nothing is
/// logged.
pub fn init(verbose: u8) {
    let filter = match verbose {
        0 => match std::env::var("RUST_LOG") {
            Ok(spec) if !spec.trim().is_empty() => EnvFilter::new(spec),
            _ => return,
        },
        1 => EnvFilter::new("info"),
        _ => EnvFilter::new("debug"),
    };
    // A second install (a test calling twice) keeps the first; nothing to report.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
