//! Prepared statements answer exactly as the same statements typed out: a point insert, a read
//! of one CQL row by its primary key and a slice of one partition take a fast path planned at
//! prepare time, and every
//! value that path cannot take (a null or empty key, a value of the wrong type, a table dropped
//! since) must come out as the text statement's answer or error would.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use supercolumn::{Database, Options};
use supercolumn_cql::{CqlError, CqlResult, Prepared, Session};

fn open(dir: &std::path::Path) -> Database {
    let db = Database::open(dir, Options::default()).unwrap();
    Session::new(&db)
        .execute(
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; USE ks;
             CREATE TABLE t (a int, b text, c bigint, d blob, v text, w int, PRIMARY KEY ((a, b), c, d));
             CREATE TABLE p (k blob PRIMARY KEY, v blob)",
        )
        .unwrap();
    db
}

/// A session on `ks`, with a point insert and read of table `p` prepared.
fn point(db: &Database) -> (Session<'_>, Prepared, Prepared) {
    let mut cql = Session::new(db);
    cql.execute("USE ks").unwrap();
    let insert = cql.prepare("INSERT INTO p (k, v) VALUES (?, ?)").unwrap();
    let read = cql.prepare("SELECT v FROM p WHERE k = ?").unwrap();
    (cql, insert, read)
}

fn run(
    cql: &mut Session<'_>,
    p: &Prepared,
    values: &[Option<&[u8]>],
) -> Result<CqlResult, CqlError> {
    cql.execute_prepared(p, values)
}

fn rows(
    cql: &mut Session<'_>,
    p: &Prepared,
    values: &[Option<&[u8]>],
) -> Vec<Vec<Option<Vec<u8>>>> {
    match run(cql, p, values).unwrap() {
        CqlResult::Rows(r) => r.to_vecs(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_prepared_point_insert_and_read_match_the_typed_statements() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    cql.execute("USE ks").unwrap();
    let insert = cql
        .prepare("INSERT INTO t (a, b, c, d, v, w) VALUES (?, ?, ?, ?, ?, ?)")
        .unwrap();
    let i = |n: i32| n.to_be_bytes();
    let l = |n: i64| n.to_be_bytes();
    run(
        &mut cql,
        &insert,
        &[
            Some(&i(1)),
            Some(b"x"),
            Some(&l(7)),
            Some(b"\x00\x01"),
            Some(b"hello"),
            Some(&i(5)),
        ],
    )
    .unwrap();
    // A null regular column deletes it; a literal key part comes from the statement.
    let partial = cql
        .prepare("INSERT INTO t (a, b, c, d, v, w) VALUES (1, 'x', ?, ?, ?, ?)")
        .unwrap();
    run(
        &mut cql,
        &partial,
        &[Some(&l(8)), Some(b""), None, Some(&i(6))],
    )
    .unwrap();
    let typed = cql
        .query("SELECT v, w, c, WRITETIME(v), a, v FROM t WHERE a = 1 AND b = 'x' AND c = 7 AND d = 0x0001")
        .unwrap();
    let read = cql
        .prepare(
            "SELECT v, w, c, WRITETIME(v), a, v FROM t WHERE a = ? AND b = ? AND c = ? AND d = ?",
        )
        .unwrap();
    let got = rows(
        &mut cql,
        &read,
        &[Some(&i(1)), Some(b"x"), Some(&l(7)), Some(b"\x00\x01")],
    );
    assert_eq!(got, typed.to_vecs());
    assert_eq!(got[0][0].as_deref(), Some(&b"hello"[..]));
    assert_eq!(
        got[0][5].as_deref(),
        Some(&b"hello"[..]),
        "a column selected twice"
    );
    let star = cql
        .prepare("SELECT * FROM t WHERE a = 1 AND b = 'x' AND c = ? AND d = ?")
        .unwrap();
    let got = rows(&mut cql, &star, &[Some(&l(8)), Some(b"")]);
    assert_eq!(
        got,
        cql.query("SELECT * FROM t WHERE a = 1 AND b = 'x' AND c = 8 AND d = 0x")
            .unwrap()
            .to_vecs()
    );
    assert_eq!(got[0][4], None, "the null column");
    // A row that is not there, and one whose only cell is its marker.
    assert!(rows(
        &mut cql,
        &read,
        &[Some(&i(2)), Some(b"x"), Some(&l(7)), Some(b"\x00\x01")]
    )
    .is_empty());
    let marker_only = cql
        .prepare("INSERT INTO t (a, b, c, d) VALUES (?, ?, ?, ?)")
        .unwrap();
    run(
        &mut cql,
        &marker_only,
        &[Some(&i(3)), Some(b"y"), Some(&l(1)), Some(b"z")],
    )
    .unwrap();
    assert_eq!(
        rows(
            &mut cql,
            &read,
            &[Some(&i(3)), Some(b"y"), Some(&l(1)), Some(b"z")]
        ),
        [vec![
            None,
            None,
            Some(l(1).to_vec()),
            None,
            Some(i(3).to_vec()),
            None
        ]]
    );
}

#[test]
fn values_a_plan_cannot_take_get_the_typed_statements_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let (mut cql, insert, read) = point(&db);
    let e = run(&mut cql, &insert, &[None, Some(b"v")]).unwrap_err();
    assert!(
        e.to_string()
            .contains("Invalid null value for partition key part k"),
        "{e}"
    );
    let e = run(&mut cql, &insert, &[Some(b""), Some(b"v")]).unwrap_err();
    assert!(e.to_string().contains("key may not be empty"), "{e}");
    let e = run(&mut cql, &read, &[None]).unwrap_err();
    assert!(
        e.to_string()
            .contains("Invalid null value for partition key part k"),
        "{e}"
    );
    let typed = Session::new(&db)
        .execute("SELECT v FROM ks.p WHERE k = 0x")
        .map(|_| ());
    assert_eq!(
        run(&mut cql, &read, &[Some(b"")]).map(|_| ()).is_err(),
        typed.is_err()
    );
    let wrong = cql
        .prepare("INSERT INTO t (a, b, c, d) VALUES (?, 'x', 1, 0x00)")
        .unwrap();
    let e = run(&mut cql, &wrong, &[Some(b"abc")]).unwrap_err();
    assert!(e.to_string().contains("invalid value for a"), "{e}");
    // Nothing of a refused statement was written.
    assert!(cql.query("SELECT * FROM p").unwrap().to_vecs().is_empty());
    assert!(cql.query("SELECT * FROM t").unwrap().to_vecs().is_empty());
}

#[test]
fn a_planned_statement_of_a_dropped_table_asks_to_be_prepared_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let (mut cql, insert, read) = point(&db);
    run(&mut cql, &insert, &[Some(b"k"), Some(b"v")]).unwrap();
    cql.execute("DROP TABLE p; CREATE TABLE p (k blob PRIMARY KEY, v int)")
        .unwrap();
    for (p, values) in [
        (&insert, &[Some(&b"k"[..]), Some(&b"v"[..])][..]),
        (&read, &[Some(&b"k"[..])][..]),
    ] {
        let e = run(&mut cql, p, values).unwrap_err();
        assert!(matches!(e, CqlError::Stale(_)), "{e}");
    }
    let batch = [&[Some(&b"k"[..]), Some(&b"v"[..])][..]];
    let e = cql.execute_batch(&insert, &batch).unwrap_err();
    assert!(matches!(e, CqlError::Stale(_)), "{e}");
    assert!(cql.query("SELECT * FROM p").unwrap().to_vecs().is_empty());
}

#[test]
fn get_columns_reads_named_columns_of_a_standard_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    db.create_keyspace(
        supercolumn::schema::KeyspaceDef::new("K")
            .with_column_family(supercolumn::schema::ColumnFamilyDef::standard("S")),
    )
    .unwrap();
    let mut b = supercolumn::BatchMutation::new();
    for (n, v) in [("a", "1"), ("b", "2"), ("c", "3")] {
        b.insert(
            "row",
            supercolumn::ColumnPathRef::new("S").column(n.as_bytes()),
            v,
            supercolumn::WriteOptions::now(),
        );
    }
    db.batch_mutate("K", &b).unwrap();
    db.remove(
        "K",
        "row",
        &supercolumn::ColumnPath::new("S").column("b"),
        None,
    )
    .unwrap();
    let got = db
        .get_columns("K", "row", "S", &["c", "b", "a", "zz"])
        .unwrap();
    let names: Vec<&[u8]> = got.iter().map(|c| c.name.as_slice()).collect();
    assert_eq!(names, [&b"a"[..], b"c"], "live ones, in name order");
    assert!(
        db.get_columns("K", "", "S", &["a"]).is_err(),
        "an empty key"
    );
    assert!(
        db.get_columns("K", "row", "S", &[""]).is_err(),
        "an empty name"
    );
    assert!(db.get_columns("K", "row", "Nope", &["a"]).is_err());
}

#[test]
fn named_markers_are_numbered_with_the_others_and_reported_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    cql.execute("USE ks").unwrap();
    // A named marker is a position like `?` (Cassandra's numbering), planned like one.
    let insert = cql
        .prepare("INSERT INTO t (a, b, c, d, v) VALUES (:a, ?, :Cee, ?, :v) USING TTL :life")
        .unwrap();
    let names: Vec<String> = insert.bind_columns().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["a", "b", "cee", "d", "v", "life"]);
    let one = 1i32.to_be_bytes();
    let c = 7i64.to_be_bytes();
    let ttl = 3600i32.to_be_bytes();
    run(
        &mut cql,
        &insert,
        &[
            Some(&one),
            Some(b"x"),
            Some(&c),
            Some(b"\x01"),
            Some(b"hello"),
            Some(&ttl),
        ],
    )
    .unwrap();
    let read = cql
        .prepare("SELECT v, ttl(v) FROM t WHERE a = :a AND b = :b AND c >= :low")
        .unwrap();
    let got = rows(&mut cql, &read, &[Some(&one), Some(b"x"), Some(&c)]);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0][0].as_deref(), Some(&b"hello"[..]));
    let left = i32::from_be_bytes(got[0][1].as_deref().unwrap().try_into().unwrap());
    assert!((3595..=3600).contains(&left), "ttl {left}");
    // Named markers count among the statement's markers.
    let e = run(&mut cql, &read, &[Some(&one), Some(b"x")]).unwrap_err();
    assert!(e.to_string().contains("3 bind markers"), "{e}");
}

/// The rows a typed statement returns.
fn typed(cql: &mut Session<'_>, text: &str) -> Vec<Vec<Option<Vec<u8>>>> {
    cql.query(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .to_vecs()
}

#[test]
fn a_prepared_slice_of_a_partition_matches_the_typed_statements() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    cql.execute(
        "USE ks;
         CREATE TABLE r (k int, c int, v text, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)",
    )
    .unwrap();
    // Clustering values with zero bytes (escaped in sort keys), negatives, rows that only
    // have their marker, a TTL, a deleted row, and a flush between two halves.
    for (c, d, v, w) in [
        (0i64, "00", "'zero'", "1"),
        (-5, "0000", "'minus'", "2"),
        (256, "", "'big'", "3"),
        (7, "01", "'seven'", "4"),
        (7, "0100", "'seven b'", "5"),
    ] {
        cql.execute(&format!(
            "INSERT INTO t (a, b, c, d, v, w) VALUES (1, 'x', {c}, 0x{d}, {v}, {w})"
        ))
        .unwrap();
    }
    db.flush_all().unwrap();
    cql.execute(
        "INSERT INTO t (a, b, c, d) VALUES (1, 'x', 3, 0x02);
         INSERT INTO t (a, b, c, d, v) VALUES (1, 'x', 9, 0x00, 'ttl') USING TTL 5000;
         INSERT INTO t (a, b, c, d, v) VALUES (1, 'y', 1, 0x01, 'other partition');
         DELETE FROM t WHERE a = 1 AND b = 'x' AND c = 256 AND d = 0x;
         INSERT INTO r (k, c, v) VALUES (1, 1, 'a'); INSERT INTO r (k, c, v) VALUES (1, 2, 'b');
         INSERT INTO r (k, c, v) VALUES (1, 3, 'c')",
    )
    .unwrap();
    let i = |n: i32| n.to_be_bytes().to_vec();
    let l = |n: i64| n.to_be_bytes().to_vec();
    let cases: Vec<(&str, &str, Vec<Vec<u8>>)> = vec![
        (
            "SELECT * FROM t WHERE a = ? AND b = ?",
            "SELECT * FROM t WHERE a = 1 AND b = 'x'",
            vec![i(1), b"x".to_vec()],
        ),
        (
            "SELECT c, d, v, writetime(v), ttl(v), v, a FROM t WHERE a = ? AND b = ? AND c >= ? ORDER BY c DESC LIMIT ?",
            "SELECT c, d, v, writetime(v), ttl(v), v, a FROM t WHERE a = 1 AND b = 'x' AND c >= 0 ORDER BY c DESC LIMIT 3",
            vec![i(1), b"x".to_vec(), l(0), i(3)],
        ),
        (
            "SELECT d, w FROM t WHERE a = ? AND b = ? AND c = ? AND d > ? LIMIT 5",
            "SELECT d, w FROM t WHERE a = 1 AND b = 'x' AND c = 7 AND d > 0x01 LIMIT 5",
            vec![i(1), b"x".to_vec(), l(7), vec![1]],
        ),
        (
            "SELECT * FROM t WHERE a = ? AND b = ? AND c > ? AND c < ?",
            "SELECT * FROM t WHERE a = 1 AND b = 'x' AND c > 5 AND c < 1",
            vec![i(1), b"x".to_vec(), l(5), l(1)],
        ),
        (
            "SELECT c, v FROM r WHERE k = ?",
            "SELECT c, v FROM r WHERE k = 1",
            vec![i(1)],
        ),
        (
            "SELECT c, v FROM r WHERE k = ? AND c <= ? ORDER BY c ASC LIMIT ?",
            "SELECT c, v FROM r WHERE k = 1 AND c <= 2 ORDER BY c ASC LIMIT 1",
            vec![i(1), i(2), l(1)],
        ),
    ];
    for (prepared, text, values) in &cases {
        let p = cql.prepare(prepared).unwrap();
        let values: Vec<Option<&[u8]>> = values.iter().map(|v| Some(&v[..])).collect();
        let want = typed(&mut cql, text);
        assert_eq!(rows(&mut cql, &p, &values), want, "{prepared}");
    }
    // The whole partition, as the typed statement reads it: marker-only rows included, the
    // deleted row gone.
    assert_eq!(
        typed(&mut cql, "SELECT c FROM t WHERE a = 1 AND b = 'x'").len(),
        6
    );
    // A limit the plan cannot take gets the typed statement's error.
    let p = cql
        .prepare("SELECT * FROM t WHERE a = ? AND b = ? LIMIT ?")
        .unwrap();
    let err = run(&mut cql, &p, &[Some(&i(1)), Some(b"x"), Some(&i(0))]).unwrap_err();
    assert!(
        err.to_string().contains("LIMIT must be strictly positive"),
        "{err}"
    );
}

#[test]
fn a_prepared_text_batch_types_each_marker_by_its_statement_s_table() {
    use supercolumn_cql::CqlType;
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    cql.execute("USE ks; CREATE TABLE q (k int PRIMARY KEY, v bigint)")
        .unwrap();
    let p = cql
        .prepare("BEGIN BATCH INSERT INTO q (k, v) VALUES (?, ?); UPDATE t SET v = :v WHERE a = ? AND b = ? AND c = ? AND d = ? APPLY BATCH")
        .unwrap();
    let got: Vec<(String, String, CqlType)> = p.bound_markers();
    let want = [
        ("k", "k", CqlType::Int),
        ("v", "v", CqlType::Bigint),
        ("v", "v", CqlType::Text),
        ("a", "a", CqlType::Int),
        ("b", "b", CqlType::Text),
        ("c", "c", CqlType::Bigint),
        ("d", "d", CqlType::Blob),
    ];
    assert_eq!(
        got,
        want.map(|(n, c, t)| (n.to_string(), c.to_string(), t))
            .to_vec()
    );
    // A batch naming a column its table lacks is refused at PREPARE, as Cassandra does.
    assert!(cql
        .prepare("BEGIN BATCH INSERT INTO q (k, nope) VALUES (?, ?) APPLY BATCH")
        .is_err());
}
