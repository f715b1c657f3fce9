//! Plain answers where the tools gave unclear ones when they were tried as an adversary would:
//! settings given at creation are kept; input is run as it arrives (piped or pasted); errors
//! are one bounded line, each cause once; `sstable-dump` says when it was given the wrong
//! partitioner or comparator, and `--verify` checks what reads rely on.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn supercolumn(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_supercolumn"))
        .arg("--data")
        .arg(dir)
        .args(args)
        .output()
        .expect("run supercolumn")
}

fn dump(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sstable-dump"))
        .args(args)
        .output()
        .expect("run sstable-dump")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
}

/// Regression: options given by `--conf` at creation were forgotten when the database was
/// reopened without it, so batch mode silently became periodic.
#[test]
fn settings_given_at_creation_are_kept_and_a_later_conf_overrides_them() {
    let root = tempfile::tempdir().unwrap();
    let (dir, conf) = (root.path().join("d"), root.path().join("conf.xml"));
    let d = dir.to_str().unwrap();
    std::fs::write(
        &conf,
        "<Storage><CommitLogSync>batch</CommitLogSync>\
         <MinimumCompactionThreshold>6</MinimumCompactionThreshold></Storage>",
    )
    .unwrap();
    let c = conf.to_str().unwrap();
    ok(&supercolumn(
        &dir,
        &[
            "--conf",
            c,
            "shell",
            "-e",
            "use Keyspace1; set Standard1['k']['c'] = 'v';",
        ],
    ));
    let stats = ok(&supercolumn(&dir, &["stats", "Keyspace1.Standard1"]));
    assert!(stats.contains("CommitLogSync: batch"), "{stats}");
    assert!(stats.contains("MinimumCompactionThreshold: 6"), "{stats}");
    let described = ok(&supercolumn(
        &dir,
        &["shell", "-e", "describe keyspace Keyspace1;"],
    ));
    assert!(described.contains("CommitLogSync: batch"), "{described}");
    // A conf naming the default explicitly overrides what is kept, and is kept in turn.
    std::fs::write(
        &conf,
        "<Storage><CommitLogSync>periodic</CommitLogSync></Storage>",
    )
    .unwrap();
    ok(&supercolumn(&dir, &["--conf", c, "flush"]));
    let stats = ok(&Command::new(env!("CARGO_BIN_EXE_supercolumn"))
        .args(["--data", d, "stats"])
        .output()
        .unwrap());
    assert!(stats.contains("CommitLogSync: periodic"), "{stats}");
    assert!(stats.contains("MinimumCompactionThreshold: 6"), "{stats}");
}

/// Regression: piped standard input was read to its end before any statement ran, so a
/// pipeline killed half-way had seen no acknowledgement.
#[test]
fn piped_statements_run_as_they_arrive() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_supercolumn"))
        .arg("--data")
        .arg(dir.path())
        .arg("shell")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    stdin
        .write_all(b"use Keyspace1;\nset Standard1['k']['c'] = 'v';\n")
        .unwrap();
    stdin.flush().unwrap();
    // Both acknowledgements arrive while standard input is still open.
    let first = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    let second = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(
        (first.as_str(), second.as_str()),
        ("Authenticated to keyspace: Keyspace1", "Value inserted.")
    );
    stdin.write_all(b"count Standard1['k'];\n").unwrap();
    drop(stdin);
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(30)).unwrap(),
        "1 columns"
    );
    assert!(child.wait().unwrap().success());
}

/// Regression: lines pasted into the interactive shell while a statement ran were dropped (10
/// pasted lines: 1 ran). Runs the shell on a pseudo-terminal (`script`), pasting six lines.
#[test]
fn lines_pasted_into_the_interactive_shell_all_run() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = format!(
        "{} --data {} shell -k Keyspace1",
        env!("CARGO_BIN_EXE_supercolumn"),
        dir.path().display()
    );
    let mut child = Command::new("script")
        .args(["-qfec", &cmd, "/dev/null"])
        .env("HOME", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("script(1), from util-linux, runs the shell on a pseudo-terminal");
    let mut stdin = child.stdin.take().unwrap();
    let mut paste = String::from("flush;\n");
    for i in 0..5 {
        paste.push_str(&format!("set Standard1['a']['c{i}'] = 'v';\n"));
    }
    paste.push_str("count Standard1['a'];\n");
    stdin.write_all(paste.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
            if String::from_utf8_lossy(&all).contains("5 columns") {
                let _ = tx.send(());
            }
        }
    });
    let seen = rx.recv_timeout(Duration::from_secs(60)).is_ok();
    stdin.write_all(b"quit;\n").unwrap();
    drop(stdin);
    let _ = child.wait();
    assert!(
        seen,
        "the count after five pasted inserts never said 5 columns"
    );
}

/// Regression: a lexing error at the end of a batch (an unterminated string) cancelled every
/// statement before it; `quit;` was refused in `-e`.
#[test]
fn statements_before_a_bad_one_run_and_quit_ends_a_batch() {
    let dir = tempfile::tempdir().unwrap();
    let o = supercolumn(
        dir.path(),
        &[
            "shell",
            "-e",
            "use Keyspace1; set Standard1['k']['c'] = 'v'; set Standard1['k']['d'] = 'open",
        ],
    );
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("unterminated string"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(
        text(&o.stdout).lines().collect::<Vec<_>>(),
        ["Authenticated to keyspace: Keyspace1", "Value inserted."]
    );
    let o = supercolumn(
        dir.path(),
        &[
            "shell",
            "-e",
            "use Keyspace1; count Standard1['k']; quit; frobnicate;",
        ],
    );
    assert_eq!(ok(&o).lines().last(), Some("1 columns"));
}

/// Regressions: a 1 MB unknown statement was echoed whole on stderr; OS errors printed their
/// text twice; `list … limit 0` returned a row; `shell -f /nonexistent` created
/// `./supercolumn-data` before failing.
#[test]
fn errors_are_one_bounded_line_and_nothing_is_created_for_a_missing_script() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("huge.txt");
    std::fs::write(&script, format!("{};", "x".repeat(1 << 20))).unwrap();
    let o = supercolumn(dir.path(), &["shell", "-f", script.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.len() < 300 && err.contains("unknown statement"),
        "{} bytes",
        err.len()
    );

    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let o = supercolumn(&file, &["schema"]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    let cause = "Not a directory";
    assert_eq!(err.matches(cause).count(), 1, "{err}");

    let o = supercolumn(
        dir.path().join("d").as_path(),
        &[
            "shell",
            "-e",
            "use Keyspace1; set Standard1['k']['c'] = 'v'; list Standard1 limit 0;",
        ],
    );
    assert_eq!(ok(&o).lines().last(), Some("0 Rows Returned."));

    let cwd = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_supercolumn"))
        .current_dir(cwd.path())
        .args(["shell", "-f", "/nonexistent/statements.txt"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("/nonexistent/statements.txt"));
    assert_eq!(
        std::fs::read_dir(cwd.path()).unwrap().count(),
        0,
        "nothing created"
    );
}

/// A flushed Standard1 SSTable of `rows` rows, and its path.
fn flushed(dir: &Path, rows: usize) -> PathBuf {
    let mut script = String::from("use Keyspace1;\n");
    for i in 0..rows {
        script.push_str(&format!("set Standard1['row{i}']['c'] = 'value {i}';\n"));
    }
    script.push_str("flush;");
    ok(&supercolumn(dir, &["shell", "-e", &script]));
    std::fs::read_dir(dir.join("Keyspace1"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-Data.db"))
        .unwrap()
}

/// Regressions: `sstable-dump --key` with the wrong `--partitioner` printed nothing and exited
/// 0; a wrong `--comparator` was reported as a corrupt file; `--verify` said OK for rows whose
/// sort key does not match the key's token; piped into `head` it said `error: Broken pipe`.
#[test]
fn sstable_dump_says_when_it_was_given_the_wrong_partitioner_or_comparator() {
    let dir = tempfile::tempdir().unwrap();
    let file = flushed(dir.path(), 2000);
    // Outside the data directory, so only the flags describe it.
    let lone = dir.path().join("lone-1-Data.db");
    std::fs::copy(&file, &lone).unwrap();
    let lone = lone.to_str().unwrap();

    let o = dump(&["--key", "row7", "--validator", "UTF8Type", lone]);
    assert!(ok(&o).contains("value=value 7"), "{}", text(&o.stdout));
    let o = dump(&[
        "--key",
        "row7",
        "--partitioner",
        "OrderPreservingPartitioner",
        lone,
    ]);
    assert!(!o.status.success(), "wrong partitioner accepted");
    assert!(
        text(&o.stderr).contains("not ordered by OrderPreservingPartitioner"),
        "{}",
        text(&o.stderr)
    );

    let o = dump(&["--comparator", "LongType", lone]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains("LongType") && !err.contains("corrupt"),
        "{err}"
    );

    let o = dump(&["--verify", "--partitioner", "Murmur3Partitioner", lone]);
    assert!(
        !o.status.success(),
        "verify passed rows out of their token's place"
    );
    assert!(
        text(&o.stderr).contains("token does not match"),
        "{}",
        text(&o.stderr)
    );

    let mut child = Command::new(env!("CARGO_BIN_EXE_sstable-dump"))
        .arg(file.to_str().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader goes away after one line, as `head -1` does.
    let out = child.wait_with_output().unwrap();
    assert_eq!(first.trim(), "-------------------");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

/// The commands that only read or maintain a database refuse a directory that holds none
/// (before, `stats` on a mistyped path created an empty database there and reported it); the
/// ones that may start one say that they did.
#[test]
fn read_only_commands_refuse_a_directory_without_a_database() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("typo");
    let out = tmp.path().join("x.cql");
    let out = out.to_str().unwrap();
    for args in [
        &["stats"][..],
        &["schema"],
        &["flush"],
        &["compact"],
        &["export", "--out", out],
    ] {
        let o = supercolumn(&missing, args);
        assert!(!o.status.success(), "{args:?} succeeded");
        let err = text(&o.stderr);
        assert!(
            err.contains("no database at") && err.contains("typo") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
        assert!(!missing.exists(), "{args:?} created {}", missing.display());
    }
    let o = supercolumn(&missing, &["shell", "-e", "show keyspaces;"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains(&format!("created a new database at {}", missing.display())),
        "{}",
        text(&o.stderr)
    );
    // Now there is one: reads work, and nothing more is said about creating it.
    let o = supercolumn(&missing, &["stats"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("created"), "{}", text(&o.stderr));
}
