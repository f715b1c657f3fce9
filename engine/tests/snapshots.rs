//! Snapshots through the public API: a snapshot flushes and links the live SSTables, which keep
//! every row written before it after compaction deletes the originals and after more writes;
//! tags are checked, listed and cleared; a database reopens with its snapshots beside it.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use supercolumn::inspect::SstableFile;
use supercolumn::{ColumnPath, Database, Options, WriteOptions};

const KS: &str = "Keyspace1";

fn write(db: &Database, keys: std::ops::Range<u32>, value: &str) {
    for k in keys {
        db.insert(
            KS,
            format!("k{k:04}"),
            &ColumnPath::new("Standard1").column("c"),
            value,
            WriteOptions::default(),
        )
        .unwrap();
    }
}

/// The row keys (and each one's single value) the SSTables of a snapshot directory hold.
fn snapshot_rows(db: &Database, dir: &std::path::Path) -> BTreeSet<(Vec<u8>, Vec<u8>)> {
    let def = db.describe_column_family(KS, "Standard1").unwrap();
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().ends_with("-Data.db") {
            continue;
        }
        let file = SstableFile::open(&path, def.clone(), db.partitioner()).unwrap();
        for row in file.rows() {
            let row = row.unwrap();
            for e in row.entries {
                if let supercolumn::inspect::DumpEntry::Column { value, .. } = e {
                    out.insert((row.key.clone(), value));
                }
            }
        }
    }
    out
}

#[test]
fn a_snapshot_keeps_its_rows_after_compaction_and_more_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    write(&db, 0..300, "old");
    db.flush(KS, None).unwrap();
    write(&db, 300..500, "old");
    // Unflushed rows are in the snapshot too: it flushes first.
    let taken = db.snapshot("before", &[KS.to_string()]).unwrap();
    assert_eq!(taken.len(), 1);
    assert!(taken[0].files.len() >= 2, "{:?}", taken[0].files);
    let snap = dir.path().join(KS).join("snapshots").join("before");
    let want: BTreeSet<(Vec<u8>, Vec<u8>)> = (0..500u32)
        .map(|k| (format!("k{k:04}").into_bytes(), b"old".to_vec()))
        .collect();
    assert_eq!(snapshot_rows(&db, &snap), want);
    // Overwritten and compacted: the originals are gone, the snapshot's links are not.
    write(&db, 0..500, "new");
    db.flush(KS, None).unwrap();
    db.compact(KS, Some("Standard1")).unwrap();
    for f in &taken[0].files {
        assert!(!dir.path().join(KS).join(f).exists(), "{f} compacted away");
        assert!(snap.join(f).exists(), "{f}");
    }
    assert_eq!(snapshot_rows(&db, &snap), want);
    let manifest = std::fs::read_to_string(snap.join("manifest.txt")).unwrap();
    let listed: Vec<&str> = manifest.lines().collect();
    assert_eq!(
        listed,
        taken[0]
            .files
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
    );

    // Tags: a second of the same name, and names that are not one directory, are refused.
    let e = db.snapshot("before", &[]).unwrap_err().to_string();
    assert!(e.contains("Snapshot before already exists."), "{e}");
    for bad in ["", "..", "a/b", "a b"] {
        assert!(db.snapshot(bad, &[]).is_err(), "{bad:?}");
    }
    assert!(db.snapshot("x", &["NoSuchKeyspace".into()]).is_err());
    db.snapshot("after", &[]).unwrap();
    let listed: Vec<(String, String)> = db
        .list_snapshots()
        .unwrap()
        .into_iter()
        .map(|s| (s.keyspace, s.tag))
        .filter(|(k, _)| k == KS)
        .collect();
    assert_eq!(
        listed,
        vec![(KS.into(), "after".into()), (KS.into(), "before".into())]
    );
    db.close().unwrap();

    // Reopened with its snapshots beside it: the data is as it was, the snapshots too.
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let got = db
        .get(KS, "k0007", &ColumnPath::new("Standard1").column("c"))
        .unwrap();
    let Some(supercolumn::ColumnOrSuperColumn::Column(c)) = got else {
        panic!("k0007: {got:?}");
    };
    assert_eq!(c.value, b"new");
    assert_eq!(snapshot_rows(&db, &snap), want);
    assert_eq!(db.clear_snapshot(Some("before"), &[]).unwrap(), 1);
    assert!(!snap.exists());
    assert_eq!(db.clear_snapshot(None, &[KS.to_string()]).unwrap(), 1);
    assert!(db.list_snapshots().unwrap().is_empty());
    // A dropped keyspace's snapshot stays, listed and cleared like any other.
    db.snapshot("last", &[KS.to_string()]).unwrap();
    db.drop_keyspace(KS).unwrap();
    let listed: Vec<String> = db
        .list_snapshots()
        .unwrap()
        .into_iter()
        .map(|s| format!("{}/{}", s.keyspace, s.tag))
        .collect();
    assert_eq!(listed, vec![format!("{KS}/last")]);
    assert_eq!(db.clear_snapshot(None, &[]).unwrap(), 1);
    assert!(db.list_snapshots().unwrap().is_empty());
}
