use std::cmp::Ordering;

use super::super::{sort_key, Utf8Type};
use super::*;
use proptest::prelude::*;

/// The sort keys of `a` and `b` order them as `expected`, and each decodes back to its name.
fn check(t: &dyn Comparator, a: &[u8], b: &[u8], expected: Ordering) -> Result<(), TestCaseError> {
    t.validate(a).map_err(|e| TestCaseError::fail(e.0))?;
    t.validate(b).map_err(|e| TestCaseError::fail(e.0))?;
    let (ka, kb) = (sort_key(t, a), sort_key(t, b));
    prop_assert_eq!(ka.cmp(&kb), expected, "{} {:?} {:?}", t.name(), a, b);
    prop_assert_eq!(t.compare(a, b), expected);
    for (name, key) in [(a, &ka), (b, &kb)] {
        let mut back = Vec::new();
        t.decode_sort_key(key, &mut back)
            .map_err(|e| TestCaseError::fail(e.0))?;
        prop_assert_eq!(&back[..], name);
        let parsed = t.parse_text(&t.to_text(name)).ok();
        prop_assert_eq!(parsed.as_deref(), Some(name));
    }
    Ok(())
}

proptest! {
    #[test]
    fn integers_order_numerically(a: i64, b: i64) {
        check(&Int32Type, &(a as i32).to_be_bytes(), &(b as i32).to_be_bytes(), (a as i32).cmp(&(b as i32)))?;
        check(&ShortType, &(a as i16).to_be_bytes(), &(b as i16).to_be_bytes(), (a as i16).cmp(&(b as i16)))?;
        check(&ByteType, &(a as i8).to_be_bytes(), &(b as i8).to_be_bytes(), (a as i8).cmp(&(b as i8)))?;
        check(&TimestampType, &(a / 1000).to_be_bytes(), &(b / 1000).to_be_bytes(), (a / 1000).cmp(&(b / 1000)))?;
        let (ta, tb) = (a.rem_euclid(NANOS_PER_DAY), b.rem_euclid(NANOS_PER_DAY));
        check(&TimeType, &ta.to_be_bytes(), &tb.to_be_bytes(), ta.cmp(&tb))?;
        let (da, db) = ((a as u32) >> 4 | 1 << 31, (b as u32) >> 4 | 1 << 31);
        check(&SimpleDateType, &da.to_be_bytes(), &db.to_be_bytes(), da.cmp(&db))?;
    }

    #[test]
    fn varints_order_numerically(a: i128, b: i128) {
        let enc = |v: i128| num_bigint::BigInt::from(v).to_signed_bytes_be();
        check(&IntegerType, &enc(a), &enc(b), a.cmp(&b))?;
    }

    #[test]
    fn floats_order_as_numbers(a: f64, b: f64) {
        prop_assume!(!a.is_nan() && !b.is_nan());
        let expected = a.partial_cmp(&b).unwrap_or(Ordering::Equal)
            .then(a.is_sign_positive().cmp(&b.is_sign_positive()));
        check(&DoubleType, &a.to_be_bytes(), &b.to_be_bytes(), expected)?;
        let (fa, fb) = (a as f32, b as f32);
        let expected = fa.partial_cmp(&fb).unwrap_or(Ordering::Equal)
            .then(fa.is_sign_positive().cmp(&fb.is_sign_positive()));
        check(&FloatType, &fa.to_be_bytes(), &fb.to_be_bytes(), expected)?;
    }

    #[test]
    fn reversed_reverses_and_stays_prefix_free(a in "[a-c\\x00]{1,4}", b in "[a-c\\x00]{1,4}") {
        let r = ReversedType(Arc::new(Utf8Type));
        check(&r, a.as_bytes(), b.as_bytes(), b.cmp(&a))?;
        let c = super::super::CompositeType::new(vec![Arc::new(r), Arc::new(Utf8Type)]);
        let x = super::super::CompositeType::build(&[a.as_bytes(), b"z"], 0);
        let y = super::super::CompositeType::build(&[b.as_bytes(), b"a"], 0);
        prop_assert_eq!(sort_key(&c, &x).cmp(&sort_key(&c, &y)), b.cmp(&a).then(Ordering::Greater));
    }

    #[test]
    fn uuids_order_by_version_then_time(a: [u8; 16], b: [u8; 16], va in 1u8..5, vb in 1u8..5) {
        let (mut a, mut b) = (a, b);
        a[6] = a[6] & 0x0f | va << 4;
        b[6] = b[6] & 0x0f | vb << 4;
        let expected = va.cmp(&vb).then_with(|| if va == 1 {
            TimeUuidType.compare(&a, &b)
        } else {
            a.cmp(&b)
        });
        check(&UuidType, &a, &b, expected)?;
    }

    #[test]
    fn hostile_sort_keys_are_errors_not_panics(key: Vec<u8>) {
        for t in cql_types().into_iter().chain([Arc::new(ReversedType(Arc::new(Int32Type))) as Arc<dyn Comparator>]) {
            let _ = t.decode_sort_key(&key, &mut Vec::new());
            let _ = t.to_text(&key);
        }
    }
}

#[test]
fn text_forms_are_cassandras() {
    assert_eq!(Int32Type.parse_text("2").unwrap(), [0, 0, 0, 2]);
    assert_eq!(
        TimestampType.to_text(&1_374_546_754_299i64.to_be_bytes()),
        "2013-07-23 02:32:34.299000+0000"
    );
    assert_eq!(
        TimestampType
            .parse_text("2013-07-23 02:32:34.299+0000")
            .unwrap(),
        1_374_546_754_299i64.to_be_bytes()
    );
    assert_eq!(
        TimestampType.parse_text("2013-07-23").unwrap(),
        1_374_537_600_000i64.to_be_bytes()
    );
    assert_eq!(
        SimpleDateType.to_text(&(1u32 << 31).to_be_bytes()),
        "1970-01-01"
    );
    assert_eq!(
        TimeType.parse_text("01:02:03.5").unwrap(),
        3_723_500_000_000i64.to_be_bytes()
    );
    assert_eq!(InetAddressType.to_text(&[127, 0, 0, 1]), "127.0.0.1");
    assert_eq!(IntegerType.to_text(&[0x00, 0x80]), "128");
    assert!(
        IntegerType.validate(&[0x00, 0x01]).is_err(),
        "non-minimal varint"
    );
    assert!(BooleanType.validate(&[2]).is_err());
    assert!(TimeType.validate(&NANOS_PER_DAY.to_be_bytes()).is_err());
    assert!(SimpleDateType.parse_text("2013-02-29").is_err());
}

#[test]
fn every_nan_is_one_value() {
    assert!(DoubleType.validate(&(-f64::NAN).to_be_bytes()).is_err());
    assert!(FloatType.validate(&(-f32::NAN).to_be_bytes()).is_err());
    assert_eq!(
        DoubleType.parse_text("-NaN").unwrap(),
        f64::NAN.to_be_bytes()
    );
    let (nan, inf) = (f64::NAN.to_be_bytes(), f64::INFINITY.to_be_bytes());
    assert!(
        sort_key(&DoubleType, &nan) > sort_key(&DoubleType, &inf),
        "NaN sorts above every number"
    );
}
