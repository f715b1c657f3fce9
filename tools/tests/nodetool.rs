//! `supercolumn nodetool` against a running `serve --admin` and, with no server, against the
//! data directory: each command's answer, a flush and a compaction that take effect, the
//! Prometheus endpoint parsed by a Prometheus text parser, and a missing database refused.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

mod common;
use common::{serve, serve_with, stop, supercolumn, Running};

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

/// One request frame of protocol v4 on stream 0, and its answer read whole: (bytes sent, the
/// answer's opcode, bytes read).
fn exchange(cql: &mut std::net::TcpStream, opcode: u8, body: &[u8]) -> (usize, u8, usize) {
    use std::io::{Read, Write};
    let mut frame = vec![4, 0, 0, 0, opcode];
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(body);
    cql.write_all(&frame).unwrap();
    let mut header = [0u8; 9];
    cql.read_exact(&mut header).unwrap();
    let length = u32::from_be_bytes(header[5..9].try_into().unwrap()) as usize;
    let mut answer = vec![0u8; length];
    cql.read_exact(&mut answer).unwrap();
    (frame.len(), header[4], 9 + length)
}

/// A QUERY body: the statement as a long string, consistency ONE, no flags.
fn query(statement: &str) -> Vec<u8> {
    let mut body = (statement.len() as u32).to_be_bytes().to_vec();
    body.extend_from_slice(statement.as_bytes());
    body.extend_from_slice(&[0, 1, 0]);
    body
}

#[test]
fn metrics_count_the_server_s_traffic_and_histogram_the_latencies() {
    let (_root, _dir, server, port) = started();
    let mut cql = std::net::TcpStream::connect(("127.0.0.1", server.1)).unwrap();
    let startup = [&[0, 1, 0, 11][..], b"CQL_VERSION", &[0, 5], b"3.0.0"].concat();
    let exchanges = [
        (0x05, Vec::new(), 0x06),                              // OPTIONS: SUPPORTED
        (0x01, startup, 0x02),                                 // STARTUP: READY
        (0x07, query("SELEC v FROM ks.t"), 0x00),              // a syntax error
        (0x07, query("SELECT v FROM ks.t WHERE k = 1"), 0x08), // rows
        (0x07, query("SELECT v FROM ks.nope WHERE k = 1"), 0x00), // invalid
    ];
    let (mut sent, mut read) = (0, 0);
    for (opcode, body, answer) in exchanges {
        let (s, a, r) = exchange(&mut cql, opcode, &body);
        assert_eq!(a, answer, "opcode {opcode:#x} answered by {a:#x}");
        (sent, read) = (sent + s, read + r);
    }
    drop(cql);
    let scrape = || {
        let text = ureq::get(&format!("http://127.0.0.1:{port}/metrics"))
            .call()
            .unwrap()
            .into_string()
            .unwrap();
        prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap()
    };
    let value = |scrape: &prometheus_parse::Scrape, name: &str, label: (&str, &str)| {
        scrape
            .samples
            .iter()
            .find(|s| {
                s.metric == name && (label.0.is_empty() || s.labels.get(label.0) == Some(label.1))
            })
            .map(|s| match &s.value {
                // A counter's samples end in `_total`, which its TYPE line (OpenMetrics' form)
                // does not: the parser reads them untyped.
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => *v,
                _ => f64::NAN,
            })
            .unwrap_or_else(|| panic!("{name} {label:?} not scraped"))
    };
    // The server notices the closed connection on its own time.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut s = scrape();
    while value(&s, "supercolumn_connections", ("", "")) != 0.0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the connection stays open"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        s = scrape();
    }
    assert_eq!(
        value(&s, "supercolumn_connections_accepted_total", ("", "")),
        1.0
    );
    assert_eq!(
        value(&s, "supercolumn_received_bytes_total", ("", "")),
        sent as f64
    );
    assert_eq!(
        value(&s, "supercolumn_sent_bytes_total", ("", "")),
        read as f64
    );
    for (opcode, n) in [("OPTIONS", 1.0), ("STARTUP", 1.0), ("QUERY", 3.0)] {
        assert_eq!(
            value(&s, "supercolumn_requests_total", ("opcode", opcode)),
            n
        );
    }
    for code in ["SYNTAX_ERROR", "INVALID"] {
        assert_eq!(value(&s, "supercolumn_errors_total", ("code", code)), 1.0);
    }
    // The read's latency, as a histogram: one read in, counted under +Inf at least.
    let read_latency = s
        .samples
        .iter()
        .find(|x| {
            x.metric == "supercolumn_table_latency_seconds"
                && x.labels.get("table") == Some("t")
                && x.labels.get("operation") == Some("read")
        })
        .expect("the read latency histogram");
    let prometheus_parse::Value::Histogram(buckets) = &read_latency.value else {
        panic!("{:?}", read_latency.value)
    };
    assert_eq!(
        buckets.last().map(|b| (b.less_than, b.count)),
        Some((f64::INFINITY, 1.0))
    );
    assert!(
        buckets.windows(2).all(|w| w[0].count <= w[1].count),
        "{buckets:?}"
    );
    stop(server);
}
