//! Crashes of a real process. A child process (this test binary, re-run with an environment
//! variable) runs a mixed workload and reports each acknowledged step on stdout. Each step is one
//! row mutation touching every level: three columns set, a column with a TTL, the previous
//! step's marker column deleted and a new one written, a sub-column of a super column, and a
//! scratch row deleted whole. Every 100th step also creates a column family and writes to it,
//! and every 150th runs a major compaction. Small memtables keep flushes and minor compactions
//! going. The parent kills the child with SIGKILL after a random number of acknowledgements,
//! reopens the data, and checks that every acknowledged step is there whole and the numbering
//! never goes back. The number of rounds comes from `SC_CRASH_ROUNDS` (the crash-matrix script
//! runs 200). Also: a second process cannot open a directory in use, and a killed holder does
//! not block the next open.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

use common::whole_row;
use supercolumn::{
    BatchMutation, ColumnFamilyDef, ColumnPath, CommitLogSync, Database, Error, Options,
    WriteOptions,
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
    // The other crash test's child, forked while this test's parent held the directory open to
    // check it, keeps the parent's descriptor (and so the directory's lock) until it execs: on a
    // loaded machine that takes a moment. Wait for the lock, within a deadline.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let db = loop {
        match Database::open(dir, options(batch)) {
            Err(Error::Locked { .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            other => break other.expect("child open"),
        }
    };
    let start = db
        .get(KS, "next", &ColumnPath::new("Standard1").column("n"))
        .expect("read next")
        .map_or(0, |c| {
            u64::from_be_bytes(c.as_column().unwrap().value.clone().try_into().unwrap())
        });
    let mut out = std::io::stdout().lock();
    for n in start.. {
        let row = format!("row{}", n % ROWS);
        let at = WriteOptions::at(n as i64 + 1);
        let mut b = BatchMutation::new();
        for col in ["a", "b", "c"] {
            b.insert(
                &row,
                ColumnPath::new("Standard1").column(col),
                n.to_be_bytes(),
                at,
            );
        }
        b.insert(
            &row,
            ColumnPath::new("Standard1").column("t"),
            n.to_be_bytes(),
            at.with_ttl(86_400),
        );
        // One marker column per row: the previous step's goes, this step's comes.
        if n >= ROWS {
            let prev = format!("m{}", n - ROWS);
            b.remove(
                &row,
                ColumnPath::new("Standard1").column(prev),
                Some(n as i64 + 1),
            );
        }
        b.insert(
            &row,
            ColumnPath::new("Standard1").column(format!("m{n}")),
            "",
            at,
        );
        b.insert(
            &row,
            ColumnPath::new("Super1").super_column("s").column("v"),
            n.to_be_bytes(),
            at,
        );
        // A scratch row written at the step before and deleted whole now.
        b.remove(
            format!("scratch{}", n % ROWS),
            ColumnPath::new("Standard2"),
            Some(n as i64 + 1),
        );
        db.batch_mutate(KS, &b).expect("child write");
        let mut s = BatchMutation::new();
        s.insert(
            format!("scratch{}", (n + 1) % ROWS),
            ColumnPath::new("Standard2").column("x"),
            "x",
            WriteOptions::at(n as i64 + 1),
        );
        db.batch_mutate(KS, &s).expect("child scratch write");
        if n % 100 == 99 {
            let cf = format!("T{n}");
            match db.create_column_family(KS, ColumnFamilyDef::standard(&cf)) {
                // A round that died between the creation and its acknowledgement left it.
                Ok(()) | Err(Error::InvalidRequest(_)) => {}
                Err(e) => panic!("child create {cf}: {e}"),
            }
            db.insert(KS, "r", &ColumnPath::new(&cf).column("c"), "v", at)
                .expect("child write to a new column family");
        }
        if n % 150 == 149 {
            db.compact(KS, Some("Standard1")).expect("child compact");
        }
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
        .stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

/// Reads acknowledgements until `want` have arrived (or the child ends); returns the first and
/// the last.
fn read_acks(out: &mut BufReader<ChildStdout>, want: u64) -> Option<(u64, u64)> {
    let mut first = None;
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
            let n: u64 = n.parse().unwrap();
            first = first.or(Some(n));
            last = Some(n);
            seen += 1;
        }
    }
    first.zip(last)
}

fn u64_of(c: &supercolumn::ColumnOrSuperColumn) -> u64 {
    u64::from_be_bytes(c.as_column().unwrap().value.clone().try_into().unwrap())
}

/// Checks the data after a crash whose last acknowledged step was `last`; returns the step the
/// data reached (acknowledged or in flight).
fn check(dir: &Path, last: u64, round: usize) -> u64 {
    let db = Database::open(dir, options(true)).unwrap();
    let mut reached = 0;
    // Row r's last acknowledged step is the largest n <= last with n % ROWS == r.
    for r in 0..ROWS.min(last + 1) {
        let want = last - ((last - r) % ROWS);
        let cols = whole_row(&db, KS, format!("row{r}"), "Standard1");
        let names: Vec<String> = cols
            .iter()
            .map(|c| String::from_utf8(c.name().to_vec()).unwrap())
            .collect();
        let get = |n: &str| {
            cols.iter()
                .zip(&names)
                .find(|(_, x)| *x == n)
                .map(|(c, _)| u64_of(c))
        };
        let v = get("a").unwrap_or_else(|| panic!("round {round}: row{r} has no a: {names:?}"));
        // A step after the last acknowledgement may have landed too (it was in flight).
        assert!(
            v >= want,
            "round {round}: row{r} lost acknowledged step {want}, has {v}"
        );
        // The whole step or none of it: every column of the same step, one marker.
        let marker = format!("m{v}");
        assert_eq!(
            names,
            ["a", "b", "c", marker.as_str(), "t"],
            "round {round}: row{r} at step {v} is torn"
        );
        for col in ["b", "c", "t"] {
            assert_eq!(
                get(col),
                Some(v),
                "round {round}: row{r}/{col} torn at step {v}"
            );
        }
        let sub = db
            .get(
                KS,
                format!("row{r}"),
                &ColumnPath::new("Super1").super_column("s").column("v"),
            )
            .unwrap()
            .map(|c| u64_of(&c));
        assert_eq!(
            sub,
            Some(v),
            "round {round}: row{r}'s super column torn at step {v}"
        );
        reached = reached.max(v);
    }
    // Every scratch row was deleted whole after it was written, except the one the last step
    // that landed wrote.
    for j in 0..ROWS.min(reached + 1) {
        if j == (reached + 1) % ROWS {
            continue;
        }
        let row = whole_row(&db, KS, format!("scratch{j}"), "Standard2");
        assert!(
            row.is_empty(),
            "round {round}: deleted row scratch{j} is back (step {reached})"
        );
    }
    // Column families created by acknowledged steps, with what was written to them.
    for n in (99..=last).step_by(100) {
        let cf = format!("T{n}");
        let got = db
            .get(KS, "r", &ColumnPath::new(&cf).column("c"))
            .unwrap_or_else(|e| panic!("round {round}: column family {cf}: {e}"));
        assert!(got.is_some(), "round {round}: the write to {cf} is lost");
    }
    // Replay is bounded: flushes release the log, so what is left to replay stays small.
    let logs = std::fs::read_dir(dir.join("commit-log")).unwrap().count();
    assert!(
        logs <= 3,
        "round {round}: {logs} commit log segments to replay"
    );
    reached
}

fn crash_rounds(test: &str, batch: bool, default_rounds: usize) {
    let rounds = std::env::var("SC_CRASH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(default_rounds);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    let mut seed = 0x2545_f491_4f6c_dd1du64 ^ rounds as u64;
    let mut reached: Option<u64> = None;
    let mut acked: Option<u64> = None;
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
        // The parent waits for at least one acknowledgement: none means the child died by
        // itself (it could not open what the last crash left, or a step failed).
        let (first, last) =
            acks.unwrap_or_else(|| panic!("round {round}: the child acknowledged nothing"));
        // A restart continues after every acknowledged step (whose counter write preceded its
        // acknowledgement), and at the latest step the data holds (a step may land without its
        // counter; redoing it writes the same cells at the same timestamps): the numbering
        // never goes back.
        if let (Some(a), Some(r)) = (acked, reached) {
            assert!(
                first > a && first >= r,
                "round {round}: the child restarted at step {first}, after step {a} was acknowledged and step {r} had landed"
            );
        }
        acked = Some(last);
        reached = Some(check(dir.path(), last, round));
    }
    eprintln!("{rounds} rounds, {} steps", reached.unwrap_or(0));
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
