//! Slice predicates (SPEC §5): ranges forward and reversed, counts, empty bounds, name lists,
//! sub-column slices, multiget of missing keys, and get_count.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use supercolumn::comparator::LongType;
use supercolumn::{
    ColumnFamilyDef, ColumnParent, ColumnPath, Error, KeyspaceDef, SlicePredicate, SliceRange,
    WriteOptions,
};

const KS: &str = "S";

/// A row "r" of LongType columns 0, 10, 20, ..., 90 (values "v0".."v90"), with column 50 deleted.
fn setup() -> TestDb {
    let t = open_schema(vec![KeyspaceDef::new(KS)
        .with_column_family(ColumnFamilyDef::standard("Nums").with_comparator(LongType))
        .with_column_family(
            ColumnFamilyDef::super_family("Sup").with_subcomparator(LongType),
        )]);
    for i in (0..100).step_by(10) {
        let path = ColumnPath::new("Nums").column(long(i));
        t.db.insert(KS, "r", &path, format!("v{i}"), WriteOptions::at(1))
            .unwrap();
    }
    t.db.remove(KS, "r", &ColumnPath::new("Nums").column(long(50)), Some(2))
        .unwrap();
    t
}

fn nums(t: &TestDb, p: impl Into<SlicePredicate>) -> Vec<i64> {
    let r =
        t.db.get_slice(KS, "r", &ColumnParent::new("Nums"), &p.into())
            .unwrap();
    names(&r)
        .into_iter()
        .map(|n| i64::from_be_bytes(n.try_into().unwrap()))
        .collect()
}

fn range(start: Option<i64>, finish: Option<i64>) -> SliceRange {
    SliceRange {
        start: start.map(|v| long(v).to_vec()).unwrap_or_default(),
        finish: finish.map(|v| long(v).to_vec()).unwrap_or_default(),
        ..SliceRange::all()
    }
}

#[test]
fn forward_ranges_are_inclusive_and_skip_deleted_columns() {
    let t = setup();
    assert_eq!(nums(&t, range(Some(20), Some(60))), [20, 30, 40, 60]);
    assert_eq!(nums(&t, range(Some(25), Some(35))), [30]);
    assert_eq!(nums(&t, range(Some(91), None)), Vec::<i64>::new());
}

#[test]
fn empty_start_and_finish_mean_unbounded() {
    let t = setup();
    assert_eq!(
        nums(&t, range(None, None)),
        [0, 10, 20, 30, 40, 60, 70, 80, 90]
    );
    assert_eq!(nums(&t, range(None, Some(20))), [0, 10, 20]);
    assert_eq!(nums(&t, range(Some(70), None)), [70, 80, 90]);
}

#[test]
fn counts_cap_live_columns_only() {
    let t = setup();
    assert_eq!(nums(&t, range(None, None).count(3)), [0, 10, 20]);
    // The tombstone at 50 does not use up the count.
    assert_eq!(nums(&t, range(Some(40), None).count(2)), [40, 60]);
    assert_eq!(nums(&t, range(None, None).count(0)), Vec::<i64>::new());
}

#[test]
fn reversed_slices_walk_down_from_start() {
    let t = setup();
    // "The last 3 columns": empty start, reversed, count 3.
    assert_eq!(
        nums(&t, range(None, None).reversed().count(3)),
        [90, 80, 70]
    );
    assert_eq!(
        nums(&t, range(Some(60), Some(20)).reversed()),
        [60, 40, 30, 20]
    );
    assert_eq!(
        nums(&t, range(Some(45), None).reversed().count(2)),
        [40, 30]
    );
    assert_eq!(nums(&t, range(None, Some(75)).reversed()), [90, 80]);
}

#[test]
fn start_after_finish_in_traversal_order_is_rejected() {
    let t = setup();
    let p = ColumnParent::new("Nums");
    let reversed_wrong: SlicePredicate = range(Some(20), Some(60)).reversed().into();
    let e = t.db.get_slice(KS, "r", &p, &reversed_wrong).unwrap_err();
    assert!(
        matches!(e, Error::InvalidRequest(ref m) if m.contains("finish must come after start")),
        "{e}"
    );
    let forward_wrong: SlicePredicate = range(Some(60), Some(20)).into();
    assert!(matches!(
        t.db.get_slice(KS, "r", &p, &forward_wrong),
        Err(Error::InvalidRequest(_))
    ));
}

#[test]
fn name_predicates_return_live_columns_in_comparator_order() {
    let t = setup();
    let p = SlicePredicate::names([long(90), long(5), long(50), long(0), long(90)]);
    assert_eq!(nums(&t, p), [0, 90]);
}

#[test]
fn sub_column_slices_and_super_column_names() {
    let t = setup();
    for sc in ["a", "b", "c"] {
        for i in 1..=5 {
            let path = ColumnPath::new("Sup").super_column(sc).column(long(i));
            t.db.insert(KS, "s", &path, "x", WriteOptions::at(1))
                .unwrap();
        }
    }
    let in_b = ColumnParent::new("Sup").super_column("b");
    let last2: SlicePredicate = SliceRange::all().reversed().count(2).into();
    let r = t.db.get_slice(KS, "s", &in_b, &last2).unwrap();
    let got: Vec<i64> = names(&r)
        .into_iter()
        .map(|n| i64::from_be_bytes(n.try_into().unwrap()))
        .collect();
    assert_eq!(got, [5, 4]);
    assert_eq!(
        t.db.get_count(KS, "s", &in_b, &SlicePredicate::everything())
            .unwrap(),
        5
    );
    let whole = ColumnParent::new("Sup");
    let scs =
        t.db.get_slice(KS, "s", &whole, &SlicePredicate::names(["c", "zz", "a"]))
            .unwrap();
    assert_eq!(strings(names(&scs)), ["a", "c"]);
    let rev =
        t.db.get_slice(
            KS,
            "s",
            &whole,
            &SliceRange::all().reversed().count(2).into(),
        )
        .unwrap();
    assert_eq!(strings(names(&rev)), ["c", "b"]);
    // Sub-columns inside each returned super column stay in natural order.
    let first = rev[0].as_super_column().unwrap();
    assert_eq!(first.columns[0].name, long(1));
    assert_eq!(
        t.db.get_count(KS, "s", &whole, &SlicePredicate::everything())
            .unwrap(),
        3
    );
}

#[test]
fn multiget_answers_every_key_in_request_order() {
    let t = setup();
    let keys = ["missing1", "r", "missing2"];
    let got =
        t.db.multiget_slice(
            KS,
            &keys,
            &ColumnParent::new("Nums"),
            &range(None, None).count(2).into(),
        )
        .unwrap();
    let ks: Vec<&[u8]> = got.iter().map(|k| k.key.as_slice()).collect();
    assert_eq!(ks, [&b"missing1"[..], b"r", b"missing2"]);
    assert!(got[0].columns.is_empty() && got[2].columns.is_empty());
    assert_eq!(got[1].columns.len(), 2);
}

#[test]
fn get_of_a_missing_column_is_none() {
    let t = setup();
    let p = ColumnPath::new("Nums").column(long(55));
    assert!(t.db.get(KS, "r", &p).unwrap().is_none());
    assert!(t.db.get(KS, "nobody", &p).unwrap().is_none());
    let deleted = ColumnPath::new("Nums").column(long(50));
    assert!(t.db.get(KS, "r", &deleted).unwrap().is_none());
}
