//! A frozen collection is one cell holding the collection's serialized form: it is written,
//! replaced and deleted whole, reads back as cqlsh prints it, survives a flush, a compaction and
//! a reopen, may be a list's element or a map's value, and refuses the element operations only
//! a non-frozen collection has. It orders element by element, so it may also be a key, a
//! clustering column, a set's element or a map's key. What it holds is frozen too, as deep as
//! Cassandra nests collections.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused};
use supercolumn::query::{ColumnParent, SlicePredicate, SliceRange};
use supercolumn::{Database, Options};
use supercolumn_cql::{CqlResult, Session};

const SCHEMA: &str =
    "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; USE ks;
     CREATE TABLE t (k int, c int, l frozen<list<int>>, s frozen<set<text>>,
                     m frozen<map<int, text>>, ll list<frozen<list<int>>>,
                     ms map<text, frozen<set<int>>>, PRIMARY KEY (k, c))";

/// A database in a fresh directory holding table `ks.t`.
fn fresh() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    Session::new(&db).execute(SCHEMA).unwrap();
    (dir, db)
}

/// The rows of a SELECT, each value as cqlsh prints it (`null` for none).
fn shown(cql: &mut Session<'_>, select: &str) -> Vec<Vec<String>> {
    let Some(CqlResult::Rows(r)) = cql.execute(select).unwrap().pop() else {
        panic!("{select} returned no rows");
    };
    r.displayed()
}

/// The partition's cells as the Thrift-era API reads them: (name as `list` prints it, value).
fn cells(db: &Database, key: &[u8]) -> Vec<(String, Vec<u8>)> {
    let def = db.describe_column_family("ks", "t").unwrap();
    db.get_slice(
        "ks",
        key,
        &ColumnParent::new("t"),
        &SlicePredicate::Range(SliceRange::all().count(1000)),
    )
    .unwrap()
    .into_iter()
    .map(|c| {
        let c = c.as_column().unwrap().clone();
        (def.comparator.to_text(&c.name), c.value)
    })
    .collect()
}

#[test]
fn a_frozen_collection_is_one_cell_written_and_read_whole() {
    let (dir, db) = fresh();
    let mut cql = Session::new(&db);
    cql.execute("USE ks").unwrap();
    cql.execute(
        "INSERT INTO t (k, c, l, s, m) VALUES (1, 1, [3, 1, 3], {'b', 'a', 'b'}, {2: 'x', 1: 'y', 2: 'z'})",
    )
    .unwrap();
    let select = "SELECT l, s, m FROM t WHERE k = 1";
    // A list keeps its order and repeats; a set and a map are sorted, a map's last value stands.
    let want = vec![vec![
        "[3, 1, 3]".to_string(),
        "{'a', 'b'}".into(),
        "{1: 'y', 2: 'z'}".into(),
    ]];
    assert_eq!(shown(&mut cql, select), want);
    // One cell each, named `c:column`, holding the serialized collection.
    let int = |v: i32| v.to_be_bytes().to_vec();
    let elem = |b: &[u8]| [int(b.len() as i32), b.to_vec()].concat();
    let list = [int(3), elem(&int(3)), elem(&int(1)), elem(&int(3))].concat();
    let set = [int(2), elem(b"a"), elem(b"b")].concat();
    let map = [int(2), elem(&int(1)), elem(b"y"), elem(&int(2)), elem(b"z")].concat();
    let key = 1i32.to_be_bytes();
    let want_cells = vec![
        ("1:".to_string(), Vec::new()),
        ("1:l".into(), list),
        ("1:m".into(), map),
        ("1:s".into(), set),
    ];
    assert_eq!(cells(&db, &key), want_cells);
    // Replaced whole: what the old value held is gone, with no tombstone to write first.
    cql.execute("UPDATE t SET l = [7], m = {} WHERE k = 1 AND c = 1")
        .unwrap();
    let want = vec![vec!["[7]".to_string(), "{'a', 'b'}".into(), "{}".into()]];
    assert_eq!(shown(&mut cql, select), want);
    // Through a flush, a compaction and a reopen.
    db.flush_all().unwrap();
    db.compact("ks", Some("t")).unwrap();
    drop(cql);
    db.close().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut cql = Session::new(&db);
    cql.execute("USE ks").unwrap();
    assert_eq!(shown(&mut cql, select), want);
    cql.execute("DELETE s FROM t WHERE k = 1 AND c = 1")
        .unwrap();
    let want = vec![vec!["[7]".to_string(), "null".into(), "{}".into()]];
    assert_eq!(shown(&mut cql, select), want);
    // The schema kept beside the column family (what DESCRIBE prints) names the types.
    let def = db.describe_column_family("ks", "t").unwrap();
    let text = def.cql_table.unwrap();
    assert!(text.contains("l frozen<list<int>>"), "{text}");
    assert!(text.contains("ms map<text, frozen<set<int>>>"), "{text}");
}

#[test]
fn frozen_collections_may_be_list_elements_and_map_values() {
    let (_dir, db) = fresh();
    let mut cql = Session::new(&db);
    cql.execute("USE ks").unwrap();
    cql.execute(
        "INSERT INTO t (k, c, ll, ms) VALUES (1, 1, [[1, 2], []], {'a': {3, 1}});
         UPDATE t SET ll = ll + [[5]], ms['b'] = {2} WHERE k = 1 AND c = 1;
         UPDATE t SET ll = [[0]] + ll WHERE k = 1 AND c = 1",
    )
    .unwrap();
    let select = "SELECT ll, ms FROM t WHERE k = 1 AND c = 1";
    let want = vec![vec![
        "[[0], [1, 2], [], [5]]".to_string(),
        "{'a': {1, 3}, 'b': {2}}".into(),
    ]];
    assert_eq!(shown(&mut cql, select), want);
    // An element is removed by its whole value.
    cql.execute("UPDATE t SET ll = ll - [[1, 2]] WHERE k = 1 AND c = 1")
        .unwrap();
    db.flush_all().unwrap();
    let want = vec![vec![
        "[[0], [], [5]]".to_string(),
        "{'a': {1, 3}, 'b': {2}}".into(),
    ]];
    assert_eq!(shown(&mut cql, select), want);
}

#[test]
fn what_a_frozen_collection_cannot_do_is_refused_and_writes_nothing() {
    let (_dir, db) = fresh();
    let mut cql = Session::new(&db);
    cql.execute("USE ks").unwrap();
    cql.execute("INSERT INTO t (k, c, l) VALUES (1, 1, [1])")
        .unwrap();
    for bad in [
        // Element operations belong to non-frozen collections.
        "UPDATE t SET l = l + [2] WHERE k = 1 AND c = 1",
        "UPDATE t SET l[0] = 2 WHERE k = 1 AND c = 1",
        "UPDATE t SET m[1] = 'x' WHERE k = 1 AND c = 1",
        "DELETE l[0] FROM t WHERE k = 1 AND c = 1",
        // A value of the wrong shape.
        "UPDATE t SET l = {1} WHERE k = 1 AND c = 1",
        "UPDATE t SET l = ['a'] WHERE k = 1 AND c = 1",
        "UPDATE t SET l = [null] WHERE k = 1 AND c = 1",
        // Types it cannot hold, and keys it cannot order.
        "CREATE TABLE u (k int PRIMARY KEY, f frozen<int>)",
        "CREATE TABLE u (k frozen<list<duration>> PRIMARY KEY, v int)",
        "CREATE TABLE u (k int PRIMARY KEY, f set<frozen<list<duration>>>)",
    ] {
        assert!(cql.execute(bad).is_err(), "{bad}");
    }
    assert_eq!(
        shown(&mut cql, "SELECT l FROM t WHERE k = 1"),
        [["[1]".to_string()]]
    );
    // A bound value is checked against the frozen type before anything is written.
    let p = cql
        .prepare("UPDATE t SET l = ? WHERE k = 1 AND c = 1")
        .unwrap();
    let bad = [0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1];
    assert!(cql.execute_prepared(&p, &[Some(&bad)]).is_err());
    let good = [0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 9];
    cql.execute_prepared(&p, &[Some(&good)]).unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT l FROM t WHERE k = 1"),
        [["[9]".to_string()]]
    );
    // A frozen column may be added later: it is one more cell, no new comparator.
    cql.execute("ALTER TABLE t ADD f frozen<map<text, int>>")
        .unwrap();
    cql.execute("UPDATE t SET f = {'n': 1} WHERE k = 1 AND c = 1")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT f FROM t WHERE k = 1"),
        [["{'n': 1}".to_string()]]
    );
}

#[test]
fn a_bound_frozen_set_or_map_is_kept_sorted_as_a_literal_is() {
    let (_dir, db) = fresh();
    let mut cql = Session::new(&db);
    cql.execute("USE ks").unwrap();
    let p = cql
        .prepare("UPDATE t SET s = ?, m = ? WHERE k = 1 AND c = 1")
        .unwrap();
    let int = |v: i32| v.to_be_bytes().to_vec();
    let elem = |b: &[u8]| [int(b.len() as i32), b.to_vec()].concat();
    // As a driver might send them: out of order, with a repeat.
    let set = [int(3), elem(b"b"), elem(b"a"), elem(b"b")].concat();
    let map = [int(2), elem(&int(2)), elem(b"x"), elem(&int(1)), elem(b"y")].concat();
    cql.execute_prepared(&p, &[Some(&set), Some(&map)]).unwrap();
    let select = "SELECT s, m FROM t WHERE k = 1";
    let want = vec![vec!["{'a', 'b'}".to_string(), "{1: 'y', 2: 'x'}".into()]];
    assert_eq!(shown(&mut cql, select), want);
    // Equal to the literal, so a condition on it holds; an ordering condition orders element
    // by element.
    let r = cql
        .execute("UPDATE t SET l = [5] WHERE k = 1 AND c = 1 IF s = {'b', 'a'}")
        .unwrap();
    assert!(format!("{r:?}").contains("[applied]"));
    assert_eq!(shown(&mut cql, "SELECT l FROM t WHERE k = 1"), [["[5]"]]);
    cql.execute("UPDATE t SET l = [6] WHERE k = 1 AND c = 1 IF l > [4, 9]")
        .unwrap();
    cql.execute("UPDATE t SET l = [7] WHERE k = 1 AND c = 1 IF l < [6]")
        .unwrap();
    assert_eq!(shown(&mut cql, "SELECT l FROM t WHERE k = 1"), [["[6]"]]);
}

/// A frozen collection orders as Cassandra orders it, element by element with a shorter one
/// first, so it can be a partition key, a clustering column (either order), a set's element
/// and a map's key; a bound one is put in order as a literal is, and all of it survives a
/// flush, a compaction and a reopen.
#[test]
fn frozen_collections_are_keys_clustering_columns_set_elements_and_map_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE p (k frozen<list<int>> PRIMARY KEY, v int);
         CREATE TABLE d (k int, c frozen<set<text>>, v int, PRIMARY KEY (k, c))
             WITH CLUSTERING ORDER BY (c DESC);
         CREATE TABLE a (k int, c frozen<map<int, text>>, v int, PRIMARY KEY (k, c));
         CREATE TABLE e (k int PRIMARY KEY, s set<frozen<list<int>>>, m map<frozen<set<int>>, int>);
         INSERT INTO p (k, v) VALUES ([1, 2], 1); INSERT INTO p (k, v) VALUES ([], 2);
         INSERT INTO d (k, c, v) VALUES (1, {'x'}, 1); INSERT INTO d (k, c, v) VALUES (1, {'y', 'x'}, 2);
         INSERT INTO d (k, c, v) VALUES (1, {'a'}, 3); INSERT INTO d (k, c, v) VALUES (1, {}, 4);
         INSERT INTO a (k, c, v) VALUES (1, {2: 'b'}, 1); INSERT INTO a (k, c, v) VALUES (1, {1: 'z', 3: 'a'}, 2);
         INSERT INTO a (k, c, v) VALUES (1, {1: 'z'}, 3); INSERT INTO a (k, c, v) VALUES (1, {-4: ''}, 4);
         INSERT INTO e (k, s, m) VALUES (1, {[3], [1, 2], [1], [-1, 5]}, {{2, 1}: 5, {}: 6});
         UPDATE e SET s = s - {[1]}, m[{9}] = 7 WHERE k = 1",
    );
    let mut cql = ks_session(&db);
    // A bound set in a clustering key, out of order and repeated as a driver might send it,
    // names the row its literal names.
    let int = |v: i32| v.to_be_bytes().to_vec();
    let elem = |b: &[u8]| [int(b.len() as i32), b.to_vec()].concat();
    let p = cql
        .prepare("UPDATE d SET v = ? WHERE k = 1 AND c = ?")
        .unwrap();
    let set = [int(3), elem(b"y"), elem(b"x"), elem(b"y")].concat();
    cql.execute_prepared(&p, &[Some(&int(20)), Some(&set)])
        .unwrap();
    for select in [
        "SELECT v FROM d WHERE k = 1 AND c = ?",
        "SELECT v FROM d WHERE k = 1 AND c >= ? AND c <= ?",
    ] {
        let p = cql.prepare(select).unwrap();
        let binds: Vec<Option<&[u8]>> = vec![Some(&set); p.markers()];
        let Ok(CqlResult::Rows(r)) = cql.execute_prepared(&p, &binds) else {
            panic!("{select}: no rows");
        };
        assert_eq!(r.displayed(), [["20"]], "{select}");
    }
    // Bound whole, out of order: each frozen element or key is put in order as a literal's is,
    // so removing by literal finds what was added by value and the other way round.
    let add = cql
        .prepare("UPDATE e SET s = s + ?, m = m + ? WHERE k = 2")
        .unwrap();
    let list = |xs: &[i32]| {
        [
            int(xs.len() as i32),
            xs.iter().flat_map(|x| elem(&int(*x))).collect(),
        ]
        .concat()
    };
    let set_of_lists = [int(1), elem(&list(&[2, 1]))].concat();
    let unsorted = [int(2), elem(&int(2)), elem(&int(1))].concat();
    let map = [int(1), elem(&unsorted), elem(&int(8))].concat();
    cql.execute_prepared(&add, &[Some(&set_of_lists), Some(&map)])
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT s, m FROM e WHERE k = 2"),
        [["{[2, 1]}", "{{1, 2}: 8}"]]
    );
    let remove = cql.prepare("UPDATE e SET m = m - ? WHERE k = 2").unwrap();
    let keys = [int(1), elem(&unsorted)].concat();
    cql.execute_prepared(&remove, &[Some(&keys)]).unwrap();
    assert_eq!(shown(&mut cql, "SELECT m FROM e WHERE k = 2"), [["null"]]);
    cql.execute("DELETE FROM e WHERE k = 2").unwrap();
    let check = |cql: &mut Session<'_>| {
        assert_eq!(
            shown(cql, "SELECT k, v FROM p"),
            [["[]", "2"], ["[1, 2]", "1"]].map(|r| r.map(String::from))
        );
        assert_eq!(shown(cql, "SELECT v FROM p WHERE k = [1, 2]"), [["1"]]);
        assert_eq!(
            shown(cql, "SELECT c, v FROM d WHERE k = 1"),
            [
                ["{'x', 'y'}", "20"],
                ["{'x'}", "1"],
                ["{'a'}", "3"],
                ["{}", "4"]
            ]
            .map(|r| r.map(String::from))
        );
        assert_eq!(
            shown(
                cql,
                "SELECT v FROM d WHERE k = 1 AND c > {'a'} AND c <= {'x'}"
            ),
            [["1"]]
        );
        assert_eq!(
            shown(cql, "SELECT v FROM d WHERE k = 1 ORDER BY c ASC LIMIT 2"),
            [["4"], ["3"]]
        );
        assert_eq!(
            shown(cql, "SELECT v FROM a WHERE k = 1"),
            [["4"], ["3"], ["2"], ["1"]]
        );
        assert_eq!(
            shown(cql, "SELECT s, m FROM e WHERE k = 1"),
            [[
                "{[-1, 5], [1, 2], [3]}".to_string(),
                "{{}: 6, {1, 2}: 5, {9}: 7}".to_string()
            ]]
        );
    };
    check(&mut cql);
    db.flush_all().unwrap();
    for t in ["p", "d", "a", "e"] {
        db.compact("ks", Some(t)).unwrap();
    }
    check(&mut cql);
    drop(cql);
    db.close().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut cql = Session::new(&db);
    cql.execute("USE ks").unwrap();
    check(&mut cql);
}

#[test]
fn frozen_collections_nest_as_deep_as_cassandra_nests_them() {
    let dir = tempfile::tempdir().unwrap();
    let schema = "CREATE TABLE pk (k frozen<map<set<int>, list<int>>> PRIMARY KEY, v int);
         CREATE TABLE ck (a int, b frozen<map<set<int>, list<int>>>, c frozen<set<int>>, d int,
             PRIMARY KEY (a, b, c)) WITH CLUSTERING ORDER BY (b DESC, c ASC);
         CREATE TABLE rc (k int PRIMARY KEY, l list<frozen<list<frozen<set<int>>>>>,
             m map<text, frozen<list<list<int>>>>, s set<frozen<map<int, frozen<list<int>>>>>)";
    {
        let db = open_cql(dir.path(), schema);
        let mut cql = ks_session(&db);
        cql.execute("INSERT INTO pk (k, v) VALUES ({{1, 2}: [3, 4], {}: [5]}, 1)")
            .unwrap();
        for (b, c) in [
            ("{}", "{}"),
            ("{{}: [1, 2, 3]}", "{}"),
            ("{{1, 2, 3}: [1, 2, 3]}", "{1, 2, 3}"),
            ("{{4, 5, 6}: [1, 2, 3]}", "{1, 2, 3}"),
        ] {
            cql.execute(&format!(
                "INSERT INTO ck (a, b, c, d) VALUES (0, {b}, {c}, 0)"
            ))
            .unwrap();
        }
        cql.execute(
            "INSERT INTO rc (k, l, m, s) VALUES (0, [[{1}, {}], []], {'a': [[1], [2, 3]]}, \
             {{1: [1]}, {0: []}})",
        )
        .unwrap();
        db.flush_all().unwrap();
    }
    // Reopened: the nested comparators are read back from their stored names.
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut cql = ks_session(&db);
    assert_eq!(
        common::shown(
            &mut cql,
            "SELECT v FROM pk WHERE k = {{}: [5], {1, 2}: [3, 4]}"
        ),
        ["1"]
    );
    assert_eq!(
        common::shown(&mut cql, "SELECT b FROM ck WHERE a = 0"),
        [
            "{{4, 5, 6}: [1, 2, 3]}",
            "{{1, 2, 3}: [1, 2, 3]}",
            "{{}: [1, 2, 3]}",
            "{}"
        ]
    );
    assert_eq!(
        common::shown(
            &mut cql,
            "SELECT b FROM ck WHERE a = 0 AND b < {{1, 2, 3}: [1, 2, 3]}"
        ),
        ["{{}: [1, 2, 3]}", "{}"]
    );
    assert_eq!(
        common::shown(&mut cql, "SELECT l, m, s FROM rc"),
        ["[[{1}, {}], []]|{'a': [[1], [2, 3]]}|{{0: []}, {1: [1]}}"]
    );
    let described = common::shown(&mut cql, "DESCRIBE TABLE rc").join("");
    assert!(
        described.contains("m map<text, frozen<list<frozen<list<int>>>>>"),
        "{described}"
    );
    for (q, says) in [
        (
            "CREATE TABLE bad (k int PRIMARY KEY, t set<set<int>>)",
            "Non-frozen collections are not allowed inside collections: set<set<int>>",
        ),
        (
            "CREATE TABLE bad (k int PRIMARY KEY, t frozen<set<counter>>)",
            "Counters are not allowed inside collections: frozen<set<counter>>",
        ),
        (
            "CREATE TABLE bad (k int PRIMARY KEY, t frozen<text>)",
            "frozen<> is only allowed on collections, tuples, and user-defined types",
        ),
    ] {
        assert_eq!(refused(&mut cql, q), says, "{q}");
    }
}
