//! User-defined types through CQL: `CREATE`/`ALTER`/`DROP TYPE` with Cassandra's refusals,
//! frozen values in regular columns, keys, collections, tuples and other types; literals,
//! bound values, JSON, field selection; the type surviving reopen; `system_schema.types` and
//! `DESCRIBE`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused, shown};
use supercolumn::{Database, Options};
use supercolumn_cql::{CqlResult, CqlType, Session};

const TYPES: &str = "
    CREATE TYPE address (street text, zip int, tags set<text>);
    CREATE TYPE person (name text, home frozen<address>, \"Nick\" text)";

#[test]
fn frozen_values_are_written_read_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), TYPES);
    let mut cql = ks_session(&db);
    cql.execute(
        "CREATE TABLE users (id int PRIMARY KEY, who frozen<person>, homes list<frozen<address>>,
                             tagged map<text, frozen<address>>, pair tuple<int, frozen<address>>)",
    )
    .unwrap();
    cql.execute(
        "INSERT INTO users (id, who, homes) VALUES (1,
            {name: 'Ann', home: {street: '1 Main', zip: 12345, tags: {'b', 'a'}}, \"Nick\": 'an'},
            [{street: 'x', zip: 1}, {zip: 2}])",
    )
    .unwrap();
    cql.execute(
        "UPDATE users SET tagged = {'work': {street: 'it''s'}}, pair = (7, {zip: 9}) WHERE id = 1",
    )
    .unwrap();
    let want =
        "1|{name: 'Ann', home: {street: '1 Main', zip: 12345, tags: {'a', 'b'}}, \"Nick\": 'an'}\
                |[{street: 'x', zip: 1, tags: null}, {street: null, zip: 2, tags: null}]\
                |{'work': {street: 'it''s', zip: null, tags: null}}\
                |(7, {street: null, zip: 9, tags: null})";
    let q = "SELECT id, who, homes, tagged, pair FROM users";
    assert_eq!(shown(&mut cql, q), vec![want.to_string()]);
    // Field selection, nested too; a missing field of a value is null.
    assert_eq!(
        shown(
            &mut cql,
            "SELECT who.name, who.home.zip, who.\"Nick\" FROM users WHERE id = 1"
        ),
        vec!["Ann|12345|an"]
    );
    let rows = cql.query("SELECT who.home FROM users").unwrap();
    assert_eq!(rows.columns()[0].0, "who.home");
    assert!(matches!(&rows.columns()[0].1, CqlType::Frozen(_)));
    // Bound values: the serialized form a driver sends.
    let p = cql
        .prepare("INSERT INTO users (id, who) VALUES (?, ?)")
        .unwrap();
    let addr = cql
        .query("SELECT who.home FROM users WHERE id = 1")
        .unwrap();
    let home = addr.to_vecs()[0][0].clone().unwrap();
    let mut person = Vec::new();
    for part in [Some(b"Bo".to_vec()), Some(home), None] {
        match part {
            Some(b) => {
                person.extend((b.len() as i32).to_be_bytes());
                person.extend(b);
            }
            None => person.extend((-1i32).to_be_bytes()),
        }
    }
    cql.execute_prepared(&p, &[Some(&2i32.to_be_bytes()[..]), Some(&person[..])])
        .unwrap();
    assert_eq!(
        shown(
            &mut cql,
            "SELECT who.name, who.home.street FROM users WHERE id = 2"
        ),
        vec!["Bo|1 Main"]
    );
    let bad = cql.execute_prepared(
        &p,
        &[Some(&3i32.to_be_bytes()[..]), Some(&[0, 0, 0, 9, 1][..])],
    );
    assert!(bad.is_err(), "a value cut short is refused");
    // JSON both ways.
    cql.execute(r#"INSERT INTO users JSON '{"id": 4, "who": {"name": "Cy", "home": {"zip": 5}}}'"#)
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT toJson(who) FROM users WHERE id = 4"),
        vec![r#"{"name": "Cy", "home": {"street": null, "zip": 5, "tags": null}, "Nick": null}"#]
    );
    drop(cql);
    drop(db);
    // Reopened: the types and the values are as they were.
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut cql = ks_session(&db);
    assert_eq!(
        shown(&mut cql, &format!("{q} WHERE id = 1")),
        vec![want.to_string()]
    );
    let e = refused(
        &mut cql,
        "INSERT INTO users (id, who) VALUES (5, {name: 'x', nope: 1})",
    );
    assert!(
        e.contains("Unknown field 'nope' in value of user defined type person"),
        "{e}"
    );
}

#[test]
fn frozen_values_order_keys_as_cassandra_orders_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TYPE pt (x int, y text);
         CREATE TABLE m (k frozen<pt>, c frozen<pt>, s set<frozen<pt>>, v int, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    for (x, y) in [(2, "b"), (-1, "z"), (2, "a"), (10, "a")] {
        cql.execute(&format!(
            "INSERT INTO m (k, c, v, s) VALUES ({{x: 1, y: 'k'}}, {{x: {x}, y: '{y}'}}, {x}, {{{{x: {x}, y: '{y}'}}, {{x: 0}}}})"
        ))
        .unwrap();
    }
    // Ordered field by field, signed ints as numbers (not as bytes).
    assert_eq!(
        shown(&mut cql, "SELECT c FROM m WHERE k = {x: 1, y: 'k'}"),
        vec![
            "{x: -1, y: 'z'}",
            "{x: 2, y: 'a'}",
            "{x: 2, y: 'b'}",
            "{x: 10, y: 'a'}"
        ]
    );
    assert_eq!(
        shown(
            &mut cql,
            "SELECT v FROM m WHERE k = {x: 1, y: 'k'} AND c > {x: 2, y: 'a'} AND c <= {x: 10, y: 'a'}"
        ),
        vec!["2", "10"]
    );
    assert_eq!(
        shown(
            &mut cql,
            "SELECT s FROM m WHERE k = {x: 1, y: 'k'} AND c = {x: -1, y: 'z'}"
        ),
        vec!["{{x: -1, y: 'z'}, {x: 0, y: null}}"]
    );
    // A key given with a field left out is the value with that field null.
    cql.execute("INSERT INTO m (k, c, v) VALUES ({x: 3}, {x: 0}, 30)")
        .unwrap();
    assert_eq!(
        shown(
            &mut cql,
            "SELECT v FROM m WHERE k = {x: 3, y: null} AND c = {x: 0}"
        ),
        vec!["30"]
    );
    cql.execute("CREATE TABLE tk (k int, c tuple<int, text>, PRIMARY KEY (k, c))")
        .unwrap();
    cql.execute("INSERT INTO tk (k, c) VALUES (1, (2, 'x'))")
        .unwrap();
    let before = shown(&mut cql, "SELECT * FROM m");
    drop(cql);
    drop(db);
    // Reopened: the names' comparators (tuples of the fields' types) are read back. Before,
    // a tuple or a user type in a key left the catalog unreadable.
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut cql = ks_session(&db);
    assert_eq!(shown(&mut cql, "SELECT * FROM m"), before);
    assert_eq!(shown(&mut cql, "SELECT c FROM tk"), vec!["(2, 'x')"]);
}

#[test]
fn type_statements_change_types_as_cassandra_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), TYPES);
    let mut cql = ks_session(&db);
    cql.execute("CREATE TABLE t (k int PRIMARY KEY, a frozen<address>)")
        .unwrap();
    cql.execute("INSERT INTO t (k, a) VALUES (1, {street: 's', zip: 1})")
        .unwrap();
    let p = cql.prepare("SELECT a FROM t WHERE k = 1").unwrap();
    cql.execute("ALTER TYPE address ADD city text").unwrap();
    cql.execute("ALTER TYPE address RENAME zip TO code AND street TO road")
        .unwrap();
    // A value written before the field was added reads it as null.
    assert_eq!(
        shown(&mut cql, "SELECT a, a.code FROM t"),
        vec!["{road: 's', code: 1, tags: null, city: null}|1"]
    );
    assert!(
        matches!(
            cql.execute_prepared(&p, &[]),
            Err(supercolumn_cql::CqlError::Stale(_))
        ),
        "a statement prepared before is prepared again"
    );
    cql.execute("INSERT INTO t (k, a) VALUES (2, {city: 'c'})")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT a.city FROM t WHERE k = 2"),
        vec!["c"]
    );
    let refusals = [
        (
            "CREATE TYPE address (x int)",
            "A user type with name 'address' already exists",
        ),
        (
            "ALTER TYPE address ADD city int",
            "as a field with the same name already exists",
        ),
        (
            "ALTER TYPE address RENAME nope TO x",
            "Unkown field nope in user type ks.address",
        ),
        ("ALTER TYPE nope ADD x int", "Type ks.nope doesn't exist"),
        (
            "ALTER TYPE address ADD me frozen<person>",
            "circular reference",
        ),
        ("DROP TYPE address", "still used by user types person"),
        ("DROP TYPE nope", "Type 'ks.nope' doesn't exist"),
        ("CREATE TYPE d (a int, a text)", "Duplicate field name"),
        ("CREATE TYPE c (n counter)", "cannot contain counters"),
        (
            "CREATE TYPE n (a address)",
            "cannot contain non-frozen UDTs",
        ),
        (
            "CREATE TABLE x (k int PRIMARY KEY, l list<address>)",
            "Non-frozen UDTs are not allowed inside collections: list<address>",
        ),
        (
            "CREATE TABLE x (k int PRIMARY KEY, a nope)",
            "Unknown type ks.nope",
        ),
        (
            "CREATE TABLE x (k int PRIMARY KEY, a frozen<other.address>)",
            "user types can only be used in the keyspace they are defined in",
        ),
        (
            "CREATE TABLE x (k int PRIMARY KEY, a address)",
            "Non-frozen UDTs with nested non-frozen collections are not supported",
        ),
        (
            "INSERT INTO t (k, a) VALUES (3, {nope: 1})",
            "Unknown field 'nope'",
        ),
        ("SELECT a.nope FROM t", "nope"),
    ];
    for (q, want) in refusals {
        let e = match cql.execute(q) {
            Err(e) => e.to_string(),
            Ok(r) => panic!("{q}: accepted ({r:?})"),
        };
        assert!(e.contains(want), "{q}: {e}");
    }
    cql.execute("CREATE TYPE IF NOT EXISTS address (x int)")
        .unwrap();
    cql.execute("DROP TYPE IF EXISTS nope").unwrap();
    cql.execute("DROP TABLE t").unwrap();
    cql.execute("CREATE TABLE k (k frozen<address> PRIMARY KEY)")
        .unwrap();
    let e = refused(&mut cql, "ALTER TYPE address ADD more int");
    assert!(e.contains("orders table ks.k"), "{e}");
    cql.execute("DROP TABLE k").unwrap();
    let e = refused(&mut cql, "DROP TYPE address");
    assert!(e.contains("still used by user types person"), "{e}");
    cql.execute("DROP TYPE person").unwrap();
    cql.execute("DROP TYPE address").unwrap();
    assert!(shown(
        &mut cql,
        "SELECT type_name FROM system_schema.types WHERE keyspace_name = 'ks'"
    )
    .is_empty());
    assert_eq!(
        cql.execute("CREATE TYPE again (a int)").unwrap(),
        vec![CqlResult::SchemaChange("CREATED TYPE ks.again".into())]
    );
}

#[test]
fn types_show_in_the_schema_tables_and_describe() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), TYPES);
    let mut cql = ks_session(&db);
    assert_eq!(
        shown(
            &mut cql,
            "SELECT type_name, field_names, field_types FROM system_schema.types WHERE keyspace_name = 'ks'"
        ),
        vec![
            "address|['street', 'zip', 'tags']|['text', 'int', 'set<text>']",
            "person|['name', 'home', 'Nick']|['text', 'frozen<address>', 'text']",
        ]
    );
    let described = |cql: &mut Session<'_>, q: &str| -> String {
        let rows = cql.query(q).unwrap();
        let col = rows
            .columns()
            .iter()
            .position(|c| c.0 == "create_statement")
            .unwrap();
        rows.displayed()
            .iter()
            .map(|r| r[col].clone())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let person = described(&mut cql, "DESCRIBE TYPE person");
    assert_eq!(
        person,
        "CREATE TYPE ks.person (\n    name text,\n    home frozen<address>,\n    \"Nick\" text\n);"
    );
    let ks = described(&mut cql, "DESCRIBE KEYSPACE ks");
    let (a, p) = (
        ks.find("CREATE TYPE ks.address").unwrap(),
        ks.find("CREATE TYPE ks.person").unwrap(),
    );
    assert!(a < p, "a type before the types naming it:\n{ks}");
    let names = shown(&mut cql, "DESCRIBE TYPES");
    assert!(names.iter().any(|r| r.contains("address")), "{names:?}");
    // What DESCRIBE prints runs again, in a fresh keyspace.
    let dir2 = tempfile::tempdir().unwrap();
    let db2 = open_cql(dir2.path(), "CREATE TABLE unused (k int PRIMARY KEY)");
    let mut cql2 = ks_session(&db2);
    for stmt in [described(&mut cql, "DESCRIBE TYPE address"), person] {
        cql2.execute(&stmt).unwrap();
    }
    assert_eq!(
        shown(
            &mut cql2,
            "SELECT type_name FROM system_schema.types WHERE keyspace_name = 'ks'"
        ),
        vec!["address", "person"]
    );
}

#[test]
fn non_frozen_values_are_one_cell_per_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TYPE pt (x int, y text);
         CREATE TABLE nf (k int, c int, a pt, s pt static, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    let q = "SELECT k, c, a, s FROM nf";
    cql.execute("INSERT INTO nf (k, c, a) VALUES (1, 1, {x: 1, y: 'a'}) USING TIMESTAMP 10")
        .unwrap();
    cql.execute("UPDATE nf USING TIMESTAMP 20 SET a.y = 'b', s.x = 7 WHERE k = 1 AND c = 1")
        .unwrap();
    // An older write of one field loses to the newer cell, as each field is its own cell.
    cql.execute("UPDATE nf USING TIMESTAMP 15 SET a.y = 'old' WHERE k = 1 AND c = 1")
        .unwrap();
    assert_eq!(
        shown(&mut cql, q),
        vec!["1|1|{x: 1, y: 'b'}|{x: 7, y: null}"]
    );
    cql.execute("UPDATE nf SET a.x = null WHERE k = 1 AND c = 1")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT a, a.y FROM nf"),
        vec!["{x: null, y: 'b'}|b"]
    );
    // Set whole, it replaces every field (a range tombstone, then its fields' cells).
    cql.execute("UPDATE nf SET a = {x: 5} WHERE k = 1 AND c = 2")
        .unwrap();
    cql.execute("UPDATE nf SET a = {x: 6} WHERE k = 1 AND c = 1")
        .unwrap();
    let p = cql
        .prepare("UPDATE nf SET a.y = ? WHERE k = ? AND c = ?")
        .unwrap();
    cql.execute_prepared(
        &p,
        &[
            Some(b"p".as_slice()),
            Some(&1i32.to_be_bytes()[..]),
            Some(&2i32.to_be_bytes()[..]),
        ],
    )
    .unwrap();
    let want = vec![
        "1|1|{x: 6, y: null}|{x: 7, y: null}".to_string(),
        "1|2|{x: 5, y: 'p'}|{x: 7, y: null}".to_string(),
    ];
    assert_eq!(shown(&mut cql, q), want);
    assert_eq!(common::paged(&mut cql, q, 1), want);
    cql.execute("ALTER TYPE pt ADD z int").unwrap();
    cql.execute("UPDATE nf SET a.z = 3 WHERE k = 1 AND c = 2")
        .unwrap();
    cql.execute("DELETE a FROM nf WHERE k = 1 AND c = 1")
        .unwrap();
    let want = vec![
        "1|1|null|{x: 7, y: null, z: null}".to_string(),
        "1|2|{x: 5, y: 'p', z: 3}|{x: 7, y: null, z: null}".to_string(),
    ];
    assert_eq!(shown(&mut cql, q), want);
    db.flush_all().unwrap();
    drop(cql);
    drop(db);
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut cql = ks_session(&db);
    assert_eq!(shown(&mut cql, q), want);
    for (q, says) in [
        (
            "UPDATE nf SET a = a + {x: 1} WHERE k = 1 AND c = 1",
            "set whole or one field at a time",
        ),
        (
            "UPDATE nf SET a.nope = 1 WHERE k = 1 AND c = 1",
            "UDT column a does not have a field named nope",
        ),
        (
            "CREATE INDEX ON nf (a)",
            "Cannot create index on non-frozen UDT column a",
        ),
        (
            "UPDATE nf SET a = {x: 'one'} WHERE k = 1 AND c = 1",
            "Invalid user type literal for a: field x is not of type int",
        ),
        ("CREATE TABLE bad (k pt PRIMARY KEY)", "PRIMARY KEY"),
    ] {
        let e = refused(&mut cql, q);
        assert!(e.contains(says), "{q}: {e}");
    }
    // A condition on a field of a deleted value: null, so `= 'q'` does not hold.
    let q = "UPDATE nf SET a.x = 1 WHERE k = 1 AND c = 1 IF a.y = 'q'";
    assert_eq!(shown(&mut cql, q), vec!["False|null"]);
    cql.execute("CREATE TABLE fz (k int PRIMARY KEY, f frozen<pt>)")
        .unwrap();
    assert_eq!(
        refused(&mut cql, "UPDATE fz SET f.x = 1 WHERE k = 1"),
        "Invalid operation (f.x = 1) for frozen UDT column f"
    );
}

#[test]
fn a_delete_names_one_field_of_a_non_frozen_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TYPE pt (x int, y text);
         CREATE TABLE nf (k int, c int, a pt, s pt static, f frozen<pt>, n int,
             PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    let q = "SELECT k, c, a, s FROM nf";
    cql.execute(
        "INSERT INTO nf (k, c, a, s) VALUES (1, 1, {x: 1, y: 'a'}, {x: 2, y: 's'})
             USING TIMESTAMP 10;
         INSERT INTO nf (k, c, a) VALUES (1, 2, {x: 3, y: 'b'}) USING TIMESTAMP 10",
    )
    .unwrap();
    cql.execute("DELETE a.y FROM nf WHERE k = 1 AND c = 1")
        .unwrap();
    // Older than the field's cell: it loses, as a tombstone of any cell does.
    cql.execute("DELETE a.x FROM nf USING TIMESTAMP 5 WHERE k = 1 AND c = 2")
        .unwrap();
    cql.execute("DELETE s.x FROM nf WHERE k = 1").unwrap();
    let want = vec![
        "1|1|{x: 1, y: null}|{x: null, y: 's'}".to_string(),
        "1|2|{x: 3, y: 'b'}|{x: null, y: 's'}".to_string(),
    ];
    assert_eq!(shown(&mut cql, q), want);
    // Both fields gone: the value is null, as Cassandra shows a UDT with no live field.
    let p = cql
        .prepare("DELETE a.x, a.y FROM nf WHERE k = ? AND c = ?")
        .unwrap();
    cql.execute_prepared(
        &p,
        &[Some(&1i32.to_be_bytes()[..]), Some(&2i32.to_be_bytes()[..])],
    )
    .unwrap();
    db.flush_all().unwrap();
    let want = vec![
        "1|1|{x: 1, y: null}|{x: null, y: 's'}".to_string(),
        "1|2|null|{x: null, y: 's'}".to_string(),
    ];
    assert_eq!(shown(&mut cql, q), want);
    for (q, says) in [
        (
            "DELETE f.x FROM nf WHERE k = 1 AND c = 1",
            "Frozen UDT column f does not support field deletion",
        ),
        (
            "DELETE n.x FROM nf WHERE k = 1 AND c = 1",
            "Invalid field deletion operation for non-UDT column n",
        ),
        (
            "DELETE a.z FROM nf WHERE k = 1 AND c = 1",
            "UDT column a does not have a field named z",
        ),
    ] {
        let e = refused(&mut cql, q);
        assert!(e.contains(says), "{q}: {e}");
    }
    assert_eq!(
        shown(&mut cql, q),
        want,
        "a refused deletion changes nothing"
    );
}

#[test]
fn stored_types_read_back_whatever_their_names_and_nesting() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TYPE \"from\" (\"select\" int, \"Where\" text)",
    );
    let mut cql = ks_session(&db);
    // Reserved words and mixed case are quoted where the catalog keeps them; before, the
    // stored `CREATE TYPE ks.from (select int, …)` no longer parsed, and every statement on
    // the keyspace failed.
    cql.execute("CREATE TABLE r (k int PRIMARY KEY, v frozen<\"from\">)")
        .unwrap();
    cql.execute("INSERT INTO r (k, v) VALUES (1, {\"select\": 2, \"Where\": 'x'})")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT v FROM r"),
        vec!["{\"select\": 2, \"Where\": 'x'}"]
    );
    // A type may gain a field of a type created after it, and still read back.
    cql.execute("CREATE TYPE later (n int)").unwrap();
    cql.execute("ALTER TYPE \"from\" ADD l frozen<later>")
        .unwrap();
    // Types nesting types many times over are refused before anything walks them whole.
    cql.execute("CREATE TYPE n0 (a int)").unwrap();
    let mut refused_at = None;
    for k in 1..20 {
        let q = format!(
            "CREATE TYPE n{k} (a frozen<n{}>, b frozen<n{}>)",
            k - 1,
            k - 1
        );
        if let Err(e) = cql.execute(&q) {
            assert!(e.to_string().contains("nests other types too often"), "{e}");
            refused_at = Some(k);
            break;
        }
    }
    assert!(refused_at.is_some_and(|k| k <= 14), "{refused_at:?}");
    // A key whose comparator the catalog could not read back is refused, not stored.
    let fields: Vec<String> = (0..70).map(|i| format!("f{i} int")).collect();
    cql.execute(&format!("CREATE TYPE wide ({})", fields.join(", ")))
        .unwrap();
    let e = cql
        .execute("CREATE TABLE w (k int, c frozen<wide>, PRIMARY KEY (k, c))")
        .unwrap_err();
    assert!(
        e.to_string().contains("too deep or too wide to be stored"),
        "{e}"
    );
    drop(cql);
    drop(db);
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut cql = ks_session(&db);
    assert_eq!(
        shown(&mut cql, "SELECT v FROM r"),
        vec!["{\"select\": 2, \"Where\": 'x', l: null}"]
    );
}

#[test]
fn wrong_user_type_statements_are_refused_in_cassandras_words() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TYPE mt (a int);
         CREATE TYPE mb (a int, b tuple<int, text, double>);
         CREATE TABLE u (a int PRIMARY KEY, b frozen<mt>, c int, t frozen<mb>)",
    );
    let mut cql = ks_session(&db);
    for (q, says) in [
        (
            "CREATE TABLE w (k mt PRIMARY KEY, v int)",
            "Invalid non-frozen user-defined type for PRIMARY KEY component k",
        ),
        (
            "CREATE TABLE w (k1 int, k2 mt, v int, PRIMARY KEY (k1, k2))",
            "Invalid non-frozen user-defined type for PRIMARY KEY component k2",
        ),
        (
            "UPDATE u SET c.a = 0 WHERE a = 0",
            "Invalid operation (c.a = 0) for non-UDT column c",
        ),
        (
            "INSERT INTO u (a, t) VALUES (0, {a: 1, b: (1, '1', 1.0, 1)})",
            "Invalid user type literal for t: field b is not of type \
             frozen<tuple<int, text, double>>",
        ),
        (
            "INSERT INTO u (a, b) VALUES (0, {a: 'x'})",
            "Invalid user type literal for b: field a is not of type int",
        ),
    ] {
        assert_eq!(refused(&mut cql, q), says, "{q}");
    }
    // Cassandra's grammar takes a comma after a type's last field.
    cql.execute("CREATE TYPE tc (s set<frozen<mt>>,)").unwrap();
}
