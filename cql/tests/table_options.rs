//! A table's `WITH` options: `default_time_to_live` makes a write without `USING TTL` expire
//! (prepared or not, `INSERT` or `UPDATE`; `USING TTL 0` still writes forever), and
//! `gc_grace_seconds` and `comment` become the column family's; all three are kept across a
//! reopen and printed back by the table's `CREATE` statement. Options that tune Cassandra's own
//! machinery are accepted; an unknown one is refused, never ignored.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

mod common;

use common::{ks_session, open_cql_with};
use supercolumn::{Database, ManualClock, Options};
use supercolumn_cql::{CqlResult, Session};

const T0: i64 = 1_700_000_000_000_000;

fn shown(cql: &mut Session<'_>, q: &str) -> Vec<Vec<String>> {
    match cql.execute(q).unwrap().pop().unwrap() {
        CqlResult::Rows(r) => r.displayed(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn default_ttl_expires_writes_and_the_options_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let options = || Options::default().with_clock(clock.clone());
    let open = || Database::open(dir.path(), options()).unwrap();
    let db = open_cql_with(
        dir.path(),
        options(),
        "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))
             WITH CLUSTERING ORDER BY (c DESC) AND default_time_to_live = 100
             AND gc_grace_seconds = 0 AND comment = 'short-lived'
             AND compaction = {'class': 'LeveledCompactionStrategy'} AND caching = {'keys': 'ALL'};
         INSERT INTO t (k, c, v) VALUES (1, 1, 10);
         INSERT INTO t (k, c, v) VALUES (1, 2, 20) USING TTL 0;
         INSERT INTO t (k, c, v) VALUES (1, 3, 30) USING TTL 500;",
    );
    let mut cql = ks_session(&db);
    let p = cql
        .prepare("INSERT INTO t (k, c, v) VALUES (?, ?, ?)")
        .unwrap();
    let int = |v: i32| v.to_be_bytes().to_vec();
    cql.execute_prepared(&p, &[Some(&int(1)), Some(&int(4)), Some(&int(40))])
        .unwrap();
    cql.execute("UPDATE t SET v = 50 WHERE k = 1 AND c = 5")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT c, TTL(v) FROM t WHERE k = 1"),
        [
            ["5", "100"],
            ["4", "100"],
            ["3", "500"],
            ["2", "null"],
            ["1", "100"]
        ]
        .map(|r| r.map(String::from))
    );
    let def = db.describe_column_family("ks", "t").unwrap();
    assert_eq!(def.gc_grace_seconds, Some(0));
    assert_eq!(def.comment.as_deref(), Some("short-lived"));
    let text = def.cql_table.unwrap();
    assert!(
        text.contains("default_time_to_live = 100")
            && text.contains("gc_grace_seconds = 0")
            && text.contains("comment = 'short-lived'")
            && text.contains("CLUSTERING ORDER BY (c DESC)"),
        "{text}"
    );
    drop(cql);
    db.close().unwrap();

    // After a reopen the default still applies, and what outlived it is all that is left.
    let db = open();
    let mut cql = Session::new(&db);
    cql.execute("USE ks").unwrap();
    cql.execute("INSERT INTO t (k, c, v) VALUES (1, 6, 60)")
        .unwrap();
    clock.advance_seconds(101);
    assert_eq!(
        shown(&mut cql, "SELECT c, v FROM t WHERE k = 1"),
        [["3", "30"], ["2", "20"]].map(|r| r.map(String::from))
    );
    // A DELETE is not given the default TTL (nor may it have one).
    cql.execute("DELETE FROM t WHERE k = 1 AND c = 2").unwrap();
    clock.advance_seconds(1000);
    assert!(shown(&mut cql, "SELECT c FROM t WHERE k = 1").is_empty());

    // ALTER TABLE … WITH changes what it names and keeps the rest. A statement prepared under
    // the old default TTL must be prepared again rather than write with it.
    let p = cql
        .prepare("INSERT INTO t (k, c, v) VALUES (?, ?, ?)")
        .unwrap();
    cql.execute("ALTER TABLE t WITH default_time_to_live = 0 AND comment = 'kept'")
        .unwrap();
    let e = cql
        .execute_prepared(&p, &[Some(&int(2)), Some(&int(9)), Some(&int(9))])
        .unwrap_err();
    assert!(e.to_string().contains("prepare it again"), "{e}");
    cql.execute("INSERT INTO t (k, c, v) VALUES (2, 1, 1)")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT TTL(v) FROM t WHERE k = 2"),
        [["null"]]
    );
    cql.execute("ALTER TABLE t WITH gc_grace_seconds = 7")
        .unwrap();
    let def = db.describe_column_family("ks", "t").unwrap();
    assert_eq!(
        (def.gc_grace_seconds, def.comment.as_deref()),
        (Some(7), Some("kept"))
    );
    let text = def.cql_table.unwrap();
    assert!(
        !text.contains("default_time_to_live") && text.contains("CLUSTERING ORDER BY (c DESC)"),
        "{text}"
    );
    assert!(cql
        .execute("ALTER TABLE t WITH default_time_to_live = -5")
        .is_err());
    let e = cql
        .execute("ALTER TABLE t WITH id = 5a1c395e-b41f-11e5-9f22-ba0be0483c18")
        .unwrap_err();
    assert!(e.to_string().contains("table id"), "{e}");
    cql.execute("ALTER TABLE t WITH default_time_to_live = 50")
        .unwrap();
    cql.execute("INSERT INTO t (k, c, v) VALUES (2, 2, 2)")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT c, TTL(v) FROM t WHERE k = 2"),
        [["2", "50"], ["1", "null"]].map(|r| r.map(String::from))
    );
    cql.execute("DELETE FROM t WHERE k = 2").unwrap();

    for bad in [
        "CREATE TABLE u (k int PRIMARY KEY) WITH default_ttl = 5",
        "CREATE TABLE u (k int PRIMARY KEY) WITH default_time_to_live = -1",
        "CREATE TABLE u (k int PRIMARY KEY) WITH gc_grace_seconds = 'x'",
    ] {
        let e = cql.execute(bad).unwrap_err().to_string();
        assert!(
            e.contains("default_t") || e.contains("gc_grace"),
            "{bad}: {e}"
        );
    }
    assert!(db.describe_column_family("ks", "u").is_err());
}

/// A prepared statement pins the table's definition as the open database holds it: one
/// prepared before an `ALTER … WITH default_time_to_live` is stale, also after the database is
/// reopened (a count of alterations from zero would match it again, and it would write with
/// the old default), while an `ALTER` of what no statement applies (the comment, the grace
/// period) leaves it running.
#[test]
fn a_statement_prepared_before_an_alteration_stays_stale_after_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let options = || Options::default().with_clock(clock.clone());
    let open = || Database::open(dir.path(), options()).unwrap();
    let int = |v: i32| v.to_be_bytes().to_vec();
    let db = open_cql_with(
        dir.path(),
        options(),
        "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c)) WITH default_time_to_live = 100;",
    );
    let mut cql = ks_session(&db);
    let p = cql
        .prepare("INSERT INTO t (k, c, v) VALUES (?, ?, ?)")
        .unwrap();
    cql.execute("ALTER TABLE t WITH comment = 'only words' AND gc_grace_seconds = 5")
        .unwrap();
    cql.execute_prepared(&p, &[Some(&int(1)), Some(&int(1)), Some(&int(1))])
        .unwrap();
    cql.execute("ALTER TABLE t WITH default_time_to_live = 0")
        .unwrap();
    assert!(cql
        .execute_prepared(&p, &[Some(&int(1)), Some(&int(2)), Some(&int(2))])
        .is_err());
    drop(cql);
    db.close().unwrap();

    let db = open();
    let mut cql = Session::new(&db);
    cql.execute("USE ks").unwrap();
    let e = cql
        .execute_prepared(&p, &[Some(&int(1)), Some(&int(3)), Some(&int(3))])
        .unwrap_err();
    assert!(e.to_string().contains("prepare it again"), "{e}");
    assert!(!cql.is_current(&p));
    let again = cql
        .prepare("INSERT INTO t (k, c, v) VALUES (?, ?, ?)")
        .unwrap();
    assert!(cql.is_current(&again));
    cql.execute_prepared(&again, &[Some(&int(1)), Some(&int(3)), Some(&int(3))])
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT c, TTL(v) FROM t WHERE k = 1"),
        [["1", "100"], ["3", "null"]].map(|r| r.map(String::from))
    );
}

/// Compaction purges tombstones by the grace period the table has when it runs: one altered
/// after the delete counts, not the one the column family was opened with.
#[test]
fn compaction_follows_an_altered_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let db = open_cql_with(
        dir.path(),
        Options::default().with_clock(clock.clone()),
        "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c));
         INSERT INTO t (k, c, v) VALUES (1, 1, 10);",
    );
    let mut cql = ks_session(&db);
    db.flush("ks", Some("t")).unwrap();
    clock.advance_seconds(1);
    cql.execute("DELETE v FROM t WHERE k = 1 AND c = 1")
        .unwrap();
    db.flush("ks", Some("t")).unwrap();
    clock.advance_seconds(60);
    // Within the database's grace (ten days), the tombstone stays.
    db.compact("ks", Some("t")).unwrap();
    assert_eq!(
        db.column_family_stats("ks", "t").unwrap().tombstones_purged,
        0
    );
    cql.execute("ALTER TABLE t WITH gc_grace_seconds = 30")
        .unwrap();
    db.compact("ks", Some("t")).unwrap();
    assert_eq!(
        db.column_family_stats("ks", "t").unwrap().tombstones_purged,
        1
    );
    assert_eq!(
        shown(&mut cql, "SELECT c, v FROM t WHERE k = 1"),
        [["1", "null"]]
    );
}

#[test]
fn every_option_set_is_kept_and_checked_as_cassandra_checks_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql_with(
        dir.path(),
        Options::default(),
        "CREATE TABLE o (k int PRIMARY KEY, v int) WITH bloom_filter_fp_chance = 0.1
             AND compression = {'class': 'SnappyCompressor', 'chunk_length_in_kb': 32}
             AND compaction = {'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': 160}
             AND min_index_interval = 64 AND max_index_interval = 1024
             AND speculative_retry = '95p'",
    );
    let text = |db: &Database| {
        db.describe_column_family("ks", "o")
            .unwrap()
            .cql_table
            .unwrap()
    };
    for want in [
        "bloom_filter_fp_chance = 0.1",
        "compression = {'class': 'SnappyCompressor', 'chunk_length_in_kb': 32}",
        "compaction = {'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': 160}",
        "min_index_interval = 64",
        "max_index_interval = 1024",
        "speculative_retry = '95p'",
    ] {
        // Before: accepted, then shown as the defaults.
        assert!(text(&db).contains(want), "{want} in {}", text(&db));
    }
    db.close().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    assert!(
        text(&db).contains("bloom_filter_fp_chance = 0.1"),
        "kept across a reopen"
    );
    let mut cql = ks_session(&db);
    cql.execute("ALTER TABLE o WITH bloom_filter_fp_chance = 0.5")
        .unwrap();
    assert!(
        text(&db).contains("bloom_filter_fp_chance = 0.5")
            && text(&db).contains("min_index_interval = 64")
    );
    for (bad, says) in [
        ("compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 0}", "chunk_length_in_kb"),
        ("compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': -1}", "chunk_length_in_kb"),
        ("compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 3}", "power of 2"),
        ("compression = {'class': 'LZ4Compressor', 'nope': 1}", "Unknown compression options"),
        ("compression = {'class': 'BrotliCompressor'}", "BrotliCompressor"),
        ("bloom_filter_fp_chance = 0", "bloom_filter_fp_chance must be larger than 0.0"),
        ("bloom_filter_fp_chance = 1.5", "bloom_filter_fp_chance must be larger than 0.0"),
        ("compaction = {'class': 'NoSuchStrategy'}", "Unable to find compaction strategy class"),
        ("compaction = {'min_threshold': 4}", "Missing sub-option 'class'"),
        ("compaction = {'class': 'SizeTieredCompactionStrategy', 'foo': 1}", "are not understood by"),
        ("compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': 8, 'max_threshold': 4}", "max_threshold"),
        ("min_index_interval = 0", "min_index_interval must be greater than 0"),
        ("max_index_interval = 32", "max_index_interval must be greater than or equal to min_index_interval"),
    ] {
        let e = cql.execute(&format!("ALTER TABLE o WITH {bad}")).unwrap_err();
        assert!(e.to_string().contains(says), "{bad}: {e}");
        let e = cql
            .execute(&format!("CREATE TABLE p (k int PRIMARY KEY) WITH {bad}"))
            .unwrap_err();
        assert!(e.to_string().contains(says), "CREATE … {bad}: {e}");
    }
    for (bad, says) in [
        (
            "{'class': 'SimpleStrategy'}",
            "SimpleStrategy requires a replication_factor strategy option.",
        ),
        (
            "{'class': 'NoSuchStrategy', 'replication_factor': 1}",
            "Unable to find replication strategy class",
        ),
        (
            "{'class': 'SimpleStrategy', 'replication_factor': 1} AND colour = 'blue'",
            "replication or durable_writes",
        ),
    ] {
        let e = cql
            .execute(&format!("CREATE KEYSPACE k2 WITH replication = {bad}"))
            .unwrap_err();
        assert!(e.to_string().contains(says), "{bad}: {e}");
    }
    cql.execute("CREATE KEYSPACE k3 WITH replication = {'class': 'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor': 1} AND durable_writes = true")
        .unwrap();
}
