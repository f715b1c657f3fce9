//! What `CREATE INDEX` refuses, in Cassandra's order and words (durations anywhere in the
//! column's type, a non-collection column's `keys()`/`values()`/`full()`, a non-frozen user
//! type), and Cassandra 5's `USING` forms without `CUSTOM`: `'sai'` for a storage-attached
//! index, `'legacy_local_table'` for the index `CREATE INDEX` makes by default.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, refused, shown};

#[test]
fn create_index_refuses_what_cassandra_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TYPE dt (i int, d duration);
         CREATE TYPE ut (a int);
         CREATE TABLE t (k int PRIMARY KEY, d duration, l list<duration>, \
         m map<int, duration>, tu tuple<int, duration>, u frozen<dt>, v ut)",
    );
    let mut cql = ks_session(&db);
    for (q, says) in [
        (
            "CREATE INDEX ON t (d)",
            "Secondary indexes are not supported on duration columns",
        ),
        (
            "CREATE INDEX ON t (l)",
            "Secondary indexes are not supported on collections containing durations",
        ),
        (
            "CREATE INDEX ON t (m)",
            "Secondary indexes are not supported on collections containing durations",
        ),
        (
            "CREATE INDEX ON t (tu)",
            "Secondary indexes are not supported on tuples containing durations",
        ),
        (
            "CREATE INDEX ON t (u)",
            "Secondary indexes are not supported on UDTs containing durations",
        ),
        (
            "CREATE CUSTOM INDEX ON t (d) USING 'StorageAttachedIndex'",
            "Secondary indexes are not supported on duration columns",
        ),
        (
            "CREATE INDEX ON t (v)",
            "Cannot create index on non-frozen UDT column v",
        ),
        (
            "CREATE INDEX ON t (keys(v))",
            "Cannot create keys() index on v. Non-collection columns only support simple indexes",
        ),
        (
            "CREATE INDEX ON t (values(v))",
            "Cannot create values() index on v. Non-collection columns only support simple \
             indexes",
        ),
        (
            "CREATE INDEX ON t (full(v))",
            "full() indexes can only be created on frozen collections",
        ),
        (
            "CREATE INDEX ON t (k) USING 'nosuch'",
            "Unable to find custom indexer class 'nosuch'",
        ),
    ] {
        assert_eq!(refused(&mut cql, q), says, "{q}");
    }
}

#[test]
fn cassandra_5_names_the_implementation_after_using() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int PRIMARY KEY, v int, w int)",
    );
    let mut cql = ks_session(&db);
    cql.execute("CREATE INDEX v_sai ON t (v) USING 'SAI'")
        .unwrap();
    cql.execute("CREATE INDEX w_legacy ON t (w) USING 'legacy_local_table'")
        .unwrap();
    cql.execute("INSERT INTO t (k, v, w) VALUES (1, 2, 3)")
        .unwrap();
    assert_eq!(
        shown(
            &mut cql,
            "SELECT index_name, kind, options FROM system_schema.indexes WHERE keyspace_name = 'ks'"
        ),
        [
            "v_sai|CUSTOM|{'class_name': 'org.apache.cassandra.index.sai.StorageAttachedIndex', 'target': 'v'}",
            "w_legacy|COMPOSITES|{'target': 'w'}",
        ]
    );
    // A storage-attached index serves a range; the legacy one does not.
    assert_eq!(shown(&mut cql, "SELECT k FROM t WHERE v > 1"), ["1"]);
    assert_eq!(shown(&mut cql, "SELECT k FROM t WHERE w = 3"), ["1"]);
    let e = refused(&mut cql, "SELECT k FROM t WHERE w > 1");
    assert!(e.contains("ALLOW FILTERING"), "{e}");
}
