//! Compaction seen through CQL: what a CQL table's compaction options change in what the
//! engine keeps.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use supercolumn::{CommitLogSync, Database, ManualClock, Options};
use supercolumn_cql::{CqlResult, Session};

/// 2013-07-23 in microseconds.
const T0: i64 = 1_374_546_754_299_000;

fn opts(clock: &Arc<ManualClock>) -> Options {
    let mut o = Options::default().with_clock(clock.clone());
    o.commit_log_sync = CommitLogSync::Batch { window_ms: 1.0 };
    o
}

/// The memtable half of the rule that a tombstone is purged only when no older data of its row
/// could survive it: an older value written after the tombstone's grace,
/// still unflushed, keeps the tombstone through a minor compaction that merges every SSTable
/// holding the row, or the value would come back.
#[test]
fn a_minor_compaction_keeps_a_tombstone_whose_row_has_older_data_in_a_memtable() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let db = Database::open(dir.path(), opts(&clock)).unwrap();
    let mut cql = Session::new(&db);
    cql.execute(
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
         USE ks;
         CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c)) WITH gc_grace_seconds = 0
             AND compaction = {'class': 'SizeTieredCompactionStrategy', 'enabled': false};
         INSERT INTO t (k, c, v) VALUES (2, 1, 1);",
    )
    .unwrap();
    db.flush("ks", Some("t")).unwrap();
    cql.execute("DELETE FROM t USING TIMESTAMP 2000 WHERE k = 1 AND c = 1")
        .unwrap();
    db.flush("ks", Some("t")).unwrap();
    clock.advance_seconds(60);
    cql.execute("INSERT INTO t (k, c, v) VALUES (1, 1, 5) USING TIMESTAMP 1000")
        .unwrap();
    let rows = |cql: &mut Session<'_>| match cql
        .execute("SELECT v FROM t WHERE k = 1")
        .unwrap()
        .pop()
        .unwrap()
    {
        CqlResult::Rows(r) => r.displayed().len(),
        other => panic!("{other:?}"),
    };
    assert_eq!(rows(&mut cql), 0);
    // Minor compactions on: the two SSTables (the tombstone's and another row's) are merged
    // while the older value is still in the memtable.
    cql.execute(
        "ALTER TABLE t WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': 2}",
    )
    .unwrap();
    db.compact_pending("ks", Some("t")).unwrap();
    let stats = db.column_family_stats("ks", "t").unwrap();
    assert_eq!((stats.sstables, stats.compactions), (1, 1), "{stats:?}");
    assert_eq!(stats.tombstones_purged, 0, "{stats:?}");
    assert_eq!(
        rows(&mut cql),
        0,
        "the older value came back: the tombstone was purged while a memtable held the row"
    );
}
