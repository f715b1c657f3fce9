//! Thrift-era column families through CQL, as Cassandra shows them: cqlsh reads a Standard one
//! as `(key, column1, value)` and a Super one as `(key, column1, column2, value)`, restricts them,
//! `DESCRIBE`s them and copies them out, and writes them a cell at a time. Needs `python3`
//! with the PyPI package `cqlsh` (CI installs it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use supercolumn::{BatchMutation, ColumnOrSuperColumn, ColumnPath, WriteOptions};

fn cqlsh(port: u16, statements: &str) -> (bool, String, String) {
    let out = Command::new(support::python::python())
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

    // Writes go through the Thrift-era API, a cell at a time.
    let (ok, _, err) = cqlsh(
        port,
        "INSERT INTO \"Keyspace1\".\"Standard2\" (key, column1, value) VALUES (0x01, 'a', 0x62) USING TIMESTAMP 5;
         UPDATE \"Keyspace1\".\"Standard2\" USING TIMESTAMP 4 SET value = 0x63 WHERE key = 0x01 AND column1 = 'a';
         UPDATE \"Keyspace1\".\"Standard2\" USING TIMESTAMP 6 AND TTL 600 SET value = 0x64 WHERE key = 0x01 AND column1 = 'b';
         INSERT INTO \"Keyspace1\".\"Super1\" (key, column1, column2, value) VALUES (0x01, 'sc', 'sub', 0x65);
         DELETE FROM \"Keyspace1\".\"Super1\" WHERE key = 0x616461 AND column1 = 'home';",
    );
    assert!(ok && !err.contains("rror"), "{err}");
    let get = |cf: &str, key: &[u8], sc: Option<&str>, c: &str| {
        let mut path = ColumnPath::new(cf).column(c);
        if let Some(sc) = sc {
            path = path.super_column(sc);
        }
        match server.db.get("Keyspace1", key, &path).unwrap() {
            Some(ColumnOrSuperColumn::Column(c)) => Some(c),
            _ => None,
        }
    };
    let a = get("Standard2", &[1], None, "a").unwrap();
    assert_eq!(
        (a.value.as_slice(), a.timestamp),
        (&b"b"[..], 5),
        "the older UPDATE lost"
    );
    let b = get("Standard2", &[1], None, "b").unwrap();
    assert_eq!((b.value.as_slice(), b.ttl), (&b"d"[..], Some(600)));
    assert_eq!(get("Super1", &[1], Some("sc"), "sub").unwrap().value, b"e");
    assert!(get("Super1", b"ada", Some("home"), "city").is_none());
    assert!(get("Super1", b"ada", Some("work"), "city").is_some());
    let (_, out, err) = cqlsh(
        port,
        "UPDATE \"Keyspace1\".\"Standard2\" SET value = 0x01 WHERE key = 0x01 AND column1 > 'a'",
    );
    assert!(
        format!("{out}{err}").contains("names its cell with ="),
        "{out}{err}"
    );
}
