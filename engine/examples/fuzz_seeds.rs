//! Writes the seed corpora of the file fuzz targets: small real SSTables (format 3: bytes,
//! UTF-8, long, composite and super column families; live, expiring and deleted cells; row,
//! super column, column and prefix deletions; rows that span blocks) for `sstable_read`, and commit-log segments
//! holding every kind of record for `commitlog_replay`. Mutations of real files reach the
//! decoders behind the magic, the lengths and (built for fuzzing) the checksums.
//!
//! `cargo run -p supercolumn --example fuzz_seeds -- fuzz/seeds`

// A generator stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use std::sync::Arc;

use supercolumn::comparator::{CompositeType, LongType, Utf8Type};
use supercolumn::{
    BatchMutation, ColumnFamilyDef, ColumnPath, CommitLogSync, Database, KeyspaceDef, Options,
    WriteOptions,
};

const KS: &str = "Keyspace1";

fn options() -> Options {
    let mut o = Options::default();
    // Blocks of 1 KiB: a seed of a few KiB still has several blocks and rows that span them.
    o.column_index_size_kb = Some(1);
    o.commit_log_sync = CommitLogSync::Batch { window_ms: 1.0 };
    o.min_compaction_threshold = 0;
    o
}

/// One batch of every kind of write and deletion, into every default column family.
fn write_all_kinds(db: &Database, round: i64) {
    let mut b = BatchMutation::new();
    for r in 0..6 {
        let key = format!("row{r}");
        for c in 0..4 {
            let name = format!("col{c}");
            let ts = WriteOptions::at(10 * round + c);
            let write = if c == 3 { ts.with_ttl(3600) } else { ts };
            b.insert(&key, ColumnPath::new("Standard1").column(&name), "v", write);
            b.insert(
                &key,
                ColumnPath::new("Standard2").column(&name),
                "utf8 v",
                write,
            );
            b.insert(
                &key,
                ColumnPath::new("Super1").super_column("sc").column(&name),
                "sub",
                write,
            );
        }
    }
    // One row wider than a block.
    for c in 0..40 {
        b.insert(
            "wide",
            ColumnPath::new("Standard1").column(format!("w{c:03}")),
            "x".repeat(60),
            WriteOptions::at(10 * round),
        );
    }
    b.remove("row1", ColumnPath::new("Standard1"), Some(10 * round + 5));
    b.remove(
        "row2",
        ColumnPath::new("Standard1").column("col0"),
        Some(10 * round + 6),
    );
    b.remove(
        "row3",
        ColumnPath::new("Super1").super_column("sc"),
        Some(10 * round + 7),
    );
    db.batch_mutate(KS, &b).unwrap();
}

fn data_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for ks in std::fs::read_dir(dir).unwrap() {
        let ks = ks.unwrap().path();
        if !ks.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&ks).unwrap() {
            let f = f.unwrap().path();
            if f.to_string_lossy().ends_with("-Data.db") {
                out.push(f);
            }
        }
    }
    out.sort();
    out
}

fn main() {
    let corpus = PathBuf::from(std::env::args().nth(1).unwrap_or("fuzz/seeds".into()));
    let dir = tempfile::tempdir().unwrap();
    let log_dir = tempfile::tempdir().unwrap();
    let mut o = options();
    o.commit_log_directory = Some(log_dir.path().to_path_buf());
    let db = Database::open(dir.path(), o).unwrap();
    db.create_keyspace(
        KeyspaceDef::new("Wide")
            .with_column_family(ColumnFamilyDef::standard("Timeline").with_comparator(LongType))
            .with_column_family(ColumnFamilyDef::standard("Rows").with_comparator(
                CompositeType::new(vec![Arc::new(Utf8Type), Arc::new(Utf8Type)]),
            )),
    )
    .unwrap();
    write_all_kinds(&db, 1);
    let mut b = BatchMutation::new();
    for c in 0..30i64 {
        b.insert(
            "t",
            ColumnPath::new("Timeline").column(c.to_be_bytes()),
            "tick",
            WriteOptions::at(c),
        );
    }
    // CQL-like rows: cells under composite names, and a prefix deletion over one of them.
    let name = |a: &str, b: &str| CompositeType::build(&[a.as_bytes(), b.as_bytes()], 0);
    for r in 0..3 {
        let key = format!("p{r}");
        for (a, c) in [("a", "x"), ("a", "y"), ("b", "x")] {
            b.insert(
                &key,
                ColumnPath::new("Rows").column(name(a, c)),
                "v",
                WriteOptions::at(r),
            );
        }
        b.remove_prefix(
            &key,
            ColumnPath::new("Rows").column(CompositeType::build(&[b"a"], 0)),
            Some(10),
        );
    }
    db.batch_mutate("Wide", &b).unwrap();
    // The commit log now holds every kind of record; keep its segments before flushing.
    let logs = corpus.join("commitlog_replay");
    std::fs::create_dir_all(&logs).unwrap();
    for (i, seg) in std::fs::read_dir(log_dir.path()).unwrap().enumerate() {
        std::fs::copy(seg.unwrap().path(), logs.join(format!("segment-{i}"))).unwrap();
    }
    db.flush_all().unwrap();
    write_all_kinds(&db, 2);
    db.flush_all().unwrap();
    db.compact(KS, Some("Standard1")).unwrap();
    let tables = corpus.join("sstable_read");
    std::fs::create_dir_all(&tables).unwrap();
    for f in data_files(dir.path()) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        std::fs::copy(&f, tables.join(name)).unwrap();
    }
    db.close().unwrap();
}
