//! The fuzz targets' bodies (see `fuzz/`) on a few thousand random and mutated inputs, so CI
//! exercises them without a nightly compiler: none may panic, and each must finish.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::fuzz_input::run;
use common::*;
use supercolumn::{
    fuzz, BatchMutation, ColumnPath, CommitLogSync, Database, Options, WriteOptions,
};

/// A database that wrote a few rows with batch sync, and the paths of its segment and SSTable.
fn written(dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let mut o = Options::default();
    o.commit_log_sync = CommitLogSync::Batch { window_ms: 1.0 };
    o.column_index_size_kb = Some(1);
    let db = Database::open(dir, o).unwrap();
    let mut b = BatchMutation::new();
    for r in 0..20 {
        for c in 0..30 {
            b.insert(
                format!("row{r}"),
                ColumnPath::new("Standard1").column(format!("col{c:03}")),
                format!("value {r} {c}"),
                WriteOptions::at(c),
            );
        }
    }
    b.remove("row3", ColumnPath::new("Standard1"), Some(5));
    b.insert(
        "u",
        ColumnPath::new("Super1").super_column("sc").column("x"),
        "v",
        WriteOptions::now().with_ttl(60),
    );
    db.batch_mutate("Keyspace1", &b).unwrap();
    let seg = find(&dir.join("commit-log"), ".log");
    let segment = std::fs::read(seg).unwrap();
    db.flush("Keyspace1", Some("Standard1")).unwrap();
    let table = std::fs::read(find(&dir.join("Keyspace1"), "-Data.db")).unwrap();
    // `SC_FUZZ_SEED_DIR=dir cargo test --test fuzz_bodies` leaves these as fuzzing seeds.
    if let Some(out) = std::env::var_os("SC_FUZZ_SEED_DIR") {
        let out = PathBuf::from(out);
        for (target, bytes) in [("sstable_read", &table), ("commitlog_replay", &segment)] {
            let d = out.join(target);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("seed"), bytes).unwrap();
        }
        let d = out.join("storage_conf");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("seed"), include_str!("data/bloggy-storage-conf.xml")).unwrap();
    }
    (segment, table)
}

fn find(dir: &Path, suffix: &str) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(suffix))
        .unwrap()
}

#[test]
fn sstable_read_survives_random_and_mutated_files() {
    let dir = tempfile::tempdir().unwrap();
    let (_, table) = written(dir.path());
    let ok = run(&[table], fuzz::sstable_read, 3000, 1);
    assert!(ok < 3000, "some mutations must be caught");
}

#[test]
fn commitlog_replay_survives_random_and_mutated_segments() {
    let dir = tempfile::tempdir().unwrap();
    let (segment, _) = written(dir.path());
    assert!(fuzz::commitlog_replay(&segment).unwrap() > 0);
    run(&[segment], fuzz::commitlog_replay, 3000, 2);
}

#[test]
fn storage_conf_survives_random_and_mutated_xml() {
    let seeds: Vec<Vec<u8>> = [
        include_str!("data/bloggy-storage-conf.xml"),
        r#"<Storage><Partitioner>Murmur3Partitioner</Partitioner><CommitLogSync>batch</CommitLogSync><Keyspaces><Keyspace Name="K"><ColumnFamily Name="C" CompareWith="CompositeType(LongType,UTF8Type)" KeysCached="50%"/></Keyspace></Keyspaces></Storage>"#,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let body = |b: &[u8]| fuzz::storage_conf(b).map(|n| n as u64);
    run(&seeds, body, 3000, 3);
    let _ = T0;
}
