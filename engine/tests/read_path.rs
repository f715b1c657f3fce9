//! The read path over SSTables: data written in any mix of flushed and unflushed reads back
//! identical across reopenings; commit log segments go once flushed past; a bloom-filter
//! negative reads no data block; a key-cache hit skips the index search; a repeated read hits
//! the block cache; a reversed last-10 slice of a 1,000,000-column row reads at most 2 blocks per
//! SSTable; damage anywhere in an SSTable is a typed error naming the file, and other data still
//! reads.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;
use supercolumn::comparator::LongType;
use supercolumn::{
    BatchMutation, ColumnFamilyDef, ColumnFamilyStats, ColumnParent, ColumnPath, ColumnPathRef,
    CommitLogSync, Database, Error, KeyRange, KeyspaceDef, Options, SlicePredicate, SliceRange,
    WriteOptions,
};

const KS: &str = "Keyspace1";

fn opts() -> Options {
    let mut o = Options::default();
    o.commit_log_sync = CommitLogSync::Batch { window_ms: 1.0 };
    o
}

fn stats(db: &Database, cf: &str) -> ColumnFamilyStats {
    db.column_family_stats(KS, cf).unwrap()
}

/// Every row of Standard1 as key → (column → value).
fn dump(db: &Database) -> BTreeMap<String, BTreeMap<String, String>> {
    db.get_range_slices(
        KS,
        &ColumnParent::new("Standard1"),
        &SlicePredicate::everything(),
        &KeyRange::all().count(usize::MAX),
    )
    .unwrap()
    .into_iter()
    .map(|ks| {
        let cols = ks
            .columns
            .iter()
            .map(|c| {
                let c = c.as_column().unwrap();
                (
                    String::from_utf8(c.name.clone()).unwrap(),
                    String::from_utf8(c.value.clone()).unwrap(),
                )
            })
            .collect();
        (String::from_utf8(ks.key).unwrap(), cols)
    })
    .collect()
}

fn segment_count(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("commit-log"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "log")
        })
        .count()
}

#[test]
fn any_mix_of_flushed_and_unflushed_data_reads_back_across_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let mut model: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut ts = 0;
    for round in 0..6 {
        let db = Database::open(dir.path(), opts()).unwrap();
        assert_eq!(dump(&db), model, "round {round}: after reopen");
        for step in 0..40 {
            ts += 1;
            let key = format!("row{}", (round * 7 + step * 3) % 23);
            let col = format!("c{}", step % 5);
            if step % 11 == 10 {
                db.remove(
                    KS,
                    &key,
                    &ColumnPath::new("Standard1").column(&col),
                    Some(ts),
                )
                .unwrap();
                if let Some(r) = model.get_mut(&key) {
                    r.remove(&col);
                    if r.is_empty() {
                        model.remove(&key);
                    }
                }
            } else {
                let val = format!("r{round}s{step}");
                db.insert(
                    KS,
                    &key,
                    &ColumnPath::new("Standard1").column(&col),
                    &val,
                    WriteOptions::at(ts),
                )
                .unwrap();
                model.entry(key).or_default().insert(col, val);
            }
            if step == 20 && round % 2 == 0 {
                db.flush(KS, Some("Standard1")).unwrap();
                assert_eq!(
                    segment_count(dir.path()),
                    1,
                    "flushed-past segments are gone"
                );
            }
        }
        assert_eq!(dump(&db), model, "round {round}: before close");
        if round % 3 == 2 {
            drop(db);
        } else {
            db.close().unwrap();
        }
    }
    let db = Database::open(dir.path(), opts()).unwrap();
    assert_eq!(dump(&db), model);
    assert!(stats(&db, "Standard1").sstables >= 3);
}

fn flushed_rows(dir: &Path, n: usize) -> Database {
    let db = Database::open(dir, opts()).unwrap();
    let mut b = BatchMutation::new();
    for i in 0..n {
        b.insert(
            format!("k{i}"),
            ColumnPath::new("Standard1").column("c"),
            "v",
            WriteOptions::at(1),
        );
    }
    db.batch_mutate(KS, &b).unwrap();
    db.flush(KS, Some("Standard1")).unwrap();
    db
}

#[test]
fn a_bloom_filter_negative_reads_no_data_block() {
    let dir = tempfile::tempdir().unwrap();
    let db = flushed_rows(dir.path(), 100);
    let c = ColumnPath::new("Standard1").column("c");
    let mut negatives_seen = 0;
    for i in 0..50 {
        let before = stats(&db, "Standard1");
        assert!(db.get(KS, format!("missing{i}"), &c).unwrap().is_none());
        let after = stats(&db, "Standard1");
        if after.bloom_negatives > before.bloom_negatives {
            negatives_seen += 1;
            assert_eq!(
                after.blocks_read, before.blocks_read,
                "a bloom negative read a block"
            );
            assert_eq!(after.index_searches, before.index_searches);
        }
    }
    assert!(
        negatives_seen >= 45,
        "a 1% filter rejects most absent keys: {negatives_seen}/50"
    );
}

#[test]
fn a_key_cache_hit_skips_the_index_search_and_a_repeat_hits_the_block_cache() {
    let dir = tempfile::tempdir().unwrap();
    let db = flushed_rows(dir.path(), 100);
    assert!(stats(&db, "Standard1").key_cache_capacity >= 1);
    let c = ColumnPath::new("Standard1").column("c");
    let s0 = stats(&db, "Standard1");
    assert!(db.get(KS, "k42", &c).unwrap().is_some());
    let s1 = stats(&db, "Standard1");
    assert_eq!(s1.key_cache_misses, s0.key_cache_misses + 1);
    assert_eq!(s1.index_searches, s0.index_searches + 1);
    assert!(db.get(KS, "k42", &c).unwrap().is_some());
    let s2 = stats(&db, "Standard1");
    assert_eq!(
        s2.key_cache_hits,
        s1.key_cache_hits + 1,
        "the second read hits the key cache"
    );
    assert_eq!(
        s2.index_searches, s1.index_searches,
        "a key-cache hit skips the index search"
    );
    assert_eq!(
        s2.blocks_read, s1.blocks_read,
        "the repeated read is served by the block cache"
    );
    assert!(s2.block_cache_hits > s1.block_cache_hits);
}

#[test]
fn the_last_ten_columns_of_a_million_column_row_read_at_most_two_blocks_per_sstable() {
    let dir = tempfile::tempdir().unwrap();
    let ks = KeyspaceDef::new("Wide")
        .with_column_family(ColumnFamilyDef::standard("Timeline").with_comparator(LongType));
    let db = Database::open(dir.path(), opts().with_keyspaces(vec![ks])).unwrap();
    let write = |from: i64, to: i64| {
        let mut b = BatchMutation::new();
        for i in from..to {
            b.insert(
                "wide",
                ColumnPath::new("Timeline").column(long(i)),
                "x",
                WriteOptions::at(1),
            );
            if b.len() == 50_000 {
                db.batch_mutate("Wide", &b).unwrap();
                b = BatchMutation::new();
            }
        }
        db.batch_mutate("Wide", &b).unwrap();
        db.flush("Wide", Some("Timeline")).unwrap();
    };
    write(0, 1_000_000);
    write(1_000_000, 1_000_005);
    // MemtableOperationsInMillions (0.3) flushes along the way too: the row spans several
    // SSTables, each holding part of it.
    let tables = db.column_family_stats("Wide", "Timeline").unwrap().sstables;
    assert!(tables >= 2);
    // Fresh caches: reopen.
    drop(db);
    let db = Database::open(dir.path(), opts()).unwrap();
    let before = db
        .column_family_stats("Wide", "Timeline")
        .unwrap()
        .blocks_read;
    let last10 = db
        .get_slice(
            "Wide",
            "wide",
            &ColumnParent::new("Timeline"),
            &SliceRange::all().reversed().count(10).into(),
        )
        .unwrap();
    let got: Vec<i64> = names(&last10)
        .into_iter()
        .map(|n| i64::from_be_bytes(n.try_into().unwrap()))
        .collect();
    assert_eq!(got, (999_995..1_000_005).rev().collect::<Vec<_>>());
    let read = db
        .column_family_stats("Wide", "Timeline")
        .unwrap()
        .blocks_read
        - before;
    assert!(
        read <= 2 * tables as u64,
        "{read} blocks read from {tables} SSTables for the last ten columns"
    );
}

/// Standard1 with two SSTables (rows a* then b*) and Standard2 with one; returns the path of
/// Standard1's first SSTable.
fn three_tables(dir: &Path) -> PathBuf {
    let db = Database::open(dir, opts()).unwrap();
    for (cf, prefix) in [("Standard1", "a"), ("Standard1", "b"), ("Standard2", "c")] {
        let mut b = BatchMutation::new();
        for i in 0..200 {
            b.insert(
                format!("{prefix}{i}"),
                ColumnPath::new(cf).column(format!("col{i}")),
                "some value",
                WriteOptions::at(1),
            );
        }
        db.batch_mutate(KS, &b).unwrap();
        db.flush(KS, Some(cf)).unwrap();
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(KS))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("Standard1-")
        })
        .collect();
    files.sort_by_key(|p| p.metadata().unwrap().modified().unwrap());
    files.sort();
    files[0].clone()
}

fn read_one(db: &Database, cf: &str, key: &str, col: &str) -> Result<Option<String>, Error> {
    Ok(db
        .get(KS, key, &ColumnPath::new(cf).column(col))?
        .map(|c| String::from_utf8(c.as_column().unwrap().value.clone()).unwrap()))
}

#[test]
fn damage_in_any_part_of_an_sstable_is_an_error_naming_it_and_other_data_reads() {
    let len_and_footer = |p: &Path| {
        let b = std::fs::read(p).unwrap();
        let f = &b[b.len() - 82..]; // the format 3 footer
        let v = |i: usize| u64::from_be_bytes(f[i * 8..i * 8 + 8].try_into().unwrap()) as usize;
        (b.len(), v(0), v(2))
    };
    // (what, offset chooser)
    /// Picks the byte to damage from (file length, index offset, bloom offset).
    type Offset = Box<dyn Fn(usize, usize, usize) -> usize>;
    let parts: Vec<(&str, Offset)> = vec![
        ("data block", Box::new(|_, _, _| 40)),
        ("index", Box::new(|_, index, _| index + 20)),
        ("bloom filter", Box::new(|_, _, bloom| bloom + 30)),
        ("footer", Box::new(|len, _, _| len - 10)),
        ("header", Box::new(|_, _, _| 3)),
    ];
    for (what, at) in parts {
        let dir = tempfile::tempdir().unwrap();
        let victim = three_tables(dir.path());
        let (len, index, bloom) = len_and_footer(&victim);
        let mut bytes = std::fs::read(&victim).unwrap();
        bytes[at(len, index, bloom)] ^= 0x40;
        std::fs::write(&victim, bytes).unwrap();
        let db = Database::open(dir.path(), opts()).unwrap();
        // Every a* row is either read right or refused with an error naming the damaged file;
        // at least one is refused (all of them when the index, filter, footer or header is hit).
        let (mut refused, mut other_good) = (0, 0);
        for i in 0..200 {
            match read_one(&db, "Standard1", &format!("a{i}"), &format!("col{i}")) {
                Ok(v) => assert_eq!(
                    v.as_deref(),
                    Some("some value"),
                    "{what}: wrong data for a{i}"
                ),
                Err(Error::Corrupt { path, .. }) => {
                    assert_eq!(path, victim, "{what}");
                    refused += 1;
                }
                Err(e) => panic!("{what}: {e}"),
            }
            match read_one(&db, "Standard1", &format!("b{i}"), &format!("col{i}")) {
                Ok(v) => {
                    assert_eq!(
                        v.as_deref(),
                        Some("some value"),
                        "{what}: wrong data for b{i}"
                    );
                    other_good += 1;
                }
                Err(Error::Corrupt { path, .. }) => assert_eq!(path, victim, "{what}"),
                Err(e) => panic!("{what}: {e}"),
            }
        }
        assert!(refused > 0, "{what}: the damage went unnoticed");
        if what == "data block" {
            // Rows in the other SSTable still read (bar a rare bloom false positive that leads
            // into the damaged block).
            assert!(
                other_good >= 190,
                "{what}: only {other_good} of 200 b* rows read"
            );
        } else {
            assert_eq!(refused, 200, "{what}: the whole SSTable is unreadable");
        }
        assert_eq!(
            read_one(&db, "Standard2", "c7", "col7").unwrap().as_deref(),
            Some("some value"),
            "{what}"
        );
    }
    // A missing file: the CF reports it, the database still opens, other CFs read.
    let dir = tempfile::tempdir().unwrap();
    let victim = three_tables(dir.path());
    std::fs::remove_file(&victim).unwrap();
    let db = Database::open(dir.path(), opts()).unwrap();
    let e = read_one(&db, "Standard1", "b1", "col1").unwrap_err();
    assert!(
        matches!(&e, Error::Corrupt { path, reason, .. } if *path == victim && reason.contains("missing")),
        "{e}"
    );
    assert!(read_one(&db, "Standard2", "c1", "col1").unwrap().is_some());
    drop(db);

    // A truncated file.
    let dir = tempfile::tempdir().unwrap();
    let victim = three_tables(dir.path());
    let bytes = std::fs::read(&victim).unwrap();
    std::fs::write(&victim, &bytes[..bytes.len() / 2]).unwrap();
    let db = Database::open(dir.path(), opts()).unwrap();
    let e = read_one(&db, "Standard1", "b1", "col1").unwrap_err();
    assert!(
        matches!(&e, Error::Corrupt { path, .. } if *path == victim),
        "{e}"
    );
    assert!(read_one(&db, "Standard2", "c1", "col1").unwrap().is_some());
}

#[test]
fn a_value_larger_than_any_block_reads_back_after_flush_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    // 70 MiB of one byte: past the old 64 MiB block cap, and compressing near LZ4's 255:1 limit.
    let big = vec![b'x'; 70 << 20];
    let p = ColumnPath::new("Standard1").column("big");
    {
        let db = Database::open(dir.path(), opts()).unwrap();
        db.insert(KS, "k", &p, &big, WriteOptions::at(1)).unwrap();
        db.flush(KS, Some("Standard1")).unwrap();
    }
    let db = Database::open(dir.path(), opts()).unwrap();
    let got = db.get(KS, "k", &p).unwrap().unwrap();
    assert!(got.as_column().unwrap().value == big);
}

#[test]
fn a_long_row_key_on_a_wide_row_does_not_blow_up_the_sstable() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), opts()).unwrap();
    let key = vec![b'k'; 16 << 10];
    let mut b = BatchMutation::new();
    for i in 0..5000u32 {
        b.insert(
            &key,
            ColumnPath::new("Standard1").column(i.to_be_bytes()),
            "v",
            WriteOptions::at(1),
        );
    }
    db.batch_mutate(KS, &b).unwrap();
    db.flush(KS, Some("Standard1")).unwrap();
    let s = stats(&db, "Standard1");
    // The key is repeated once per block, not once per column.
    assert!(
        s.sstable_bytes < 2 << 20,
        "{} bytes on disk",
        s.sstable_bytes
    );
    let n = db
        .get_count(
            KS,
            &key,
            &ColumnParent::new("Standard1"),
            &SlicePredicate::everything(),
        )
        .unwrap();
    assert_eq!(n, 5000);
}

#[test]
fn segments_do_not_pile_up_across_idle_reopens_or_alternating_column_families() {
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..5 {
        drop(Database::open(dir.path(), opts()).unwrap());
    }
    assert_eq!(
        segment_count(dir.path()),
        1,
        "open and close without writes leave one segment"
    );
    let db = Database::open(dir.path(), opts()).unwrap();
    for round in 0..3 {
        for cf in ["Standard1", "Standard2"] {
            db.insert(
                KS,
                "k",
                &ColumnPath::new(cf).column(format!("c{round}")),
                "v",
                WriteOptions::now(),
            )
            .unwrap();
            db.flush(KS, Some(cf)).unwrap();
        }
    }
    assert_eq!(
        segment_count(dir.path()),
        1,
        "every CF flushed past the old segments"
    );
}

/// Writes `col` = `value` at client timestamp `ts` into row `key` of Standard1 and flushes, so
/// each call leaves one more SSTable.
fn put_flushed(db: &Database, key: &str, col: &str, value: &str, ts: i64) {
    let path = ColumnPath::new("Standard1").column(col);
    db.insert(KS, key, &path, value, WriteOptions::at(ts))
        .unwrap();
    db.flush(KS, Some("Standard1")).unwrap();
}

#[test]
fn a_named_column_read_skips_sstables_older_than_what_it_found_and_never_misses_a_newer_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    // The files under test stay apart: a background compaction merging them would leave
    // nothing to skip (the test failed that way under load).
    o.min_compaction_threshold = 0;
    let db = &Database::open(dir.path(), o).unwrap();
    // Three versions in three SSTables, written in timestamp order.
    for ts in [10, 20, 30] {
        put_flushed(db, "r", "c", &format!("v{ts}"), ts);
    }
    let before = stats(db, "Standard1");
    assert_eq!(
        read_one(db, "Standard1", "r", "c").unwrap().as_deref(),
        Some("v30")
    );
    let after = stats(db, "Standard1");
    assert_eq!(after.sstables_skipped - before.sstables_skipped, 2);
    assert_eq!(
        after.bloom_checks - before.bloom_checks,
        1,
        "one SSTable consulted"
    );

    // A client timestamp from the past lands in the newest file: the read still finds the
    // newest version, which an older file holds.
    put_flushed(db, "r", "c", "late", 15);
    assert_eq!(
        read_one(db, "Standard1", "r", "c").unwrap().as_deref(),
        Some("v30")
    );

    // A name the newest sources lack makes the read look further, down to the oldest file.
    put_flushed(db, "s", "old", "x", 5);
    put_flushed(db, "s", "new", "y", 50);
    let got = db
        .get_slice(
            KS,
            "s",
            &ColumnParent::new("Standard1"),
            &SlicePredicate::Names(vec![b"old".to_vec(), b"new".to_vec()]),
        )
        .unwrap();
    assert_eq!(strings(values(&got)), ["y", "x"]);

    // A newer row deletion answers for every name: the older files are skipped, and the
    // column is gone.
    db.remove(KS, "r", &ColumnPath::new("Standard1"), Some(40))
        .unwrap();
    db.flush(KS, Some("Standard1")).unwrap();
    let before = stats(db, "Standard1");
    assert_eq!(read_one(db, "Standard1", "r", "c").unwrap(), None);
    assert!(stats(db, "Standard1").sstables_skipped > before.sstables_skipped);
    // ... and a write newer than the deletion reads back.
    put_flushed(db, "r", "c", "v60", 60);
    assert_eq!(
        read_one(db, "Standard1", "r", "c").unwrap().as_deref(),
        Some("v60")
    );

    // Equal timestamps in two files: neither may be skipped, whichever is consulted first, as
    // the tie-break (the greater value; a tombstone over a cell) needs both.
    for (first, second) in [("a", "b"), ("b", "a")] {
        let key = format!("tie-{first}");
        put_flushed(db, &key, "c", first, 100);
        put_flushed(db, &key, "c", second, 100);
        assert_eq!(
            read_one(db, "Standard1", &key, "c").unwrap().as_deref(),
            Some("b")
        );
    }
    for tombstone_first in [true, false] {
        let key = format!("gone-{tombstone_first}");
        let path = ColumnPath::new("Standard1").column("c");
        if tombstone_first {
            db.remove(KS, &key, &path, Some(100)).unwrap();
            db.flush(KS, Some("Standard1")).unwrap();
        }
        put_flushed(db, &key, "c", "live", 100);
        if !tombstone_first {
            db.remove(KS, &key, &path, Some(100)).unwrap();
            db.flush(KS, Some("Standard1")).unwrap();
        }
        assert_eq!(read_one(db, "Standard1", &key, "c").unwrap(), None);
    }
}

#[test]
fn a_range_scan_reads_rows_where_its_walk_finds_them_whole_across_blocks_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.min_compaction_threshold = 0;
    let db = &Database::open(dir.path(), o).unwrap();
    let value = "v".repeat(200);
    let mut want: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    // Rows of 60 columns (12 KiB, several blocks each) and small ones, in two files and the
    // memtable, some rows in more than one of them.
    for (round, rows) in [(0, 0..12), (1, 6..18), (2, 10..14)] {
        let mut b = BatchMutation::new();
        for r in rows {
            let key = format!("row{r:02}");
            let width = if r % 3 == 0 { 60 } else { 2 };
            for c in 0..width {
                let col = format!("c{:03}", c * 3 + round);
                b.insert(
                    &key,
                    ColumnPathRef::new("Standard1").column(col.as_str()),
                    &value,
                    WriteOptions::now(),
                );
                want.entry(key.clone())
                    .or_default()
                    .insert(col, value.clone());
            }
        }
        db.batch_mutate(KS, &b).unwrap();
        if round < 2 {
            db.flush(KS, Some("Standard1")).unwrap();
        }
    }
    assert_eq!(stats(db, "Standard1").sstables, 2);
    let before = stats(db, "Standard1");
    assert_eq!(dump(db), want, "every row whole, once, in token order");
    let after = stats(db, "Standard1");
    // The walk itself says where each row lies: no filter, key cache or index is consulted.
    assert_eq!(after.bloom_checks, before.bloom_checks);
    assert_eq!(after.index_searches, before.index_searches);
    assert_eq!(after.key_cache_hits, before.key_cache_hits);

    // From a row in the middle, a few at a time, as a client pages.
    let parent = ColumnParent::new("Standard1");
    let all = SlicePredicate::everything();
    let mut start = String::new();
    let mut paged = Vec::new();
    loop {
        let page = db
            .get_range_slices(KS, &parent, &all, &KeyRange::keys(&start, "").count(4))
            .unwrap();
        let keys: Vec<String> = page
            .iter()
            .map(|r| String::from_utf8(r.key.clone()).unwrap())
            .filter(|k| *k != start)
            .collect();
        if keys.is_empty() {
            break;
        }
        for r in &page {
            let k = String::from_utf8(r.key.clone()).unwrap();
            assert_eq!(r.columns.len(), want[&k].len(), "{k} whole");
        }
        start = keys.last().unwrap().clone();
        paged.extend(keys);
    }
    let mut all_keys: Vec<String> = dump(db).into_keys().collect();
    let mut paged_sorted = paged.clone();
    paged_sorted.sort();
    all_keys.sort();
    assert_eq!(paged_sorted, all_keys, "paging meets every row once");
}
