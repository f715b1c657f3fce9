use super::*;
use supercolumn::query::{ColumnParent, SlicePredicate, SliceRange};
use supercolumn::Database;
use supercolumn::Options;

fn open(dir: &std::path::Path) -> Database {
    Database::open(dir, Options::default()).unwrap()
}

fn setup(cql: &mut Session<'_>) {
    cql.execute(
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; USE ks;",
    )
    .unwrap();
}

/// The cells of a row as the shell's `list` prints names and values: `(name, hex value)`.
fn cells(db: &Database, cf: &str, key: &[u8]) -> Vec<(String, String)> {
    let def = db.describe_column_family("ks", cf).unwrap();
    db.get_slice(
        "ks",
        key,
        &ColumnParent::new(cf),
        &SlicePredicate::Range(SliceRange::all().count(1000)),
    )
    .unwrap()
    .into_iter()
    .map(|c| {
        let c = c.as_column().unwrap().clone();
        (
            def.comparator.to_text(&c.name),
            supercolumn::comparator::builtin::to_hex(&c.value),
        )
    })
    .collect()
}

#[test]
fn seed_002_simple_table_is_stored_as_the_seed_shows() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    setup(&mut cql);
    cql.execute(
        "CREATE TABLE example (
            field1 int PRIMARY KEY,
            field2 int,
            field3 int);
        INSERT INTO example (field1, field2, field3) VALUES (1,2,3);
        INSERT INTO example (field1, field2, field3) VALUES (4,5,6);
        INSERT INTO example (field1, field2, field3) VALUES (7,8,9);",
    )
    .unwrap();
    assert_eq!(
        cells(&db, "example", &[0, 0, 0, 1]),
        [
            ("".to_string(), "".to_string()),
            ("field2".into(), "00000002".into()),
            ("field3".into(), "00000003".into())
        ]
    );
    let def = db.describe_column_family("ks", "example").unwrap();
    assert_eq!(
        def.key_validation_class.unwrap().to_text(&[0, 0, 0, 4]),
        "4"
    );
    let rows = cql.query("SELECT * FROM example WHERE field1 = 4").unwrap();
    assert_eq!(rows.to_table(), " field1 | field2 | field3\n--------+--------+--------\n      4 |      5 |      6\n\n(1 rows)");
    assert_eq!(
        cql.query("SELECT * FROM example").unwrap().to_vecs().len(),
        3
    );
    assert_eq!(
        cql.query("SELECT COUNT(*) FROM example").unwrap().to_vecs(),
        [vec![Some(3i64.to_be_bytes().to_vec())]]
    );
}

#[test]
fn seed_002_compound_key_is_stored_as_the_seed_shows() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    setup(&mut cql);
    cql.execute(
        "CREATE TABLE example (
            partitionKey1 text,
            partitionKey2 text,
            clusterKey1 text,
            clusterKey2 text,
            normalField1 text,
            normalField2 text,
            PRIMARY KEY (
                (partitionKey1, partitionKey2),
                clusterKey1, clusterKey2
                )
            );
        INSERT INTO example (
            partitionKey1,
            partitionKey2,
            clusterKey1,
            clusterKey2,
            normalField1,
            normalField2
            ) VALUES (
            'partitionVal1',
            'partitionVal2',
            'clusterVal1',
            'clusterVal2',
            'normalVal1',
            'normalVal2');",
    )
    .unwrap();
    let def = db.describe_column_family("ks", "example").unwrap();
    let key =
        supercolumn::comparator::CompositeType::build(&[b"partitionVal1", b"partitionVal2"], 0);
    assert_eq!(
        def.key_validation_class.unwrap().to_text(&key),
        "partitionVal1:partitionVal2"
    );
    assert_eq!(
        cells(&db, "example", &key),
        [
            ("clusterVal1:clusterVal2:".to_string(), "".to_string()),
            (
                "clusterVal1:clusterVal2:normalfield1".into(),
                "6e6f726d616c56616c31".into()
            ),
            (
                "clusterVal1:clusterVal2:normalfield2".into(),
                "6e6f726d616c56616c32".into()
            )
        ]
    );
}

#[test]
fn tables_survive_reopen_and_read_through_clustering_slices() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        let mut cql = Session::new(&db);
        setup(&mut cql);
        cql.execute("CREATE TABLE t (k text, c int, v bigint, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)")
            .unwrap();
        for c in 0..2500 {
            cql.execute(&format!(
                "INSERT INTO t (k, c, v) VALUES ('a', {c}, {})",
                c * 10
            ))
            .unwrap();
        }
        db.flush_all().unwrap();
        cql.execute("UPDATE t SET v = -1 WHERE k = 'a' AND c IN (5, 7); DELETE FROM t WHERE k = 'a' AND c = 6")
            .unwrap();
        db.close().unwrap();
    }
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    cql.execute("USE ks").unwrap();
    let ints = |rows: Rows| -> Vec<i32> {
        rows.to_vecs()
            .iter()
            .map(|r| i32::from_be_bytes(r[0].clone().unwrap().try_into().unwrap()))
            .collect()
    };
    // DESC clustering: storage order is newest first; pages of 1000 cells are stitched.
    let all = ints(cql.query("SELECT c FROM t WHERE k = 'a'").unwrap());
    assert_eq!(all.len(), 2499);
    assert_eq!(&all[..3], [2499, 2498, 2497]);
    assert_eq!(
        ints(
            cql.query("SELECT c FROM t WHERE k = 'a' AND c > 3 AND c <= 8 ORDER BY c ASC")
                .unwrap()
        ),
        [4, 5, 7, 8]
    );
    assert_eq!(
        ints(
            cql.query("SELECT c FROM t WHERE k = 'a' AND c < 3")
                .unwrap()
        ),
        [2, 1, 0]
    );
    assert_eq!(
        ints(cql.query("SELECT c FROM t WHERE k = 'a' LIMIT 2").unwrap()),
        [2499, 2498]
    );
    let v = cql
        .query("SELECT v FROM t WHERE k = 'a' AND c = 7")
        .unwrap();
    assert_eq!(v.to_vecs(), [vec![Some((-1i64).to_be_bytes().to_vec())]]);
    assert!(cql
        .query("SELECT * FROM t WHERE k = 'a' AND c = 6")
        .unwrap()
        .to_vecs()
        .is_empty());
    let e = cql.query("SELECT * FROM t WHERE v = 3").unwrap_err();
    assert!(e.to_string().contains("ALLOW FILTERING"), "{e}");
    assert_eq!(
        cql.query("SELECT c FROM t WHERE v = -1 ALLOW FILTERING")
            .unwrap()
            .to_vecs()
            .len(),
        2
    );
}

#[test]
fn writes_that_cannot_be_honoured_are_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    setup(&mut cql);
    cql.execute("CREATE TABLE t (k int PRIMARY KEY, v text)")
        .unwrap();
    for bad in [
        "INSERT INTO t (k, v) VALUES (1, 'x') IF NOT EXISTS USING TIMESTAMP 5",
        "BEGIN BATCH INSERT INTO t (k, v) VALUES (1, 'x') IF NOT EXISTS USING TIMESTAMP 5 APPLY BATCH",
        "INSERT INTO t (v) VALUES ('x')",
        "INSERT INTO t (k, v) VALUES ('one', 'x')",
        "INSERT INTO t (k, nope) VALUES (1, 'x')",
        "UPDATE t SET k = 2 WHERE k = 1",
        "BEGIN BATCH INSERT INTO t (k, v) VALUES (1, 'a'); INSERT INTO t (k, v) VALUES (2, 3) APPLY BATCH",
        "CREATE TABLE m (k int PRIMARY KEY, m frozen<int>)",
        "CREATE TABLE m (k frozen<list<duration>> PRIMARY KEY, v int)",
        "CREATE TABLE m (k int PRIMARY KEY, m map<text, list<int>>)",
        "SELECT * FROM nosuch",
    ] {
        assert!(cql.execute(bad).is_err(), "{bad}");
    }
    assert!(
        cql.query("SELECT * FROM t").unwrap().to_vecs().is_empty(),
        "nothing of a refused batch was written"
    );
    assert!(matches!(
        cql.execute("CREATE TABLE t (k int PRIMARY KEY)"),
        Err(CqlError::AlreadyExists(_))
    ));
    assert!(matches!(
        cql.execute("SELECT * FROM nosuch"),
        Err(CqlError::Unconfigured(_))
    ));
}

#[test]
fn prepared_statements_bind_serialized_values_without_a_keyspace_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    setup(&mut cql);
    cql.execute("CREATE TABLE w (k blob, c bigint, v blob, PRIMARY KEY (k, c))")
        .unwrap();
    let insert = cql
        .prepare("INSERT INTO w (k, c, v) VALUES (?, ?, ?)")
        .unwrap();
    let slice = cql
        .prepare("SELECT c FROM w WHERE k = ? ORDER BY c DESC LIMIT ?")
        .unwrap();
    let scan = cql
        .prepare("SELECT k FROM w WHERE token(k) > token(?)")
        .unwrap();
    assert_eq!((insert.markers(), slice.markers()), (3, 2));
    // A fresh session, no USE: the prepared statements carry their keyspace.
    let mut other = Session::new(&db);
    let cs: Vec<[u8; 8]> = (0..5i64).map(|c| c.to_be_bytes()).collect();
    let rows: Vec<[Option<&[u8]>; 3]> = cs
        .iter()
        .map(|c| [Some(&b"k"[..]), Some(&c[..]), Some(&b"v"[..])])
        .collect();
    let refs: Vec<&[Option<&[u8]>]> = rows.iter().map(|r| &r[..]).collect();
    other.execute_batch(&insert, &refs).unwrap();
    other
        .execute_prepared(&insert, &[Some(b"j"), Some(&9i64.to_be_bytes()), None])
        .unwrap();
    let CqlResult::Rows(r) = other
        .execute_prepared(&slice, &[Some(b"k"), Some(&2i32.to_be_bytes())])
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(
        r.to_vecs(),
        [
            vec![Some(4i64.to_be_bytes().to_vec())],
            vec![Some(3i64.to_be_bytes().to_vec())]
        ]
    );
    assert!(
        other
            .execute_prepared(&insert, &[Some(b"k"), Some(b"not8"), None])
            .is_err(),
        "a bigint is 8 bytes"
    );
    assert!(
        other.execute_prepared(&slice, &[Some(b"k")]).is_err(),
        "one value short"
    );
    // token(k) > token(j) leaves out j and keeps k, or the reverse, as their tokens order them.
    let CqlResult::Rows(after_j) = other.execute_prepared(&scan, &[Some(b"j")]).unwrap() else {
        panic!()
    };
    let CqlResult::Rows(after_k) = other.execute_prepared(&scan, &[Some(b"k")]).unwrap() else {
        panic!()
    };
    assert!(after_j
        .to_vecs()
        .iter()
        .all(|r| r[0].as_deref() != Some(b"j")));
    assert!(after_k
        .to_vecs()
        .iter()
        .all(|r| r[0].as_deref() != Some(b"k")));
    assert!(
        after_j.to_vecs().is_empty() != after_k.to_vecs().is_empty(),
        "exactly one of the two partitions comes after the other"
    );
}

#[test]
fn ttl_and_writetime_answer_from_the_cells() {
    let dir = tempfile::tempdir().unwrap();
    // On a whole second (a write between seconds counts from the whole second it is in, as
    // Cassandra's).
    let clock = std::sync::Arc::new(supercolumn::ManualClock::new(1_374_546_754_000_000));
    let db = Database::open(dir.path(), Options::default().with_clock(clock.clone())).unwrap();
    let mut cql = Session::new(&db);
    setup(&mut cql);
    cql.execute("CREATE TABLE t (k int PRIMARY KEY, a text, b text)")
        .unwrap();
    cql.execute("INSERT INTO t (k, a, b) VALUES (1, 'x', 'y') USING TTL 100 AND TIMESTAMP 42")
        .unwrap();
    cql.execute("UPDATE t SET b = 'z' WHERE k = 1").unwrap();
    clock.advance_micros(30_000_000);
    let r = cql
        .query("SELECT TTL(a), TTL(b), WRITETIME(a) FROM t WHERE k = 1")
        .unwrap();
    assert_eq!(
        r.to_table(),
        " ttl(a) | ttl(b) | writetime(a)\n--------+--------+--------------\n     70 |   null |           42\n\n(1 rows)"
    );
    assert!(
        cql.execute("SELECT TTL(k) FROM t").is_err(),
        "a key has no TTL"
    );
    clock.advance_micros(70_000_000);
    // The marker and a expired with the TTL; b, written later without one, keeps the row.
    let r = cql.query("SELECT a, b FROM t WHERE k = 1").unwrap();
    assert_eq!(r.to_vecs(), [vec![None, Some(b"z".to_vec())]]);
    // Between seconds, TTL() right after the write is the TTL given, never one more (as
    // Cassandra's), and it counts down from there.
    clock.advance_micros(400_000);
    cql.execute("INSERT INTO t (k, a) VALUES (2, 'x') USING TTL 3600")
        .unwrap();
    let ttl =
        |cql: &mut Session| ints_at(&cql.query("SELECT TTL(a) FROM t WHERE k = 2").unwrap(), 0);
    assert_eq!(ttl(&mut cql), [3600]);
    clock.advance_micros(1_000_000);
    assert_eq!(ttl(&mut cql), [3599]);
}

/// The `int` values of column `i` of a result.
fn ints_at(rows: &Rows, i: usize) -> Vec<i32> {
    rows.to_vecs()
        .iter()
        .map(|r| i32::from_be_bytes(r[i].clone().unwrap().try_into().unwrap()))
        .collect()
}

#[test]
fn in_on_clustering_columns_reads_each_row_once_in_clustering_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    setup(&mut cql);
    cql.execute("CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))")
        .unwrap();
    for c in 1..=3 {
        cql.execute(&format!("INSERT INTO t (k, c, v) VALUES (0, {c}, {c})"))
            .unwrap();
    }
    let q = |cql: &mut Session<'_>, w: &str| {
        ints_at(
            &cql.query(&format!("SELECT c FROM t WHERE k = 0 AND {w}"))
                .unwrap(),
            0,
        )
    };
    assert_eq!(q(&mut cql, "c IN (3, 1, 2)"), [1, 2, 3]);
    assert_eq!(q(&mut cql, "c IN (1, 1)"), [1]);
    assert_eq!(q(&mut cql, "c IN (3, 1) LIMIT 1"), [1]);
    assert_eq!(q(&mut cql, "c IN (1, 2, 3) ORDER BY c DESC"), [3, 2, 1]);
    assert_eq!(q(&mut cql, "c IN (1, 2, 3) PER PARTITION LIMIT 1"), [1]);
    assert_eq!(
        cql.query("SELECT COUNT(*) FROM t WHERE k = 0 AND c IN (1, 1, 2)")
            .unwrap()
            .to_vecs(),
        [vec![Some(2i64.to_be_bytes().to_vec())]]
    );
    assert_eq!(
        cql.query("SELECT k FROM t WHERE k IN (0, 0)")
            .unwrap()
            .to_vecs()
            .len(),
        3
    );
    assert_eq!(
        cql.query("SELECT DISTINCT k FROM t WHERE k IN (0, 0)")
            .unwrap()
            .to_vecs()
            .len(),
        1
    );
    // An empty range is no rows, not an error.
    for w in ["c > 2 AND c < 1", "c > 2 AND c < 2", "c >= 2 AND c < 2"] {
        assert!(q(&mut cql, w).is_empty(), "{w}");
    }
    assert_eq!(q(&mut cql, "c >= 2 AND c <= 2"), [2]);
    for bad in ["c > 1 AND c > 2", "c = 1 AND c = 2"] {
        assert!(
            cql.query(&format!("SELECT c FROM t WHERE k = 0 AND {bad}"))
                .is_err(),
            "{bad}"
        );
    }
    assert!(cql.query("SELECT c FROM t WHERE k = 0 AND k = 1").is_err());
}

#[test]
fn a_prepared_statement_refuses_a_table_dropped_and_created_again_differently() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    setup(&mut cql);
    cql.execute("CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))")
        .unwrap();
    let insert = cql
        .prepare("INSERT INTO t (k, c, v) VALUES (?, ?, ?)")
        .unwrap();
    let one = 1i32.to_be_bytes();
    cql.execute_prepared(&insert, &[Some(&one), Some(&one), Some(&one)])
        .unwrap();
    cql.execute("DROP TABLE t; CREATE TABLE t (k int, c text, v text, PRIMARY KEY (k, c))")
        .unwrap();
    let e = cql
        .execute_prepared(&insert, &[Some(&one), Some(&one), Some(&one)])
        .unwrap_err();
    assert!(e.to_string().contains("prepare it again"), "{e}");
    assert!(
        cql.query("SELECT * FROM t").unwrap().to_vecs().is_empty(),
        "nothing was written"
    );
}

#[test]
fn names_that_are_keywords_survive_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    cql.execute("CREATE KEYSPACE \"if\" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").unwrap();
    cql.execute("CREATE TABLE \"if\".t (k int PRIMARY KEY, \"select\" int, \"not\" int)")
        .unwrap();
    cql.execute("INSERT INTO \"if\".t (k, \"select\", \"not\") VALUES (1, 2, 3)")
        .unwrap();
    let r = cql
        .query("SELECT \"select\", \"not\" FROM \"if\".t WHERE k = 1")
        .unwrap();
    assert_eq!((ints_at(&r, 0), ints_at(&r, 1)), (vec![2], vec![3]));
    cql.execute("CREATE TABLE \"if\".d (k int PRIMARY KEY, x decimal)")
        .unwrap();
    cql.execute("INSERT INTO \"if\".d (k, x) VALUES (1, 2.5)")
        .unwrap();
    let r = cql
        .query("SELECT k FROM \"if\".d WHERE x > 2 ALLOW FILTERING")
        .unwrap();
    assert_eq!(ints_at(&r, 0), vec![1]);
}

/// The rows of a SELECT, each value as cqlsh shows it (`null` for none).
fn shown(cql: &mut Session<'_>, select: &str) -> Vec<Vec<String>> {
    let Some(CqlResult::Rows(r)) = cql.execute(select).unwrap().pop() else {
        panic!("{select} returned no rows");
    };
    r.displayed()
}

#[test]
fn seed_002_collections_are_stored_as_the_seed_shows_and_replace_what_they_held() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    setup(&mut cql);
    cql.execute(include_str!("../tests/data/seed_002/collections.cql"))
        .unwrap();
    let got = cells(&db, "example", b"john");
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[0], "");
    assert_eq!(
        &names[3..],
        [
            "map1:doug",
            "map1:patricia",
            "set1:'patricia'",
            "set1:'scott'"
        ]
    );
    assert!(names[1].starts_with("list1:") && names[2].starts_with("list1:"));
    let values: Vec<&str> = got.iter().map(|(_, v)| v.as_str()).collect();
    // 'doug', 'scott', '555-1579', '555-4326', then the sets' empty values.
    assert_eq!(
        values,
        [
            "",
            "646f7567",
            "73636f7474",
            "3535352d31353739",
            "3535352d34333236",
            "",
            ""
        ]
    );
    let all = "SELECT key1, map1, list1, set1 FROM example";
    assert_eq!(
        shown(&mut cql, all),
        [[
            "john",
            "{'doug': '555-1579', 'patricia': '555-4326'}",
            "['doug', 'scott']",
            "{'patricia', 'scott'}"
        ]]
    );
    // A new value replaces the whole collection (a range tombstone just before the write), and
    // a deleted collection reads as null, through a flush and a compaction.
    cql.execute("UPDATE example SET list1 = ['x'], map1 = {'a': 'b'} WHERE key1 = 'john'")
        .unwrap();
    db.flush("ks", None).unwrap();
    cql.execute("DELETE set1 FROM example WHERE key1 = 'john'")
        .unwrap();
    db.compact("ks", None).unwrap();
    assert_eq!(
        shown(&mut cql, all),
        [["john", "{'a': 'b'}", "['x']", "null"]]
    );
    // Elements come back in the collection's order: a set<int> by value, a list by insertion.
    cql.execute(
        "CREATE TABLE nums (k int PRIMARY KEY, s set<int>, l list<int>);
         INSERT INTO nums (k, s, l) VALUES (1, {5, -3, 5, 0}, [5, -3, 5, 0])",
    )
    .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT s, l FROM nums WHERE k = 1"),
        [["{-3, 0, 5}", "[5, -3, 5, 0]"]]
    );
}

#[test]
fn a_bound_collection_value_is_checked_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    setup(&mut cql);
    cql.execute("CREATE TABLE t (k int PRIMARY KEY, m map<text, int>)")
        .unwrap();
    let insert = cql.prepare("INSERT INTO t (k, m) VALUES (1, ?)").unwrap();
    let good = types::serialize([(&b"a"[..], Some(&[0u8, 0, 0, 7][..]))].into_iter());
    cql.execute_prepared(&insert, &[Some(&good)]).unwrap();
    assert_eq!(shown(&mut cql, "SELECT m FROM t"), [["{'a': 7}"]]);
    for (bad, why) in [
        (vec![0, 0, 0, 9], "a count the bytes cannot hold"),
        (
            types::serialize([(&b"a"[..], Some(&[7u8][..]))].into_iter()),
            "a 1-byte int",
        ),
        (
            [good.clone(), vec![1]].concat(),
            "bytes after the last element",
        ),
    ] {
        let e = cql.execute_prepared(&insert, &[Some(&bad)]).unwrap_err();
        assert!(e.to_string().contains("invalid"), "{why}: {e}");
    }
    assert_eq!(shown(&mut cql, "SELECT m FROM t"), [["{'a': 7}"]]);
}

#[test]
fn collection_operations_that_cannot_apply_are_refused_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = Session::new(&db);
    setup(&mut cql);
    cql.execute(
        "CREATE TABLE t (k int PRIMARY KEY, v int, l list<int>, s set<int>, m map<int, int>);
         INSERT INTO t (k, v, l, s, m) VALUES (1, 0, [7], {1}, {1: 1})",
    )
    .unwrap();
    for (bad, why) in [
        (
            "UPDATE t SET l[1] = 5 WHERE k = 1",
            "List index 1 out of bound, list has size 1",
        ),
        (
            "UPDATE t SET s = {2} + s WHERE k = 1",
            "Invalid operation (s = {2} + s) for non list column s",
        ),
        (
            "UPDATE t SET s[1] = 2 WHERE k = 1",
            "Invalid operation (s[1] = 2) for set column s",
        ),
        (
            "UPDATE t SET v = v + 1 WHERE k = 1",
            "Invalid operation (v = v + 1) for non counter column v",
        ),
        (
            "UPDATE t SET l = [1] + m WHERE k = 1",
            "a list prepends to itself",
        ),
    ] {
        let e = cql.execute(bad).unwrap_err().to_string();
        assert!(e.contains(why), "{bad}: {e}");
    }
    // Adding or taking away null is no change, as in Cassandra.
    cql.execute("UPDATE t SET m = m + null, l = l - null WHERE k = 1")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT v, l, s, m FROM t"),
        [["0", "[7]", "{1}", "{1: 1}"]]
    );
}
