//! The Python the client tests run (the driver's and cqlsh's suites): a virtual environment
//! under the workspace's `target/`, made on first use with `cassandra-driver` and `cqlsh` from
//! PyPI, so `cargo test --workspace` needs nothing installed beforehand but `python3`. The
//! environment sees the system's packages, so where they are installed already nothing is
//! downloaded. `SUPERCOLUMN_PYTHON` names another interpreter to use instead. (Also compiled
//! into the tools' tests, which load an export with cqlsh.)

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The client packages, at the versions the suites were written against.
const PACKAGES: &[&str] = &["cassandra-driver==3.30.1", "cqlsh==6.2.2"];

/// The interpreter to run client scripts with (`python -m cqlshlib` is cqlsh).
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| match std::env::var_os("SUPERCOLUMN_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => environment(),
    })
}

/// `target/python-clients`, made (once, under a lock every test process takes) if it is not
/// ready.
fn environment() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    std::fs::create_dir_all(&target).expect("creating target/");
    let venv = target.join("python-clients");
    let python = venv.join("bin").join("python3");
    let ready = venv.join("ready");
    // Test binaries of two crates may ask at once: one makes it, the other waits for it.
    let lock = std::fs::File::create(target.join("python-clients.lock")).expect("the lock file");
    lock.lock().expect("locking python-clients");
    let wanted = PACKAGES.join("\n");
    if std::fs::read_to_string(&ready).ok().as_deref() != Some(wanted.as_str()) {
        run(Command::new("python3")
            .args(["-m", "venv", "--system-site-packages"])
            .arg(&venv));
        run(Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(PACKAGES));
        std::fs::write(&ready, &wanted).expect("marking the environment ready");
    }
    python
}

fn run(c: &mut Command) {
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    assert!(
        out.status.success(),
        "{c:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
