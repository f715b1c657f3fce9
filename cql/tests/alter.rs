//! `ALTER TABLE … ADD`: a column added to a table with data reads as null in the rows written
//! before it, takes values from then on, shows in `DESCRIBE`, and survives a reopen.
//! A collection column added later holds its elements as cells under the names a table
//! created with it would use, also in a table that had none (its cell names' comparator gains
//! a last component) and across a flush, a compaction and a reopen.
//! `ALTER TABLE … RENAME` renames primary key columns over the data already written. What
//! either cannot do is refused with a clear error and leaves the table as it was.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql};
use supercolumn::{Database, Options};
use supercolumn_cql::{CqlResult, Session};

fn rows(cql: &mut Session<'_>, q: &str) -> Vec<Vec<Option<Vec<u8>>>> {
    match cql.execute(q).unwrap().pop().unwrap() {
        CqlResult::Rows(r) => r.to_vecs(),
        other => panic!("{other:?}"),
    }
}

fn int(v: i32) -> Option<Vec<u8>> {
    Some(v.to_be_bytes().to_vec())
}

#[test]
fn an_added_column_is_null_before_and_written_after_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open_cql(
            dir.path(),
            "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c));
             INSERT INTO t (k, c, v) VALUES (1, 1, 10);",
        );
        let mut cql = ks_session(&db);
        let insert_before = cql
            .prepare("INSERT INTO t (k, c, v) VALUES (?, ?, ?)")
            .unwrap();
        let r = cql.execute("ALTER TABLE t ADD w int").unwrap();
        assert!(
            matches!(&r[0], CqlResult::SchemaChange(s) if s == "UPDATED TABLE ks.t"),
            "{r:?}"
        );
        cql.execute("ALTER TABLE ks.t ADD (x text, y bigint)")
            .unwrap();
        cql.execute("INSERT INTO t (k, c, v, w, x) VALUES (1, 2, 20, 200, 'two')")
            .unwrap();
        // A statement prepared before the change still writes what it names.
        cql.execute_prepared(
            &insert_before,
            &[
                Some(&1i32.to_be_bytes()),
                Some(&3i32.to_be_bytes()),
                Some(&30i32.to_be_bytes()),
            ],
        )
        .unwrap();
        assert_eq!(
            rows(&mut cql, "SELECT c, v, w, x, y FROM t WHERE k = 1"),
            vec![
                vec![int(1), int(10), None, None, None],
                vec![int(2), int(20), int(200), Some(b"two".to_vec()), None],
                vec![int(3), int(30), None, None, None],
            ]
        );
        db.flush_all().unwrap();
    }
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut cql = Session::new(&db);
    cql.execute("USE ks").unwrap();
    assert_eq!(
        rows(&mut cql, "SELECT w, x FROM t WHERE k = 1 AND c = 2"),
        vec![vec![int(200), Some(b"two".to_vec())]]
    );
    let def = db.describe_column_family("ks", "t").unwrap();
    let stored = def.cql_table.unwrap();
    assert!(
        stored.contains("w int") && stored.contains("x text") && stored.contains("y bigint"),
        "{stored}"
    );
}

#[test]
fn what_alter_cannot_do_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), "CREATE TABLE t (k int PRIMARY KEY, v int)");
    let mut cql = ks_session(&db);
    let before = db.describe_column_family("ks", "t").unwrap().cql_table;
    for (statement, says) in [
        ("ALTER TABLE t ADD v text", "already exists"),
        ("ALTER TABLE t ADD k int", "already exists"),
        ("ALTER TABLE t ADD (a int, a text)", "already exists"),
        (
            "ALTER TABLE t ADD m map<duration, text>",
            "not allowed as map keys",
        ),
        (
            "ALTER TABLE t ADD m list<list<int>>",
            "Non-frozen collections are not allowed inside collections",
        ),
        ("ALTER TABLE nope ADD a int", "nope"),
        ("ALTER TABLE t DROP k", "Cannot drop PRIMARY KEY column k"),
        ("ALTER TABLE t WITH nope = 1", "unknown table option"),
        ("ALTER TABLE t RENAME v TO w", "non PRIMARY KEY"),
        ("ALTER TABLE t RENAME k TO v", "already exists"),
        ("ALTER TABLE t RENAME nope TO x", "nope"),
        (
            "ALTER ROLE r WITH PASSWORD = 'x'",
            "TABLE, KEYSPACE or TYPE",
        ),
    ] {
        let e = cql.execute(statement).unwrap_err().to_string();
        assert!(e.contains(says), "{statement}: {e}");
    }
    assert_eq!(
        db.describe_column_family("ks", "t").unwrap().cql_table,
        before
    );
}

#[test]
fn renamed_key_columns_read_the_data_written_under_their_old_names() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open_cql(
            dir.path(),
            "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c));
             INSERT INTO t (k, c, v) VALUES (1, 2, 10);",
        );
        let mut cql = ks_session(&db);
        db.flush_all().unwrap();
        cql.execute("ALTER TABLE t RENAME k TO id AND c TO seq")
            .unwrap();
        cql.execute("INSERT INTO t (id, seq, v) VALUES (1, 3, 30)")
            .unwrap();
        let got = rows(&mut cql, "SELECT seq, v FROM t WHERE id = 1 AND seq >= 2");
        assert_eq!(got, [vec![int(2), int(10)], vec![int(3), int(30)]]);
        assert!(cql.execute("SELECT k FROM t WHERE id = 1").is_err());
        db.close().unwrap();
    }
    // The new names are what the catalog keeps.
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut cql = ks_session(&db);
    let got = rows(
        &mut cql,
        "SELECT id, seq, v FROM t WHERE id = 1 AND seq = 2",
    );
    assert_eq!(got, [vec![int(1), int(2), int(10)]]);
    let stored = db.describe_column_family("ks", "t").unwrap().cql_table;
    assert!(
        stored.unwrap().contains("PRIMARY KEY (id, seq)"),
        "the stored schema names the new columns"
    );
}

/// The rows of a SELECT as cqlsh prints them.
fn shown(cql: &mut Session<'_>, q: &str) -> Vec<Vec<String>> {
    match cql.execute(q).unwrap().pop().unwrap() {
        CqlResult::Rows(r) => r.displayed(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_collection_column_can_be_added_to_a_table_with_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c));
         INSERT INTO t (k, c, v) VALUES (1, 1, 10); INSERT INTO t (k, c, v) VALUES (1, 2, 20);",
    );
    let mut cql = ks_session(&db);
    db.flush_all().unwrap();
    let before = db
        .describe_column_family("ks", "t")
        .unwrap()
        .comparator
        .name();
    // A table without collections: the comparator gains its last component.
    cql.execute(
        "ALTER TABLE t ADD s set<text>;
         UPDATE t SET s = s + {'b', 'a'} WHERE k = 1 AND c = 1;
         INSERT INTO t (k, c, v, s) VALUES (1, 3, 30, {'z'})",
    )
    .unwrap();
    let after = db
        .describe_column_family("ks", "t")
        .unwrap()
        .comparator
        .name();
    assert!(
        after.starts_with(before.trim_end_matches(')')) && after.contains("SetType(UTF8Type)"),
        "{before} -> {after}"
    );
    // A table with collections: the last component gains a column; the elements already
    // written keep their order.
    cql.execute(
        "ALTER TABLE t ADD m map<int, text>;
         UPDATE t SET m[-5] = 'neg', m[7] = 'pos', s = s - {'a'} WHERE k = 1 AND c = 2;
         UPDATE t SET m = m + {3: 'x'}, s = s + {'c'} WHERE k = 1 AND c = 1",
    )
    .unwrap();
    let check = |cql: &mut Session<'_>| {
        assert_eq!(
            shown(cql, "SELECT c, v, s, m FROM t WHERE k = 1"),
            [
                ["1", "10", "{'a', 'b', 'c'}", "{3: 'x'}"],
                ["2", "20", "null", "{-5: 'neg', 7: 'pos'}"],
                ["3", "30", "{'z'}", "null"],
            ]
            .map(|r| r.map(String::from))
        );
    };
    check(&mut cql);
    // A deleted collection is a prefix deletion under the new comparator.
    cql.execute("DELETE s FROM t WHERE k = 1 AND c = 3")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT s FROM t WHERE k = 1 AND c = 3"),
        [["null"]]
    );
    cql.execute("UPDATE t SET s = {'z'} WHERE k = 1 AND c = 3")
        .unwrap();
    check(&mut cql);
    db.flush_all().unwrap();
    db.compact("ks", Some("t")).unwrap();
    check(&mut cql);
    drop(cql);
    db.close().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut cql = Session::new(&db);
    cql.execute("USE ks").unwrap();
    check(&mut cql);
    // A table whose list holds frozen collections (a value type, which orders no name): its
    // comparator keeps naming it as bytes, and a collection can still be added beside it.
    cql.execute(
        "CREATE TABLE f (k int PRIMARY KEY, l list<frozen<list<int>>>);
         UPDATE f SET l = [[2, 1]] WHERE k = 1;
         ALTER TABLE f ADD s set<int>;
         UPDATE f SET s = {3} WHERE k = 1",
    )
    .unwrap();
    let f = db
        .describe_column_family("ks", "f")
        .unwrap()
        .comparator
        .name();
    assert!(f.contains("ListType(BytesType)"), "{f}");
    assert_eq!(
        shown(&mut cql, "SELECT l, s FROM f WHERE k = 1"),
        [["[[2, 1]]", "{3}"]]
    );
    let text = db
        .describe_column_family("ks", "t")
        .unwrap()
        .cql_table
        .unwrap();
    assert!(
        text.contains("s set<text>") && text.contains("m map<int, text>"),
        "{text}"
    );
}
