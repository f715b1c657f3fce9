//! The public cell-level API that CQL is built on: a column family handle, sorted inserts whose
//! sort keys the engine checks, and visits of a slice or of named cells that read what
//! `get_slice` and `get_columns` read.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use supercolumn::comparator::{Comparator, CompositeType, Int32Type, Utf8Type};
use supercolumn::model::{CellValue, CellValueRef};
use supercolumn::{
    BatchMutation, ColumnFamilyDef, ColumnParent, Database, Error, KeyspaceDef, Options,
    SlicePredicate, SliceRange, WriteOptions,
};

const KS: &str = "K";
const CF: &str = "C";

fn comparator() -> CompositeType {
    CompositeType::new(vec![Arc::new(Int32Type), Arc::new(Utf8Type)])
}

fn open(dir: &std::path::Path) -> Database {
    let mut o = Options::default();
    o.keyspaces = Some(vec![KeyspaceDef::new(KS).with_column_family(
        ColumnFamilyDef::standard(CF).with_comparator(comparator()),
    )]);
    Database::open(dir, o).unwrap()
}

/// A two-component name and its sort key, built by the layout `model::sort_key` describes.
fn name(n: i32, s: &str) -> (Vec<u8>, Vec<u8>) {
    let name = CompositeType::build(&[&n.to_be_bytes(), s.as_bytes()], 0);
    let mut sort = Vec::new();
    comparator().encode_sort_key(&name, &mut sort);
    (name, sort)
}

#[test]
fn a_sorted_insert_whose_sort_key_is_not_its_names_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let (n1, s1) = name(1, "a");
    let (_, s2) = name(2, "a");
    let mut b = BatchMutation::new();
    b.insert_sorted(b"row", CF, &n1, &s2, b"v", WriteOptions::at(1));
    let err = db.batch_mutate(KS, &b).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidName { reason, .. } if reason.contains("sort key")),
        "{err:?}"
    );
    // Nothing of the refused batch is stored.
    let all = SlicePredicate::from(SliceRange::all());
    assert!(db
        .get_slice(KS, "row", &ColumnParent::new(CF), &all)
        .unwrap()
        .is_empty());
    // An invalid name (a 3-byte int) is refused even with its own sort key.
    let bad = CompositeType::build(&[&[0, 0, 1], b"a"], 0);
    let mut bad_sort = Vec::new();
    comparator().encode_sort_key(&bad, &mut bad_sort);
    let mut b = BatchMutation::new();
    b.insert_sorted(b"row", CF, &bad, &bad_sort, b"v", WriteOptions::at(1));
    assert!(db.batch_mutate(KS, &b).is_err());
    // The right sort key is taken.
    let mut b = BatchMutation::new();
    b.insert_sorted(b"row", CF, &n1, &s1, b"v", WriteOptions::at(1));
    db.batch_mutate(KS, &b).unwrap();
    let got = db
        .get_slice(KS, "row", &ColumnParent::new(CF), &all)
        .unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].name(), n1.as_slice());
}

#[test]
fn visits_read_what_the_column_api_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut b = BatchMutation::new();
    for i in [-3, 0, 7, 1 << 20] {
        for s in ["x", "y\0z"] {
            let (n, sort) = name(i, s);
            b.insert_sorted(
                b"row",
                CF,
                &n,
                &sort,
                format!("{i}{s}").as_bytes(),
                WriteOptions::at(1),
            );
        }
    }
    db.batch_mutate(KS, &b).unwrap();
    db.flush(KS, Some(CF)).unwrap();
    let handle = db.column_family_handle(KS, CF).unwrap();
    assert_eq!(handle.version(), db.column_family_version(KS, CF).unwrap());
    let parent = ColumnParent::new(CF);
    for reversed in [false, true] {
        let range = if reversed {
            SliceRange::all().reversed()
        } else {
            SliceRange::all()
        };
        let predicate = SlicePredicate::from(range);
        let expected = db.get_slice(KS, "row", &parent, &predicate).unwrap();
        let mut seen = Vec::new();
        db.visit_slice(&handle, b"row", &parent, &predicate, |key, cell| {
            // The sort key decodes back to the name.
            let mut name = Vec::new();
            comparator().decode_sort_key(key, &mut name).unwrap();
            let CellValueRef::Live { value, .. } = cell.as_ref().value else {
                panic!("a tombstone in a live slice");
            };
            seen.push((name, value.to_vec()));
            Ok(true)
        })
        .unwrap();
        let expected: Vec<_> = expected
            .iter()
            .map(|c| (c.name().to_vec(), c.as_column().unwrap().value.clone()))
            .collect();
        assert_eq!(seen, expected, "reversed: {reversed}");
    }
    // Named cells, by sort key: a missing one is skipped.
    let (_, s7) = name(7, "x");
    let (_, missing) = name(8, "x");
    let mut found = Vec::new();
    db.visit_columns(&handle, b"row", &[&s7, &missing], |key, cell| {
        if let CellValue::Live { value, .. } = cell.value {
            found.push((key.to_vec(), value));
        }
    })
    .unwrap();
    assert_eq!(found, [(s7.clone(), b"7x".to_vec())]);
}
