use super::*;
use crate::ast::{Assignment, Op, Relation, Selector, Subscript};

#[test]
fn seed_002_statements_parse() {
    let s = parse(
        "CREATE TABLE example (
            partitionKey1 text,
            partitionKey2 text,
            clusterKey1 text,
            clusterKey2 text,
            normalField1 text,
            normalField2 text,
            PRIMARY KEY (
                (partitionKey1, partitionKey2),
                clusterKey1, clusterKey2
                )
            );
        INSERT INTO example (field1, field2, field3) VALUES (1,2,3);",
    )
    .unwrap();
    assert_eq!(s.len(), 2);
    let Statement::CreateTable {
        partition_key,
        clustering,
        columns,
        ..
    } = &s[0]
    else {
        panic!("{:?}", s[0])
    };
    assert_eq!(partition_key, &["partitionkey1", "partitionkey2"]);
    assert_eq!(clustering, &["clusterkey1", "clusterkey2"]);
    assert_eq!(columns.len(), 6);
    let Statement::Insert { values, .. } = &s[1] else {
        panic!()
    };
    assert_eq!(values[2], Term::Literal(Literal::Number("3".into())));
}

#[test]
fn select_with_everything() {
    let s = parse(
        "select \"Quoted\", writetime(v), ttl(v) from ks.t where k = ? and c >= :lo and c < 5 \
         order by c desc per partition limit 2 limit 10 allow filtering",
    )
    .unwrap();
    let Statement::Select(sel) = &s[0] else {
        panic!()
    };
    assert_eq!(sel.table.keyspace.as_deref(), Some("ks"));
    assert_eq!(sel.selectors[0], Selector::Column("Quoted".into()));
    assert_eq!(sel.relations.len(), 3);
    assert_eq!(
        sel.relations[0],
        Relation::Compare("k".into(), Op::Eq, Term::Bind(Bind::Positional(0)))
    );
    assert_eq!(sel.order_by, [("c".to_string(), true)]);
    assert!(sel.allow_filtering);
}

#[test]
fn updates_deletes_and_batches() {
    let s = parse(
        "BEGIN BATCH USING TIMESTAMP 5 \
           UPDATE t USING TTL 10 SET a = 1, m['k'] = 'v', l = l + [1] WHERE k = 1; \
           DELETE a, m['x'] FROM t WHERE k = 1; \
           INSERT INTO t (k) VALUES (now()) \
         APPLY BATCH",
    )
    .unwrap();
    let Statement::Batch {
        statements, using, ..
    } = &s[0]
    else {
        panic!()
    };
    assert_eq!(
        using.timestamp,
        Some(Term::Literal(Literal::Number("5".into())))
    );
    assert_eq!(statements.len(), 3);
    let Statement::Update { assignments, .. } = &statements[0] else {
        panic!()
    };
    assert_eq!(
        assignments[0],
        Assignment::Set("a".into(), Term::Literal(Literal::Number("1".into())))
    );
    let (s, n) = (
        |v: &str| Term::Literal(Literal::Str(v.into())),
        |v: &str| Term::Literal(Literal::Number(v.into())),
    );
    assert_eq!(
        assignments[1],
        Assignment::SetElement("m".into(), s("k"), s("v"))
    );
    assert_eq!(
        assignments[2],
        Assignment::Add(
            "l".into(),
            Term::Literal(Literal::List(vec![Literal::Number("1".into())]))
        )
    );
    let Statement::Delete { columns, .. } = &statements[1] else {
        panic!()
    };
    assert_eq!(
        columns[..],
        [
            ("a".into(), None),
            ("m".into(), Some(Subscript::Element(s("x"))))
        ]
    );
    let p = parse("UPDATE t SET l = [2] + l, s = s - {'a'}, m = {1: 'x'} WHERE k = 1").unwrap();
    let Statement::Update { assignments, .. } = &p[0] else {
        panic!()
    };
    assert_eq!(
        assignments[..],
        [
            Assignment::Prepend(
                "l".into(),
                Term::Literal(Literal::List(vec![Literal::Number("2".into())]))
            ),
            Assignment::Discard(
                "s".into(),
                Term::Literal(Literal::Set(vec![Literal::Str("a".into())]))
            ),
            Assignment::Set(
                "m".into(),
                Term::Literal(Literal::Map(vec![(
                    Literal::Number("1".into()),
                    Literal::Str("x".into())
                )]))
            ),
        ]
    );
    let _ = n;
    assert!(parse("UPDATE t SET l = [2] + other WHERE k = 1").is_err());
}

#[test]
fn syntax_errors_name_their_place() {
    let e = parse("CREATE TABLE t (a int PRIMARY KEY,\n b 12)").unwrap_err();
    assert_eq!(
        e.to_string(),
        "SyntaxException: line 2:4 expected a type, found number 12"
    );
    // Any other name is a user type's, looked up when the statement runs.
    assert!(parse("CREATE TABLE t (a int PRIMARY KEY, b nosuchtype)").is_ok());
    let e = parse("SELECT * FROM").unwrap_err();
    assert!(e.to_string().contains("found the end"), "{e}");
    assert!(parse("INSERT INTO t (a) VALUES (1) garbage").is_err());
    assert!(parse(&format!(
        "CREATE TABLE t (a {}int{})",
        "list<".repeat(50),
        ">".repeat(50)
    ))
    .is_err());
}

proptest::proptest! {
    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,64}") {
        let _ = parse(&s);
    }
}

#[test]
fn in_lists_whose_product_is_too_large_are_refused() {
    let list = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    let ok = format!(
        "SELECT * FROM t WHERE a IN ({}) AND b IN ({})",
        list(100),
        list(100)
    );
    assert!(parse(&ok).is_ok());
    let big = format!(
        "UPDATE t SET v = 1 WHERE a IN ({}) AND b IN ({}) AND c IN ({})",
        list(100),
        list(100),
        list(2)
    );
    let e = parse(&big).unwrap_err().to_string();
    assert!(e.contains("combinations of IN values"), "{e}");
}

#[test]
fn blob_as_t_parses_to_its_type_and_hex() {
    let parsed = parse("INSERT INTO t (k) VALUES (blobAsInt(0x00000001))");
    assert!(
        format!("{parsed:?}").contains("Call(\"blobasint\", [Hex(\"00000001\")])"),
        "{parsed:?}"
    );
}
