//! Terms among a `SELECT`'s selectors, as Cassandra takes them: a literal or a bind marker
//! given a type by a hint (`(int)42`, `(text)?`, `(list<int>)[1, 2]`) or by the function it is
//! an argument of (`intAsBlob(?)`), refused where nothing gives one ("Cannot infer type for
//! term …"); and `+` of two strings, their concatenation (Cassandra 4.1), in selectors and
//! in values.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, names, open_cql, refused, shown};
use supercolumn_cql::CqlResult;
use supercolumn_cql::CqlType;

fn open(dir: &std::path::Path) -> supercolumn::Database {
    let db = open_cql(
        dir,
        "CREATE TABLE t (pk int, ck int, t text, a ascii, PRIMARY KEY (pk, ck))",
    );
    let mut cql = ks_session(&db);
    for (ck, t) in [(1, "one"), (2, "two")] {
        let q = format!("INSERT INTO t (pk, ck, t, a) VALUES (1, {ck}, '{t}', 'x{ck}')");
        cql.execute(&q).unwrap();
    }
    drop(cql);
    db
}

#[test]
fn a_literal_selector_takes_its_hint_s_type_and_without_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = ks_session(&db);
    for q in [
        "SELECT ck, t, 'a const' FROM t",
        "SELECT ck, t, 42 FROM t",
        "SELECT ck, t, [1, 2, 3] FROM t",
        "SELECT ck, t, {1, 2, 3} FROM t",
        "SELECT ? FROM t",
        "SELECT ck, ? FROM t",
        "SELECT ck, null FROM t",
    ] {
        let e = refused(&mut cql, q);
        assert!(e.contains("Cannot infer type for term"), "{q}: {e}");
    }
    let q = "SELECT ck, (text)'a const', (int) 42, (list<int>)[1, 2], (map<int, text>){1: 'foo'}, \
             (tuple<int, text>)(1, 'foo') FROM t";
    assert_eq!(
        shown(&mut cql, q),
        [
            "1|a const|42|[1, 2]|{1: 'foo'}|(1, 'foo')",
            "2|a const|42|[1, 2]|{1: 'foo'}|(1, 'foo')"
        ]
    );
    assert_eq!(
        names(&mut cql, q)[1..4],
        [
            "(text)'a const':text",
            "(int)42:int",
            "(list<int>)[1, 2]:list<int>"
        ]
    );
}

#[test]
fn a_marker_selector_is_typed_by_its_hint_or_its_function_and_reads_its_bound_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = ks_session(&db);
    let p = cql
        .prepare("SELECT (int)?, (text):words, intAsBlob(?), pk, ck FROM t WHERE pk = ?")
        .unwrap();
    assert_eq!(
        p.bind_columns(),
        [
            ("[selection]".to_string(), CqlType::Int),
            ("words".to_string(), CqlType::Text),
            ("arg0(system.intasblob)".to_string(), CqlType::Int),
            ("pk".to_string(), CqlType::Int),
        ]
    );
    let values: [Option<&[u8]>; 4] = [
        Some(&88i32.to_be_bytes()),
        Some(b"foo bar"),
        Some(&7i32.to_be_bytes()),
        Some(&1i32.to_be_bytes()),
    ];
    let CqlResult::Rows(rows) = cql.execute_prepared(&p, &values).unwrap() else {
        panic!("rows expected");
    };
    let got: Vec<String> = rows
        .columns()
        .iter()
        .map(|(n, t)| format!("{n}:{t}"))
        .collect();
    assert_eq!(
        got,
        [
            "(int)?:int",
            "(text)?:text",
            "system.intasblob(?):blob",
            "pk:int",
            "ck:int"
        ]
    );
    let rows = rows.to_vecs();
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r[0].as_deref(), Some(&88i32.to_be_bytes()[..]));
        assert_eq!(r[1].as_deref(), Some(&b"foo bar"[..]));
        assert_eq!(r[2].as_deref(), Some(&7i32.to_be_bytes()[..]));
    }
    // A value not of the hinted type is refused.
    let bad: [Option<&[u8]>; 4] = [Some(b"abc"), Some(b"x"), None, Some(&1i32.to_be_bytes())];
    let e = cql.execute_prepared(&p, &bad).unwrap_err().to_string();
    assert!(e.contains("int"), "{e}");
}

#[test]
fn plus_concatenates_strings_ascii_only_of_two_ascii() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = ks_session(&db);
    let q = "SELECT t + a, a + a, a + '!', t + 'é', 'p' + 'q' FROM t WHERE pk = 1 AND ck = 1";
    assert_eq!(shown(&mut cql, q), ["onex1|x1x1|x1!|oneé|pq"]);
    assert_eq!(
        names(&mut cql, q),
        [
            "t + a:text",
            "a + a:ascii",
            "a + '!':ascii",
            "t + 'é':text",
            "'p' + 'q':ascii"
        ]
    );
    cql.execute("INSERT INTO t (pk, ck, t, a) VALUES (2, 1, 'ab' + 'cd', 'ef' + 'gh')")
        .unwrap();
    cql.execute("UPDATE t SET t = t + 'x' WHERE pk = 2 AND ck = 1")
        .unwrap_err();
    assert_eq!(
        shown(&mut cql, "SELECT t, a FROM t WHERE pk = 2"),
        ["abcd|efgh"]
    );
    for (q, why) in [
        (
            "INSERT INTO t (pk, ck, a) VALUES (3, 1, 'é' + 'x')",
            "the '+' operation is not supported",
        ),
        ("SELECT t - a FROM t", "the '-' operation is not supported"),
        ("SELECT t + ck FROM t", "the '+' operation is not supported"),
    ] {
        let e = refused(&mut cql, q);
        assert!(e.contains(why), "{q}: {e}");
    }
}
