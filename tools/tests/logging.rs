//! The engine's events reach a user who asks for them (`RUST_LOG`, `-v`): a compaction, a
//! flush and a commit log replay show as they happen, and without asking a healthy run's
//! stderr says only that a database was created. `serve` logs its lifecycle by default, to
//! stderr and to the files of `--log-dir`.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

fn supercolumn(dir: &Path, log: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_supercolumn"));
    c.env_remove("RUST_LOG").arg("--data").arg(dir).args(args);
    if let Some(l) = log {
        c.env("RUST_LOG", l);
    }
    let o = c.output().expect("run supercolumn");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn flushes_compactions_and_replay_are_logged_when_asked_and_only_then() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("d");
    for i in 0..3 {
        let set = format!("use Keyspace1; set Standard1['r{i}']['c'] = 'v';");
        let o = supercolumn(&dir, None, &["shell", "-e", &set]);
        // Quiet by default, but for saying that the first run created the database.
        let expected = match i {
            0 => format!("created a new database at {}\n", dir.display()),
            _ => String::new(),
        };
        assert_eq!(stderr(&o), expected);
        if i < 2 {
            supercolumn(&dir, None, &["flush"]);
        }
    }
    // The last write is still in the commit log: this open replays it, then flushes and
    // compacts.
    let o = supercolumn(&dir, Some("info"), &["flush"]);
    let log = stderr(&o);
    assert!(log.contains("replayed 1 records"), "{log}");
    assert!(log.contains("flushed Keyspace1/Standard1: 1 rows"), "{log}");
    let o = supercolumn(&dir, Some("info"), &["compact", "--major"]);
    let log = stderr(&o);
    assert!(
        log.contains("major compaction of Keyspace1/Standard1 started: 3 SSTables"),
        "{log}"
    );
    assert!(
        log.contains("major compaction of Keyspace1/Standard1 done: 3 SSTables"),
        "{log}"
    );
    // -v asks the same way; a quiet run of the same command says nothing.
    let o = supercolumn(&dir, None, &["-v", "compact", "--major"]);
    assert!(stderr(&o).contains("INFO"), "{}", stderr(&o));
    let o = supercolumn(&dir, None, &["compact", "--major"]);
    assert_eq!(stderr(&o), "");
}

#[test]
fn serve_logs_its_lifecycle_to_stderr_and_to_the_log_directory() {
    use std::io::{BufRead, BufReader};
    let root = tempfile::tempdir().unwrap();
    let (dir, logs) = (root.path().join("d"), root.path().join("logs"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_supercolumn"))
        .env_remove("RUST_LOG")
        .arg("--data")
        .arg(&dir)
        .arg("--log-dir")
        .arg(&logs)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let up = line.starts_with("supercolumn: serving CQL");
        seen.push(line);
        if up {
            break;
        }
    }
    // SIGTERM, as a service manager stops it: the server says it stops, flushes and closes.
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    seen.extend(lines.map(Result::unwrap));
    assert!(child.wait().unwrap().success(), "{seen:#?}");
    let stderr = seen.join("\n");
    for event in [
        "INFO serving CQL on 127.0.0.1:",
        "INFO stop requested",
        "INFO closed the database",
    ] {
        assert!(stderr.contains(event), "{event} not in:\n{stderr}");
    }
    let files: Vec<_> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("supercolumn.") && name.ends_with(".log"),
        "{name}"
    );
    let file = std::fs::read_to_string(&files[0]).unwrap();
    for event in ["serving CQL on", "stop requested", "closed the database"] {
        assert!(file.contains(event), "{event} not in the log file:\n{file}");
    }
    // The file is plain text, without the terminal's colour codes.
    assert!(!file.contains('\u{1b}'), "{file}");
}

#[test]
fn nodetool_changes_a_running_server_s_log_levels() {
    use std::io::{BufRead, BufReader};
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("d");
    let mut child = Command::new(env!("CARGO_BIN_EXE_supercolumn"))
        .env_remove("RUST_LOG")
        .arg("--data")
        .arg(&dir)
        .args(["serve", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut port = None;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(addr) = line.strip_prefix("supercolumn: admin (nodetool, /metrics) on ") {
            port = Some(addr.rsplit(':').next().unwrap().to_string());
        }
        if line.starts_with("supercolumn: serving CQL") {
            break;
        }
    }
    let port = port.expect("the admin address line");
    let nodetool = |args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_supercolumn"));
        c.arg("--data")
            .arg(&dir)
            .args(["nodetool", "--port", &port])
            .args(args);
        c.output().unwrap()
    };
    let levels = String::from_utf8_lossy(&nodetool(&["getlogginglevels"]).stdout).into_owned();
    assert!(
        levels
            .lines()
            .any(|l| l.starts_with("ROOT") && l.ends_with("INFO")),
        "{levels}"
    );
    let bad = nodetool(&["setlogginglevel", "supercolumn", "LOUD"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("unknown log level 'LOUD'"),
        "{}",
        stderr(&bad)
    );
    assert!(nodetool(&["setlogginglevel", "supercolumn::db", "debug"])
        .status
        .success());
    assert!(nodetool(&["setlogginglevel", "ROOT", "WARN"])
        .status
        .success());
    let levels = String::from_utf8_lossy(&nodetool(&["getlogginglevels"]).stdout).into_owned();
    for (target, level) in [("ROOT", "WARN"), ("supercolumn::db", "DEBUG")] {
        assert!(
            levels
                .lines()
                .any(|l| l.starts_with(target) && l.ends_with(level)),
            "{target} {level} not in:\n{levels}"
        );
    }
    // At WARN the lifecycle's INFO lines are no longer written.
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    assert!(child.wait().unwrap().success(), "{rest:#?}");
    let rest = rest.join("\n");
    assert!(!rest.contains("INFO stop requested"), "{rest}");
}
