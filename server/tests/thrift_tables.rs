//! Thrift-era column families through CQL, as Cassandra shows them: cqlsh reads a Standard one
//! as `(key, column1, value)` and a Super one as `(key, column1, column2, value)`, restricts them,
//! `DESCRIBE`s them and copies them out; writing them through CQL is refused. Needs `python3`
//! with the PyPI package `cqlsh` (CI installs it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use supercolumn::{BatchMutation, ColumnPath, WriteOptions};

fn cqlsh(port: u16, statements: &str) -> (bool, String, String) {
    let out = Command::new("python3")
        .args([
            "-m",
            "cqlshlib",
            "127.0.0.1",
            &port.to_string(),
            "-e",
            statements,
        ])
        .output()
        .expect("python3 runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cqlsh_reads_describes_and_copies_thrift_era_column_families() {
    let server = support::start(|_| {});
    let mut b = BatchMutation::new();
    for (key, name, value, ts) in [
        ("jsmith", "first", "John", 10),
        ("jsmith", "last", "Smith", 11),
        ("ada", "first", "Ada", 12),
    ] {
        b.insert(
            key,
            ColumnPath::new("Standard2").column(name),
            value,
            WriteOptions::at(ts),
        );
    }
    b.insert(
        "ada",
        ColumnPath::new("Standard2").column("temp"),
        "x",
        WriteOptions::at(13).with_ttl(3600),
    );
    b.insert(
        "ada",
        ColumnPath::new("Super1")
            .super_column("home")
            .column("city"),
        "London",
        WriteOptions::at(14),
    );
    b.insert(
        "ada",
        ColumnPath::new("Super1")
            .super_column("work")
            .column("city"),
        "Paris",
        WriteOptions::at(15),
    );
    server.db.batch_mutate("Keyspace1", &b).unwrap();
    let port = server.addr.port();

    let (ok, out, err) = cqlsh(port, "SELECT key, column1, value, writetime(value) FROM \"Keyspace1\".\"Standard2\" WHERE key = 0x6a736d697468;");
    assert!(ok, "{err}");
    assert!(
        out.contains("(2 rows)")
            && out.contains("|   first |   0x4a6f686e |")
            && out.contains("|    last | 0x536d697468 |"),
        "{out}"
    );
    let (ok, out, err) = cqlsh(port, "SELECT column1, value FROM \"Keyspace1\".\"Standard2\" WHERE key = 0x616461 AND column1 > 'first'; SELECT ttl(value) FROM \"Keyspace1\".\"Standard2\" WHERE key = 0x616461 AND column1 = 'temp';");
    assert!(ok, "{err}");
    assert!(
        out.contains("    temp |  0x78") && out.contains("(1 rows)") && !out.contains("0x416461"),
        "{out}"
    );
    assert!(out.contains("3600") || out.contains("3599"), "{out}");
    let (ok, out, err) = cqlsh(
        port,
        "SELECT * FROM \"Keyspace1\".\"Super1\"; SELECT count(*) FROM \"Keyspace1\".\"Standard2\";",
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("|    home |    city | 0x4c6f6e646f6e")
            && out.contains("|    work |    city |   0x5061726973"),
        "{out}"
    );
    assert!(out.contains("     4\n"), "{out}");
    let (ok, out, err) = cqlsh(port, "DESCRIBE TABLE \"Keyspace1\".\"Super1\"");
    assert!(ok, "{err}");
    assert!(
        out.contains("column2 text") && out.contains("PRIMARY KEY (\"key\", column1, column2)"),
        "{out}"
    );

    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s2.csv");
    let (ok, out, err) = cqlsh(
        port,
        &format!("COPY \"Keyspace1\".\"Standard2\" TO '{}'", csv.display()),
    );
    assert!(ok && out.contains("4 rows exported"), "{out}\n{err}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.contains("0x6a736d697468,last,0x536d697468"), "{text}");

    let (_, out, err) = cqlsh(
        port,
        "INSERT INTO \"Keyspace1\".\"Standard2\" (key, column1, value) VALUES (0x01, 'a', 'b')",
    );
    assert!(
        format!("{out}{err}").contains("read-only through CQL"),
        "{out}{err}"
    );
}
