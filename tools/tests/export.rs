//! The way out to a cluster, end to end: `supercolumn export` of the seed applications' data
//! (BloggyAppy's column families, Keyspace1's Standard and Super ones) and of CQL tables (every
//! kind of column, collections, TTLs, rows with and without a marker, deleted cells), loaded by
//! cqlsh (`-f`) into a fresh `supercolumn serve`, then every cell compared: value, write time
//! and remaining TTL. cqlsh runs in the client tests' Python environment, made on first use.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// The client tests' Python environment (the driver and cqlsh, made on first use).
#[path = "../../server/tests/support/python.rs"]
mod python;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use supercolumn::comparator::TimeUuidType;
use supercolumn::{
    BatchMutation, ColumnFamilyDef, ColumnPath, Database, KeyspaceDef, Options, TimeUuidGenerator,
    WriteOptions,
};
use supercolumn_cql::{Columns, Session};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supercolumn"))
}

/// The source database: seed-application column families and CQL tables.
fn fill(dir: &Path) {
    let db = Database::open(dir, Options::default()).unwrap();
    db.create_keyspace(
        KeyspaceDef::new("BloggyAppy")
            .with_column_family(ColumnFamilyDef::standard("Authors"))
            .with_column_family(ColumnFamilyDef::standard("BlogEntries"))
            .with_column_family(
                ColumnFamilyDef::standard("TaggedPosts").with_comparator(TimeUuidType),
            ),
    )
    .unwrap();
    let ids = TimeUuidGenerator::for_process();
    let mut b = BatchMutation::new();
    let t0 = 1_374_546_754_299_000i64;
    for (i, (id, name)) in [
        ("phatduckk", "Arin Sarkissian"),
        ("ericflo", "Eric Florenzano"),
    ]
    .into_iter()
    .enumerate()
    {
        let at = WriteOptions::at(t0 + i as i64);
        b.insert(id, ColumnPath::new("Authors").column("name"), name, at);
        b.insert(
            id,
            ColumnPath::new("Authors").column("email"),
            format!("{id}@example.com"),
            at,
        );
    }
    for n in 0..20i64 {
        let slug = format!("post-{n}");
        let at = WriteOptions::at(t0 + 86_400_000_000 * n);
        b.insert(
            &slug,
            ColumnPath::new("BlogEntries").column("title"),
            format!("Post number {n}"),
            at,
        );
        b.insert(
            &slug,
            ColumnPath::new("BlogEntries").column("body"),
            vec![n as u8, 0, 0xff],
            at,
        );
        let id = ids.next(t0 + n);
        b.insert(
            "__notag__",
            ColumnPath::new("TaggedPosts").column(id),
            &slug,
            at,
        );
    }
    db.batch_mutate("BloggyAppy", &b).unwrap();
    let mut b = BatchMutation::new();
    for k in 0..30u32 {
        let key = k.to_be_bytes();
        b.insert(
            key,
            ColumnPath::new("Standard1").column(b"\x00bin"),
            b"v",
            WriteOptions::at(7),
        );
        b.insert(
            key,
            ColumnPath::new("Standard2").column("naïve 'q'"),
            "x",
            WriteOptions::at(8).with_ttl(86_400),
        );
        b.insert(
            key,
            ColumnPath::new("Super1").super_column("sc").column("sub"),
            "y",
            WriteOptions::at(9),
        );
        b.insert(
            key,
            ColumnPath::new("Super1").super_column("sc2").column("sub2"),
            "z",
            WriteOptions::at(10),
        );
    }
    b.remove(
        3u32.to_be_bytes(),
        ColumnPath::new("Standard1").column(b"\x00bin"),
        Some(100),
    );
    db.batch_mutate("Keyspace1", &b).unwrap();

    let mut cql = Session::new(&db);
    cql.execute(
        "CREATE KEYSPACE app WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
         USE app;
         CREATE TABLE everything (k int, c text, i bigint, d double, m decimal, u uuid, b blob,
             t timestamp, f boolean, n inet, v varint, l list<int>, s set<text>, mp map<text, int>,
             PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC);
         CREATE TABLE pairs (a text, b int, x int, y text, PRIMARY KEY ((a, b), x));
         CREATE TABLE frozen (k frozen<set<int>>, c frozen<list<text>>, fl frozen<list<int>>,
             fs frozen<set<text>>, fm frozen<map<text, int>>, nested map<text, frozen<set<int>>>,
             ls list<frozen<map<int, text>>>, PRIMARY KEY (k, c));
         CREATE TABLE expiring (k int PRIMARY KEY, v int) WITH default_time_to_live = 100000;
         CREATE TABLE keyed (a ascii, s smallint, t tinyint, tm time, dt date, tu timeuuid,
             i inet, f float, PRIMARY KEY ((a, s), t, tm, dt, tu, i));
         INSERT INTO keyed (a, s, t, tm, dt, tu, i, f) VALUES ('ascii', -3, 7, '08:12:54.123456789',
             '2011-02-03', 50554d6e-29bb-11e5-b345-feff819cdc9f, '::1', 1.5);
         INSERT INTO keyed (a, s, t, tm, dt, tu, i, f) VALUES ('b', 32767, -128, 0, '1970-01-01',
             50554d6e-29bb-11e5-b345-feff819cdc9f, '192.168.0.1', NaN);
         INSERT INTO frozen (k, c, fl, fs, fm, nested, ls) VALUES ({1, 2}, ['a', 'it''s'], [3, 4],
             {'x'}, {'m': 5}, {'n': {6, 7}}, [{1: 'one'}, {}]);
         INSERT INTO frozen (k, c, fl) VALUES ({}, [], []);
         INSERT INTO expiring (k, v) VALUES (1, 1) USING TTL 0;
         INSERT INTO expiring (k, v) VALUES (2, 2);
         CREATE TABLE statics (k int, c int, v text, s text static, sl list<int> static,
             PRIMARY KEY (k, c));
         INSERT INTO statics (k, c, v, s) VALUES (1, 1, 'one', 'shared') USING TIMESTAMP 5;
         INSERT INTO statics (k, c, v) VALUES (1, 2, 'two');
         UPDATE statics USING TTL 80000 SET sl = sl + [1, 2] WHERE k = 1;
         INSERT INTO statics (k, s) VALUES (2, 'alone');
         CREATE TABLE typed (k int PRIMARY KEY, d duration, ld list<duration>, p tuple<int, text>,
             lp list<frozen<tuple<int, text>>>, ldec list<decimal>, e vector<float, 3>);
         INSERT INTO typed (k, d, ld, p, lp, ldec, e) VALUES (1, 1h30m, [-2d, P1M], (7, 'it''s'),
             [(1, 'a'), (2, null)], [1.50, -3], [0.5, -1, 2.25]);
         INSERT INTO typed (k, d) VALUES (2, 0s);
         CREATE TABLE counts (k text, c int, n counter, m counter, PRIMARY KEY (k, c));
         UPDATE counts SET n = n + 5, m = m - 2 WHERE k = 'a' AND c = 1;
         UPDATE counts SET n = n + 7 WHERE k = 'b' AND c = 2;
         UPDATE counts SET n = n + 1 WHERE k = 'b' AND c = 2;
         CREATE TYPE addr (street text, zip int, tags set<text>);
         CREATE TYPE pers (name text, home frozen<addr>, \"Nick\" text);
         ALTER TYPE addr ADD city text;
         CREATE TABLE udts (k frozen<addr>, c frozen<pers>, p frozen<pers>,
             l list<frozen<addr>>, m map<text, frozen<addr>>, t tuple<int, frozen<addr>>,
             PRIMARY KEY (k, c));
         INSERT INTO udts (k, c, p, l, m, t) VALUES ({street: 'it''s', zip: -1, tags: {'a'}},
             {name: 'Ann'}, {name: 'Bo', home: {zip: 5, city: 'X'}, \"Nick\": 'b'},
             [{zip: 1}, {street: 's'}], {'w': {tags: {}}}, (3, {zip: 3})) USING TTL 70000;
         INSERT INTO udts (k, c) VALUES ({zip: 2}, {name: null});
         CREATE TYPE pt (x int, y text);
         CREATE TABLE nf (k int PRIMARY KEY, a pt);
         INSERT INTO nf (k, a) VALUES (1, {x: 1, y: 'a'}) USING TIMESTAMP 100;
         UPDATE nf USING TIMESTAMP 200 AND TTL 60000 SET a.y = 'b' WHERE k = 1;
         UPDATE nf SET a.x = 3 WHERE k = 2;
         CREATE TABLE redo (k int PRIMARY KEY, v int, w text, x list<int>);
         INSERT INTO redo (k, v, w, x) VALUES (1, 1, 'dropped', [1]);
         ALTER TABLE redo DROP w;
         ALTER TABLE redo DROP x;
         ALTER TABLE redo ADD w text;
         INSERT INTO redo (k, w) VALUES (2, 'after');
         CREATE TABLE ranged (k int, c int, v text, PRIMARY KEY (k, c));
         INSERT INTO ranged (k, c, v) VALUES (1, 0, 'kept'); INSERT INTO ranged (k, c, v) VALUES (1, 1, 'gone');
         INSERT INTO ranged (k, c, v) VALUES (1, 2, 'gone'); INSERT INTO ranged (k, c, v) VALUES (1, 3, 'kept');
         DELETE FROM ranged WHERE k = 1 AND c >= 1 AND c < 3;
         CREATE TABLE deep (k vector<int, 2>, c frozen<map<set<int>, list<int>>>,
             l list<frozen<list<frozen<set<text>>>>>, PRIMARY KEY (k, c));
         INSERT INTO deep (k, c, l) VALUES ([1, 2], {{1, 2}: [3], {}: []}, [[{'a'}], []]);
         INSERT INTO deep (k, c) VALUES ([-1, 0], {});
         CREATE INDEX ON everything (i);
         CREATE INDEX by_set ON everything (values(s));
         CREATE CUSTOM INDEX ON statics (s) USING 'StorageAttachedIndex';",
    )
    .unwrap();
    for k in 0..40 {
        cql.execute(&format!(
            "INSERT INTO everything (k, c, i, d, m, u, b, t, f, n, v, l, s, mp)
             VALUES ({k}, 'c{k}', {}, {k}.5, 12.{k}, 5132b130-ae79-11e4-ab27-0800200c9a66, 0x{k:02x},
             {}, true, '10.0.0.{k}', -{k}00000000000000000000, [3, 1, {k}], {{'b', 'a'}}, {{'k': {k}}})
             USING TIMESTAMP {}",
            i64::MAX - k,
            1_374_546_754_000i64 + k,
            1000 + k
        ))
        .unwrap();
    }
    cql.execute("UPDATE everything USING TTL 90000 SET d = 1.25 WHERE k = 1 AND c = 'c1'; UPDATE everything SET l = l + [9] WHERE k = 2 AND c = 'c2'; DELETE i FROM everything WHERE k = 3 AND c = 'c3'; DELETE FROM everything WHERE k = 4 AND c = 'c4'; UPDATE everything SET i = 5 WHERE k = 99 AND c = 'no marker'; INSERT INTO everything (k, c) VALUES (98, 'marker only'); INSERT INTO pairs (a, b, x, y) VALUES ('p', 1, 2, 'q'); UPDATE everything SET d = NaN WHERE k = 5 AND c = 'c5'")
        .unwrap();
    drop(cql);
    db.close().unwrap();
}

/// Starts `serve` on a free port; returns the child and its port.
fn serve(dir: &Path) -> (std::process::Child, u16) {
    let mut child = bin()
        .arg("--data")
        .arg(dir)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // Log lines may come first; the port is on the line that says the server is up.
    let line = lines
        .by_ref()
        .map(Result::unwrap)
        .find(|l| l.starts_with("supercolumn: serving CQL"))
        .unwrap();
    let port = line.rsplit(':').next().unwrap().trim().parse().unwrap();
    std::thread::spawn(move || lines.for_each(drop));
    (child, port)
}

/// A query's columns and rows, sorted.
struct Read {
    columns: Columns,
    rows: Vec<Vec<Option<Vec<u8>>>>,
}

/// Every row of a query, each value with its write time and TTL where it has one.
fn read(db: &Database, q: &str) -> Read {
    let got = Session::new(db).query(q).unwrap();
    let mut rows = got.to_vecs();
    rows.sort();
    Read {
        columns: got.columns().clone(),
        rows,
    }
}

#[test]
fn an_export_loaded_by_cqlsh_gives_every_cell_back_with_its_time_and_ttl() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    fill(src.path());
    let file = src.path().join("export.cql");
    let out = bin()
        .arg("--data")
        .arg(src.path())
        .arg("export")
        .arg("--out")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("'c4'"), "a deleted row is not exported");
    assert!(!text.contains("'dropped'"), "nor a dropped column's value");
    assert!(!text.contains("'gone'"), "nor a row under a range deletion");

    // A destination without the default Keyspace1, as a fresh cluster has none.
    let empty = Options::default().with_keyspaces(Vec::new());
    Database::open(dst.path(), empty).unwrap().close().unwrap();
    let (mut server, port) = serve(dst.path());
    let load = Command::new(python::python())
        .args(["-m", "cqlshlib", "127.0.0.1", &port.to_string(), "-f"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&load.stderr);
    assert!(
        load.status.success() && !stderr.contains("rror"),
        "cqlsh: {stderr}"
    );
    Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(server.wait().unwrap().success());

    let a = Database::open(src.path(), Options::default()).unwrap();
    let b = Database::open(dst.path(), Options::default()).unwrap();
    // The Thrift-era column families, read the same way on both sides: as the CQL tables
    // the export made, on the destination; through the API, on the source.
    for (ks, cf, sup, cells) in [
        ("BloggyAppy", "Authors", false, 4),
        ("BloggyAppy", "BlogEntries", false, 40),
        ("BloggyAppy", "TaggedPosts", false, 20),
        ("Keyspace1", "Standard1", false, 29),
        ("Keyspace1", "Standard2", false, 30),
        ("Keyspace1", "Super1", true, 60),
    ] {
        let cols = if sup {
            "key, column1, column2, value, writetime(value), ttl(value)"
        } else {
            "key, column1, value, writetime(value), ttl(value)"
        };
        let got = read(&b, &format!("SELECT {cols} FROM \"{ks}\".\"{cf}\""));
        let want = thrift_cells(&a, ks, cf, sup);
        assert_eq!((got.rows.len(), want.len()), (cells, cells), "{ks}.{cf}");
        for (g, w) in got.rows.iter().zip(&want) {
            let n = g.len();
            assert_eq!(g[..n - 1], w[..n - 1], "{ks}.{cf}");
            close_ttl(&g[n - 1], &w[n - 1]);
        }
    }
    // CQL tables: every row, and every scalar column's write time and TTL.
    for (q, rows) in [
        ("SELECT * FROM app.everything", 41),
        ("SELECT k, c, writetime(i), writetime(d), ttl(d), writetime(b), writetime(n) FROM app.everything", 41),
        ("SELECT * FROM app.pairs", 1),
        ("SELECT a, b, x, writetime(y) FROM app.pairs", 1),
        // Frozen collections, in keys and values, and nested: before, exported as hex that
        // cqlsh could not load.
        ("SELECT * FROM app.frozen", 2),
        ("SELECT k, c, writetime(fl), writetime(fm) FROM app.frozen", 2),
        // A cell written with TTL 0 in a table whose writes expire by default stays
        // permanent; before, the load gave it the default TTL.
        ("SELECT k, v, ttl(v) FROM app.expiring", 2),
        // Every other scalar type, in keys.
        ("SELECT * FROM app.keyed", 2),
        // Static columns, shared by rows and alone in a partition.
        ("SELECT * FROM app.statics", 3),
        // Rows outside a range deletion.
        ("SELECT * FROM app.ranged", 2),
        ("SELECT k, c, writetime(s), writetime(v), ttl(s) FROM app.statics", 3),
        // Durations, tuples and lists of decimals.
        ("SELECT * FROM app.typed", 2),
        // User types: created before the tables naming them, values as literals, in keys,
        // collections and tuples.
        ("SELECT * FROM app.udts", 2),
        ("SELECT k, c, writetime(p), ttl(p), writetime(t) FROM app.udts", 2),
        ("SELECT type_name, field_names, field_types FROM system_schema.types WHERE keyspace_name = 'app'", 3),
        // A non-frozen one, field by field (each its own time and TTL).
        ("SELECT k, a FROM app.nf", 2),
        // A column dropped and added again: what it held before stays gone.
        ("SELECT * FROM app.redo", 2),
        ("SELECT k, writetime(v), writetime(w) FROM app.redo", 2),
        // Vectors in keys, frozen collections nested in keys and lists.
        ("SELECT * FROM app.deep", 2),
        ("SELECT k, c, writetime(l) FROM app.deep", 2),
        // Counters, loaded by adding their counts.
        ("SELECT * FROM app.counts", 2),
        // Indexes come along, built over the rows loaded.
        ("SELECT k, c FROM app.everything WHERE i = 5", 1),
        ("SELECT k, c FROM app.everything WHERE s CONTAINS 'a'", 39),
        ("SELECT k, c, s FROM app.statics WHERE s = 'alone'", 1),
        ("SELECT index_name, kind, options FROM system_schema.indexes WHERE keyspace_name = 'app'", 3),
    ] {
        let (x, y) = (read(&a, q), read(&b, q));
        assert_eq!((x.rows.len(), y.rows.len()), (rows, rows), "{q}");
        for (rx, ry) in x.rows.iter().zip(&y.rows) {
            for (i, ((name, _), (vx, vy))) in x.columns.iter().zip(rx.iter().zip(ry)).enumerate() {
                if name.starts_with("ttl") {
                    close_ttl(vx, vy);
                } else {
                    assert_eq!(vx, vy, "{q}: column {i} ({name}) of {rx:?}");
                }
            }
        }
    }
}

/// TTLs a few seconds apart (the export and the load take time).
fn close_ttl(a: &Option<Vec<u8>>, b: &Option<Vec<u8>>) {
    let t = |v: &Option<Vec<u8>>| {
        v.as_ref()
            .map(|b| i32::from_be_bytes(b[..4].try_into().unwrap()))
    };
    match (t(a), t(b)) {
        (Some(x), Some(y)) => assert!((x - y).abs() <= 30, "TTL {x} vs {y}"),
        (x, y) => assert_eq!(x, y),
    }
}

/// A Thrift-era column family's live cells as rows of key, name(s), value, write time, TTL.
fn thrift_cells(db: &Database, ks: &str, cf: &str, sup: bool) -> Vec<Vec<Option<Vec<u8>>>> {
    use supercolumn::{ColumnOrSuperColumn, ColumnParent, KeyRange, SlicePredicate};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let mut range = KeyRange::all();
    range.count = 100_000;
    let rows = db
        .get_range_slices(
            ks,
            &ColumnParent::new(cf),
            &SlicePredicate::everything(),
            &range,
        )
        .unwrap();
    let mut out = Vec::new();
    for r in rows {
        for item in r.columns {
            let cells: Vec<(Option<Vec<u8>>, supercolumn::Column)> = match item {
                ColumnOrSuperColumn::Column(c) => vec![(None, c)],
                ColumnOrSuperColumn::SuperColumn(s) => s
                    .columns
                    .into_iter()
                    .map(|c| (Some(s.name.clone()), c))
                    .collect(),
            };
            for (sc, c) in cells {
                let mut row = vec![Some(r.key.clone())];
                if sup {
                    row.push(sc);
                }
                row.push(Some(c.name));
                row.push(Some(c.value));
                row.push(Some(c.timestamp.to_be_bytes().to_vec()));
                row.push(
                    c.expires_at
                        .map(|e| ((e - now) as i32).to_be_bytes().to_vec()),
                );
                out.push(row);
            }
        }
    }
    out.sort();
    out
}
