//! Cassandra 5's `writetime()`, `maxwritetime()`, `minwritetime()` and `ttl()` of the cells of
//! a multi-cell column: each element's of a non-frozen collection (in its order), each field's
//! of a non-frozen user type, one element's (`s[x]`, `m[k]`), a slice's (`m[a..b]`), a field's
//! (`u.f`); and of such a part of a frozen value (its one cell's time, when the part is there).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{ks_session, names, open_cql_with, paged, refused, shown};
use supercolumn::{ManualClock, Options};

/// A database whose clock stands at 1,000 seconds past an hour, so TTLs read exactly.
fn open(dir: &std::path::Path) -> supercolumn::Database {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000_000));
    let db = open_cql_with(
        dir,
        Options::default().with_clock(clock),
        "CREATE TYPE pt (f1 int, f2 int)",
    );
    let mut cql = ks_session(&db);
    for ddl in [
        "CREATE TYPE outer_t (f1 frozen<pt>, f2 frozen<pt>)",
        "CREATE TABLE t (k int, c int, l list<int>, s set<int>, m map<int, int>, \
         fs frozen<set<int>>, v map<int, frozen<set<int>>>, u pt, o outer_t, fu frozen<pt>, \
         PRIMARY KEY (k, c))",
    ] {
        cql.execute(ddl).unwrap();
    }
    drop(cql);
    db
}

/// The answers of `writetime`, `maxwritetime`, `minwritetime` and `ttl` of `part`, in one
/// row: `w|max|min|ttl`.
fn times(cql: &mut supercolumn_cql::Session<'_>, part: &str) -> String {
    let q = format!(
        "SELECT writetime({part}), maxwritetime({part}), minwritetime({part}), ttl({part}) \
         FROM t WHERE k = 1 AND c = 1"
    );
    let rows = shown(cql, &q);
    assert_eq!(rows.len(), 1, "{q}");
    rows[0].clone()
}

#[test]
fn each_element_of_a_collection_has_its_own_write_time_and_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, c, l, s, m) VALUES (1, 1, [1], {1}, {1: 10}) USING TIMESTAMP 1")
        .unwrap();
    for set in ["l = l + [2]", "s = s + {2}", "m = m + {2: 20}"] {
        let q = format!("UPDATE t USING TIMESTAMP 2 AND TTL 20000 SET {set} WHERE k = 1 AND c = 1");
        cql.execute(&q).unwrap();
    }
    for c in ["l", "s", "m"] {
        assert_eq!(times(&mut cql, c), "[1, 2]|2|1|[null, 20000]", "{c}");
    }
    // One element, a slice of them; none there: null.
    let want = [
        ("s[1]", "1|1|1|null"),
        ("s[2]", "2|2|2|20000"),
        ("s[3]", "null|null|null|null"),
        ("m[2]", "2|2|2|20000"),
        ("m[0..1]", "[1]|1|1|[null]"),
        ("m[..2]", "[1, 2]|2|1|[null, 20000]"),
        ("s[2..]", "[2]|2|2|[20000]"),
        ("s[3..]", "null|null|null|null"),
        ("m[2..2]", "[2]|2|2|[20000]"),
    ];
    for (part, answer) in want {
        assert_eq!(times(&mut cql, part), answer, "{part}");
    }
    let q = "SELECT writetime(s[2]), k, writetime(s[1]), writetime(s) FROM t";
    assert_eq!(shown(&mut cql, q), ["2|1|1|[1, 2]"]);
    assert_eq!(
        names(
            &mut cql,
            "SELECT writetime(s), ttl(m[1]), maxwritetime(l), ttl(s[..2]) FROM t"
        ),
        [
            "writetime(s):list<bigint>",
            "ttl(m[1]):int",
            "maxwritetime(l):bigint",
            "ttl(s[..2]):list<int>"
        ]
    );
    // An element deleted, and a whole collection overwritten, take their times with them.
    cql.execute("DELETE s[1] FROM t WHERE k = 1 AND c = 1")
        .unwrap();
    assert_eq!(times(&mut cql, "s"), "[2]|2|2|[20000]");
    cql.execute("UPDATE t USING TIMESTAMP 5 SET m = {7: 70, 8: 80} WHERE k = 1 AND c = 1")
        .unwrap();
    assert_eq!(times(&mut cql, "m"), "[5, 5]|5|5|[null, null]");
    // Aggregated over rows, as any value is.
    cql.execute("INSERT INTO t (k, c, s) VALUES (1, 2, {5}) USING TIMESTAMP 9")
        .unwrap();
    let q = "SELECT min(maxwritetime(s)), max(maxwritetime(s)) FROM t WHERE k = 1";
    assert_eq!(shown(&mut cql, q), ["2|9"]);
}

#[test]
fn a_static_collection_s_element_times_come_with_each_row_of_its_partition() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = ks_session(&db);
    cql.execute("CREATE TABLE st (k int, c int, ss set<int> static, PRIMARY KEY (k, c))")
        .unwrap();
    cql.execute("UPDATE st USING TIMESTAMP 3 SET ss = ss + {3} WHERE k = 1")
        .unwrap();
    cql.execute("UPDATE st USING TIMESTAMP 4 SET ss = ss + {4} WHERE k = 1")
        .unwrap();
    let q = "SELECT writetime(ss), c FROM st WHERE k = 1";
    assert_eq!(shown(&mut cql, q), ["[3, 4]|null"]);
    for c in [1, 2] {
        cql.execute(&format!("INSERT INTO st (k, c) VALUES (1, {c})"))
            .unwrap();
    }
    assert_eq!(shown(&mut cql, q), ["[3, 4]|1", "[3, 4]|2"]);
    let q = "SELECT c, maxwritetime(ss), writetime(ss[3]) FROM st WHERE k = 1 ORDER BY c DESC";
    assert_eq!(paged(&mut cql, q, 1), ["2|4|3", "1|4|3"]);
}

#[test]
fn times_of_rows_read_in_reverse_and_through_pages_keep_each_collection_s_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = ks_session(&db);
    for c in 1..=5 {
        for (e, ts) in [(3, 30), (1, 10), (2, 20)] {
            let q = format!(
                "UPDATE t USING TIMESTAMP {} SET s = s + {{{e}}} WHERE k = 1 AND c = {c}",
                ts + c
            );
            cql.execute(&q).unwrap();
        }
    }
    cql.execute("INSERT INTO t (k, c) VALUES (1, 6)").unwrap();
    let row = |c: i64| format!("{c}|[{}, {}, {}]", 10 + c, 20 + c, 30 + c);
    let mut want: Vec<String> = (1..=5).map(row).collect();
    want.push("6|null".into());
    let q = "SELECT c, writetime(s) FROM t WHERE k = 1";
    assert_eq!(shown(&mut cql, q), want);
    assert_eq!(paged(&mut cql, q, 2), want);
    want.reverse();
    let q = "SELECT c, writetime(s) FROM t WHERE k = 1 ORDER BY c DESC";
    assert_eq!(shown(&mut cql, q), want);
    assert_eq!(paged(&mut cql, q, 2), want);
    // Through a flush, the same.
    db.flush_all().unwrap();
    assert_eq!(paged(&mut cql, q, 3), want);
}

#[test]
fn a_user_type_s_fields_each_have_a_time_and_a_frozen_part_has_its_value_s_when_there() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = ks_session(&db);
    // No field set: null; one set, the other null in the list.
    cql.execute("INSERT INTO t (k, c, u, o) VALUES (1, 1, {f1: null, f2: null}, {f1: {f1: 1}}) USING TIMESTAMP 1 AND TTL 10000")
        .unwrap();
    assert_eq!(times(&mut cql, "u"), "null|null|null|null");
    assert_eq!(times(&mut cql, "o"), "[1, null]|1|1|[10000, null]");
    assert_eq!(times(&mut cql, "o.f1"), "1|1|1|10000");
    assert_eq!(times(&mut cql, "o.f1.f1"), "1|1|1|10000");
    assert_eq!(times(&mut cql, "o.f1.f2"), "null|null|null|null");
    assert_eq!(times(&mut cql, "o.f2"), "null|null|null|null");
    cql.execute("UPDATE t USING TIMESTAMP 2 SET u.f2 = 2 WHERE k = 1 AND c = 1")
        .unwrap();
    assert_eq!(times(&mut cql, "u"), "[null, 2]|2|2|[null, null]");
    assert_eq!(times(&mut cql, "u.f2"), "2|2|2|null");
    assert_eq!(times(&mut cql, "u.f1"), "null|null|null|null");
    // Frozen values: the one cell's time, when the part selected is there.
    cql.execute("UPDATE t USING TIMESTAMP 3 SET fs = {}, fu = {f1: 1} WHERE k = 1 AND c = 1")
        .unwrap();
    assert_eq!(times(&mut cql, "fs"), "3|3|3|null");
    assert_eq!(times(&mut cql, "fs[..0]"), "null|null|null|null");
    assert_eq!(times(&mut cql, "fu.f1"), "3|3|3|null");
    assert_eq!(times(&mut cql, "fu.f2"), "null|null|null|null");
    cql.execute("UPDATE t USING TIMESTAMP 4 SET fs = {1, 2} WHERE k = 1 AND c = 1")
        .unwrap();
    assert_eq!(times(&mut cql, "fs[1]"), "4|4|4|null");
    assert_eq!(times(&mut cql, "fs[3]"), "null|null|null|null");
    assert_eq!(times(&mut cql, "fs[2..3]"), "4|4|4|null");
    // A non-frozen map of frozen sets: an element's time when the part below it is there.
    cql.execute("UPDATE t USING TIMESTAMP 5 SET v = v + {1: {1, 2}} WHERE k = 1 AND c = 1")
        .unwrap();
    cql.execute("UPDATE t USING TIMESTAMP 6 SET v = v + {2: {3}} WHERE k = 1 AND c = 1")
        .unwrap();
    assert_eq!(times(&mut cql, "v"), "[5, 6]|6|5|[null, null]");
    assert_eq!(times(&mut cql, "v[1][2]"), "5|5|5|null");
    assert_eq!(times(&mut cql, "v[2][2]"), "null|null|null|null");
    assert_eq!(times(&mut cql, "v[2][3]"), "6|6|6|null");
}

#[test]
fn times_of_a_list_s_element_a_key_or_an_unknown_column_are_refused_in_cassandra_s_words() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut cql = ks_session(&db);
    for (q, why) in [
        (
            "SELECT writetime(l[0]) FROM t",
            "Element selection is only allowed on sets and maps, but l is a list",
        ),
        (
            "SELECT ttl(l[1..2]) FROM t",
            "Slice selection is only allowed on sets and maps, but l is a list",
        ),
        (
            "SELECT l[1..2] FROM t",
            "Slice selection is only allowed on sets and maps, but l is a list",
        ),
        (
            "SELECT maxwritetime(c) FROM t",
            "Cannot use selection function maxwritetime on PRIMARY KEY part c",
        ),
        ("SELECT writetime(u.nope) FROM t", "nope"),
        ("SELECT writetime(nope[1]) FROM t", "nope"),
    ] {
        let e = refused(&mut cql, q);
        assert!(e.contains(why), "{q}: {e}");
    }
}
