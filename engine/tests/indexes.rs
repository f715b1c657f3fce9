//! Secondary indexes through the engine's API (Cassandra 0.7's KEYS index and
//! `get_indexed_slices`): answers checked against a full scan with the same filter under
//! overwrites, deletes, TTL expiry, flushes, compactions, reopens, SIGKILLs and power cuts,
//! and a build over rows written before the index.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use common::T0;
use supercolumn::io::FaultFs;
use supercolumn::model::comparator::ComparatorRegistry;
use supercolumn::schema::IndexDef;
use supercolumn::{
    ColumnParent, ColumnPath, CommitLogSync, Database, IndexClause, IndexExpression, IndexOperator,
    ManualClock, Options, SlicePredicate, StorageConf, WriteOptions,
};

const KS: &str = "Keyspace1";
const CF: &str = "Standard1";
const CHILD_DIR: &str = "SC_INDEX_CHILD_DIR";

fn state_index() -> IndexDef {
    IndexDef::new("state_idx", b"state".to_vec(), 0)
}

/// Creates the index on `state` and waits for its build.
fn create_state_index(db: &Database) {
    db.create_index(KS, CF, state_index()).unwrap();
    wait_built(db);
}

/// Waits for the index on `state` to be built.
fn wait_built(db: &Database) {
    let built = db
        .wait_for_index(KS, "state_idx", std::time::Duration::from_secs(120))
        .unwrap();
    assert!(built, "the build did not end in two minutes");
}

fn set(db: &Database, key: &str, column: &str, value: &str, ts: i64) {
    let path = ColumnPath::new(CF).column(column);
    db.insert(KS, key, &path, value, WriteOptions::at(ts))
        .unwrap();
}

fn clause(expressions: Vec<IndexExpression>, start: &str, count: usize) -> IndexClause {
    IndexClause {
        expressions,
        start_key: start.as_bytes().to_vec(),
        count,
    }
}

/// The keys `get_indexed_slices` answers for `state = value`.
fn indexed(db: &Database, value: &str) -> Vec<String> {
    let c = clause(vec![IndexExpression::eq("state", value)], "", 1_000_000);
    db.get_indexed_slices(
        KS,
        &ColumnParent::new(CF),
        &c,
        &SlicePredicate::everything(),
    )
    .unwrap()
    .into_iter()
    .map(|k| String::from_utf8(k.key).unwrap())
    .collect()
}

/// The keys a full scan finds with `state = value`, in the same order.
fn scanned(db: &Database, value: &str) -> Vec<String> {
    common::scanned_keys(db, KS, CF, "state", value)
}

fn agree(db: &Database, values: &[&str], when: &str) {
    for v in values {
        assert_eq!(indexed(db, v), scanned(db, v), "{when}: state = {v}");
    }
}

#[test]
fn an_index_answers_what_a_scan_answers_through_overwrites_deletes_and_expiry() {
    let t = common::open_default();
    let db = &t.db;
    create_state_index(db);
    for i in 0..40 {
        set(db, &format!("k{i}"), "state", ["UT", "TX", "CA"][i % 3], 1);
        set(db, &format!("k{i}"), "name", "x", 1);
    }
    assert_eq!(indexed(db, "UT").len(), 14);
    agree(db, &["UT", "TX", "CA", "NY"], "written");
    // Overwrites: the old entries are stale and never answered.
    for i in 0..10 {
        set(db, &format!("k{i}"), "state", "NY", 2);
    }
    agree(db, &["UT", "TX", "CA", "NY"], "overwritten");
    db.flush(KS, Some(CF)).unwrap();
    // A column delete, a row delete, and a value written back after a delete.
    db.remove(KS, "k10", &ColumnPath::new(CF).column("state"), Some(3))
        .unwrap();
    db.remove(KS, "k11", &ColumnPath::new(CF), Some(3)).unwrap();
    set(db, "k12", "state", "UT", 4);
    set(db, "k12", "state", "TX", 5);
    set(db, "k12", "state", "UT", 6);
    agree(db, &["UT", "TX", "CA", "NY"], "deleted");
    // A TTL: the row drops out of the index as it expires.
    let path = ColumnPath::new(CF).column("state");
    db.insert(KS, "short", &path, "UT", WriteOptions::at(7).with_ttl(10))
        .unwrap();
    assert!(indexed(db, "UT").contains(&"short".to_string()));
    t.clock.advance_seconds(11);
    assert!(!indexed(db, "UT").contains(&"short".to_string()));
    db.flush(KS, None).unwrap();
    db.compact(KS, Some(CF)).unwrap();
    agree(db, &["UT", "TX", "CA", "NY"], "compacted");
}

#[test]
fn more_expressions_a_start_key_and_a_count() {
    let t = common::open_default();
    let db = &t.db;
    create_state_index(db);
    for i in 0..30u8 {
        set(db, &format!("k{i:02}"), "state", "UT", 1);
        set(db, &format!("k{i:02}"), "age", &format!("{}", i % 5), 1);
    }
    let parent = ColumnParent::new(CF);
    let everything = SlicePredicate::everything();
    let gte3 = IndexExpression {
        column_name: b"age".to_vec(),
        op: IndexOperator::Gte,
        value: b"3".to_vec(),
    };
    let c = clause(
        vec![IndexExpression::eq("state", "UT"), gte3.clone()],
        "",
        100,
    );
    let rows = db.get_indexed_slices(KS, &parent, &c, &everything).unwrap();
    assert_eq!(rows.len(), 12);
    assert!(rows.iter().all(|r| r.columns.len() == 2));
    // Paging as a 0.7 client does: the last key of a page starts the next one.
    let all: Vec<Vec<u8>> = rows.iter().map(|r| r.key.clone()).collect();
    let mut paged = Vec::new();
    let mut start = String::new();
    loop {
        let c = clause(
            vec![IndexExpression::eq("state", "UT"), gte3.clone()],
            &start,
            5,
        );
        let page = db.get_indexed_slices(KS, &parent, &c, &everything).unwrap();
        let fresh: Vec<_> = page
            .iter()
            .map(|r| r.key.clone())
            .filter(|k| paged.last() != Some(k))
            .collect();
        paged.extend(fresh);
        if page.len() < 5 {
            break;
        }
        start = String::from_utf8(page.last().unwrap().key.clone()).unwrap();
    }
    assert_eq!(paged, all);
    // No equality on an indexed column: refused as Cassandra 0.7 does.
    let c = clause(vec![IndexExpression::eq("age", "3")], "", 10);
    let e = db
        .get_indexed_slices(KS, &parent, &c, &everything)
        .unwrap_err();
    assert!(e.to_string().contains("No indexed columns"), "{e}");
}

#[test]
fn an_index_built_over_existing_rows_and_dropped() {
    let t = common::open_default();
    let db = &t.db;
    for i in 0..300 {
        set(db, &format!("k{i}"), "state", ["UT", "TX"][i % 2], 1);
        if i == 150 {
            db.flush(KS, Some(CF)).unwrap();
        }
    }
    create_state_index(db);
    assert_eq!(indexed(db, "UT").len(), 150);
    agree(db, &["UT", "TX"], "built");
    let def = db.describe_column_family(KS, CF).unwrap();
    assert!(def.indexes[0].built);
    // Names are the keyspace's: a second index of that name is refused.
    let e = db.create_index(KS, "Standard2", state_index()).unwrap_err();
    assert!(e.to_string().contains("already exists"), "{e}");
    assert_eq!(db.drop_index(KS, "state_idx").unwrap(), CF);
    let c = clause(vec![IndexExpression::eq("state", "UT")], "", 10);
    let parent = ColumnParent::new(CF);
    assert!(db
        .get_indexed_slices(KS, &parent, &c, &SlicePredicate::everything())
        .is_err());
    // The hidden column family is nobody's to name.
    let e = db
        .insert(
            KS,
            "k",
            &ColumnPath::new("Standard1.state_idx").column("c"),
            "v",
            WriteOptions::at(1),
        )
        .unwrap_err();
    assert!(e.to_string().contains("Standard1.state_idx"), "{e}");
}

#[test]
fn an_index_survives_reopen_from_the_commit_log_and_from_sstables() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let options = || Options::default().with_clock(clock.clone());
    {
        let db = Database::open(dir.path(), options()).unwrap();
        create_state_index(&db);
        for i in 0..50 {
            set(&db, &format!("k{i}"), "state", ["UT", "TX"][i % 2], 1);
        }
        db.flush(KS, Some(CF)).unwrap();
        for i in 50..80 {
            set(&db, &format!("k{i}"), "state", ["UT", "TX"][i % 2], 1);
        }
        db.close().unwrap();
    }
    let db = Database::open(dir.path(), options()).unwrap();
    assert_eq!(indexed(&db, "UT").len(), 40);
    agree(&db, &["UT", "TX"], "reopened");
}

fn crash_options() -> Options {
    common::crash_options(0.002)
}

/// The child: indexes `state` (once), then writes and overwrites rows forever, reporting
/// each acknowledged write.
fn child(dir: &Path) -> ! {
    let db = Database::open(dir, crash_options()).expect("child open");
    if db
        .describe_column_family(KS, CF)
        .unwrap()
        .indexes
        .is_empty()
    {
        db.create_index(KS, CF, state_index()).expect("child index");
    }
    let mut out = std::io::stdout().lock();
    for n in 0u64.. {
        let key = format!("k{}", n % 700);
        let value = ["UT", "TX", "CA", "NY", "WA"][(n % 11 % 5) as usize];
        let path = ColumnPath::new(CF).column("state");
        db.insert(KS, &key, &path, value, WriteOptions::now())
            .expect("child write");
        if n % 97 == 0 {
            db.remove(KS, &key, &ColumnPath::new(CF), None)
                .expect("child delete");
        }
        if n % 1_000 == 999 {
            db.compact(KS, None).expect("child compact");
        }
        writeln!(out, "ack {key} {value}").unwrap();
        out.flush().unwrap();
    }
    unreachable!()
}

#[test]
fn index_and_rows_agree_after_each_kill() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        child(Path::new(&dir));
    }
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let mut seed = 0x2545_f491_u64;
    for round in 0..4 {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let want = 300 + (seed >> 33) % 1_500;
        let (mut child, mut out) =
            common::spawn_child("index_and_rows_agree_after_each_kill", CHILD_DIR, &dir);
        let (seen, last_ack) = common::read_acks(&mut out, want);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(seen, want, "round {round}: the child stopped early");
        let db = Database::open(&dir, crash_options()).unwrap();
        wait_built(&db);
        agree(
            &db,
            &["UT", "TX", "CA", "NY", "WA"],
            &format!("round {round}"),
        );
        // The last acknowledged write is there, and found through the index.
        let mut parts = last_ack.split_whitespace().skip(1);
        let (key, value) = (parts.next().unwrap(), parts.next().unwrap());
        let now = db
            .get(KS, key, &ColumnPath::new(CF).column("state"))
            .unwrap();
        if now.is_some() {
            assert!(
                indexed(&db, value).contains(&key.to_string()),
                "round {round}"
            );
        }
        drop(db);
    }
}

#[test]
fn index_and_rows_agree_after_power_cuts() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let ffs = FaultFs::new(root.path().join("park")).unwrap();
    let options = || {
        let mut o = Options::default().with_clock(Arc::new(ManualClock::new(T0)));
        o.commit_log_sync = CommitLogSync::Batch { window_ms: 1.0 };
        o.memtable_operations_millions = 0.0005;
        o.file_system = Arc::new(ffs.clone());
        o
    };
    let mut acked: BTreeSet<String> = BTreeSet::new();
    for round in 0..12i64 {
        let db = Database::open(&dir, options()).unwrap();
        if round == 0 {
            create_state_index(&db);
        }
        agree(&db, &["UT", "TX", "CA"], &format!("round {round}"));
        for k in &acked {
            assert!(db
                .get(KS, k.as_str(), &ColumnPath::new(CF).column("state"))
                .unwrap()
                .is_some());
        }
        for i in 0..(40 + round * 7) {
            let key = format!("k{}", (i * 13 + round) % 150);
            set(
                &db,
                &key,
                "state",
                ["UT", "TX", "CA"][(i % 3) as usize],
                round * 1_000 + i + 1,
            );
            acked.insert(key);
        }
        ffs.lose_power().unwrap();
        drop(db);
        ffs.power_on();
    }
    let db = Database::open(&dir, options()).unwrap();
    agree(&db, &["UT", "TX", "CA"], "after the last cut");
}

/// Keyspace1's Standard1 as a `storage-conf.xml` gives it, with `columns` inside.
fn conf(columns: &str) -> Options {
    let text = format!(
        "<Keyspace Name=\"Keyspace1\"><ColumnFamily Name=\"Standard1\">{columns}\
         </ColumnFamily></Keyspace>"
    );
    StorageConf::parse(&text, &ComparatorRegistry::default())
        .unwrap()
        .options
}

/// The names of Standard1's indexes.
fn index_names(db: &Database) -> Vec<String> {
    let ks = db.describe_keyspace(KS).unwrap();
    let cf = ks.column_family(CF).unwrap();
    cf.indexes.iter().map(|i| i.name.clone()).collect()
}

#[test]
fn a_keys_index_a_storage_conf_declares_is_built_at_open_over_the_rows_there() {
    // "state" in hex, as Standard1's BytesType comparator reads a name.
    const STATE: &str = "<Column Name=\"7374617465\" IndexType=\"KEYS\"/>";
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), conf("")).unwrap();
    set(&db, "a", "state", "TX", T0);
    set(&db, "b", "state", "CA", T0);
    db.flush(KS, Some(CF)).unwrap();
    set(&db, "c", "state", "TX", T0);
    drop(db);

    let db = Database::open(dir.path(), conf(STATE)).unwrap();
    assert_eq!(index_names(&db), ["Standard1_7374617465_idx"]);
    let two_minutes = std::time::Duration::from_secs(120);
    let built = db.wait_for_index(KS, "Standard1_7374617465_idx", two_minutes);
    assert!(built.unwrap());
    assert_eq!(indexed(&db, "TX").len(), 2);
    agree(&db, &["TX", "CA", "NY"], "built at open");
    set(&db, "d", "state", "TX", T0);
    set(&db, "b", "state", "TX", T0 + 1);
    drop(db);

    // A file that no longer declares the index leaves it as it is; one that gives its name to
    // another column conflicts with it.
    let db = Database::open(dir.path(), conf("")).unwrap();
    assert_eq!(index_names(&db), ["Standard1_7374617465_idx"]);
    assert_eq!(indexed(&db, "TX").len(), 4);
    agree(&db, &["TX", "CA"], "reopened without the declaration");
    drop(db);
    let other = "<Column Name=\"6369747479\" IndexType=\"KEYS\" \
                 IndexName=\"Standard1_7374617465_idx\"/>";
    let e = Database::open(dir.path(), conf(other)).unwrap_err();
    assert!(e.to_string().contains("another column"), "{e}");
}
