//! Filtering as Cassandra permits it with ALLOW FILTERING and refuses without it: `CONTAINS`
//! and `CONTAINS KEY` on lists, sets and maps (frozen or not), `!=` on regular columns, on a
//! partition, a scan, prepared with bound values, and paged; a map's entry (`m['k'] = v`); each
//! answer checked against the rows themselves.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, paged, refused, shown};
use supercolumn_cql::{CqlResult, PageRequest, Position};

#[test]
fn contains_and_not_equal_filter_rows_as_the_rows_say() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c int, l list<int>, s set<text>, m map<text, int>,
         f frozen<set<int>>, v int, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    for k in 0..4 {
        for c in 0..5 {
            let n = k * 5 + c;
            cql.execute(&format!(
                "INSERT INTO t (k, c, l, s, m, f, v) VALUES ({k}, {c}, [{}, {}], {{'s{}'}}, {{'m{}': {}}}, {{{}}}, {})",
                n % 3,
                n % 4,
                n % 2,
                n % 3,
                n % 5,
                n % 6,
                if n % 7 == 0 { "null".to_string() } else { (n % 4).to_string() }
            ))
            .unwrap();
        }
    }
    // The model: every row with its values, as a plain SELECT returns them.
    let all: Vec<Vec<String>> = cql
        .query("SELECT k, c, l, s, m, f, v FROM t")
        .unwrap()
        .displayed();
    let count = |keep: &dyn Fn(&[String]) -> bool| all.iter().filter(|r| keep(r)).count();
    let cases: Vec<(&str, usize)> = vec![
        ("l CONTAINS 2", count(&|r| r[2].contains('2'))),
        ("s CONTAINS 's1'", count(&|r| r[3].contains("'s1'"))),
        ("m CONTAINS KEY 'm2'", count(&|r| r[4].contains("'m2'"))),
        ("m CONTAINS 4", count(&|r| r[4].ends_with(": 4}"))),
        ("f CONTAINS 5", count(&|r| r[5] == "{5}")),
        ("v != 1", count(&|r| r[6] != "1" && r[6] != "null")),
        (
            "l CONTAINS 0 AND v != 0",
            count(&|r| r[2].contains('0') && r[6] != "0" && r[6] != "null"),
        ),
    ];
    for (filter, want) in &cases {
        let q = format!("SELECT k, c FROM t WHERE {filter} ALLOW FILTERING");
        assert_eq!(shown(&mut cql, &q).len(), *want, "{q}");
        let e = refused(&mut cql, &format!("SELECT k, c FROM t WHERE {filter}"));
        assert!(e.contains("ALLOW FILTERING"), "{e}");
        // Paged, a row at a time, the same rows.
        let p = cql.prepare(&q).unwrap();
        let (mut n, mut after) = (0, None::<Position>);
        loop {
            cql.set_page(Some(PageRequest {
                size: 2,
                after: after.take(),
            }));
            let CqlResult::Rows(rows) = cql.execute_prepared(&p, &[]).unwrap() else {
                panic!("not rows")
            };
            n += rows.len();
            match cql.page_end() {
                Some(end) => after = Some(end),
                None => break,
            }
        }
        cql.set_page(None);
        assert_eq!(n, *want, "{q} paged");
    }
    let in_one = shown(
        &mut cql,
        "SELECT c FROM t WHERE k = 1 AND l CONTAINS 1 ALLOW FILTERING",
    );
    let want: Vec<String> = all
        .iter()
        .filter(|r| r[0] == "1" && r[2].contains('1'))
        .map(|r| r[1].clone())
        .collect();
    assert_eq!(in_one, want);
    // A bound value takes the element's type.
    let p = cql
        .prepare("SELECT k FROM t WHERE m CONTAINS KEY ? ALLOW FILTERING")
        .unwrap();
    let CqlResult::Rows(rows) = cql.execute_prepared(&p, &[Some(b"m2")]).unwrap() else {
        panic!("not rows")
    };
    assert_eq!(rows.len(), cases[2].1);
}

#[test]
fn contains_on_what_holds_no_elements_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int PRIMARY KEY, v int, l list<int>)",
    );
    let mut cql = ks_session(&db);
    assert_eq!(
        refused(
            &mut cql,
            "SELECT * FROM t WHERE v CONTAINS 1 ALLOW FILTERING"
        ),
        "Cannot use CONTAINS on non-collection column v"
    );
    assert_eq!(
        refused(
            &mut cql,
            "SELECT * FROM t WHERE l CONTAINS KEY 1 ALLOW FILTERING"
        ),
        "Cannot use CONTAINS KEY on non-map column l"
    );
    assert_eq!(
        refused(
            &mut cql,
            "SELECT * FROM t WHERE v IS NOT NULL ALLOW FILTERING"
        ),
        "Unsupported restriction: v IS NOT NULL"
    );
    // LIKE needs a SASI index, which this has not: refused as Cassandra refuses it unindexed.
    assert_eq!(
        refused(
            &mut cql,
            "SELECT * FROM t WHERE v LIKE 'a%' ALLOW FILTERING"
        ),
        "LIKE restriction is only supported on properly indexed columns. v LIKE 'a%' is not valid."
    );
    let e = refused(&mut cql, "SELECT * FROM t WHERE k != 1 ALLOW FILTERING");
    assert!(e.contains("!="), "{e}");
    // A condition's CONTAINS asks a collection, as Cassandra 4.1's (`conditional.rs`).
    let e = refused(&mut cql, "UPDATE t SET v = 1 WHERE k = 1 IF v CONTAINS 1");
    assert!(
        e.contains("Cannot use CONTAINS on non-collection column v"),
        "{e}"
    );
    // `!=` in a condition: a value differs, null differs from any value.
    cql.execute("INSERT INTO t (k, v) VALUES (1, 3)").unwrap();
    let applied = |cql: &mut supercolumn_cql::Session<'_>, q: &str| shown(cql, q)[0].clone();
    assert_eq!(
        applied(&mut cql, "UPDATE t SET v = 4 WHERE k = 1 IF v != 3"),
        "False|3"
    );
    assert_eq!(
        applied(&mut cql, "UPDATE t SET v = 4 WHERE k = 1 IF v != 5"),
        "True"
    );
    cql.execute("INSERT INTO t (k) VALUES (2)").unwrap();
    assert_eq!(
        applied(&mut cql, "UPDATE t SET v = 1 WHERE k = 2 IF v != 5"),
        "True"
    );
    assert_eq!(
        shown(&mut cql, "SELECT v FROM t WHERE k IN (1, 2)"),
        ["4", "1"]
    );
}

#[test]
fn key_columns_that_cannot_narrow_the_read_filter_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE kf (k1 int, k2 int, c1 int, c2 int, v int, PRIMARY KEY ((k1, k2), c1, c2))",
    );
    let mut cql = ks_session(&db);
    for n in 0..36 {
        let (k1, k2, c1, c2) = (n % 2, n / 2 % 3, n / 6 % 3, n % 4);
        cql.execute(&format!(
            "INSERT INTO kf (k1, k2, c1, c2, v) VALUES ({k1}, {k2}, {c1}, {c2}, {n})"
        ))
        .unwrap();
    }
    let all: Vec<Vec<i64>> = cql
        .query("SELECT k1, k2, c1, c2, v FROM kf")
        .unwrap()
        .displayed()
        .into_iter()
        .map(|r| r.iter().map(|x| x.parse().unwrap()).collect())
        .collect();
    type Keep = fn(&[i64]) -> bool;
    let cases: [(&str, Keep); 6] = [
        ("c2 = 1", |r| r[3] == 1),
        ("c2 > 1 AND c2 <= 3", |r| r[3] > 1 && r[3] <= 3),
        ("k1 = 1", |r| r[0] == 1),
        ("k2 = 2 AND c2 = 0", |r| r[1] == 2 && r[3] == 0),
        ("k1 = 0 AND k2 = 1 AND c2 < 2", |r| {
            r[0] == 0 && r[1] == 1 && r[3] < 2
        }),
        ("c1 > 0 AND c2 = 3", |r| r[2] > 0 && r[3] == 3),
    ];
    for (filter, keep) in cases {
        let want: Vec<String> = all
            .iter()
            .filter(|r| keep(r))
            .map(|r| r.iter().map(i64::to_string).collect::<Vec<_>>().join("|"))
            .collect();
        let q = format!("SELECT k1, k2, c1, c2, v FROM kf WHERE {filter} ALLOW FILTERING");
        assert_eq!(shown(&mut cql, &q), want, "{q}");
        assert_eq!(common::paged(&mut cql, &q, 4), want, "{q} paged");
        let e = refused(&mut cql, &format!("SELECT * FROM kf WHERE {filter}"));
        assert!(
            e.contains("ALLOW FILTERING")
                || e.contains("cannot be restricted as preceding column")
                || e.contains("is restricted by a non-EQ relation"),
            "{filter}: {e}"
        );
    }
    let e = refused(
        &mut cql,
        "SELECT * FROM kf WHERE k1 = 0 AND k2 = 0 AND c2 = 1",
    );
    assert_eq!(
        e,
        "PRIMARY KEY column \"c2\" cannot be restricted as preceding column \"c1\" is not restricted"
    );
}

#[test]
fn a_map_entry_filters_rows_holding_that_key_with_that_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE me (k int, c int, m map<text, int>, l list<int>, f frozen<map<text, int>>,
         v int, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    let mut want = Vec::new();
    for k in 0..3 {
        for c in 0..6 {
            let n = k * 6 + c;
            // 'a' holds n % 3; 'b' is there on even rows only; some rows have no map.
            let m = match n % 5 {
                4 => "null".to_string(),
                _ if n % 2 == 0 => format!("{{'a': {}, 'b': {}}}", n % 3, n % 4),
                _ => format!("{{'a': {}}}", n % 3),
            };
            cql.execute(&format!(
                "INSERT INTO me (k, c, m, v) VALUES ({k}, {c}, {m}, {n})"
            ))
            .unwrap();
            if n % 5 != 4 && n % 2 == 0 && n % 4 == 1 {
                want.push(format!("{k}|{c}"));
            }
        }
    }
    // An element set alone, and one removed: the filter reads the map as it is now.
    cql.execute("UPDATE me SET m['b'] = 1 WHERE k = 2 AND c = 5")
        .unwrap();
    want.push("2|5".into());
    cql.execute("DELETE m['b'] FROM me WHERE k = 0 AND c = 4")
        .unwrap();
    want.retain(|r| r != "0|4");
    let q = "SELECT k, c FROM me WHERE m['b'] = 1 ALLOW FILTERING";
    let mut got = shown(&mut cql, q);
    got.sort();
    want.sort();
    assert!(!want.is_empty());
    assert_eq!(got, want);
    let mut by_pages = paged(&mut cql, q, 2);
    by_pages.sort();
    assert_eq!(by_pages, want);
    // Beside a partition key and another filter; bound values take the key's and the value's
    // types (Cassandra's marker names `key(m)` and `value(m)`).
    let mut in_two: Vec<String> = want
        .iter()
        .filter(|r| r.starts_with("2|"))
        .cloned()
        .collect();
    in_two.sort();
    let got = shown(
        &mut cql,
        "SELECT k, c FROM me WHERE k = 2 AND m['b'] = 1 AND v > 0 ALLOW FILTERING",
    );
    assert_eq!(got, in_two);
    let p = cql
        .prepare("SELECT k, c FROM me WHERE m[?] = ? ALLOW FILTERING")
        .unwrap();
    let markers: Vec<String> = p
        .bind_columns()
        .iter()
        .map(|(n, t)| format!("{n}:{t}"))
        .collect();
    assert_eq!(markers, ["key(m):text", "value(m):int"]);
    let CqlResult::Rows(rows) = cql
        .execute_prepared(&p, &[Some(b"b"), Some(&1i32.to_be_bytes())])
        .unwrap()
    else {
        panic!("not rows")
    };
    assert_eq!(rows.len(), want.len());
    // Cassandra's refusals.
    for (q, why) in [
        ("SELECT * FROM me WHERE m['b'] = 1", "ALLOW FILTERING"),
        (
            "SELECT * FROM me WHERE m['b'] > 1 ALLOW FILTERING",
            "Only EQ relations are supported on map entries",
        ),
        (
            "SELECT * FROM me WHERE l[0] = 1 ALLOW FILTERING",
            "Indexes on list entries (l[index] = value) are not currently supported.",
        ),
        (
            "SELECT * FROM me WHERE f['a'] = 1 ALLOW FILTERING",
            "Map-entry equality predicates on frozen map column f are not supported",
        ),
        (
            "SELECT * FROM me WHERE v['a'] = 1 ALLOW FILTERING",
            "Column v cannot be used as a map",
        ),
        (
            "SELECT * FROM me WHERE m['a'] = null ALLOW FILTERING",
            "Unsupported null map value for column m",
        ),
        (
            "UPDATE me SET v = 1 WHERE k = 1 AND c = 1 AND m['a'] = 1",
            "Non PRIMARY KEY columns found in where clause: m ",
        ),
        (
            "DELETE FROM me WHERE k = 1 AND m['a'] = 1",
            "Non PRIMARY KEY columns found in where clause: m ",
        ),
    ] {
        let e = refused(&mut cql, q);
        assert!(e.contains(why), "{q}: {e}");
    }
}
