//! The public cell-level API that CQL is built on: a column family handle, sorted inserts of
//! names built with their sort keys (checked unless built for the table's own comparator), and
//! visits of a slice or of named cells that read what
//! `get_slice` and `get_columns` read.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use supercolumn::comparator::{Comparator, CompositeType, Int32Type, ReversedType, Utf8Type};
use supercolumn::model::{CellValue, CellValueRef};
use supercolumn::{
    BatchMutation, ColumnFamilyDef, ColumnParent, Database, Error, KeyspaceDef, Options,
    SlicePredicate, SliceRange, SortedName, WriteOptions,
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

/// A two-component name built with its sort key for `comparator`.
fn name_for(comparator: &Arc<dyn Comparator>, n: i32, s: &str) -> SortedName {
    let mut name = SortedName::default();
    name.start(comparator).unwrap();
    name.push(&n.to_be_bytes()).unwrap();
    name.push(s.as_bytes()).unwrap();
    name
}

/// The same name built for a comparator equal to the column family's but not its own: the
/// engine checks it before taking it.
fn name(n: i32, s: &str) -> SortedName {
    name_for(&(Arc::new(comparator()) as Arc<dyn Comparator>), n, s)
}

#[test]
fn a_sorted_name_built_for_another_order_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    // The same components, ordered the other way: its sort key is not the table's.
    let reversed: Arc<dyn Comparator> = Arc::new(CompositeType::new(vec![
        Arc::new(ReversedType(Arc::new(Int32Type))),
        Arc::new(Utf8Type),
    ]));
    let mut b = BatchMutation::new();
    b.insert_sorted(
        b"row",
        CF,
        &name_for(&reversed, 1, "a"),
        b"v",
        WriteOptions::at(1),
    );
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
    // An invalid component (a 3-byte int) is refused as the name is built.
    let mut bad = SortedName::default();
    bad.start(&reversed).unwrap();
    assert!(bad.push(&[0, 0, 1]).is_err());
    // Built for an equal comparator (checked) or for the table's own (taken as given), the
    // name is stored.
    let own = db
        .column_family_handle(KS, CF)
        .unwrap()
        .definition()
        .comparator
        .clone();
    let mut b = BatchMutation::new();
    b.insert_sorted(b"row", CF, &name(1, "a"), b"v", WriteOptions::at(1));
    b.insert_sorted(
        b"row",
        CF,
        &name_for(&own, 2, "a"),
        b"w",
        WriteOptions::at(1),
    );
    db.batch_mutate(KS, &b).unwrap();
    let got = db
        .get_slice(KS, "row", &ColumnParent::new(CF), &all)
        .unwrap();
    let names: Vec<&[u8]> = got.iter().map(|c| c.name()).collect();
    assert_eq!(names, [name(1, "a").name(), name(2, "a").name()]);
}

#[test]
fn visits_read_what_the_column_api_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut b = BatchMutation::new();
    for i in [-3, 0, 7, 1 << 20] {
        for s in ["x", "y\0z"] {
            let n = name(i, s);
            b.insert_sorted(
                b"row",
                CF,
                &n,
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
    let s7 = name(7, "x").sort_key().to_vec();
    let missing = name(8, "x").sort_key().to_vec();
    let mut found = Vec::new();
    db.visit_columns(&handle, b"row", &[&s7, &missing], |key, cell| {
        if let CellValue::Live { value, .. } = cell.value {
            found.push((key.to_vec(), value));
        }
    })
    .unwrap();
    assert_eq!(found, [(s7.clone(), b"7x".to_vec())]);
}
