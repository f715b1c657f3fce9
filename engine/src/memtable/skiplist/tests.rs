//! The skiplist against a sorted vector, and concurrent writers.

use super::*;
use proptest::prelude::*;

fn insert(list: &SkipList, arena: &Arena, row: &[u8], entry: &[u8], version: u32) {
    let mut s = list.find(arena, &SearchKey::new(row, EntryPos::At(entry, version)));
    let new = NewNode {
        row: RowBytes::Copy(row),
        entry,
        version,
        value_len: 4,
    };
    list.insert(arena, &mut s, &new, |v| {
        v.copy_from_slice(&version.to_be_bytes())
    });
}

fn all(list: &SkipList, arena: &Arena) -> Vec<(Vec<u8>, Vec<u8>, u32)> {
    let mut out = Vec::new();
    let mut n = list.first(arena);
    while let Some(x) = n {
        assert_eq!(x.value(), x.version().to_be_bytes());
        out.push((x.row().to_vec(), x.entry().to_vec(), x.version()));
        n = x.successor();
    }
    out
}

/// Bytes that share prefixes and spread over buckets (row keys are never empty).
fn byte() -> impl Strategy<Value = u8> {
    proptest::sample::select(vec![0u8, 1, 2, 0x7f, 0x80, 0xfe, 0xff])
}

proptest! {
    #[test]
    fn iterates_in_key_order_and_seeks_like_a_sorted_vec(
        keys in proptest::collection::btree_set(
            (proptest::collection::vec(byte(), 1..10), proptest::collection::vec(0u8..3, 0..3), 0u32..4),
            0..200,
        ),
        probe in (proptest::collection::vec(byte(), 0..10), proptest::collection::vec(0u8..3, 0..3), 0u32..4),
        rows in prop_oneof![Just(0usize), Just(1_000), Just(1 << 20)],
    ) {
        let arena = Arena::new();
        let list = SkipList::new(&arena, rows);
        let mut keys: Vec<_> = keys.into_iter().collect();
        // Insert in a scrambled order.
        let n = keys.len();
        for i in 0..n {
            let (r, e, v) = &keys[(i * 7919) % n.max(1)];
            if !all(&list, &arena).contains(&(r.clone(), e.clone(), *v)) {
                insert(&list, &arena, r, e, *v);
            }
        }
        // Rows, then entries, then versions descending.
        keys.sort_by(|a, b| (&a.0, &a.1, std::cmp::Reverse(a.2)).cmp(&(&b.0, &b.1, std::cmp::Reverse(b.2))));
        prop_assert_eq!(all(&list, &arena), keys.clone());
        let key = SearchKey::new(&probe.0, EntryPos::At(&probe.1, probe.2));
        let want = keys.iter().find(|k| (&k.0, &k.1, std::cmp::Reverse(k.2)) >= (&probe.0, &probe.1, std::cmp::Reverse(probe.2)));
        let got = list.seek(&arena, &key).map(|n| (n.row().to_vec(), n.entry().to_vec(), n.version()));
        prop_assert_eq!(got.as_ref(), want);
        let before = keys.iter().rev().find(|k| (&k.0, &k.1, std::cmp::Reverse(k.2)) < (&probe.0, &probe.1, std::cmp::Reverse(probe.2)));
        let got = list.before(&arena, &key).map(|n| (n.row().to_vec(), n.entry().to_vec(), n.version()));
        prop_assert_eq!(got.as_ref(), before);
    }
}

#[test]
fn concurrent_writers_lose_no_node() {
    let arena = Arena::new();
    let list = SkipList::new(&arena, 20_000);
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let (list, arena) = (&list, &arena);
            s.spawn(move || {
                for i in 0..5_000u32 {
                    let row = (i.wrapping_mul(2_654_435_761) ^ t).to_be_bytes();
                    insert(list, arena, &row, &[1], t + 1);
                }
            });
        }
    });
    let got = all(&list, &arena);
    assert_eq!(got.len(), 20_000);
    assert!(got
        .windows(2)
        .all(|w| (&w[0].0, &w[0].1, std::cmp::Reverse(w[0].2))
            < (&w[1].0, &w[1].1, std::cmp::Reverse(w[1].2))));
}
