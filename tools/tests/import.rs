//! `supercolumn import`: a 100,000-row CSV into a CQL table, read back and compared row by
//! row; lines that cannot be read reported by number with nothing of them written; an export
//! file loaded into a fresh database gives every row back; a directory a server holds is
//! imported into by that server.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::Path;

use supercolumn::{Database, Options};
use supercolumn_cql::Session;

mod common;
use common::{serve, stop, supercolumn};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const SCHEMA: &str =
    "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; \
    CREATE TABLE ks.t (k int, c text, n bigint, s text, l list<int>, PRIMARY KEY (k, c));";

/// Every row of `ks.t`, sorted, as text.
fn rows(dir: &Path) -> Vec<String> {
    let db = Database::open(dir, Options::default()).unwrap();
    let got = Session::new(&db)
        .query("SELECT k, c, n, s, l FROM ks.t")
        .unwrap();
    let mut out: Vec<String> = got.to_vecs().iter().map(|r| format!("{r:?}")).collect();
    out.sort();
    out
}

#[test]
fn a_100k_row_csv_is_imported_whole_and_reads_back_as_written() {
    let root = tempfile::tempdir().unwrap();
    let (dir, csv) = (root.path().join("d"), root.path().join("rows.csv"));
    assert!(supercolumn(&dir, &["cql", "-e", SCHEMA]).status.success());
    // A header, quoted fields holding the delimiter and quotes, nulls, negative numbers.
    let mut body = String::from("k,c,n,s,l\n");
    for i in 0..100_000i64 {
        let l = if i % 3 == 0 {
            String::new()
        } else {
            format!("\"[{i}, {}]\"", -i)
        };
        writeln!(
            body,
            "{i},c{},{},\"text, \"\"{i}\"\"\",{l}",
            i % 7,
            i * 1_000_003 - 7
        )
        .unwrap();
    }
    std::fs::write(&csv, body).unwrap();
    let o = supercolumn(
        &dir,
        &[
            "import",
            "--table",
            "ks.t",
            "--header",
            csv.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("Imported 100000 rows"),
        "{}",
        text(&o.stderr)
    );
    // The same rows written by CQL statements into another database read back the same.
    let other = root.path().join("e");
    assert!(supercolumn(&other, &["cql", "-e", SCHEMA]).status.success());
    let db = Database::open(&other, Options::default()).unwrap();
    let mut s = Session::new(&db);
    let insert = s
        .prepare("INSERT INTO ks.t (k, c, n, s, l) VALUES (?, ?, ?, ?, ?)")
        .unwrap();
    for i in 0..100_000i64 {
        let (k, c) = ((i as i32).to_be_bytes(), format!("c{}", i % 7));
        let (n, st) = ((i * 1_000_003 - 7).to_be_bytes(), format!("text, \"{i}\""));
        let l = (i % 3 != 0).then(|| {
            let mut v = 2i32.to_be_bytes().to_vec();
            for e in [i as i32, -i as i32] {
                v.extend(4i32.to_be_bytes());
                v.extend(e.to_be_bytes());
            }
            v
        });
        let values = [
            Some(&k[..]),
            Some(c.as_bytes()),
            Some(&n[..]),
            Some(st.as_bytes()),
            l.as_deref(),
        ];
        s.execute_prepared(&insert, &values).unwrap();
    }
    drop(s);
    db.close().unwrap();
    let (imported, written) = (rows(&dir), rows(&other));
    assert_eq!(imported.len(), 100_000);
    assert!(imported == written, "the imported rows differ");
}

#[test]
fn lines_that_cannot_be_read_are_reported_and_the_rest_written() {
    let root = tempfile::tempdir().unwrap();
    let (dir, csv) = (root.path().join("d"), root.path().join("rows.csv"));
    assert!(supercolumn(&dir, &["cql", "-e", SCHEMA]).status.success());
    let body = "1|a|10|x|[1]\n\
                two|b|20|y|\n\
                3|c|30|z|[3\n\
                4||40|w|\n\
                5|e|50\n\
                6|f|NULL|v|NULL\n";
    std::fs::write(&csv, body).unwrap();
    let o = supercolumn(
        &dir,
        &[
            "import",
            "--table",
            "ks.t",
            "--delimiter",
            "|",
            "--columns",
            "k,c,n,s,l",
            "--null",
            "NULL",
            csv.to_str().unwrap(),
        ],
    );
    let err = text(&o.stderr);
    assert!(!o.status.success(), "{err}");
    for line in [2, 3, 4, 5] {
        assert!(
            err.contains(&format!("rows.csv:{line}: rejected")),
            "{line}: {err}"
        );
    }
    assert!(err.contains("Imported 2 rows"), "{err}");
    let got = rows(&dir);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].starts_with("[Some([0, 0, 0, 1])"), "{got:?}");
    // Line 6's nulls are nulls.
    assert!(got[1].ends_with("None, Some([118]), None]"), "{got:?}");
}

#[test]
fn an_export_file_imported_into_a_fresh_database_gives_every_row_back() {
    let root = tempfile::tempdir().unwrap();
    let (dir, dump, fresh) = (
        root.path().join("d"),
        root.path().join("dump.cql"),
        root.path().join("f"),
    );
    let mut statements = String::from(SCHEMA);
    for i in 0..500 {
        write!(
            statements,
            " INSERT INTO ks.t (k, c, n, s, l) VALUES ({i}, 'c{i}', {}, 's{i}', [{i}]);",
            i * 3
        )
        .unwrap();
    }
    assert!(supercolumn(&dir, &["cql", "-e", &statements])
        .status
        .success());
    let o = supercolumn(&dir, &["export", "--out", dump.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = supercolumn(&fresh, &["import", dump.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(rows(&fresh), rows(&dir));
    assert_eq!(rows(&fresh).len(), 500);
}

#[test]
fn a_csv_import_refuses_a_directory_without_a_database() {
    let root = tempfile::tempdir().unwrap();
    let (dir, csv) = (root.path().join("none"), root.path().join("rows.csv"));
    std::fs::write(&csv, "1,a,1,x,\n").unwrap();
    let o = supercolumn(&dir, &["import", "--table", "ks.t", csv.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(!dir.exists(), "a database was created");
}

#[test]
fn a_directory_a_server_holds_is_imported_into_by_the_server() {
    let root = tempfile::tempdir().unwrap();
    let (dir, csv) = (root.path().join("d"), root.path().join("rows.csv"));
    assert!(supercolumn(&dir, &["cql", "-e", SCHEMA]).status.success());
    let mut body = String::new();
    for i in 0..2_000 {
        writeln!(body, "{i};c{i};{};s{i};[{i}]", i * 3).unwrap();
    }
    body.push_str("bad;c;1;s;\n2001;c;x;s;\n");
    std::fs::write(&csv, body).unwrap();
    let (server, admin) = serve(&dir);
    let admin = admin.to_string();
    let import = |dir: &Path, port: &str| {
        supercolumn(
            dir,
            &[
                "import",
                "--port",
                port,
                "--table",
                "ks.t",
                "--delimiter",
                ";",
                "--columns",
                "k,c,n,s,l",
                csv.to_str().unwrap(),
            ],
        )
    };
    // Another directory's server is not asked to import into its own.
    let other = root.path().join("other");
    assert!(supercolumn(&other, &["cql", "-e", SCHEMA]).status.success());
    let (other_server, other_admin) = serve(&other);
    let o = import(&dir, &other_admin.to_string());
    assert!(
        text(&o.stderr).contains(&format!("serves {}", other.display())),
        "{}",
        text(&o.stderr)
    );
    stop(other_server);
    let o = import(&dir, &admin);
    let err = text(&o.stderr);
    assert!(!o.status.success(), "two lines are bad: {err}");
    assert!(
        err.contains("rows.csv:2001: rejected") && err.contains("rows.csv:2002: rejected"),
        "{err}"
    );
    assert!(err.contains("Imported 2000 rows"), "{err}");
    // A file of bad lines: the server keeps and sends back 1,000 of them, and counts them all.
    let bad: String = (0..1_500).map(|i| format!("x{i};c;1;s;\n")).collect();
    std::fs::write(&csv, bad).unwrap();
    let err = text(&import(&dir, &admin).stderr);
    assert_eq!(err.matches(": rejected: ").count(), 1_000, "{err}");
    assert!(err.contains("… and 500 more lines rejected"), "{err}");
    assert!(
        err.contains("Imported 0 rows") && err.contains("1500 lines rejected"),
        "{err}"
    );
    stop(server);
    let got = rows(&dir);
    assert_eq!(got.len(), 2_000);
    assert!(
        got.iter().any(|r| r.starts_with("[Some([0, 0, 7, 207])")),
        "{:?}",
        &got[..3]
    );
}
