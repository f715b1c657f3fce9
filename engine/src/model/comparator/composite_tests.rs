//! Tests of `composite.rs`: names, bounds and static names against their sort keys.

use super::super::{sort_key, LongType, ReversedType, Utf8Type};
use super::*;
use proptest::prelude::*;

fn ty() -> CompositeType {
    CompositeType::new(vec![Arc::new(LongType), Arc::new(Utf8Type)])
}

#[test]
fn cql_row_marker_and_cells_render_as_cassandra_does() {
    let t = ty();
    let marker = CompositeType::build(&[&1i64.to_be_bytes(), b""], 0);
    let cell = CompositeType::build(&[&1i64.to_be_bytes(), b"name"], 0);
    assert_eq!(t.to_text(&marker), "1:");
    assert_eq!(t.to_text(&cell), "1:name");
    assert!(t.compare(&marker, &cell).is_lt());
    assert_eq!(t.parse_text("1:name").unwrap(), cell);
    t.validate(&cell).unwrap();
}

#[test]
fn slice_bounds_with_an_end_of_component_parse_back() {
    let t = CompositeType::new(vec![
        Arc::new(Utf8Type),
        Arc::new(Utf8Type),
        Arc::new(Utf8Type),
    ]);
    let end = t.parse_text("c1:c2:!").unwrap();
    assert_eq!(end, CompositeType::build(&[b"c1", b"c2"], 1));
    assert_eq!(t.to_text(&end), "c1:c2:!");
    let row = CompositeType::build(&[b"c1", b"c2", b"v"], 0);
    assert!(
        t.compare(&row, &end).is_lt(),
        "the whole clustering row sorts before its end bound"
    );
    assert_eq!(
        t.parse_text("c1:_").unwrap(),
        CompositeType::build(&[b"c1"], -1)
    );
    assert_eq!(
        t.parse_text("c1:!!").unwrap(),
        CompositeType::build(&[b"c1", b"!"], 0)
    );
}

#[test]
fn empty_components_roundtrip() {
    // A name like ":x" has an empty LongType component: it must decode, not poison the row.
    let t = ty();
    let name = t.parse_text(":x").unwrap();
    t.validate(&name).unwrap();
    let mut back = Vec::new();
    t.decode_sort_key(&sort_key(&t, &name), &mut back).unwrap();
    assert_eq!(back, name);
    assert!(t.parse_text(&format!("1:{}", "y".repeat(70_000))).is_err());
}

#[test]
fn malformed_composites_are_rejected() {
    let t = ty();
    assert!(t.validate(&[0, 5, b'a']).is_err());
    assert!(t.validate(&[0]).is_err());
    let three = CompositeType::build(&[&1i64.to_be_bytes(), b"a", b"b"], 0);
    assert!(t.validate(&three).is_err());
    let bad_long = CompositeType::build(&[b"abc", b"x"], 0);
    assert!(t.validate(&bad_long).is_err());
}

#[test]
fn a_static_name_sorts_before_the_partitions_first_bound() {
    let t = ty();
    let st = CompositeType::build_static(&[b"", b"s"], 0);
    assert_eq!(&st[..3], &STATIC_MARKER);
    assert_eq!(t.to_text(&st), "static::s");
    // The end of the statics: an empty first component ending before everything.
    let end = CompositeType::build(&[b""], -1);
    let first = CompositeType::build(&[b"", b""], 0);
    assert!(t.compare(&st, &end).is_lt() && t.compare(&end, &first).is_lt());
    assert!(sort_key(&t, &st) < sort_key(&t, &end));
    let parts = CompositeType::split(&st).unwrap();
    assert_eq!(parts.len(), 2);
    assert_eq!(CompositeType::components_of(&st).offset(), 3);
}

proptest! {
    /// A static name sorts before every other name of its partition, by `compare` and by
    /// its sort key alike (a reversed first component too), and checks and decodes back.
    #[test]
    fn static_names_sort_first_and_round_trip(
        a in any::<i64>(), sa in "[a-c\\x00]{0,3}", sb in "[a-c\\x00]{0,3}", e in -1i8..=1,
        x_static: bool, y_static: bool, reversed: bool,
    ) {
        let t = if reversed {
            CompositeType::new(vec![
                Arc::new(ReversedType(Arc::new(LongType))),
                Arc::new(Utf8Type),
            ])
        } else {
            ty()
        };
        let name = |st: bool, s: &str, e: i8| if st {
            CompositeType::build_static(&[b"", s.as_bytes()], e)
        } else {
            CompositeType::build(&[&a.to_be_bytes(), s.as_bytes()], e)
        };
        let x = name(x_static, &sa, e);
        let y = name(y_static, &sb, 0);
        prop_assert_eq!(t.compare(&x, &y), sort_key(&t, &x).cmp(&sort_key(&t, &y)));
        if x_static && !y_static {
            prop_assert!(t.compare(&x, &y).is_lt());
        }
        for n in [&x, &y] {
            let mut back = Vec::new();
            t.decode_sort_key(&sort_key(&t, n), &mut back).unwrap();
            prop_assert_eq!(&back, n);
            t.validate(n).unwrap();
            prop_assert!(t.validate_sorted(n, &sort_key(&t, n), &mut Vec::new()).is_ok());
        }
    }

    #[test]
    fn composite_sort_keys_match_compare(
        a in any::<i64>(), b in any::<i64>(), sa in "[a-c\\x00]{0,3}", sb in "[a-c\\x00]{0,3}",
        ea in -1i8..=1, eb in -1i8..=1, short_a: bool,
    ) {
        let t = ty();
        let x = if short_a {
            CompositeType::build(&[&a.to_be_bytes()], ea)
        } else {
            CompositeType::build(&[&a.to_be_bytes(), sa.as_bytes()], ea)
        };
        let y = CompositeType::build(&[&b.to_be_bytes(), sb.as_bytes()], eb);
        prop_assert_eq!(t.compare(&x, &y), sort_key(&t, &x).cmp(&sort_key(&t, &y)));
        let mut back = Vec::new();
        t.decode_sort_key(&sort_key(&t, &x), &mut back).unwrap();
        prop_assert_eq!(back, x);
    }

    /// The one-walk check of a name and its sort key answers as validating the name and
    /// comparing its encoded sort key do, for valid, malformed and mismatched pairs.
    #[test]
    fn validate_sorted_agrees_with_validate_and_encode(
        name in proptest::collection::vec(prop_oneof![Just(0u8), Just(8), any::<u8>()], 0..24),
        other in proptest::collection::vec(any::<u8>(), 0..24),
        a in any::<i64>(), s in "[a-c\\x00]{0,3}", e in -1i8..=1, same: bool,
    ) {
        let t = ty();
        let mut scratch = Vec::new();
        for n in [name.clone(), CompositeType::build(&[&a.to_be_bytes(), s.as_bytes()], e)] {
            let key = if same { sort_key(&t, &n) } else { other.clone() };
            let expected = t.validate(&n).is_ok() && sort_key(&t, &n) == key;
            prop_assert_eq!(t.validate_sorted(&n, &key, &mut scratch).is_ok(), expected);
        }
    }
}
