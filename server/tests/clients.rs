//! The clients users really have, against a server on a fresh database: the Python driver
//! (`clients/driver_suite.py`: every type and collection, prepared statements, paging over
//! 10,000 rows, batches, lightweight transactions, errors, driver metadata) and cqlsh (`clients/cqlsh_suite.py`: seed
//! 002's statements, DESCRIBE, COPY out and back in). They run in a Python environment of
//! their own with the PyPI packages `cassandra-driver` and `cqlsh`, made on first use
//! (`support/python.rs`): without `python3` or the package index they fail, they do not skip.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

fn run_suite(script: &str, server: &support::Running) {
    let path = format!("{}/tests/clients/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(support::python::python())
        .arg(&path)
        .arg(server.addr.port().to_string())
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{script} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.trim_end().ends_with("OK"), "{stdout}");
}

#[test]
fn the_python_driver_round_trips_pages_and_batches() {
    let server = support::start(|_| {});
    run_suite("driver_suite.py", &server);
}

#[test]
fn cqlsh_runs_the_seed_describes_and_copies() {
    let server = support::start(|_| {});
    run_suite("cqlsh_suite.py", &server);
}
