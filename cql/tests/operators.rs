//! Cassandra's operators where values stand and in selectors: each operation chosen among
//! its overloads as Cassandra chooses (a literal by its preferred type, a value by the
//! column it goes to, an ambiguous one refused in Cassandra's words), type hints, and a
//! timestamp or a date plus or minus a duration.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, names, open_cql, refused, shown};
use supercolumn_cql::CqlResult;

#[test]
fn a_literal_operand_takes_its_preferred_type_as_in_cassandra() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (a tinyint, b smallint, c int, h decimal, PRIMARY KEY (a, b))",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (a, b, c, h) VALUES (1, 2, 3, 8.5)")
        .unwrap();
    // `a + 1` of a tinyint is an int (the literal is an int), `a + 5.5` a double; literals
    // alone compute as ints; a hint gives a literal its type.
    let q = "SELECT a + 1, a + 5.5, 1 + 1, 2 * 2, 2 % 1, (int) -1, (c - b) / a, -(c - a) FROM t";
    assert_eq!(shown(&mut cql, q), ["2|6.5|2|4|0|-1|1|-2"]);
    assert_eq!(
        names(&mut cql, q),
        [
            "a + 1:int",
            "a + 5.5:double",
            "1 + 1:int",
            "2 * 2:int",
            "2 % 1:int",
            "(int)-1:int",
            "(c - b) / a:int",
            "-(c - a):int"
        ]
    );
    // An integer meets a decimal as Cassandra's operators convert it: through a double, so
    // 1 is 1.0 (scale 1); a varint exactly.
    assert_eq!(
        shown(&mut cql, "SELECT h * 1, h % 2, h / a, 1 + h FROM t"),
        ["8.50|0.5|8.5|9.5"]
    );
}

#[test]
fn operations_stand_where_values_do_chosen_by_the_receiving_column() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (pk int, c1 tinyint, c2 smallint, v int, PRIMARY KEY (pk, c1, c2))",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (pk, c1, c2, v) VALUES (1 + 1, 1 + 1, 2 * (3 - 2), -(1 + 2))")
        .unwrap();
    assert_eq!(shown(&mut cql, "SELECT * FROM t"), ["2|2|2|-3"]);
    // The only overload giving a tinyint is the tinyints'; several give an int, so the ints'.
    let q = "SELECT v FROM t WHERE pk = 1 + 1 AND c1 = 1 + 1 AND c2 = 1 * (1 + 1)";
    assert_eq!(shown(&mut cql, q), ["-3"]);
    assert_eq!(
        shown(
            &mut cql,
            "SELECT v FROM t WHERE pk = 10 / 5 AND c1 = 23 % 7"
        ),
        ["-3"]
    );
    let e = refused(&mut cql, "SELECT v FROM t WHERE pk = 2 AND c1 = 10 / 0");
    assert!(
        e.contains("the operation 'tinyint / tinyint' failed: / by zero"),
        "{e}"
    );
    // A marker leaves several overloads: refused unless a hint types it.
    let e = refused(&mut cql, "SELECT v FROM t WHERE pk = ? + 1 AND c1 = 2");
    assert!(
        e.contains("Ambiguous '+' operation with args ? and 1"),
        "{e}"
    );
    let p = cql
        .prepare("SELECT v FROM t WHERE pk = (int) ? / 2 - 5 AND c1 = 1 + ?")
        .unwrap();
    let bound: Vec<(String, String)> = p
        .bind_columns()
        .into_iter()
        .map(|(n, t)| (n, t.to_string()))
        .collect();
    let want = [("(int)?", "int"), ("arg1(system._add)", "tinyint")];
    assert_eq!(bound, want.map(|(n, t)| (n.to_string(), t.to_string())));
    let CqlResult::Rows(rows) = cql
        .execute_prepared(&p, &[Some(&14i32.to_be_bytes()), Some(&[1u8])])
        .unwrap()
    else {
        panic!("not rows");
    };
    assert_eq!(rows.displayed(), [["-3"]]);
    // A bound value of the wrong size for the chosen parameter is refused.
    let e = cql
        .execute_prepared(&p, &[Some(&14i32.to_be_bytes()), Some(&1i32.to_be_bytes())])
        .unwrap_err();
    assert!(e.to_string().contains("tinyint"), "{e}");
    // `SET l = [1] + l` still prepends: a column after `+` is no value.
    cql.execute("CREATE TABLE l (k int PRIMARY KEY, l list<int>)")
        .unwrap();
    cql.execute("UPDATE l SET l = [2] WHERE k = 1").unwrap();
    cql.execute("UPDATE l SET l = [1 + 0] + l WHERE k = 1")
        .unwrap();
    assert_eq!(shown(&mut cql, "SELECT l FROM l"), ["[1, 2]"]);
    // A chain of operations is bounded at parse time.
    let long = format!("SELECT v FROM t WHERE pk = 1{}", " + 1".repeat(100));
    let e = cql.execute(&long).unwrap_err();
    assert!(e.to_string().contains("at most 64 operations"), "{e}");
}

#[test]
fn a_timestamp_or_a_date_moves_by_a_duration() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (pk int, time timestamp, d date, v int, PRIMARY KEY (pk, time))",
    );
    let mut cql = ks_session(&db);
    for (m, v) in [(10, 1), (12, 2), (14, 3), (15, 4), (21, 5), (22, 6)] {
        cql.execute(&format!(
            "INSERT INTO t (pk, time, d, v) VALUES (1, '2016-09-27 16:{m}:00+0000', '2016-01-31', {v})"
        ))
        .unwrap();
    }
    let q = "SELECT v FROM t WHERE pk = 1 AND time > '2016-09-27 16:20:00+0000' - 5m";
    assert_eq!(shown(&mut cql, q), ["5", "6"].map(String::from));
    let p = cql
        .prepare("SELECT v FROM t WHERE pk = 1 AND time >= ? + 5m")
        .unwrap();
    let bound: Vec<String> = p.bind_columns().into_iter().map(|(n, _)| n).collect();
    assert_eq!(bound, ["arg0(system._add)"]);
    let at_16_15: i64 = 1_474_992_900_000;
    let CqlResult::Rows(rows) = cql
        .execute_prepared(&p, &[Some(&at_16_15.to_be_bytes())])
        .unwrap()
    else {
        panic!("not rows");
    };
    assert_eq!(rows.displayed(), [["5"], ["6"]]);
    // Months keep the day, or take the month's last (2016 is a leap year).
    assert_eq!(
        shown(
            &mut cql,
            "SELECT time - 10m, d + 1mo, d - 2d, d + 1y1mo FROM t WHERE pk = 1 LIMIT 1"
        ),
        ["2016-09-27 16:00:00.000000+0000|2016-02-29|2016-01-29|2017-02-28"]
    );
    let e = refused(
        &mut cql,
        "SELECT v FROM t WHERE pk = 1 AND time > '2016-09-27 16:15:00+0000' - 10us",
    );
    assert!(
        e.contains("the operation 'timestamp - duration' failed: The duration must have a millisecond precision. Was: 10us"),
        "{e}"
    );
    let e = refused(&mut cql, "SELECT d - 10m FROM t");
    assert!(
        e.contains("the operation 'date - duration' failed: The duration must have a day precision. Was: 10m"),
        "{e}"
    );
    for op in ["%", "*", "/"] {
        let e = refused(&mut cql, &format!("SELECT time {op} 10m FROM t"));
        assert!(
            e.contains(&format!(
                "the '{op}' operation is not supported between time and 10m"
            )),
            "{e}"
        );
    }
}
