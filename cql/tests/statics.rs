//! Static columns (`s int static`) as Cassandra defines them: one value per partition, shared
//! by its rows; written with or without a clustering key; read with every row, and alone (a
//! partition with statics and no row is one row, its clustering and regular columns null) when
//! the query restricts no clustering column; deleted alone or with their partition, never with
//! a row; shown in `DESCRIBE` and `system_schema.columns`. Each behaviour is checked before and
//! after a flush, since the static cells sort first in memtables and SSTables alike.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused as invalid, shown as rows};
use supercolumn::Database;
use supercolumn_cql::Session;

const SCHEMA: &str = "CREATE TABLE t (k int, c1 int, c2 int, v int, sv text static, \
                      PRIMARY KEY (k, c1, c2))";

/// The rows of `q` sorted, for a scan of several partitions (they come in token order).
fn sorted(cql: &mut Session<'_>, q: &str) -> Vec<String> {
    let mut r = rows(cql, q);
    r.sort();
    r
}

/// Runs `check` on a fresh table, once with everything in the memtable and once flushed
/// between the writes and the reads.
fn both(check: impl Fn(&Database, bool)) {
    for flush in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = open_cql(dir.path(), SCHEMA);
        check(&db, flush);
    }
}

fn flush(db: &Database, yes: bool) {
    if yes {
        db.flush_all().unwrap();
    }
}

#[test]
fn a_static_is_written_with_or_without_a_row_and_read_with_every_row() {
    both(|db, f| {
        let mut cql = ks_session(db);
        cql.execute("INSERT INTO t (k, c1, c2, sv) VALUES (0, 0, 0, 'A')")
            .unwrap();
        cql.execute("INSERT INTO t (k, sv) VALUES (1, 'B')")
            .unwrap();
        flush(db, f);
        // `*`: the partition key, the clustering columns, the statics, then the regular ones.
        assert_eq!(
            sorted(&mut cql, "SELECT * FROM t"),
            ["0|0|0|A|null", "1|null|null|B|null"]
        );
        cql.execute("INSERT INTO t (k, c1, c2, v) VALUES (1, 0, 0, 0)")
            .unwrap();
        cql.execute("INSERT INTO t (k, c1, c2, v) VALUES (1, 0, 1, 1)")
            .unwrap();
        flush(db, f);
        assert_eq!(
            sorted(&mut cql, "SELECT * FROM t"),
            ["0|0|0|A|null", "1|0|0|B|0", "1|0|1|B|1"]
        );
        assert_eq!(
            rows(
                &mut cql,
                "SELECT c2, sv FROM t WHERE k = 1 ORDER BY c1 DESC"
            ),
            ["1|B", "0|B"]
        );
        assert_eq!(
            rows(
                &mut cql,
                "SELECT sv, v FROM t WHERE k = 1 AND c1 = 0 AND c2 = 1"
            ),
            ["B|1"]
        );
        assert_eq!(rows(&mut cql, "SELECT COUNT(*) FROM t"), ["3"]);
        // One UPDATE of the static is seen by every row of its partition.
        cql.execute("UPDATE t SET sv = 'C' WHERE k = 1").unwrap();
        flush(db, f);
        assert_eq!(
            rows(&mut cql, "SELECT k, c2, sv FROM t WHERE k = 1"),
            ["1|0|C", "1|1|C"]
        );
        assert_eq!(
            sorted(&mut cql, "SELECT DISTINCT k, sv FROM t"),
            ["0|A", "1|C"]
        );
    });
}

#[test]
fn a_partition_of_statics_alone_is_one_row_unless_a_clustering_column_is_restricted() {
    both(|db, f| {
        let mut cql = ks_session(db);
        cql.execute("INSERT INTO t (k, sv) VALUES (5, 'only')")
            .unwrap();
        flush(db, f);
        assert_eq!(
            rows(&mut cql, "SELECT * FROM t WHERE k = 5"),
            ["5|null|null|only|null"]
        );
        assert_eq!(rows(&mut cql, "SELECT COUNT(*) FROM t WHERE k = 5"), ["1"]);
        assert!(rows(&mut cql, "SELECT * FROM t WHERE k = 5 AND c1 = 0").is_empty());
        assert!(rows(&mut cql, "SELECT * FROM t WHERE k = 5 AND c1 > 0").is_empty());
        // Deleting the static deletes the partition's one row.
        cql.execute("DELETE sv FROM t WHERE k = 5").unwrap();
        flush(db, f);
        assert!(rows(&mut cql, "SELECT * FROM t WHERE k = 5").is_empty());
    });
}

#[test]
fn a_partition_of_statics_alone_passes_a_filter_on_its_partition_key() {
    both(|db, f| {
        let mut cql = ks_session(db);
        cql.execute("INSERT INTO t (k, sv) VALUES (5, 'only')")
            .unwrap();
        cql.execute("INSERT INTO t (k, c1, c2, v, sv) VALUES (1, 1, 1, 1, 'row')")
            .unwrap();
        flush(db, f);
        assert_eq!(
            sorted(&mut cql, "SELECT * FROM t WHERE k >= 1 ALLOW FILTERING"),
            ["1|1|1|row|1", "5|null|null|only|null"]
        );
        assert_eq!(
            rows(&mut cql, "SELECT k, sv FROM t WHERE k > 1 ALLOW FILTERING"),
            ["5|only"]
        );
        assert_eq!(
            rows(
                &mut cql,
                "SELECT k FROM t WHERE k > 1 AND sv = 'only' ALLOW FILTERING"
            ),
            ["5"]
        );
        // A filter on a clustering or regular column needs a row.
        assert!(rows(
            &mut cql,
            "SELECT k FROM t WHERE k > 1 AND v = 1 ALLOW FILTERING"
        )
        .is_empty());
    });
}

#[test]
fn deleting_rows_keeps_the_static_and_deleting_the_partition_does_not() {
    both(|db, f| {
        let mut cql = ks_session(db);
        cql.execute(
            "BEGIN BATCH INSERT INTO t (k, c1, c2, v, sv) VALUES (1, 0, 0, 7, 'S'); \
             INSERT INTO t (k, c1, c2, v) VALUES (1, 1, 0, 8) APPLY BATCH",
        )
        .unwrap();
        flush(db, f);
        cql.execute("DELETE FROM t WHERE k = 1 AND c1 = 0").unwrap();
        flush(db, f);
        assert_eq!(rows(&mut cql, "SELECT * FROM t"), ["1|1|0|S|8"]);
        cql.execute("DELETE FROM t WHERE k = 1 AND c1 = 1 AND c2 = 0")
            .unwrap();
        flush(db, f);
        assert_eq!(rows(&mut cql, "SELECT * FROM t"), ["1|null|null|S|null"]);
        cql.execute("INSERT INTO t (k, c1, c2, v) VALUES (1, 2, 2, 9)")
            .unwrap();
        cql.execute("DELETE sv FROM t WHERE k = 1").unwrap();
        flush(db, f);
        assert_eq!(rows(&mut cql, "SELECT * FROM t"), ["1|2|2|null|9"]);
        cql.execute("UPDATE t SET sv = 'again' WHERE k = 1")
            .unwrap();
        cql.execute("DELETE FROM t WHERE k = 1").unwrap();
        flush(db, f);
        assert!(rows(&mut cql, "SELECT * FROM t").is_empty());
    });
}

#[test]
fn writes_of_statics_alone_refuse_clustering_restrictions_and_rows_need_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    assert_eq!(
        invalid(&mut cql, "UPDATE t SET sv = 'x' WHERE k = 0 AND c1 = 0 AND c2 = 0"),
        "Invalid restrictions on clustering columns since the UPDATE statement modifies only static columns"
    );
    assert_eq!(
        invalid(&mut cql, "DELETE sv FROM t WHERE k = 0 AND c1 = 0 AND c2 = 0"),
        "Invalid restrictions on clustering columns since the DELETE statement modifies only static columns"
    );
    // A regular column needs its row.
    invalid(&mut cql, "UPDATE t SET sv = 'x', v = 1 WHERE k = 0");
    invalid(&mut cql, "INSERT INTO t (k, v) VALUES (0, 1)");
    invalid(&mut cql, "INSERT INTO t (k, c1, sv) VALUES (0, 1, 'x')");
    // Statics and a row together: both written.
    cql.execute("UPDATE t SET sv = 'y', v = 2 WHERE k = 0 AND c1 = 0 AND c2 = 0")
        .unwrap();
    assert_eq!(rows(&mut cql, "SELECT * FROM t"), ["0|0|0|y|2"]);
}

#[test]
fn a_static_is_refused_where_cassandra_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    assert_eq!(
        invalid(&mut cql, "CREATE TABLE n (k int PRIMARY KEY, s int static)"),
        "Static columns are only useful (and thus allowed) if the table has at least one clustering column"
    );
    assert_eq!(
        invalid(
            &mut cql,
            "CREATE TABLE n (k int, c int static, PRIMARY KEY (k, c))"
        ),
        "Static column c cannot be part of the PRIMARY KEY"
    );
    cql.execute("CREATE TABLE p (k int PRIMARY KEY, v int)")
        .unwrap();
    assert_eq!(
        invalid(&mut cql, "ALTER TABLE p ADD s int static"),
        "Static columns are only useful (and thus allowed) if the table has at least one clustering column"
    );
}

#[test]
fn a_static_collection_is_updated_by_element_and_read_with_the_rows() {
    both(|db, f| {
        let mut cql = ks_session(db);
        cql.execute(
            "CREATE TABLE l (k1 text, k2 text, s_list list<int> static, m map<text, int> static, \
             v int, PRIMARY KEY (k1, k2))",
        )
        .unwrap();
        cql.execute("INSERT INTO l (k1, k2) VALUES ('a', 'b')")
            .unwrap();
        cql.execute("UPDATE l SET s_list = s_list + [0] WHERE k1 = 'a'")
            .unwrap();
        cql.execute("UPDATE l SET s_list = s_list + [1], m['x'] = 5 WHERE k1 = 'a'")
            .unwrap();
        flush(db, f);
        assert_eq!(
            rows(&mut cql, "SELECT * FROM l"),
            ["a|b|{'x': 5}|[0, 1]|null"]
        );
        cql.execute("UPDATE l SET s_list[0] = 9 WHERE k1 = 'a'")
            .unwrap();
        cql.execute("DELETE m['x'] FROM l WHERE k1 = 'a'").unwrap();
        cql.execute("INSERT INTO l (k1, k2, v) VALUES ('a', 'c', 3)")
            .unwrap();
        flush(db, f);
        assert_eq!(
            rows(&mut cql, "SELECT k2, s_list, m, v FROM l WHERE k1 = 'a'"),
            ["b|[9, 1]|null|null", "c|[9, 1]|null|3"]
        );
        // A replaced static collection keeps none of its old elements.
        cql.execute("UPDATE l SET s_list = [4] WHERE k1 = 'a'")
            .unwrap();
        flush(db, f);
        assert_eq!(
            rows(&mut cql, "SELECT s_list FROM l WHERE k1 = 'a' AND k2 = 'c'"),
            ["[4]"]
        );
    });
}

#[test]
fn statics_are_kept_in_the_schema_and_shown_as_cassandra_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    cql.execute("ALTER TABLE t ADD s2 list<int> static")
        .unwrap();
    let kinds = rows(
        &mut cql,
        "SELECT column_name, kind FROM system_schema.columns WHERE keyspace_name = 'ks' AND table_name = 't'",
    );
    for want in ["sv|static", "s2|static", "v|regular", "c1|clustering"] {
        assert!(kinds.iter().any(|r| r == want), "{want} in {kinds:?}");
    }
    let described = rows(&mut cql, "DESCRIBE TABLE t").join("\n");
    assert!(described.contains("sv text static,"), "{described}");
    assert!(described.contains("s2 list<int> static,"), "{described}");
    // Reopened, the table is the same.
    drop(cql);
    let path = dir.path().to_path_buf();
    drop(db);
    let db = Database::open(&path, supercolumn::Options::default()).unwrap();
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, sv, s2) VALUES (3, 'z', [1])")
        .unwrap();
    assert_eq!(
        rows(&mut cql, "SELECT * FROM t"),
        ["3|null|null|[1]|z|null"]
    );
}

#[test]
fn pages_of_a_partition_each_carry_its_static() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, sv) VALUES (1, 'P')")
        .unwrap();
    for c in 0..5 {
        cql.execute(&format!(
            "INSERT INTO t (k, c1, c2, v) VALUES (1, {c}, 0, {c})"
        ))
        .unwrap();
    }
    cql.execute("INSERT INTO t (k, sv) VALUES (2, 'Q')")
        .unwrap();
    let mut got = Vec::new();
    let mut after = None;
    loop {
        cql.set_page(Some(supercolumn_cql::PageRequest { size: 2, after }));
        let page = cql.query("SELECT k, c1, sv FROM t").unwrap();
        got.extend(page.displayed().into_iter().map(|r| r.join("|")));
        after = cql.page_end();
        if after.is_none() {
            break;
        }
    }
    let mut want = vec!["1|0|P", "1|1|P", "1|2|P", "1|3|P", "1|4|P", "2|null|Q"];
    // The partitions come in token order.
    if got.first().is_some_and(|r| r.starts_with('2')) {
        want.rotate_left(5);
    }
    assert_eq!(got, want);
}

#[test]
fn conditions_on_statics_are_checked_against_the_partitions_statics() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    let applied = |cql: &mut Session<'_>, q: &str| -> bool {
        let r = cql.query(q).unwrap_or_else(|e| panic!("{q}: {e}"));
        r.row(0).get(0) == Some(&[1u8][..])
    };
    assert!(applied(
        &mut cql,
        "INSERT INTO t (k, sv) VALUES (1, 'a') IF NOT EXISTS"
    ));
    assert!(!applied(
        &mut cql,
        "UPDATE t SET sv = 'b' WHERE k = 1 IF sv = 'z'"
    ));
    assert!(applied(
        &mut cql,
        "UPDATE t SET sv = 'b' WHERE k = 1 IF sv = 'a'"
    ));
    cql.execute("INSERT INTO t (k, c1, c2, v) VALUES (1, 0, 0, 1)")
        .unwrap();
    // A row's write conditioned on its partition's static.
    assert!(applied(
        &mut cql,
        "UPDATE t SET v = 2 WHERE k = 1 AND c1 = 0 AND c2 = 0 IF sv = 'b'"
    ));
    assert_eq!(rows(&mut cql, "SELECT * FROM t"), ["1|0|0|b|2"]);
    assert!(applied(
        &mut cql,
        "BEGIN BATCH UPDATE t SET sv = 'c' WHERE k = 1 IF sv = 'b'; \
         INSERT INTO t (k, c1, c2, v) VALUES (1, 1, 1, 3) APPLY BATCH"
    ));
    assert_eq!(
        rows(&mut cql, "SELECT c1, sv, v FROM t WHERE k = 1"),
        ["0|c|2", "1|c|3"]
    );
    let m = invalid(&mut cql, "UPDATE t SET sv = 'd' WHERE k = 1 IF v = 2");
    assert!(m.contains("non-static column v"), "{m}");
}

#[test]
fn a_condition_on_a_static_holds_for_a_row_that_does_not_exist_yet() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, sv) VALUES (1, 'a')")
        .unwrap();
    // The row (1, 0, 0) does not exist; its partition's static does, and decides.
    let r = cql
        .query("UPDATE t SET v = 5 WHERE k = 1 AND c1 = 0 AND c2 = 0 IF sv = 'a'")
        .unwrap();
    assert_eq!(r.row(0).get(0), Some(&[1u8][..]), "{r:?}");
    assert_eq!(rows(&mut cql, "SELECT * FROM t"), ["1|0|0|a|5"]);
    let r = cql
        .query("UPDATE t SET v = 6 WHERE k = 1 AND c1 = 9 AND c2 = 9 IF sv = 'z'")
        .unwrap();
    assert_eq!(r.row(0).get(0), Some(&[0u8][..]), "{r:?}");
    // Not applied: the answer carries the static that decided.
    assert!(
        r.displayed()[0].iter().any(|v| v == "a"),
        "{:?}",
        r.displayed()
    );
}

#[test]
fn a_range_of_partitions_selects_as_cassandra_allows() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE sd (k int, p int, s int static, v int, PRIMARY KEY (k, p))",
    );
    let mut cql = ks_session(&db);
    cql.execute("CREATE INDEX ON sd (v)").unwrap();
    cql.execute("INSERT INTO sd (k, p, s, v) VALUES (0, 0, 42, 1)")
        .unwrap();
    cql.execute("INSERT INTO sd (k, p, v) VALUES (0, 1, 1)")
        .unwrap();
    assert_eq!(
        rows(&mut cql, "SELECT p, s FROM sd WHERE v = 1"),
        ["0|42", "1|42"]
    );
    assert_eq!(
        rows(&mut cql, "SELECT DISTINCT s FROM sd WHERE k = 0"),
        ["42"]
    );
    for (q, says) in [
        (
            "SELECT s FROM sd WHERE v = 1",
            "Queries using 2ndary indexes don't support selecting only static columns",
        ),
        (
            "SELECT DISTINCT s FROM sd",
            "SELECT DISTINCT queries must request all the partition key columns (missing k)",
        ),
    ] {
        assert_eq!(invalid(&mut cql, q), says, "{q}");
    }
}
