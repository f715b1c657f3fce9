//! Cassandra 4's virtual tables (`system_views`) answer from the engine's counters and options,
//! and `system_virtual_schema` lists them, as drivers and cqlsh expect.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{ks_session, open_cql, shown};
use supercolumn::{ColumnPath, Database, Options, WriteOptions};
use supercolumn_cql::Session;

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
        vec!["caches", "clients", "disk_usage", "local_read_latency", "local_write_latency", "settings", "sstable_tasks", "thread_pools"]
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

#[test]
fn sstable_tasks_show_a_running_compaction_and_thread_pools_count_the_engines_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.min_compaction_threshold = 0; // only the major compaction below runs
    let db = Arc::new(Database::open(dir.path(), o).unwrap());
    let path = ColumnPath::new("Standard1").column("c");
    for f in 0..3 {
        for i in 0..30_000 {
            db.insert(
                "Keyspace1",
                format!("k{f}-{i}"),
                &path,
                "v",
                WriteOptions::now(),
            )
            .unwrap();
        }
        db.flush("Keyspace1", Some("Standard1")).unwrap();
    }
    let done = Arc::new(AtomicBool::new(false));
    let compactor = {
        let (db, done) = (db.clone(), done.clone());
        std::thread::spawn(move || {
            db.compact("Keyspace1", Some("Standard1")).unwrap();
            done.store(true, Ordering::SeqCst);
        })
    };
    let mut cql = Session::new(&db);
    let q = "SELECT keyspace_name, table_name, kind, unit, total FROM system_views.sstable_tasks";
    let mut seen = Vec::new();
    while !done.load(Ordering::SeqCst) {
        seen.extend(shown(&mut cql, q));
    }
    compactor.join().unwrap();
    assert!(!seen.is_empty(), "the compaction was listed while it ran");
    assert!(
        seen.iter()
            .all(|r| r == "Keyspace1|Standard1|compaction|keys|90000"),
        "{seen:?}"
    );
    assert!(shown(&mut cql, q).is_empty(), "and not once done");
    let pools = shown(
        &mut cql,
        "SELECT name, active_tasks_limit, pending_tasks FROM system_views.thread_pools",
    );
    assert_eq!(
        pools,
        vec!["CompactionExecutor|1|0", "MemtableFlushWriter|1|0"],
        "an embedded session has no request pool"
    );
    assert!(shown(&mut cql, "SELECT * FROM system_views.clients").is_empty());
}
