//! Cassandra 4's virtual tables (`system_views`) answer from the engine's counters and options,
//! and `system_virtual_schema` lists them, as drivers and cqlsh expect.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql, shown};

#[test]
fn system_views_answer_from_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), "CREATE TABLE t (k int PRIMARY KEY, v text)");
    let mut cql = ks_session(&db);
    for k in 0..20 {
        cql.execute(&format!(
            "INSERT INTO t (k, v) VALUES ({k}, '{}')",
            "x".repeat(k * 10)
        ))
        .unwrap();
    }
    db.flush_all().unwrap();
    for k in 0..7 {
        shown(&mut cql, &format!("SELECT v FROM t WHERE k = {k}"));
    }
    assert_eq!(
        shown(
            &mut cql,
            "SELECT value FROM system_views.settings WHERE name = 'Partitioner'"
        ),
        vec!["RandomPartitioner"]
    );
    let reads = shown(
        &mut cql,
        "SELECT count FROM system_views.local_read_latency WHERE keyspace_name = 'ks' AND table_name = 't'",
    );
    assert_eq!(reads, vec!["7"]);
    let writes = shown(
        &mut cql,
        "SELECT count FROM system_views.local_write_latency WHERE keyspace_name = 'ks' AND table_name = 't'",
    );
    assert_eq!(writes, vec!["20"]);
    assert_eq!(
        shown(
            &mut cql,
            "SELECT mebibytes FROM system_views.disk_usage WHERE keyspace_name = 'ks'"
        ),
        vec!["1"],
        "a few KiB round up to one MiB"
    );
    let caches = shown(&mut cql, "SELECT name FROM system_views.caches");
    assert_eq!(caches, vec!["chunks", "keys"]);
    assert_eq!(
        shown(&mut cql, "SELECT table_name FROM system_virtual_schema.tables WHERE keyspace_name = 'system_views'"),
        vec!["caches", "disk_usage", "local_read_latency", "local_write_latency", "settings"]
    );
    assert_eq!(
        shown(
            &mut cql,
            "SELECT column_name, kind, type FROM system_virtual_schema.columns WHERE keyspace_name = 'system_views' AND table_name = 'settings'"
        ),
        vec!["name|partition_key|text", "value|regular|text"]
    );
    assert!(cql
        .execute("INSERT INTO system_views.settings (name, value) VALUES ('a', 'b')")
        .is_err());
}
