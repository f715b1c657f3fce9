//! Databases written before SSTable format 2 keep working: `tests/data/v1-db` was written by the
//! version-1 writer (commit f65b171, with `SUPERCOLUMN_WRITE_V1_FIXTURE=1 cargo test --test
//! format_v1`) — three column families over three flushes plus an unflushed commit-log tail —
//! and `tests/data/v1-db.expected` holds every answer that code gave. Today's code must open it,
//! give the same answers, rewrite it into the current format by compaction, and still give them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::copy_dir;
use supercolumn::comparator::{LongType, Utf8Type};
use supercolumn::{
    BatchMutation, ColumnFamilyDef, ColumnOrSuperColumn, ColumnParent, ColumnPath, CommitLogSync,
    Database, KeyRange, KeyspaceDef, ManualClock, Options, SlicePredicate, SliceRange,
    WriteOptions,
};

/// The fixture's "now" (2023-11-14T22:13:20Z), in microseconds.
const T: i64 = 1_700_000_000_000_000;
/// When the answers are read: 50 s later, so some TTL cells have expired.
const READ_AT: i64 = T + 50_000_000;
const KS: &str = "Fixture";

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1-db")
}

fn expected_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1-db.expected")
}

fn schema() -> Vec<KeyspaceDef> {
    vec![KeyspaceDef::new(KS)
        .with_column_family(ColumnFamilyDef::standard("Points"))
        .with_column_family(ColumnFamilyDef::standard("Wide").with_comparator(LongType))
        .with_column_family(
            ColumnFamilyDef::super_family("Supers")
                .with_comparator(Utf8Type)
                .with_subcomparator(LongType),
        )]
}

fn options(clock: Arc<ManualClock>) -> Options {
    let mut o = Options::default().with_clock(clock);
    o.keyspaces = Some(schema());
    // Every write is fsynced, so the unflushed tail is on disk when the writer stops.
    o.commit_log_sync = CommitLogSync::Batch { window_ms: 0.0 };
    o
}

/// One third of the fixture's writes; `part` 0, 1, 2.
fn write_part(db: &Database, part: u64) {
    let ts = |i: u64| T + (part * 1_000_000 + i) as i64;
    let mut b = BatchMutation::new();
    for i in (part * 100)..(part * 100 + 100) {
        let key = format!("row{i:04}");
        let path = ColumnPath::new("Points");
        b.insert(
            &key,
            path.clone().column("a"),
            format!("a-{i}"),
            WriteOptions::at(ts(i)),
        );
        b.insert(
            &key,
            path.clone().column("b"),
            vec![i as u8; (i % 50) as usize + 1],
            WriteOptions::at(ts(i)),
        );
        if i % 11 == 0 {
            // Expired by READ_AT when the TTL is 30 s; live with 1000 s.
            let ttl = if i % 2 == 0 { 30 } else { 1000 };
            b.insert(
                &key,
                path.clone().column("t"),
                "ttl",
                WriteOptions::at(ts(i)).with_ttl(ttl),
            );
        }
        if i % 13 == 0 {
            b.remove(&key, path.clone().column("a"), Some(ts(i) + 1));
        }
        if i % 37 == 0 {
            b.remove(&key, path.clone(), Some(ts(i) + 2));
        }
    }
    db.batch_mutate(KS, &b).unwrap();
    // Wide rows spanning many blocks; an older part's columns overwritten by a later one.
    for r in 0..2u64 {
        let mut b = BatchMutation::new();
        for c in 0..1500u64 {
            let name = LongType::encode((c * 2 + part) as i64 * if r == 0 { 1 } else { -1 });
            let path = ColumnPath::new("Wide").column(name);
            b.insert(
                format!("wide{r}"),
                path.clone(),
                format!("p{part}-c{c}-0123456789"),
                WriteOptions::at(ts(c)),
            );
            if c % 97 == 0 {
                b.remove(format!("wide{r}"), path, Some(ts(c) + 1));
            }
        }
        db.batch_mutate(KS, &b).unwrap();
    }
    let mut b = BatchMutation::new();
    for i in 0..30u64 {
        let key = format!("super{i:02}");
        for s in 0..3 {
            for c in 0..4i64 {
                let path = ColumnPath::new("Supers")
                    .super_column(format!("sc{s}"))
                    .column(LongType::encode(c + part as i64 * 10));
                b.insert(
                    &key,
                    path,
                    format!("v{part}{s}{c}"),
                    WriteOptions::at(ts(i)),
                );
            }
        }
        if (i + part).is_multiple_of(7) {
            b.remove(
                &key,
                ColumnPath::new("Supers").super_column("sc1"),
                Some(ts(i) + 1),
            );
        }
    }
    db.batch_mutate(KS, &b).unwrap();
}

fn write_fixture(dir: &Path) {
    let clock = Arc::new(ManualClock::new(T));
    let db = Database::open(dir, options(clock)).unwrap();
    for part in 0..3 {
        write_part(&db, part);
        if part < 2 {
            db.flush_all().unwrap();
        }
    }
    // Stop without closing, as a killed process would: the last part stays in the log only.
    std::mem::forget(db);
}

fn column(out: &mut String, c: &supercolumn::Column) {
    let _ = write!(
        out,
        " {}={}@{}",
        hex::encode(&c.name),
        hex::encode(&c.value),
        c.timestamp
    );
    if let Some(t) = c.ttl {
        let _ = write!(out, " ttl {t}");
    }
}

fn results(out: &mut String, cols: &[ColumnOrSuperColumn]) {
    for c in cols {
        match c {
            ColumnOrSuperColumn::Column(c) => column(out, c),
            ColumnOrSuperColumn::SuperColumn(s) => {
                let _ = write!(out, " [{}", hex::encode(&s.name));
                for c in &s.columns {
                    column(out, c);
                }
                out.push(']');
            }
        }
    }
    out.push('\n');
}

/// Every answer the fixture gives: whole column families in token order, slices from both
/// ends of the wide rows, named reads, counts.
fn answers(db: &Database) -> String {
    let mut out = String::new();
    for cf in ["Points", "Wide", "Supers"] {
        let rows = db
            .get_range_slices(
                KS,
                &ColumnParent::new(cf),
                &SlicePredicate::everything(),
                &KeyRange::all().count(10_000),
            )
            .unwrap();
        let _ = writeln!(out, "{cf}: {} rows", rows.len());
        for r in rows {
            let _ = write!(out, "{}:", String::from_utf8_lossy(&r.key));
            results(&mut out, &r.columns);
        }
    }
    for r in ["wide0", "wide1"] {
        for (reversed, start) in [
            (false, None),
            (true, None),
            (false, Some(1000i64)),
            (true, Some(-1000)),
        ] {
            let mut range = SliceRange::all().count(25);
            if let Some(s) = start {
                range = SliceRange::between(LongType::encode(s), b"").count(25);
            }
            if reversed {
                range = range.reversed();
            }
            let got = db
                .get_slice(KS, r, &ColumnParent::new("Wide"), &range.into())
                .unwrap();
            let _ = write!(out, "{r} slice {reversed} {start:?}:");
            results(&mut out, &got);
        }
        let n = db
            .get_count(
                KS,
                r,
                &ColumnParent::new("Wide"),
                &SlicePredicate::everything(),
            )
            .unwrap();
        let _ = writeln!(out, "{r} count {n}");
    }
    for i in (0..300).step_by(7) {
        let key = format!("row{i:04}");
        let got = db
            .get(KS, &key, &ColumnPath::new("Points").column("b"))
            .unwrap();
        let _ = write!(out, "get {key} b:");
        results(&mut out, got.as_slice());
    }
    for i in (0..30).step_by(4) {
        let key = format!("super{i:02}");
        let got = db
            .get_slice(
                KS,
                &key,
                &ColumnParent::new("Supers").super_column("sc1"),
                &SlicePredicate::everything(),
            )
            .unwrap();
        let _ = write!(out, "{key} sc1:");
        results(&mut out, &got);
    }
    out
}

/// The format versions of the SSTables under `dir` (the u32 after the 8-byte magic).
fn sstable_versions(dir: &Path) -> Vec<u32> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir.join(KS)).unwrap() {
        let p = e.unwrap().path();
        if p.to_string_lossy().ends_with("-Data.db") {
            let b = std::fs::read(&p).unwrap();
            v.push(u32::from_be_bytes([b[8], b[9], b[10], b[11]]));
        }
    }
    v
}

#[test]
fn a_version_1_database_answers_as_it_did_and_compaction_rewrites_it() {
    if std::env::var_os("SUPERCOLUMN_WRITE_V1_FIXTURE").is_some() {
        let dir = fixture_dir();
        let _ = std::fs::remove_dir_all(&dir);
        write_fixture(&dir);
        assert!(
            sstable_versions(&dir).iter().all(|v| *v == 1),
            "this build does not write version 1: the fixture must come from the old writer"
        );
        let scratch = tempfile::tempdir().unwrap();
        copy_dir(&dir, scratch.path());
        let db =
            Database::open(scratch.path(), options(Arc::new(ManualClock::new(READ_AT)))).unwrap();
        std::fs::write(expected_path(), answers(&db)).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(expected_path()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture_dir(), dir.path());
    assert!(sstable_versions(dir.path()).contains(&1));
    let clock = Arc::new(ManualClock::new(READ_AT));
    let db = Database::open(dir.path(), options(clock.clone())).unwrap();
    assert!(
        answers(&db) == expected,
        "the v1 database answers differently"
    );
    db.compact(KS, None).unwrap();
    let versions = sstable_versions(dir.path());
    assert!(
        !versions.is_empty() && versions.iter().all(|v| *v >= 2),
        "compaction rewrote every SSTable in the current format: {versions:?}"
    );
    assert!(answers(&db) == expected, "answers changed with the rewrite");
    db.close().unwrap();
    let db = Database::open(dir.path(), options(clock)).unwrap();
    assert!(answers(&db) == expected, "answers changed after reopening");
}
