//! What the tools' tests share: running the `supercolumn` binary on a data directory of the
//! test's own.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// `supercolumn --data DIR ARGS…`, with no `RUST_LOG` from the environment, run to its end.
pub fn supercolumn(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_supercolumn"))
        .env_remove("RUST_LOG")
        .arg("--data")
        .arg(dir)
        .args(args)
        .output()
        .expect("run supercolumn")
}
