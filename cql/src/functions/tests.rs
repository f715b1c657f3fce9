use super::aggregate::{choose as aggregate, Kind};
use super::number::decimal;
use super::*;

fn cx(uuids: &TimeUuidGenerator) -> Context<'_> {
    Context {
        now_micros: 1_600_000_000_123_456,
        uuids,
        partitioner: Partitioner::Murmur3,
        binds: &[],
    }
}

fn folded(ty: CqlType, lit: Literal) -> Result<Option<Vec<u8>>, CqlError> {
    let uuids = TimeUuidGenerator::new(1);
    ty.encode(&fold(&lit, &ty, &cx(&uuids))?, "c")
}

fn call_of(name: &str, args: Vec<Literal>) -> Literal {
    Literal::Call(name.into(), args)
}

#[test]
fn blob_as_t_gives_exact_bytes_of_its_type_only() {
    let blob = |t: &str, h: &str| call_of(&format!("blobAs{t}"), vec![Literal::Hex(h.into())]);
    let nan = folded(CqlType::Double, blob("double", "7ff8000000000000"));
    assert_eq!(nan.unwrap(), Some(f64::NAN.to_be_bytes().to_vec()));
    let dec = folded(CqlType::Decimal, blob("decimal", "000000010f"));
    assert_eq!(dec.unwrap(), Some(vec![0, 0, 0, 1, 0x0f]));
    let wrong_type = folded(CqlType::Double, blob("int", "00000001")).unwrap_err();
    assert!(
        wrong_type.to_string().contains("Type error"),
        "{wrong_type}"
    );
    let wrong_length = folded(CqlType::Double, blob("double", "0001")).unwrap_err();
    assert!(
        wrong_length
            .to_string()
            .contains("not a valid binary representation"),
        "{wrong_length}"
    );
    let as_blob = folded(
        CqlType::Blob,
        call_of("textAsBlob", vec![Literal::Str("hi".into())]),
    );
    assert_eq!(as_blob.unwrap(), Some(b"hi".to_vec()));
}

#[test]
fn time_functions_convert_as_cassandra_does() {
    // 2020-09-13T12:26:40.123Z
    let ts = folded(
        CqlType::Timestamp,
        call_of("toTimestamp", vec![call_of("now", vec![])]),
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        i64::from_be_bytes(ts.try_into().unwrap()),
        1_600_000_000_123
    );
    let date = folded(CqlType::Date, call_of("currentDate", vec![]))
        .unwrap()
        .unwrap();
    assert_eq!(
        u32::from_be_bytes(date.try_into().unwrap()),
        (1u32 << 31) + 18_518
    );
    let min = folded(
        CqlType::Timeuuid,
        call_of(
            "minTimeuuid",
            vec![Literal::Str("2013-01-01 00:05+0000".into())],
        ),
    )
    .unwrap()
    .unwrap();
    let max = folded(
        CqlType::Timeuuid,
        call_of(
            "maxTimeuuid",
            vec![Literal::Str("2013-01-01 00:05+0000".into())],
        ),
    )
    .unwrap()
    .unwrap();
    assert_eq!(&min[8..], &[0x80; 8]);
    assert_eq!(&max[8..], &[0x7f; 8]);
    let back = |u: &[u8]| time::convert(&CqlType::Timeuuid, &CqlType::Bigint, u).unwrap();
    assert_eq!(back(&min), 1_356_998_700_000i64.to_be_bytes());
    assert_eq!(back(&max), 1_356_998_700_000i64.to_be_bytes());
    let e = folded(
        CqlType::Date,
        call_of("toDate", vec![Literal::Str("2020-01-01".into())]),
    )
    .unwrap_err();
    assert!(e.to_string().contains("Ambiguous call"), "{e}");
}

#[test]
fn arithmetic_takes_the_wider_type_and_wraps_as_java_does() {
    let int = |v: i32| v.to_be_bytes().to_vec();
    let big = |v: i64| v.to_be_bytes().to_vec();
    let add = number::arith(
        ArithOp::Add,
        &CqlType::Int,
        &int(i32::MAX),
        &CqlType::Int,
        &int(1),
    );
    assert_eq!(add.unwrap(), int(i32::MIN));
    let wide = number::arith(
        ArithOp::Add,
        &CqlType::Int,
        &int(i32::MAX),
        &CqlType::Bigint,
        &big(1),
    );
    assert_eq!(wide.unwrap(), big(i64::from(i32::MAX) + 1));
    assert_eq!(
        number::result_type(&CqlType::Bigint, &CqlType::Float),
        Some(CqlType::Double)
    );
    assert_eq!(
        number::result_type(&CqlType::Int, &CqlType::Float),
        Some(CqlType::Float)
    );
    let e = number::arith(ArithOp::Div, &CqlType::Int, &int(1), &CqlType::Int, &int(0));
    let e = e.unwrap_err().to_string();
    assert!(
        e.ends_with("the operation 'int / int' failed: / by zero"),
        "{e}"
    );
    let cast = number::cast(&CqlType::Double, &CqlType::Int, &1e12f64.to_be_bytes());
    assert_eq!(
        cast.unwrap(),
        int(i32::MAX),
        "a double saturates into an int"
    );
}

#[test]
fn aggregates_have_cassandras_types_and_edges() {
    let int = |v: i32| v.to_be_bytes().to_vec();
    let run = |name: &str, ty: CqlType, values: &[Vec<u8>]| {
        let a = aggregate(name, Some(&ty)).unwrap().unwrap();
        let mut s = a.start();
        for v in values {
            a.add(&mut s, Some(v)).unwrap();
        }
        a.add(&mut s, None).unwrap();
        a.result(&s)
    };
    let ints = [int(i32::MAX), int(1), int(2)];
    assert_eq!(
        run("sum", CqlType::Int, &ints),
        Some(int(i32::MIN.wrapping_add(2)))
    );
    // The average adds without overflow, then truncates.
    assert_eq!(
        run("avg", CqlType::Int, &ints),
        Some(int(((i64::from(i32::MAX) + 3) / 3) as i32))
    );
    assert_eq!(run("avg", CqlType::Int, &[]), Some(int(0)));
    assert_eq!(run("sum", CqlType::Int, &[]), Some(int(0)));
    assert_eq!(run("max", CqlType::Int, &[]), None);
    assert_eq!(
        run("count", CqlType::Int, &ints),
        Some(3i64.to_be_bytes().to_vec())
    );
    assert_eq!(
        run("min", CqlType::Text, &[b"b".to_vec(), b"a".to_vec()]),
        Some(b"a".to_vec())
    );
    let decimals = [decimal("1.5"), decimal("2.25"), decimal("1")];
    assert_eq!(
        run("sum", CqlType::Decimal, &decimals),
        Some(decimal("4.75"))
    );
    // Cassandra's running mean: 1.5, then 1.5 + 0.375→0.38 = 1.88, then 1.88 - 0.2933→0.29
    // = 1.59 (the sum's quotient, 1.58333…, would give 1.58).
    assert_eq!(
        run("avg", CqlType::Decimal, &decimals),
        Some(decimal("1.59"))
    );
    assert_eq!(
        run("max", CqlType::Decimal, &decimals),
        Some(decimal("2.25"))
    );
    // A double mean whose sum overflows is finished in decimals, as Cassandra's is; the sum
    // itself overflows to infinity.
    let huge = [1.5e308f64, 1.5e308].map(|f| f.to_be_bytes().to_vec());
    assert_eq!(
        run("avg", CqlType::Double, &huge),
        Some(1.5e308f64.to_be_bytes().to_vec())
    );
    assert_eq!(
        run("sum", CqlType::Double, &huge),
        Some(f64::INFINITY.to_be_bytes().to_vec())
    );
    let rows = aggregate("count", None).unwrap().unwrap();
    assert_eq!(rows.kind, Kind::Rows);
    assert!(aggregate("sum", Some(&CqlType::Text)).is_err());
    assert!(aggregate("lower", Some(&CqlType::Text)).unwrap().is_none());
}

#[test]
fn doubles_read_as_java_writes_them_and_literals_take_cassandras_preferred_types() {
    use super::number::{java_double_text, preferred_type};
    for (f, text) in [
        (4.0, "4.0"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (1e7, "1.0E7"),
        (123_456_789.0, "1.23456789E8"),
        (-5.5, "-5.5"),
        (1e300, "1.0E300"),
        (0.0, "0.0"),
    ] {
        assert_eq!(java_double_text(f), text);
    }
    for (literal, ty) in [
        ("1", CqlType::Int),
        ("-2147483649", CqlType::Bigint),
        ("9223372036854775808", CqlType::Varint),
        ("5.5", CqlType::Double),
        ("5.50", CqlType::Double),
        ("0.1", CqlType::Double),
        ("0.10000000000000000001", CqlType::Decimal),
        ("NaN", CqlType::Double),
    ] {
        assert_eq!(preferred_type(literal), ty, "{literal}");
    }
}
