//! What the tools' tests share: running the `supercolumn` binary on a data directory of the
//! test's own, and `serve` on it, with an admin address, until the test stops it.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

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

/// A running `serve` and its CQL port, stopped (SIGKILL) if a failed assertion leaves it
/// running.
pub struct Running(pub Option<Child>, pub u16);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `serve` with an admin address; the server and the admin port.
pub fn serve(dir: &Path) -> (Running, u16) {
    serve_with(dir, &[])
}

/// [`serve`] with more of `serve`'s options.
pub fn serve_with(dir: &Path, more: &[&str]) -> (Running, u16) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_supercolumn"))
        .env_remove("RUST_LOG")
        .arg("--data")
        .arg(dir)
        .args(["serve", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"])
        .args(more)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (mut admin, mut cql) = (None, 0);
    let port = |addr: &str| addr.rsplit(':').next().unwrap().parse().unwrap();
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(addr) = line.strip_prefix("supercolumn: admin (nodetool, /metrics) on ") {
            admin = Some(port(addr));
        }
        if let Some(addr) =
            line.strip_prefix("supercolumn: serving CQL (native protocol v3/v4) on ")
        {
            cql = port(addr);
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));
    (
        Running(Some(child), cql),
        admin.expect("the admin address line"),
    )
}

/// Stops the server as a service manager does (SIGTERM) and checks it exits cleanly.
pub fn stop(mut server: Running) {
    let mut child = server.0.take().unwrap();
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    assert!(child.wait().unwrap().success());
}
