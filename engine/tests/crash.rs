//! Crashes of a real process. A child process (this test binary, re-run with an environment
//! variable) writes and reports each acknowledged write on stdout; the parent kills it with
//! SIGKILL after a random number of acknowledgements, reopens the data, and checks that every
//! acknowledged write is there and no row mutation is half-applied. Also: a second process
//! cannot open a directory in use, and a killed holder does not block the next open.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

use common::whole_row;
use supercolumn::{
    BatchMutation, ColumnPath, CommitLogSync, Database, Error, Options, WriteOptions,
};

const KS: &str = "Keyspace1";
const ROWS: u64 = 10;
const CHILD_DIR: &str = "SC_CRASH_CHILD_DIR";
const CHILD_SYNC: &str = "SC_CRASH_CHILD_SYNC";
const LOCK_CHILD_DIR: &str = "SC_LOCK_CHILD_DIR";

fn options(batch: bool) -> Options {
    let mut o = Options::default();
    o.commit_log_sync = if batch {
        CommitLogSync::Batch { window_ms: 1.0 }
    } else {
        CommitLogSync::Periodic { period_ms: 50 }
    };
    // Small memtables, so flushes (and their manifest swaps) happen while the child is killed.
    o.memtable_operations_millions = 0.002;
    o
}

/// The child: writes forever, one row mutation (three columns set to `n`) per acknowledgement.
fn child(dir: &Path, batch: bool) -> ! {
    let db = Database::open(dir, options(batch)).expect("child open");
    let start = db
        .get(KS, "next", &ColumnPath::new("Standard1").column("n"))
        .expect("read next")
        .map_or(0, |c| {
            u64::from_be_bytes(c.as_column().unwrap().value.clone().try_into().unwrap())
        });
    let mut out = std::io::stdout().lock();
    for n in start.. {
        let row = format!("row{}", n % ROWS);
        let mut b = BatchMutation::new();
        for col in ["a", "b", "c"] {
            b.insert(
                &row,
                ColumnPath::new("Standard1").column(col),
                n.to_be_bytes(),
                WriteOptions::at(n as i64 + 1),
            );
        }
        db.batch_mutate(KS, &b).expect("child write");
        db.insert(
            KS,
            "next",
            &ColumnPath::new("Standard1").column("n"),
            (n + 1).to_be_bytes(),
            WriteOptions::at(n as i64 + 1),
        )
        .expect("child write next");
        writeln!(out, "ack {n}").unwrap();
        out.flush().unwrap();
    }
    unreachable!()
}

fn spawn_self(test: &str, env: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

/// Reads acknowledgements until `want` have arrived (or the child ends); returns the last one.
fn read_acks(out: &mut BufReader<ChildStdout>, want: u64) -> Option<u64> {
    let mut last = None;
    let mut seen = 0;
    let mut line = String::new();
    while seen < want {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            break;
        }
        // The first line may carry the harness's "test <name> ... " before it.
        if let Some(n) = line
            .trim()
            .rsplit("ack ")
            .next()
            .filter(|_| line.contains("ack "))
        {
            last = Some(n.parse().unwrap());
            seen += 1;
        }
    }
    last
}

fn check(dir: &Path, last_ack: Option<u64>, round: usize) {
    let db = Database::open(dir, options(true)).unwrap();
    let Some(last) = last_ack else { return };
    // Row r's last acknowledged write is the largest n <= last with n % ROWS == r.
    for r in 0..ROWS.min(last + 1) {
        let want = last - ((last - r) % ROWS);
        let cols = whole_row(&db, KS, format!("row{r}"), "Standard1");
        let vals: Vec<u64> = cols
            .iter()
            .map(|c| u64::from_be_bytes(c.as_column().unwrap().value.clone().try_into().unwrap()))
            .collect();
        assert_eq!(
            vals.len(),
            3,
            "round {round}: row{r} is half a mutation: {vals:?}"
        );
        assert!(
            vals.iter().all(|v| *v == vals[0]),
            "round {round}: row{r} torn: {vals:?}"
        );
        // A write after the last acknowledgement may have landed too (it was in flight).
        assert!(
            vals[0] >= want,
            "round {round}: row{r} lost acknowledged write {want}, has {}",
            vals[0]
        );
    }
}

fn crash_rounds(test: &str, batch: bool, rounds: usize) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    let mut seed = 0x2545_f491_4f6c_dd1du64 ^ rounds as u64;
    let mut last_ack = None;
    for round in 0..rounds {
        let mut c = spawn_self(
            test,
            &[
                (CHILD_DIR, &d),
                (CHILD_SYNC, if batch { "batch" } else { "periodic" }),
            ],
        );
        let mut out = BufReader::new(c.stdout.take().unwrap());
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let acks = read_acks(&mut out, 1 + seed % 400);
        c.kill().unwrap();
        c.wait().unwrap();
        if acks.is_some() {
            last_ack = acks;
        }
        check(dir.path(), last_ack, round);
    }
    assert!(
        last_ack.is_some_and(|n| n > 0),
        "the children wrote something"
    );
}

#[test]
fn acknowledged_batch_writes_survive_sigkill() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        child(
            Path::new(&dir),
            std::env::var(CHILD_SYNC).as_deref() != Ok("periodic"),
        );
    }
    crash_rounds("acknowledged_batch_writes_survive_sigkill", true, 25);
}

#[test]
fn periodic_writes_survive_sigkill_too() {
    // SIGKILL leaves the kernel's page cache intact, so even unsynced appends survive it.
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        child(
            Path::new(&dir),
            std::env::var(CHILD_SYNC).as_deref() != Ok("periodic"),
        );
    }
    crash_rounds("periodic_writes_survive_sigkill_too", false, 10);
}

fn lock_child(dir: &Path) -> ! {
    match Database::open(dir, Options::default()) {
        Ok(_db) => {
            println!("opened");
            // Hold the database until killed.
            let mut s = String::new();
            let _ = std::io::stdin().read_line(&mut s);
            std::process::exit(0)
        }
        Err(Error::Locked { .. }) => {
            println!("locked");
            std::process::exit(0)
        }
        Err(e) => {
            println!("error {e}");
            std::process::exit(1)
        }
    }
}

/// The child's answer, skipping what the test harness prints before it.
fn first_line(c: &mut Child) -> String {
    let mut out = BufReader::new(c.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            return String::new();
        }
        // The harness prints "test <name> ... " with no newline before the child's answer.
        let t = line.trim();
        for answer in ["opened", "locked"] {
            if t == answer || t.ends_with(&format!(" {answer}")) {
                return answer.to_string();
            }
        }
        if let Some(i) = t.find("error ") {
            return t[i..].to_string();
        }
    }
}

#[test]
fn a_second_process_cannot_open_a_directory_in_use_and_a_killed_holder_releases_it() {
    if let Some(dir) = std::env::var_os(LOCK_CHILD_DIR) {
        lock_child(Path::new(&dir));
    }
    let test = "a_second_process_cannot_open_a_directory_in_use_and_a_killed_holder_releases_it";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut c = spawn_self(test, &[(LOCK_CHILD_DIR, &d)]);
    assert_eq!(first_line(&mut c), "locked");
    c.wait().unwrap();
    drop(db);
    // A child takes the lock, and is killed while holding it.
    let mut holder = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(LOCK_CHILD_DIR, &d)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert_eq!(first_line(&mut holder), "opened");
    assert!(matches!(
        Database::open(dir.path(), Options::default()),
        Err(Error::Locked { .. })
    ));
    holder.kill().unwrap();
    holder.wait().unwrap();
    Database::open(dir.path(), Options::default()).expect("the dead holder's lock is released");
}
