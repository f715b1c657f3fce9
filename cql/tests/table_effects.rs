//! The table and keyspace options that mean something to the engine take effect, as in
//! Cassandra: `compression` on or off and its `chunk_length_in_kb` as the block size,
//! `bloom_filter_fp_chance`, the compaction thresholds (and `'enabled': false`), each also after
//! an `ALTER TABLE`; and `durable_writes = false`, whose writes skip the commit log (a crash
//! loses what is not flushed, a clean close flushes it).

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

mod common;

use common::copy_dir;
use common::{ks_session, open_cql};
use supercolumn::inspect::{FileStats, SstableFile};
use supercolumn::{Database, Options};
use supercolumn_cql::{CqlResult, Session};

const ROWS: usize = 2000;

/// Fills table `t` with `ROWS` rows of a compressible value, then flushes it.
fn fill(db: &Database, cql: &mut Session<'_>, t: &str) {
    let p = cql
        .prepare(&format!("INSERT INTO {t} (k, v) VALUES (?, ?)"))
        .unwrap();
    let value = "abcdefgh".repeat(16).into_bytes();
    for k in 0..ROWS as i32 {
        cql.execute_prepared(&p, &[Some(&k.to_be_bytes()), Some(&value)])
            .unwrap();
    }
    db.flush("ks", Some(t)).unwrap();
}

/// The statistics of table `t`'s one SSTable.
fn file_stats(db: &Database, dir: &Path, t: &str) -> FileStats {
    let files: Vec<PathBuf> = std::fs::read_dir(dir.join("ks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with(&format!("{t}-")) && name.ends_with("-Data.db")
        })
        .collect();
    assert_eq!(files.len(), 1, "{t}: {files:?}");
    let def = db.describe_column_family("ks", t).unwrap();
    SstableFile::open(&files[0], def, db.partitioner())
        .unwrap()
        .stats()
}

#[test]
fn compression_block_size_and_bloom_filter_follow_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE plain (k int PRIMARY KEY, v text);
         CREATE TABLE raw (k int PRIMARY KEY, v text) WITH compression = {'enabled': false};
         CREATE TABLE noop (k int PRIMARY KEY, v text)
             WITH compression = {'class': 'NoopCompressor'};
         CREATE TABLE small (k int PRIMARY KEY, v text)
             WITH compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 1};
         CREATE TABLE big (k int PRIMARY KEY, v text)
             WITH compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 64};
         CREATE TABLE loose (k int PRIMARY KEY, v text) WITH bloom_filter_fp_chance = 0.5;",
    );
    let mut cql = ks_session(&db);
    for t in ["plain", "raw", "noop", "small", "big", "loose"] {
        fill(&db, &mut cql, t);
    }
    let stats = |t: &str| file_stats(&db, dir.path(), t);
    assert!(
        stats("plain").compression_ratio > 2.0,
        "{:?}",
        stats("plain")
    );
    // Raw ÷ stored: at most 1 when stored raw (the framing adds a few bytes a block).
    assert!(stats("raw").compression_ratio <= 1.0, "compression off");
    assert!(stats("noop").compression_ratio <= 1.0, "NoopCompressor");
    assert!(
        stats("small").blocks > 8 * stats("big").blocks,
        "1 KiB blocks {} vs 64 KiB {}",
        stats("small").blocks,
        stats("big").blocks
    );
    assert!(
        stats("loose").bloom_bits * 4 < stats("plain").bloom_bits,
        "fp 0.5: {} bits, default: {}",
        stats("loose").bloom_bits,
        stats("plain").bloom_bits
    );
    // An altered table writes its next SSTables by its new options; kept across a reopen.
    cql.execute("ALTER TABLE raw WITH compression = {'class': 'LZ4Compressor'}")
        .unwrap();
    cql.execute("ALTER TABLE plain WITH compression = {'enabled': 'false'}")
        .unwrap();
    drop(cql);
    db.close().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    db.compact("ks", Some("raw")).unwrap();
    db.compact("ks", Some("plain")).unwrap();
    let stats = |t: &str| file_stats(&db, dir.path(), t);
    assert!(stats("raw").compression_ratio > 2.0, "{:?}", stats("raw"));
    assert!(stats("plain").compression_ratio <= 1.0);
}

#[test]
fn compaction_thresholds_follow_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE plain (k int PRIMARY KEY, v text);
         CREATE TABLE eager (k int PRIMARY KEY, v text)
             WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': 2};
         CREATE TABLE off (k int PRIMARY KEY, v text)
             WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'enabled': false};",
    );
    let mut cql = ks_session(&db);
    let sstables = |t: &str| {
        db.compact_pending("ks", Some(t)).unwrap();
        db.column_family_stats("ks", t).unwrap().sstables
    };
    for round in 0..5 {
        for t in ["plain", "eager", "off"] {
            cql.execute(&format!("INSERT INTO {t} (k, v) VALUES ({round}, 'x')"))
                .unwrap();
            db.flush("ks", Some(t)).unwrap();
        }
        if round == 2 {
            // Three SSTables: under the database's threshold of 4, over the table's 2.
            assert_eq!(sstables("plain"), 3);
            assert_eq!(sstables("eager"), 1);
        }
    }
    assert_eq!(sstables("off"), 5, "minor compactions are off");
    cql.execute(
        "ALTER TABLE off WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': 2}",
    )
    .unwrap();
    assert_eq!(sstables("off"), 1, "on again, by the altered threshold");
}

fn rows(cql: &mut Session<'_>, q: &str) -> usize {
    match cql.execute(q).unwrap().pop().unwrap() {
        CqlResult::Rows(r) => r.displayed().len(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn durable_writes_false_skips_the_commit_log_and_a_clean_close_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(dir.path(), "CREATE TABLE t (k int PRIMARY KEY, v text)");
    let mut cql = ks_session(&db);
    cql.execute(
        "CREATE KEYSPACE fast WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}
             AND durable_writes = false;
         CREATE TABLE fast.t (k int PRIMARY KEY, v text);",
    )
    .unwrap();
    assert!(!db.describe_keyspace("fast").unwrap().durable_writes);
    for k in 0..100 {
        for ks in ["ks", "fast"] {
            cql.execute(&format!("INSERT INTO {ks}.t (k, v) VALUES ({k}, 'v')"))
                .unwrap();
        }
    }
    let logged = |ks: &str| db.column_family_stats(ks, "t").unwrap().commitlog_bytes;
    assert!(logged("ks") > 0);
    assert_eq!(
        logged("fast"),
        0,
        "no commit log for durable_writes = false"
    );
    assert_eq!(rows(&mut cql, "SELECT * FROM fast.t"), 100);
    // A crash now: the durable keyspace's writes come back from the log, the other's are lost.
    let crashed = tempfile::tempdir().unwrap();
    // A copy of the directory is what a crash leaves: what was written, fsynced or not.
    copy_dir(dir.path(), crashed.path());
    {
        let after = Database::open(crashed.path(), Options::default()).unwrap();
        let mut c = Session::new(&after);
        assert_eq!(rows(&mut c, "SELECT * FROM ks.t"), 100);
        assert_eq!(rows(&mut c, "SELECT * FROM fast.t"), 0);
    }
    // A clean close keeps them: their memtables are flushed.
    drop(cql);
    db.close().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    assert!(!db.describe_keyspace("fast").unwrap().durable_writes);
    let mut cql = Session::new(&db);
    assert_eq!(rows(&mut cql, "SELECT * FROM fast.t"), 100);
    assert_eq!(rows(&mut cql, "SELECT * FROM ks.t"), 100);
    for (bad, says) in [
        (
            "'maybe'",
            "Invalid boolean value maybe for 'durable_writes'",
        ),
        ("'no'", ""),
        ("'1'", ""),
    ] {
        let r = cql.execute(&format!(
            "CREATE KEYSPACE k2 WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}} AND durable_writes = {bad}"
        ));
        match r {
            Err(e) => assert!(
                !says.is_empty() && e.to_string().contains(says),
                "{bad}: {e}"
            ),
            Ok(_) => {
                assert!(says.is_empty(), "{bad} accepted");
                cql.execute("DROP KEYSPACE k2").unwrap();
            }
        }
    }
}
