//! `supercolumn cql` run as a user runs it: seed 002's statements typed as the seed writes them,
//! then the shell's `list` and `sstable-dump` show the row keys, cell names and values the seed
//! shows (timestamps aside); statements run one by one, and an error stops the run at the
//! statement that failed with the ones before it done.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn run(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_supercolumn"))
        .arg("--data")
        .arg(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(s) = stdin {
        input.write_all(s.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

/// Standard output, each `timestamp=<digits>` as `timestamp=T`, blank lines dropped.
fn lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| match l.find("timestamp=") {
            Some(i) => format!("{}timestamp=T)", &l[..i]),
            None => l.to_string(),
        })
        .collect()
}

const KEYSPACE: &str = "CREATE KEYSPACE learn WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\nUSE learn;\n";

/// Seed 002's statements, shared with the CQL crate's and the cqlsh suite's tests.
const SIMPLE: &str = include_str!("../../cql/tests/data/seed_002/simple.cql");
const COMPOUND: &str = include_str!("../../cql/tests/data/seed_002/compound.cql");

fn seed_rows(key: &str) -> Vec<String> {
    let (a, b) = match key {
        "1" => ("00000002", "00000003"),
        "4" => ("00000005", "00000006"),
        _ => ("00000008", "00000009"),
    };
    vec![
        format!("RowKey: {key}"),
        "=> (column=, value=, timestamp=T)".into(),
        format!("=> (column=field2, value={a}, timestamp=T)"),
        format!("=> (column=field3, value={b}, timestamp=T)"),
    ]
}

#[test]
fn seed_002_typed_into_cql_lists_and_dumps_as_the_seed_shows() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!("{KEYSPACE}{SIMPLE}{COMPOUND}SELECT * FROM example WHERE field1 = 4;\n");
    let o = run(dir.path(), &["cql"], Some(&script));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        lines(&o),
        [
            " field1 | field2 | field3",
            "--------+--------+--------",
            "      4 |      5 |      6",
            "(1 rows)"
        ]
    );

    let o = run(
        dir.path(),
        &["shell", "-e", "use learn; list example; list example2;"],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let listed = lines(&o);
    // Rows come in token order; each must be exactly the seed's.
    for key in ["1", "4", "7"] {
        let rows = seed_rows(key);
        let at = listed.iter().position(|l| *l == rows[0]).unwrap();
        assert_eq!(listed[at..at + 4], rows[..], "{listed:#?}");
    }
    let compound = [
        "RowKey: partitionVal1:partitionVal2",
        "=> (column=clusterVal1:clusterVal2:, value=, timestamp=T)",
        "=> (column=clusterVal1:clusterVal2:normalfield1, value=6e6f726d616c56616c31, timestamp=T)",
        "=> (column=clusterVal1:clusterVal2:normalfield2, value=6e6f726d616c56616c32, timestamp=T)",
    ];
    let at = listed.iter().position(|l| l == compound[0]).unwrap();
    assert_eq!(listed[at..at + 4], compound[..]);

    let o = run(dir.path(), &["flush", "learn"], None);
    assert!(o.status.success());
    let data = std::fs::read_dir(dir.path().join("learn"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("example2-") && name.ends_with("-Data.db")
        })
        .unwrap();
    let dump = Command::new(env!("CARGO_BIN_EXE_sstable-dump"))
        .arg(data)
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let dumped = lines(&dump);
    assert_eq!(dumped[1..5], compound[..], "{dumped:#?}");
}

/// Seed 002's third example, as the seed writes it.
const COLLECTIONS: &str = include_str!("../../cql/tests/data/seed_002/collections.cql");

#[test]
fn seed_002_collections_list_and_dump_as_the_seed_shows() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        dir.path(),
        &["cql"],
        Some(&format!("{KEYSPACE}{COLLECTIONS}")),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The seed's lines; its list TimeUUIDs (which differ on every run) as `<timeuuid>`.
    let seed = [
        "RowKey: john",
        "=> (column=, value=, timestamp=T)",
        "=> (column=map1:doug, value='555-1579', timestamp=T)",
        "=> (column=map1:patricia, value='555-4326', timestamp=T)",
        "=> (column=list1:<timeuuid>, value='doug', timestamp=T)",
        "=> (column=list1:<timeuuid>, value='scott', timestamp=T)",
        "=> (column=set1:'patricia', value=, timestamp=T)",
        "=> (column=set1:'scott', value=, timestamp=T)",
    ];
    let mut seed = seed.to_vec();
    seed.sort();
    let masked = |lines: Vec<String>| {
        let mut cells: Vec<String> = lines
            .into_iter()
            .filter(|l| l.starts_with("RowKey") || l.starts_with("=> (column="))
            .map(|l| match l.strip_prefix("=> (column=list1:") {
                Some(rest) => {
                    let (uuid, tail) = rest.split_once(',').unwrap();
                    assert_eq!(uuid.len(), 36, "{l}");
                    format!("=> (column=list1:<timeuuid>,{tail}")
                }
                None => l,
            })
            .collect();
        // The seed's listing puts the map first; ours orders names as UTF8Type does.
        cells.sort();
        cells
    };
    let o = run(
        dir.path(),
        &["shell", "-e", "use learn; list example;"],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(masked(lines(&o)), seed);
    let o = run(dir.path(), &["flush", "learn"], None);
    assert!(o.status.success());
    let data = std::fs::read_dir(dir.path().join("learn"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-Data.db"))
        .unwrap();
    let dump = Command::new(env!("CARGO_BIN_EXE_sstable-dump"))
        .arg(data)
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    assert_eq!(masked(lines(&dump)), seed);
}

#[test]
fn statements_run_in_order_and_an_error_stops_at_its_statement() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        dir.path(),
        &["cql", "-e", &format!("{KEYSPACE}CREATE TABLE t (k int PRIMARY KEY, v text); INSERT INTO t (k, v) VALUES (1, 'a'); INSERT INTO t (k, v) VALUES ('x', 'b'); INSERT INTO t (k, v) VALUES (2, 'c');")],
        None,
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    // The first run says it created the database, then the error is one line.
    let (created, err) = err.split_once('\n').unwrap();
    assert!(
        created.starts_with("created a new database at "),
        "{created}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("InvalidRequest: "), "{err}");
    let o = run(
        dir.path(),
        &[
            "cql",
            "-k",
            "learn",
            "-e",
            "SELECT k, v FROM t; SELECT * FROM t WHERE k = 'open",
        ],
        None,
    );
    assert!(!o.status.success());
    assert_eq!(lines(&o), [" k | v", "---+---", " 1 | a", "(1 rows)"]);
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("SyntaxException: line 1:"));
    let o = run(
        dir.path(),
        &["cql", "-k", "learn", "-e", "DESCRIBE TABLE t"],
        None,
    );
    assert_eq!(
        lines(&o),
        [
            "CREATE TABLE learn.t (",
            "    k int,",
            "    v text,",
            "    PRIMARY KEY (k)",
            ");"
        ]
    );
}

#[test]
fn expand_on_prints_each_row_one_field_a_line_as_cqlsh_does() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        dir.path(),
        &["cql"],
        Some(&format!(
            "{KEYSPACE}CREATE TABLE t (k int PRIMARY KEY, value text);
             INSERT INTO t (k, value) VALUES (1, 'a');
             INSERT INTO t (k, value) VALUES (2, 'longer');
             EXPAND;
             EXPAND ON;
             SELECT * FROM t;
             EXPAND off;
             SELECT k FROM t WHERE k = 1;"
        )),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        lines(&o),
        [
            "Expanded output is currently disabled. Use EXPAND ON to enable.",
            "Now Expanded output is enabled",
            "@ Row 1",
            "-------+--------",
            " k     | 1",
            " value | a",
            "@ Row 2",
            "-------+--------",
            " k     | 2",
            " value | longer",
            "(2 rows)",
            "Disabled Expanded output.",
            " k",
            "---",
            " 1",
            "(1 rows)",
        ]
    );
    let o = run(dir.path(), &["cql", "-e", "EXPAND sideways"], None);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("SyntaxException: line 1:8"));
}

#[test]
fn a_database_created_with_murmur3_gives_a_cluster_s_tokens_and_keeps_its_partitioner() {
    let dir = tempfile::tempdir().unwrap();
    let schema = "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE ks.t (k int PRIMARY KEY, v int); INSERT INTO ks.t (k, v) VALUES (1, 1);";
    let o = run(
        dir.path(),
        &["--partitioner", "murmur3", "cql", "-e", schema],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Cassandra's token of the int 1 under Murmur3Partitioner.
    let q = "SELECT k FROM ks.t WHERE token(k) = -4069959284402364209";
    let o = run(dir.path(), &["cql", "-e", q], None);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("(1 rows)"), "{out}");
    let o = run(
        dir.path(),
        &["--partitioner", "random", "cql", "-e", "SELECT * FROM ks.t"],
        None,
    );
    assert!(
        !o.status.success(),
        "another partitioner for an existing database is refused"
    );
    let o = run(
        dir.path(),
        &["--partitioner", "nope", "cql", "-e", "SELECT 1"],
        None,
    );
    assert!(!o.status.success());
}

#[test]
fn help_consistency_and_source_answer_as_cqlsh_does_and_paging_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("d");
    let script = root.path().join("setup.cql");
    std::fs::write(
        &script,
        "CREATE KEYSPACE s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\n\
         CREATE TABLE s.t (k int PRIMARY KEY, v text);\n\
         INSERT INTO s.t (k, v) VALUES (1, 'one');\n",
    )
    .unwrap();
    let input = format!(
        "HELP;\nCONSISTENCY;\nCONSISTENCY quorum;\nCONSISTENCY;\nSOURCE '{}';\nSELECT v FROM s.t;\n",
        script.display()
    );
    let o = run(&dir, &["cql"], Some(&input));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("Documented shell commands:"), "{out}");
    for line in [
        "Current consistency level is ONE.",
        "Consistency level set to QUORUM.",
        "Current consistency level is QUORUM.",
        " one",
    ] {
        assert!(out.contains(line), "{line} not in:\n{out}");
    }
    // A level cqlsh does not know, a missing file, and cqlsh's own paging are errors.
    for bad in [
        "CONSISTENCY sometimes;",
        "SOURCE 'no/such.cql';",
        "PAGING ON;",
    ] {
        let o = run(&dir, &["cql", "-e", bad], None);
        assert!(!o.status.success(), "{bad}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr).lines().count(),
            1,
            "{bad}"
        );
    }
}
