//! Range deletions as Cassandra defines them: `DELETE FROM t WHERE k = ? AND c >= ? AND c < ?`
//! (a slice after `=` on the clustering columns before it, a multi-column slice, rows named by
//! multi-column `=`/`IN`) deletes every row in the range — rows written there later with an
//! older timestamp too — and nothing else: not the partition's static columns, not rows outside
//! it. Each behaviour is checked with everything in the memtable and again flushed between the
//! writes, the deletion and the reads, then compacted, reopened (the commit log) and paged.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, paged, refused, shown};
use supercolumn::Database;
use supercolumn_cql::Session;

const ONE: &str = "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))";
const TWO: &str = "CREATE TABLE t (k int, c1 int, c2 int, v int, s int static, \
                   PRIMARY KEY (k, c1, c2))";

/// Runs `check` on a fresh table made by `schema`, once with everything in the memtable and
/// once flushing where `flush` is asked to.
fn both(schema: &str, check: impl Fn(&Database, &dyn Fn())) {
    for flushing in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = open_cql(dir.path(), schema);
        let flush = || {
            if flushing {
                db.flush_all().unwrap();
            }
        };
        check(&db, &flush);
    }
}

/// The `c` values of partition `k` of table `ONE`, in clustering order.
fn cs(cql: &mut Session<'_>, k: i32) -> Vec<String> {
    shown(cql, &format!("SELECT c FROM t WHERE k = {k}"))
}

fn fill_one(cql: &mut Session<'_>, partitions: i32) {
    for k in 0..partitions {
        for c in 0..5 {
            cql.execute(&format!(
                "INSERT INTO t (k, c, v) VALUES ({k}, {c}, {}) USING TIMESTAMP 10",
                k * 10 + c
            ))
            .unwrap();
        }
    }
}

#[test]
fn a_slice_of_one_clustering_column_deletes_the_rows_in_it() {
    both(ONE, |db, flush| {
        let mut cql = ks_session(db);
        fill_one(&mut cql, 4);
        flush();
        for q in [
            "DELETE FROM t WHERE k = 0 AND c >= 4",
            "DELETE FROM t WHERE k = 0 AND c > 2",
            "DELETE FROM t WHERE k = 0 AND c <= 0",
        ] {
            cql.execute(q).unwrap();
            flush();
        }
        assert_eq!(cs(&mut cql, 0), ["1", "2"]);
        cql.execute("DELETE FROM t WHERE k = 1 AND c >= 1 AND c < 3")
            .unwrap();
        flush();
        assert_eq!(cs(&mut cql, 1), ["0", "3", "4"]);
        // An empty range deletes nothing; a range past every row neither.
        cql.execute("DELETE FROM t WHERE k = 2 AND c > 3 AND c < 1")
            .unwrap();
        cql.execute("DELETE FROM t WHERE k = 2 AND c > 4").unwrap();
        flush();
        assert_eq!(cs(&mut cql, 2), ["0", "1", "2", "3", "4"]);
        // Several partitions at once; the others untouched.
        cql.execute("DELETE FROM t WHERE k IN (2, 3) AND c < 2")
            .unwrap();
        flush();
        assert_eq!(cs(&mut cql, 2), ["2", "3", "4"]);
        assert_eq!(cs(&mut cql, 3), ["2", "3", "4"]);
        // Reversed, counted, and read one row by name: the same rows are gone.
        let desc = shown(&mut cql, "SELECT c FROM t WHERE k = 1 ORDER BY c DESC");
        assert_eq!(desc, ["4", "3", "0"]);
        let count = shown(&mut cql, "SELECT count(*) FROM t WHERE k = 1");
        assert_eq!(count, ["3"]);
        assert!(shown(&mut cql, "SELECT v FROM t WHERE k = 1 AND c = 1").is_empty());
        assert_eq!(
            shown(&mut cql, "SELECT v FROM t WHERE k = 1 AND c = 3"),
            ["13"]
        );
        let sliced = shown(
            &mut cql,
            "SELECT c FROM t WHERE k = 1 AND c >= 1 AND c <= 3",
        );
        assert_eq!(sliced, ["3"]);
    });
}

#[test]
fn a_range_deletes_later_writes_older_than_it_and_not_newer_ones() {
    both(ONE, |db, flush| {
        let mut cql = ks_session(db);
        cql.execute("DELETE FROM t USING TIMESTAMP 100 WHERE k = 0 AND c > 1 AND c <= 3")
            .unwrap();
        flush();
        for (c, ts) in [(1, 50), (2, 50), (3, 100), (4, 50), (2, 150)] {
            cql.execute(&format!(
                "INSERT INTO t (k, c, v) VALUES (0, {c}, {ts}) USING TIMESTAMP {ts}"
            ))
            .unwrap();
            flush();
        }
        // c = 3 at the deletion's own timestamp is deleted (a tie goes to the deletion).
        let got = shown(&mut cql, "SELECT c, v FROM t WHERE k = 0");
        assert_eq!(got, ["1|50", "2|150", "4|50"]);
        // An UPDATE of one column of a deleted row at an older time stays deleted.
        cql.execute("UPDATE t USING TIMESTAMP 60 SET v = 1 WHERE k = 0 AND c = 3")
            .unwrap();
        assert_eq!(
            shown(&mut cql, "SELECT c FROM t WHERE k = 0 AND c = 3"),
            Vec::<String>::new()
        );
    });
}

#[test]
fn ranges_under_a_clustering_prefix_and_multi_column_ranges() {
    both(TWO, |db, flush| {
        let mut cql = ks_session(db);
        for c1 in 0..4 {
            for c2 in 0..4 {
                cql.execute(&format!(
                    "INSERT INTO t (k, c1, c2, v, s) VALUES (0, {c1}, {c2}, {}, 7)",
                    c1 * 10 + c2
                ))
                .unwrap();
            }
        }
        flush();
        let v =
            |cql: &mut Session<'_>| -> Vec<String> { shown(cql, "SELECT v FROM t WHERE k = 0") };
        cql.execute("DELETE FROM t WHERE k = 0 AND c1 = 0 AND c2 < 2")
            .unwrap();
        flush();
        cql.execute("DELETE FROM t WHERE k = 0 AND (c1, c2) > (2, 2)")
            .unwrap();
        flush();
        assert_eq!(
            v(&mut cql),
            ["2", "3", "10", "11", "12", "13", "20", "21", "22"]
        );
        cql.execute("DELETE FROM t WHERE k = 0 AND (c1, c2) >= (1, 1) AND (c1, c2) < (2, 1)")
            .unwrap();
        cql.execute("DELETE FROM t WHERE k = 0 AND (c1, c2) IN ((0, 3), (2, 2))")
            .unwrap();
        cql.execute("DELETE FROM t WHERE k = 0 AND c1 IN (0, 2) AND c2 >= 2")
            .unwrap();
        flush();
        assert_eq!(v(&mut cql), ["10", "21"]);
        // The partition's static column outlives every range, open ones included.
        cql.execute("DELETE FROM t WHERE k = 0 AND c1 < 2").unwrap();
        flush();
        assert_eq!(
            shown(&mut cql, "SELECT c1, c2, s FROM t WHERE k = 0"),
            ["2|1|7"]
        );
        cql.execute("DELETE FROM t WHERE k = 0 AND c1 >= 0")
            .unwrap();
        flush();
        assert_eq!(
            shown(&mut cql, "SELECT k, c1, c2, v, s FROM t WHERE k = 0"),
            ["0|null|null|null|7"]
        );
    });
}

#[test]
fn a_descending_clustering_column_deletes_by_value_not_by_storage_order() {
    let schema = "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c)) \
                  WITH CLUSTERING ORDER BY (c DESC)";
    both(schema, |db, flush| {
        let mut cql = ks_session(db);
        fill_one(&mut cql, 1);
        flush();
        cql.execute("DELETE FROM t WHERE k = 0 AND c > 2").unwrap();
        cql.execute("DELETE FROM t WHERE k = 0 AND c >= 0 AND c < 1")
            .unwrap();
        flush();
        assert_eq!(cs(&mut cql, 0), ["2", "1"]);
    });
}

#[test]
fn a_multi_column_range_over_mixed_orders_deletes_each_slice_of_it() {
    let schema = "CREATE TABLE t (k int, a int, b int, v int, PRIMARY KEY (k, a, b)) \
                  WITH CLUSTERING ORDER BY (a ASC, b DESC)";
    both(schema, |db, flush| {
        let mut cql = ks_session(db);
        for a in 0..3 {
            for b in 0..3 {
                cql.execute(&format!(
                    "INSERT INTO t (k, a, b, v) VALUES (0, {a}, {b}, 0) USING TIMESTAMP 10"
                ))
                .unwrap();
            }
        }
        flush();
        // (0, 1) < (a, b) <= (2, 0): a = 0 AND b > 1, a = 1, a = 2 AND b <= 0.
        cql.execute("DELETE FROM t WHERE k = 0 AND (a, b) > (0, 1) AND (a, b) <= (2, 0)")
            .unwrap();
        flush();
        let left = shown(&mut cql, "SELECT a, b FROM t WHERE k = 0");
        assert_eq!(left, ["0|1", "0|0", "2|2", "2|1"]);
    });
}

#[test]
fn range_deletions_survive_compaction_reopening_and_page_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open_cql(dir.path(), ONE);
        let mut cql = ks_session(&db);
        fill_one(&mut cql, 3);
        db.flush_all().unwrap();
        cql.execute("DELETE FROM t WHERE k = 0 AND c >= 1 AND c <= 3")
            .unwrap();
        db.flush_all().unwrap();
        db.compact("ks", Some("t")).unwrap();
        assert_eq!(cs(&mut cql, 0), ["0", "4"]);
        // Written after the compaction, older than the deletion: still deleted.
        cql.execute("INSERT INTO t (k, c, v) VALUES (0, 2, 0) USING TIMESTAMP 5")
            .unwrap();
        assert_eq!(cs(&mut cql, 0), ["0", "4"]);
        // Left in the commit log only.
        cql.execute("DELETE FROM t WHERE k = 1 AND c < 4").unwrap();
    }
    let db = Database::open(dir.path(), supercolumn::Options::default()).unwrap();
    let mut cql = ks_session(&db);
    assert_eq!(cs(&mut cql, 0), ["0", "4"]);
    assert_eq!(cs(&mut cql, 1), ["4"]);
    for size in 1..4 {
        let all = paged(&mut cql, "SELECT k, c FROM t", size);
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            ["0|0", "0|4", "1|4", "2|0", "2|1", "2|2", "2|3", "2|4"],
            "page {size}"
        );
    }
}

#[test]
fn a_purged_range_deletion_takes_the_rows_it_covered_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c)) WITH gc_grace_seconds = 0",
    );
    let mut cql = ks_session(&db);
    fill_one(&mut cql, 1);
    db.flush_all().unwrap();
    cql.execute("DELETE FROM t WHERE k = 0 AND c > 0").unwrap();
    db.flush_all().unwrap();
    // Past grace (none): a major compaction drops the deletion and what it covered together.
    db.compact("ks", Some("t")).unwrap();
    assert_eq!(cs(&mut cql, 0), ["0"]);
    db.compact("ks", Some("t")).unwrap();
    assert_eq!(cs(&mut cql, 0), ["0"]);
}

#[test]
fn what_cassandra_refuses_of_a_range_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), TWO);
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, c1, c2, v) VALUES (0, 1, 1, 1)")
        .unwrap();
    let specific = "Range deletions are not supported for specific columns";
    for q in [
        "DELETE v FROM t WHERE k = 0 AND c1 >= 1",
        "DELETE v FROM t WHERE k = 0 AND (c1, c2) >= (1, 1)",
        "DELETE v FROM t WHERE k = 0 AND c1 = 1",
        "DELETE v FROM t WHERE k = 0",
        "DELETE v, s FROM t WHERE k = 0 AND c1 = 1 AND c2 > 0",
    ] {
        assert_eq!(refused(&mut cql, q), specific, "{q}");
    }
    assert_eq!(
        refused(&mut cql, "DELETE s FROM t WHERE k = 0 AND c1 > 0"),
        "Invalid restrictions on clustering columns since the DELETE statement modifies only static columns"
    );
    assert_eq!(
        refused(&mut cql, "DELETE FROM t WHERE k = 0 AND c1 > 0 AND v = 1"),
        "Non PRIMARY KEY columns found in where clause: v "
    );
    assert_eq!(
        refused(&mut cql, "DELETE FROM t WHERE c1 > 0"),
        "Some partition key parts are missing: k"
    );
    for q in [
        // A range on a column after one that is not restricted by `=`.
        "DELETE FROM t WHERE k = 0 AND c2 > 0",
        "DELETE FROM t WHERE k = 0 AND c1 > 0 AND c2 > 0",
        "DELETE FROM t WHERE k > 0 AND c1 > 0",
        "DELETE FROM t WHERE token(k) > 0 AND c1 > 0",
    ] {
        assert!(cql.execute(q).is_err(), "{q}");
    }
    assert_eq!(shown(&mut cql, "SELECT v FROM t WHERE k = 0"), ["1"]);
}

#[test]
fn a_conditional_delete_names_one_row_and_other_operations_are_refused_in_cassandra_s_words() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), TWO);
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, c1, c2, v) VALUES (0, 1, 1, 1)")
        .unwrap();
    let whole = "DELETE statements must restrict all PRIMARY KEY columns with equality relations \
                 in order to delete non static columns";
    for q in [
        "DELETE FROM t WHERE k = 0 AND c1 = 1 AND c2 > 0 IF EXISTS",
        "DELETE FROM t WHERE k = 0 AND c1 = 1 IF EXISTS",
        "DELETE FROM t WHERE k = 0 IF v = 1",
    ] {
        assert_eq!(refused(&mut cql, q), whole, "{q}");
    }
    for (q, want) in [
        (
            "UPDATE t SET v = v + 1 WHERE k = 0 AND c1 = 1 AND c2 = 1",
            "Invalid operation (v = v + 1) for non counter column v",
        ),
        (
            "UPDATE t SET v = v - ? WHERE k = 0 AND c1 = 1 AND c2 = 1",
            "Invalid operation (v = v - ?) for non counter column v",
        ),
        (
            "UPDATE t SET v = 1 + v WHERE k = 0 AND c1 = 1 AND c2 = 1",
            "Invalid operation (v = 1 + v) for non list column v",
        ),
    ] {
        let e = match cql.prepare(q) {
            Ok(p) => match cql.execute_prepared(&p, &vec![Some(&[0, 0, 0, 1][..]); p.markers()]) {
                Err(supercolumn_cql::CqlError::Invalid(m)) => m,
                other => panic!("{q}: {other:?}"),
            },
            Err(supercolumn_cql::CqlError::Invalid(m)) => m,
            Err(other) => panic!("{q}: {other:?}"),
        };
        assert_eq!(e, want, "{q}");
    }
    assert_eq!(shown(&mut cql, "SELECT v FROM t WHERE k = 0"), ["1"]);
}
