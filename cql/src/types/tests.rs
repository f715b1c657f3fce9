//! Tests of `types`: literals' bytes, `blobAs…` casts and how values print.

use super::*;

#[test]
fn literals_serialize_as_cassandra_does() {
    let enc = |t: CqlType, l: Literal| t.encode(&l, "c").unwrap().unwrap();
    assert_eq!(enc(CqlType::Int, Literal::Number("2".into())), [0, 0, 0, 2]);
    assert_eq!(
        enc(CqlType::Text, Literal::Str("normalVal1".into())),
        b"normalVal1"
    );
    assert_eq!(enc(CqlType::Boolean, Literal::Bool(true)), [1]);
    assert_eq!(
        enc(CqlType::Decimal, Literal::Number("-1.25".into())),
        [0, 0, 0, 2, 0x83]
    );
    assert_eq!(decode_decimal(&[0, 0, 0, 2, 0x83]).unwrap(), "-1.25");
    assert_eq!(decode_decimal(&[0, 0, 0, 3, 5]).unwrap(), "0.005");
    // A negative scale, or a first digit past six places after the point, is written as
    // Cassandra writes it.
    assert_eq!(
        decode_decimal(&[0xff, 0xff, 0xff, 0xfd, 1]).unwrap(),
        "1E+3"
    );
    assert_eq!(decode_decimal(&[0, 0, 0, 8, 15]).unwrap(), "1.5E-7");
    assert!(CqlType::Int.encode(&Literal::Str("x".into()), "c").is_err());
    assert!(CqlType::Int
        .encode(&Literal::Number("3000000000".into()), "c")
        .is_err());
    assert!(CqlType::Ascii
        .encode(&Literal::Str("é".into()), "c")
        .is_err());
    assert_eq!(CqlType::Int.encode(&Literal::Null, "c").unwrap(), None);
}

#[test]
fn values_display_as_cqlsh_does() {
    assert_eq!(CqlType::Boolean.display(&[1]), "True");
    assert_eq!(CqlType::Blob.display(&[0xca, 0xfe]), "0xcafe");
    assert_eq!(CqlType::Int.display(&[0, 0, 0, 5]), "5");
    assert_eq!(CqlType::Int.display(&[1]), "0x01", "bad bytes show as hex");
}
