//! Counter tables as Cassandra defines them: `UPDATE … SET c = c + n` (and `- n`) on rows
//! named by `=` and `IN`, counts read back as bigints, aggregates over them, `COUNTER` batches,
//! a deleted counter staying deleted, concurrent increments from many sessions summing
//! exactly, and each refusal in Cassandra's words (INSERT, SET, TIMESTAMP, TTL, mixed tables,
//! counters in keys and collections, conditions, mixed batches).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{ks_session, open_cql, refused, shown};
use supercolumn_cql::{CqlError, CqlResult};

const SCHEMA: &str = "CREATE TABLE hits (page text, day int, views counter, clicks counter,
     PRIMARY KEY (page, day));
     CREATE TABLE plain (k int PRIMARY KEY, v int)";

#[test]
fn increments_decrements_and_reads_of_counters() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    cql.execute("UPDATE hits SET views = views + 5 WHERE page = 'a' AND day = 1")
        .unwrap();
    cql.execute(
        "UPDATE hits SET views = views + 2, clicks = clicks + 1 WHERE page = 'a' AND day = 1",
    )
    .unwrap();
    cql.execute("UPDATE hits SET views = views - 10 WHERE page = 'a' AND day IN (1, 2)")
        .unwrap();
    cql.execute("UPDATE hits SET clicks = clicks + -4 WHERE page IN ('a', 'b') AND day = 3")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT page, day, views, clicks FROM hits"),
        ["a|1|-3|1", "a|2|-10|null", "a|3|null|-4", "b|3|null|-4"]
    );
    let rows = cql
        .query("SELECT views FROM hits WHERE page = 'a' AND day = 1")
        .unwrap();
    assert_eq!(rows.columns()[0].1.to_string(), "counter");
    assert_eq!(
        shown(
            &mut cql,
            "SELECT sum(views), max(clicks), count(*) FROM hits WHERE page = 'a'"
        ),
        ["-13|1|3"]
    );
    // Prepared, with a bound increment.
    let p = cql
        .prepare("UPDATE hits SET views = views + ? WHERE page = ? AND day = ?")
        .unwrap();
    for _ in 0..3 {
        cql.execute_prepared(
            &p,
            &[
                Some(&7i64.to_be_bytes()[..]),
                Some(b"c"),
                Some(&1i32.to_be_bytes()[..]),
            ],
        )
        .unwrap();
    }
    assert_eq!(
        shown(
            &mut cql,
            "SELECT views FROM hits WHERE page = 'c' AND day = 1"
        ),
        ["21"]
    );
    // A counter batch: both increments of one counter count.
    cql.execute(
        "BEGIN COUNTER BATCH
           UPDATE hits SET views = views + 1 WHERE page = 'd' AND day = 1;
           UPDATE hits SET views = views + 10 WHERE page = 'd' AND day = 1;
           UPDATE hits SET clicks = clicks + 2 WHERE page = 'e' AND day = 1;
         APPLY BATCH",
    )
    .unwrap();
    assert_eq!(
        shown(
            &mut cql,
            "SELECT page, views, clicks FROM hits WHERE page IN ('d', 'e') AND day = 1"
        ),
        ["d|11|null", "e|null|2"]
    );
}

#[test]
fn a_deleted_counter_cannot_be_written_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    cql.execute(
        "UPDATE hits SET views = views + 5, clicks = clicks + 1 WHERE page = 'a' AND day = 1",
    )
    .unwrap();
    cql.execute("DELETE views FROM hits WHERE page = 'a' AND day = 1")
        .unwrap();
    cql.execute("UPDATE hits SET views = views + 3 WHERE page = 'a' AND day = 1")
        .unwrap();
    assert_eq!(
        shown(
            &mut cql,
            "SELECT views, clicks FROM hits WHERE page = 'a' AND day = 1"
        ),
        ["null|1"]
    );
    cql.execute("DELETE FROM hits WHERE page = 'a'").unwrap();
    cql.execute("UPDATE hits SET clicks = clicks + 3 WHERE page = 'a' AND day = 2")
        .unwrap();
    assert!(shown(&mut cql, "SELECT * FROM hits WHERE page = 'a'").is_empty());
}

#[test]
fn counter_writes_are_refused_as_cassandra_refuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), SCHEMA);
    let mut cql = ks_session(&db);
    let cases = [
        (
            "INSERT INTO hits (page, day, views) VALUES ('a', 1, 1)",
            "INSERT statements are not allowed on counter tables, use UPDATE instead",
        ),
        (
            "UPDATE hits SET views = 1 WHERE page = 'a' AND day = 1",
            "Cannot set the value of counter column views (counters can only be incremented/decremented, not set)",
        ),
        (
            "UPDATE hits USING TIMESTAMP 5 SET views = views + 1 WHERE page = 'a' AND day = 1",
            "Cannot provide custom timestamp for counter updates",
        ),
        (
            "UPDATE hits USING TTL 5 SET views = views + 1 WHERE page = 'a' AND day = 1",
            "Cannot provide custom TTL for counter updates",
        ),
        (
            "UPDATE hits SET views = views + 1 WHERE page = 'a' AND day = 1 IF views = 1",
            "Conditional updates are not supported on counter tables",
        ),
        (
            "BEGIN BATCH UPDATE hits SET views = views + 1 WHERE page = 'a' AND day = 1; APPLY BATCH",
            "Cannot include a counter statement in a logged batch",
        ),
        (
            "BEGIN COUNTER BATCH INSERT INTO plain (k, v) VALUES (1, 1); APPLY BATCH",
            "Cannot include non-counter statement in a counter batch",
        ),
        (
            "BEGIN UNLOGGED BATCH INSERT INTO plain (k, v) VALUES (1, 1);
             UPDATE hits SET views = views + 1 WHERE page = 'a' AND day = 1; APPLY BATCH",
            "Counter and non-counter mutations cannot exist in the same batch",
        ),
        (
            "CREATE TABLE bad (k int PRIMARY KEY, c counter, v int)",
            "Cannot mix counter and non counter columns in the same table",
        ),
        (
            "CREATE TABLE bad (k counter PRIMARY KEY, c counter)",
            "counter type is not supported for PRIMARY KEY column 'k'",
        ),
        (
            "CREATE TABLE bad (k int PRIMARY KEY, c counter) WITH default_time_to_live = 5",
            "Cannot set default_time_to_live on a table with counters",
        ),
        (
            "UPDATE hits SET views = views + 1.5 WHERE page = 'a' AND day = 1",
            "Invalid FLOAT constant (1.5) for \"views\" of type counter",
        ),
        (
            "SELECT * FROM hits WHERE clicks = null ALLOW FILTERING",
            "Invalid null value for counter increment/decrement",
        ),
        (
            "SELECT writetime(views) FROM hits",
            "Cannot use selection function writeTime on counter column views",
        ),
    ];
    for (q, want) in cases {
        assert_eq!(refused(&mut cql, q), want, "{q}");
    }
    // Cassandra refuses these as configuration errors (code 0x2300).
    for (q, want) in [
        (
            "ALTER TABLE hits ADD v int",
            "Cannot have a non counter column (\"v\") in a counter table",
        ),
        (
            "ALTER TABLE plain ADD c counter",
            "Cannot have a counter column (\"c\") in a non counter table",
        ),
    ] {
        match cql.execute(q) {
            Err(e @ CqlError::Config(_)) => {
                assert_eq!(e.code(), 0x2300);
                assert!(e.to_string().ends_with(want), "{e}");
            }
            other => panic!("{q}: {other:?}"),
        }
    }
    // Nothing of a refused batch was written.
    assert!(shown(&mut cql, "SELECT * FROM plain").is_empty());
    assert!(shown(&mut cql, "SELECT * FROM hits").is_empty());
    // An unlogged batch of counters alone is taken.
    cql.execute(
        "BEGIN UNLOGGED BATCH UPDATE hits SET views = views + 1 WHERE page = 'a' AND day = 1; APPLY BATCH",
    )
    .unwrap();
    assert_eq!(shown(&mut cql, "SELECT views FROM hits"), ["1"]);
    // A counter filters by a number as any bigint does.
    assert_eq!(
        shown(
            &mut cql,
            "SELECT day FROM hits WHERE views > 0 ALLOW FILTERING"
        ),
        ["1"]
    );
}

#[test]
fn concurrent_increments_from_many_sessions_sum_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(open_cql(dir.path(), SCHEMA));
    let threads: Vec<_> = (0..8i64)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let cql = ks_session(&db);
                let p = cql
                    .prepare("UPDATE hits SET views = views + ?, clicks = clicks + 1 WHERE page = 'p' AND day = ?")
                    .unwrap();
                let mut cql = cql;
                for i in 0..300i64 {
                    let day = (i % 3) as i32;
                    let r = cql
                        .execute_prepared(
                            &p,
                            &[Some(&(t + 1).to_be_bytes()[..]), Some(&day.to_be_bytes()[..])],
                        )
                        .unwrap();
                    assert_eq!(r, CqlResult::Void);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut cql = ks_session(&db);
    // Each thread t adds t + 1 to a day 100 times, for three days.
    let per_day: i64 = (1..=8).map(|x| x * 100).sum();
    assert_eq!(
        shown(
            &mut cql,
            "SELECT day, views, clicks FROM hits WHERE page = 'p'"
        ),
        [
            format!("0|{per_day}|800"),
            format!("1|{per_day}|800"),
            format!("2|{per_day}|800")
        ]
    );
}

#[test]
fn the_shorthands_add_and_subtract_as_cassandra_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE sc (k int PRIMARY KEY, c counter);
         CREATE TABLE sl (k int PRIMARY KEY, l list<int>, s set<int>, m map<int, int>, i int)",
    );
    let mut cql = ks_session(&db);
    cql.execute("UPDATE sc SET c += 5 WHERE k = 0").unwrap();
    cql.execute("UPDATE sc SET c -= 2 WHERE k = 0").unwrap();
    assert_eq!(shown(&mut cql, "SELECT c FROM sc WHERE k = 0"), ["3"]);
    cql.execute("UPDATE sl SET l += [1, 2], s += {3, 4}, m += {1: 2} WHERE k = 0")
        .unwrap();
    cql.execute("UPDATE sl SET l -= [1], s -= {3} WHERE k = 0")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT l, s, m FROM sl WHERE k = 0"),
        ["[2]|{4}|{1: 2}"]
    );
    assert_eq!(
        refused(&mut cql, "UPDATE sl SET i += 1 WHERE k = 0"),
        "Invalid operation (i = i + 1) for non counter column i"
    );
}
