//! Which queries an index serves without `ALLOW FILTERING`, as Cassandra decides: every
//! restriction it filters with (those outside the primary key; the partition key's when they
//! name no partition whole; the clustering columns' when the partition key is not named whole
//! or they are no prefix) must be served by one index, or by the storage-attached indexes
//! together. An `IN` on the partition key does not go with an index.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused, shown};

const NEEDS: &str = "Cannot execute this query as it might involve data filtering and thus may \
                     have unpredictable performance. If you want to execute this query despite \
                     the performance unpredictability, use ALLOW FILTERING";

#[test]
fn an_index_query_filters_only_with_what_one_index_group_serves() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (pk1 int, pk2 int, c1 int, c2 int, v int, w int, \
         PRIMARY KEY ((pk1, pk2), c1, c2));
         CREATE TABLE s (k int, c int, v int, w int, PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    cql.execute("CREATE INDEX v_idx ON t (v)").unwrap();
    cql.execute("CREATE CUSTOM INDEX ON s (v) USING 'StorageAttachedIndex'")
        .unwrap();
    cql.execute("INSERT INTO t (pk1, pk2, c1, c2, v) VALUES (1, 1, 1, 1, 3)")
        .unwrap();
    cql.execute("INSERT INTO s (k, c, v) VALUES (0, 0, 1)")
        .unwrap();
    let one = vec!["1|1|1|1|3|null".to_string()];
    for (q, rows) in [
        ("v = 3", &one),
        ("pk1 = 1 AND pk2 = 1 AND v = 3", &one),
        ("pk1 = 1 AND pk2 = 1 AND c1 = 1 AND v = 3", &one),
        ("pk1 = 1 AND pk2 = 1 AND c1 > 0 AND v = 3", &one),
        ("pk1 = 1 AND pk2 = 1 AND c1 IN (1, 2) AND v = 3", &one),
        ("token(pk1, pk2) > -9223372036854775808 AND v = 3", &one),
    ] {
        assert_eq!(
            &shown(&mut cql, &format!("SELECT * FROM t WHERE {q}")),
            rows,
            "{q}"
        );
    }
    for q in [
        // Cassandra's own case (SecondaryIndexTest).
        "pk1 >= 1 AND pk2 <= 3 AND c1 IN (0, 1, 2) AND c2 IN (0, 1, 2) AND v = 3",
        "pk1 = 1 AND v = 3",
        "pk1 >= 1 AND v = 3",
        "c1 = 1 AND v = 3",
        "pk1 = 1 AND pk2 = 1 AND c2 = 1 AND v = 3",
        "v = 3 AND w = 1",
        "c1 = 1",
    ] {
        assert_eq!(
            refused(&mut cql, &format!("SELECT * FROM t WHERE {q}")),
            NEEDS,
            "{q}"
        );
        let allowed = format!("SELECT * FROM t WHERE {q} ALLOW FILTERING");
        cql.execute(&allowed).unwrap();
    }
    for q in [
        "SELECT * FROM t WHERE pk1 IN (1, 2) AND pk2 = 1 AND v = 3",
        "SELECT * FROM t WHERE pk1 IN (1, 2) AND pk2 = 1 AND v = 3 ALLOW FILTERING",
    ] {
        assert_eq!(
            refused(&mut cql, q),
            "Select on indexed columns and with IN clause for the PRIMARY KEY are not supported",
            "{q}"
        );
    }
    // The storage-attached indexes serve together: ranges on what they index too.
    assert_eq!(
        refused(&mut cql, "SELECT * FROM s WHERE c = 0 AND v = 1"),
        NEEDS
    );
    assert_eq!(shown(&mut cql, "SELECT k FROM s WHERE v > 0"), ["0"]);
    cql.execute("CREATE CUSTOM INDEX ON s (c) USING 'StorageAttachedIndex'")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT k FROM s WHERE c = 0 AND v = 1"),
        ["0"]
    );
    assert_eq!(
        shown(&mut cql, "SELECT k FROM s WHERE c >= 0 AND v > 0"),
        ["0"]
    );
    assert_eq!(
        refused(&mut cql, "SELECT * FROM s WHERE v = 1 AND w = 1"),
        NEEDS
    );
}

#[test]
fn a_legacy_index_answers_one_expression_and_a_second_on_its_column_filters() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (a text, id int, s set<text>, m map<text, text>, PRIMARY KEY (a, id));
         CREATE INDEX ON t (s);
         CREATE INDEX ON t (keys(m))",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (a, id, s, m) VALUES ('x', 1, {'l', 'n'}, {'l': '1', 'n': '2'})")
        .unwrap();
    for q in [
        "SELECT id FROM t WHERE a = 'x' AND s CONTAINS 'l' AND s CONTAINS 'n'",
        "SELECT id FROM t WHERE a = 'x' AND m CONTAINS KEY 'l' AND m CONTAINS KEY 'n'",
    ] {
        assert_eq!(refused(&mut cql, q), NEEDS, "{q}");
        assert_eq!(
            shown(&mut cql, &format!("{q} ALLOW FILTERING")),
            ["1"],
            "{q}"
        );
    }
    assert_eq!(
        shown(
            &mut cql,
            "SELECT id FROM t WHERE a = 'x' AND s CONTAINS 'l'"
        ),
        ["1"]
    );
}
