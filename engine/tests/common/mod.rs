//! Helpers shared by the integration tests: a database in a temporary directory with a clock the
//! test controls, and short ways to read results.
#![allow(dead_code)]

pub mod fuzz_input;

use std::sync::Arc;

use supercolumn::{
    ColumnOrSuperColumn, ColumnParent, Database, KeyspaceDef, ManualClock, Options, Partitioner,
    SlicePredicate,
};
use tempfile::TempDir;

/// 2013-07-23, the timestamp in SPEC §8's examples, in microseconds.
pub const T0: i64 = 1_374_546_754_299_000;

pub struct TestDb {
    pub db: Database,
    pub clock: Arc<ManualClock>,
    pub dir: TempDir,
}

pub fn open_with(keyspaces: Option<Vec<KeyspaceDef>>, partitioner: Partitioner) -> TestDb {
    let dir = tempfile::tempdir().expect("temp dir");
    let clock = Arc::new(ManualClock::new(T0));
    let mut options = Options::default()
        .with_clock(clock.clone())
        .with_partitioner(partitioner);
    options.keyspaces = keyspaces;
    let db = Database::open(dir.path(), options).expect("open");
    TestDb { db, clock, dir }
}

/// A database with the default schema (Keyspace1).
pub fn open_default() -> TestDb {
    open_with(None, Partitioner::Random)
}

pub fn open_schema(keyspaces: Vec<KeyspaceDef>) -> TestDb {
    open_with(Some(keyspaces), Partitioner::Random)
}

/// Every live column (or super column) of row `key` in `ks`.`cf`.
pub fn whole_row(
    db: &Database,
    ks: &str,
    key: impl AsRef<[u8]>,
    cf: &str,
) -> Vec<ColumnOrSuperColumn> {
    db.get_slice(
        ks,
        key,
        &ColumnParent::new(cf),
        &SlicePredicate::everything(),
    )
    .expect("read the row")
}

/// Column names of a slice result.
pub fn names(r: &[ColumnOrSuperColumn]) -> Vec<Vec<u8>> {
    r.iter().map(|c| c.name().to_vec()).collect()
}

/// Column values of a slice of plain columns.
pub fn values(r: &[ColumnOrSuperColumn]) -> Vec<Vec<u8>> {
    r.iter()
        .map(|c| c.as_column().expect("a column").value.clone())
        .collect()
}

pub fn strings(v: Vec<Vec<u8>>) -> Vec<String> {
    v.into_iter()
        .map(|b| String::from_utf8(b).expect("utf8"))
        .collect()
}

pub fn long(v: i64) -> [u8; 8] {
    v.to_be_bytes()
}

/// Sub-column names of a super column result.
pub fn sub_names(sc: &ColumnOrSuperColumn) -> Vec<Vec<u8>> {
    sc.as_super_column()
        .expect("a super column")
        .columns
        .iter()
        .map(|c| c.name.clone())
        .collect()
}

/// A small deterministic generator (xorshift), so randomized tests reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// An index in `0..n` (0 when `n` is 0).
    pub fn pick(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}

/// Waits until `cond` holds, polling, for at most `secs` seconds; returns whether it held. For
/// background work (the flusher, the compactor) a test cannot hand a signal to.
pub fn wait_until(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !cond() {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

/// Copies a directory tree (a data directory, a fixture) file by file.
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Opens the database in `dir`, waiting (up to ten seconds) while its lock is held: a child
/// that a test running beside this one spawns (`spawn_child`) holds a copy of every open
/// descriptor, this test's directory lock too, from its fork until its exec, so a lock this
/// test has just released can still be held for that moment.
pub fn open_when_unlocked(dir: &std::path::Path, options: impl Fn() -> Options) -> Database {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match Database::open(dir, options()) {
            Err(supercolumn::Error::Locked { .. }) if std::time::Instant::now() < deadline => {
                std::thread::yield_now();
            }
            opened => return opened.unwrap(),
        }
    }
}

/// Runs this test binary again as a child that runs only `test`, with `env` set to `dir` (the
/// child's cue to be the child), its stdout piped for its acknowledgements.
pub fn spawn_child(
    test: &str,
    env: &str,
    dir: &std::path::Path,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
) {
    use std::process::{Command, Stdio};
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(env, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let out = std::io::BufReader::new(child.stdout.take().expect("child stdout"));
    (child, out)
}

/// Reads a child's lines until `want` of them hold the word "ack", or its output ends; returns
/// how many did, and the last one from that word on. (The test harness may print the test's
/// name on the line of the first acknowledgement.)
pub fn read_acks(out: &mut impl std::io::BufRead, want: u64) -> (u64, String) {
    let (mut seen, mut line, mut last) = (0, String::new(), String::new());
    while seen < want {
        line.clear();
        if out.read_line(&mut line).expect("child output") == 0 {
            break;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(at) = words.iter().position(|w| *w == "ack") {
            seen += 1;
            last = words[at..].join(" ");
        }
    }
    (seen, last)
}

/// Options for a process a test kills: batch commit log (an acknowledged write is on disk),
/// and memtables of `ops_millions` million operations, so flushes (and compactions) happen
/// while it is killed.
pub fn crash_options(ops_millions: f64) -> supercolumn::Options {
    let mut o = supercolumn::Options::default();
    o.commit_log_sync = supercolumn::CommitLogSync::Batch { window_ms: 1.0 };
    o.memtable_operations_millions = ops_millions;
    o
}

/// The keys of the rows of Standard column family `ks`.`cf` whose column `column` holds
/// `value`, found by a full scan, in the scan's (token) order: what an index must answer.
pub fn scanned_keys(db: &Database, ks: &str, cf: &str, column: &str, value: &str) -> Vec<String> {
    let names = SlicePredicate::Names(vec![column.as_bytes().to_vec()]);
    let all = supercolumn::KeyRange::all().count(1_000_000);
    let rows = db
        .get_range_slices(ks, &ColumnParent::new(cf), &names, &all)
        .expect("scan");
    rows.into_iter()
        .filter(|r| {
            r.columns.iter().any(|c| match c {
                ColumnOrSuperColumn::Column(c) => c.value == value.as_bytes(),
                ColumnOrSuperColumn::SuperColumn(_) => false,
            })
        })
        .map(|r| String::from_utf8(r.key).expect("utf-8 key"))
        .collect()
}
