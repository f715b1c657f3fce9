//! `supercolumn nodetool` against a running `serve --admin` and, with no server, against the
//! data directory: each command's answer, a flush and a compaction that take effect, the
//! Prometheus endpoint parsed by a Prometheus text parser, and a missing database refused.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

mod common;
use common::supercolumn;

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A database with one table, `ks.t`, holding two rows in its memtable's commit log.
fn database(dir: &Path) {
    ok(supercolumn(
        dir,
        &[
            "cql",
            "-e",
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
             CREATE TABLE ks.t (k int PRIMARY KEY, v text);
             INSERT INTO ks.t (k, v) VALUES (1, 'a'); INSERT INTO ks.t (k, v) VALUES (2, 'b');",
        ],
    ));
}

/// A running `serve`, stopped (SIGKILL) if a failed assertion leaves it running.
struct Running(Option<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `serve` with an admin address; the server and the admin port.
fn serve(dir: &Path) -> (Running, u16) {
    serve_with(dir, &[])
}

/// [`serve`] with more of `serve`'s options.
fn serve_with(dir: &Path, more: &[&str]) -> (Running, u16) {
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
    let mut admin = None;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(addr) = line.strip_prefix("supercolumn: admin (nodetool, /metrics) on ") {
            admin = Some(addr.rsplit(':').next().unwrap().parse().unwrap());
        }
        if line.starts_with("supercolumn: serving CQL") {
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));
    (Running(Some(child)), admin.expect("the admin address line"))
}

/// Stops the server as a service manager does (SIGTERM) and checks it exits cleanly.
fn stop(mut server: Running) {
    let mut child = server.0.take().unwrap();
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    assert!(child.wait().unwrap().success());
}

/// The value of `field` in table `t`'s block of a tablestats answer.
fn field(tablestats: &str, field: &str) -> String {
    tablestats
        .lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{field}: ")))
        .unwrap_or_else(|| panic!("{field} not in:\n{tablestats}"))
        .to_string()
}

/// A database (`database`) in a temporary directory, served: the directory (kept while the
/// first value lives), the data directory, the server and its admin port.
fn started() -> (tempfile::TempDir, std::path::PathBuf, Running, String) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("d");
    database(&dir);
    let (server, port) = serve(&dir);
    (root, dir, server, port.to_string())
}

/// `supercolumn nodetool ARGS` against the server whose admin port is `port`.
fn at_server(dir: &Path, port: &str, args: &[&str]) -> Output {
    let mut all = vec!["nodetool", "--port", port];
    all.extend_from_slice(args);
    supercolumn(dir, &all)
}

/// `snapshot`, `listsnapshots` and `clearsnapshot` through `nodetool` (`run` runs it with
/// these arguments): the snapshot's links are where Cassandra puts them, and go when cleared.
fn snapshots(dir: &Path, run: impl Fn(&[&str]) -> Output) {
    let taken = ok(run(&["snapshot", "-t", "first", "ks"]));
    assert!(
        taken.contains("with snapshot name [first]") && taken.contains("Snapshot directory: first"),
        "{taken}"
    );
    let snap = dir.join("ks").join("snapshots").join("first");
    let linked: Vec<String> = std::fs::read_dir(&snap)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("-Data.db"))
        .collect();
    assert!(!linked.is_empty(), "nothing linked in {}", snap.display());
    let listed = ok(run(&["listsnapshots"]));
    let row = listed
        .lines()
        .find(|l| l.starts_with("first "))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(
        row.split_whitespace().nth(1) == Some("ks") && row.contains(" t "),
        "{listed}"
    );
    // The same tag again is refused; clearing needs a tag or --all.
    let o = run(&["snapshot", "-t", "first", "ks"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("Snapshot first already exists."));
    let o = run(&["clearsnapshot"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("Specify snapshot name or --all"));
    ok(run(&["clearsnapshot", "-t", "first"]));
    assert!(!snap.exists());
    ok(run(&["snapshot"]));
    ok(run(&["clearsnapshot", "--all"]));
    assert!(ok(run(&["listsnapshots"])).contains("There are no snapshots"));
}

#[test]
fn nodetool_answers_from_a_running_server_and_its_flush_and_compact_take_effect() {
    let (_root, dir, server, port) = started();
    let nodetool = |args: &[&str]| ok(at_server(&dir, &port, args));
    let status = nodetool(&["status"]);
    assert!(
        status.lines().any(|l| l.starts_with("UN  127.0.0.1")),
        "{status}"
    );
    let info = nodetool(&["info"]);
    assert!(info.contains("Native Transport active: true"), "{info}");
    let before = nodetool(&["tablestats", "ks.t"]);
    assert_eq!(field(&before, "Table"), "t");
    assert_eq!(field(&before, "SSTable count"), "0");
    // The rows the commit log replayed are flushed into a first SSTable.
    nodetool(&["flush", "ks"]);
    assert_eq!(
        field(&nodetool(&["tablestats", "ks.t"]), "SSTable count"),
        "1"
    );
    nodetool(&["compact", "ks.t"]);
    assert_eq!(
        field(&nodetool(&["tablestats", "ks.t"]), "SSTable count"),
        "1"
    );
    assert!(nodetool(&["compactionstats"]).starts_with("pending tasks: 0"));
    let pools = nodetool(&["tpstats"]);
    let names: Vec<&str> = pools
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        names,
        [
            "Pool",
            "CompactionExecutor",
            "MemtableFlushWriter",
            "Native-Transport-Requests"
        ],
        "{pools}"
    );
    assert_eq!(nodetool(&["clientstats"]), "Total connected clients: 0\n");
    snapshots(&dir, |args| at_server(&dir, &port, args));
    nodetool(&["settraceprobability", "0.5"]);
    assert_eq!(
        nodetool(&["gettraceprobability"]),
        "Current trace probability: 0.5\n"
    );
    let o = at_server(&dir, &port, &["settraceprobability", "2"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("must be between 0 and 1"));
    // An unknown table is an error, one line.
    let o = supercolumn(
        &dir,
        &["nodetool", "--port", &port, "tablestats", "ks.nope"],
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown keyspace or table 'ks.nope'"));

    // The metrics, as Prometheus reads them.
    let text = ureq::get(&format!("http://127.0.0.1:{port}/metrics"))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap();
    let sample = |name: &str| {
        scrape
            .samples
            .iter()
            .find(|s| {
                s.metric == name
                    && s.labels.get("keyspace") == Some("ks")
                    && s.labels.get("table") == Some("t")
            })
            .map(|s| match s.value {
                prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Gauge(v) => v,
                _ => f64::NAN,
            })
            .unwrap_or_else(|| panic!("{name} not in:\n{text}"))
    };
    assert_eq!(sample("supercolumn_table_sstables"), 1.0);
    assert!(scrape
        .samples
        .iter()
        .any(|s| s.metric == "supercolumn_uptime_seconds"));
    assert!(sample("supercolumn_table_live_bytes") > 0.0);
    stop(server);
}

#[test]
fn with_auth_the_admin_address_asks_for_a_user_and_password() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("d");
    database(&dir);
    let mut add = Command::new(env!("CARGO_BIN_EXE_supercolumn"))
        .arg("--data")
        .arg(&dir)
        .args(["add-user", "ops"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    add.stdin.take().unwrap().write_all(b"s3cret\n").unwrap();
    assert!(add.wait().unwrap().success());
    let (server, port) = serve_with(&dir, &["--auth"]);
    let port = port.to_string();
    let as_user = |login: &[&str]| {
        let mut all = vec!["nodetool", "--port", port.as_str()];
        all.extend_from_slice(login);
        all.push("info");
        supercolumn(&dir, &all)
    };
    for login in [
        &[][..],
        &["-u", "ops", "--password", "wrong"],
        &["-u", "nobody", "--password", "s3cret"],
    ] {
        let o = as_user(login);
        assert!(!o.status.success(), "{login:?} was let in");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            e.contains("a user name and password are needed"),
            "{login:?}: {e}"
        );
    }
    assert!(ok(as_user(&["-u", "ops", "--password", "s3cret"]))
        .contains("Native Transport active: true"));
    let metrics = ureq::get(&format!("http://127.0.0.1:{port}/metrics")).call();
    assert!(
        matches!(metrics, Err(ureq::Error::Status(401, _))),
        "{metrics:?}"
    );
    stop(server);
}

#[test]
fn drain_stops_serving_and_flushes_then_waits_for_the_stop() {
    let (_root, dir, server, port) = started();
    let nodetool = |args: &[&str]| ok(at_server(&dir, &port, args));
    // The two rows the commit log replayed are in the memtable.
    let before = nodetool(&["tablestats", "ks.t"]);
    assert_ne!(field(&before, "Memtable cell count"), "0", "{before}");
    assert!(nodetool(&["info"]).contains("Native Transport active: true"));
    nodetool(&["drain"]);
    let after = nodetool(&["tablestats", "ks.t"]);
    assert_eq!(field(&after, "Memtable cell count"), "0", "{after}");
    assert_eq!(field(&after, "SSTable count"), "1", "{after}");
    // The admin address still answers; CQL is no longer served.
    assert!(nodetool(&["info"]).contains("Native Transport active: false"));
    stop(server);
}

#[test]
fn nodetool_without_a_server_reads_and_maintains_the_data_directory() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("d");
    database(&dir);
    // Port 9 (discard) on loopback: nothing answers there.
    let nodetool = |args: &[&str]| {
        let mut all = vec!["nodetool", "--port", "9"];
        all.extend_from_slice(args);
        supercolumn(&dir, &all)
    };
    let status = ok(nodetool(&["status"]));
    assert!(
        status.lines().any(|l| l.starts_with("DN  127.0.0.1")),
        "{status}"
    );
    ok(nodetool(&["flush"]));
    let stats = ok(nodetool(&["tablestats", "ks"]));
    assert_eq!(field(&stats, "SSTable count"), "1");
    ok(nodetool(&["compact", "ks.t"]));
    assert!(ok(nodetool(&["compactionstats"])).starts_with("pending tasks: 0"));
    let pools = ok(nodetool(&["tpstats"]));
    assert!(
        pools.contains("CompactionExecutor") && !pools.contains("Native-Transport"),
        "{pools}"
    );
    assert_eq!(
        ok(nodetool(&["clientstats", "--all"])).lines().count(),
        1,
        "a header, no clients"
    );
    snapshots(&dir, nodetool);
    // A directory with no database is refused, not created.
    let none = root.path().join("none");
    let o = supercolumn(&none, &["nodetool", "--port", "9", "tablestats"]);
    assert!(!o.status.success());
    assert!(!none.exists());
}
