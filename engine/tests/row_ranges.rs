//! get_range_slices (SPEC §4, §5) under each partitioner: token order, inclusive key and token
//! bounds, counts, paging, rows holding only tombstones skipped, inverted ranges rejected.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use supercolumn::{
    ColumnParent, ColumnPath, Error, KeyRange, KeySlice, Partitioner, SlicePredicate, WriteOptions,
};

const KS: &str = "Keyspace1";

fn filled(p: Partitioner) -> TestDb {
    let t = open_with(None, p);
    for k in ["a", "b", "c", "d", "e", "f", "g", "h"] {
        t.db.insert(
            KS,
            k,
            &ColumnPath::new("Standard1").column("c"),
            k,
            WriteOptions::at(1),
        )
        .unwrap();
    }
    t
}

fn scan(t: &TestDb, range: &KeyRange) -> Vec<String> {
    keys(
        t.db.get_range_slices(
            KS,
            &ColumnParent::new("Standard1"),
            &SlicePredicate::everything(),
            range,
        )
        .unwrap(),
    )
}

fn keys(r: Vec<KeySlice>) -> Vec<String> {
    r.into_iter()
        .map(|k| String::from_utf8(k.key).unwrap())
        .collect()
}

fn token_order(p: Partitioner, mut ks: Vec<&str>) -> Vec<String> {
    ks.sort_by_key(|k| p.token(k.as_bytes()));
    ks.into_iter().map(str::to_string).collect()
}

#[test]
fn order_preserving_scans_in_key_order_with_inclusive_bounds() {
    let t = filled(Partitioner::OrderPreserving);
    assert_eq!(
        scan(&t, &KeyRange::all()),
        ["a", "b", "c", "d", "e", "f", "g", "h"]
    );
    assert_eq!(scan(&t, &KeyRange::keys("b", "d")), ["b", "c", "d"]);
    assert_eq!(
        scan(&t, &KeyRange::keys("bb", "")),
        ["c", "d", "e", "f", "g", "h"]
    );
    assert_eq!(scan(&t, &KeyRange::keys("", "c").count(2)), ["a", "b"]);
    assert_eq!(scan(&t, &KeyRange::tokens("f", "g")), ["f", "g"]);
}

fn hashing_scans(p: Partitioner) {
    let t = filled(p);
    let all = token_order(p, vec!["a", "b", "c", "d", "e", "f", "g", "h"]);
    assert_eq!(scan(&t, &KeyRange::all()), all);
    // A key bound stands for its token: from the 3rd to the 6th row in token order, inclusive.
    assert_eq!(scan(&t, &KeyRange::keys(&all[2], &all[5])), &all[2..=5]);
    // Token bounds in their text form.
    let tok = |k: &str| p.token(k.as_bytes()).to_string();
    assert_eq!(
        scan(&t, &KeyRange::tokens(tok(&all[1]), tok(&all[3]))),
        &all[1..=3]
    );
    // Paging: count 3, then continue from the last key seen (inclusive, so drop it).
    let page1 = scan(&t, &KeyRange::all().count(3));
    let page2 = scan(&t, &KeyRange::keys(page1.last().unwrap(), "").count(4));
    assert_eq!(page2[0], page1[2]);
    let mut joined = page1.clone();
    joined.extend(page2.into_iter().skip(1));
    assert_eq!(joined, &all[..6]);
    // An inverted range is refused.
    let e =
        t.db.get_range_slices(
            KS,
            &ColumnParent::new("Standard1"),
            &SlicePredicate::everything(),
            &KeyRange::keys(&all[5], &all[2]),
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidRequest(_)), "{e}");
}

#[test]
fn random_partitioner_scans_in_md5_token_order() {
    hashing_scans(Partitioner::Random);
}

#[test]
fn murmur3_partitioner_scans_in_murmur3_token_order() {
    hashing_scans(Partitioner::Murmur3);
}

#[test]
fn rows_holding_only_tombstones_are_skipped() {
    let t = filled(Partitioner::OrderPreserving);
    t.db.remove(KS, "b", &ColumnPath::new("Standard1"), Some(5))
        .unwrap();
    t.db.remove(KS, "c", &ColumnPath::new("Standard1").column("c"), Some(5))
        .unwrap();
    t.db.remove(KS, "zz", &ColumnPath::new("Standard1"), Some(5))
        .unwrap();
    assert_eq!(scan(&t, &KeyRange::keys("a", "e")), ["a", "d", "e"]);
    // The count counts returned rows, not skipped ones.
    assert_eq!(scan(&t, &KeyRange::all().count(2)), ["a", "d"]);
}

#[test]
fn rows_with_live_data_outside_the_slice_come_back_empty() {
    let t = filled(Partitioner::OrderPreserving);
    let r =
        t.db.get_range_slices(
            KS,
            &ColumnParent::new("Standard1"),
            &SlicePredicate::names(["other"]),
            &KeyRange::keys("a", "b"),
        )
        .unwrap();
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|k| k.columns.is_empty()));
}

#[test]
fn bad_tokens_and_counts_are_rejected() {
    let t = filled(Partitioner::Murmur3);
    let p = ColumnParent::new("Standard1");
    let all = SlicePredicate::everything();
    assert!(matches!(
        t.db.get_range_slices(KS, &p, &all, &KeyRange::tokens("abc", "1")),
        Err(Error::InvalidRequest(_))
    ));
    assert!(matches!(
        t.db.get_range_slices(KS, &p, &all, &KeyRange::all().count(0)),
        Err(Error::InvalidRequest(_))
    ));
}
