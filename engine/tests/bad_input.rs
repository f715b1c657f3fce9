//! Bad input gets a typed error naming what is wrong, and changes nothing: names that do not fit
//! their comparator, wrong path shapes, unknown keyspaces and CFs, empty keys and names, bad
//! identifiers — including inside a batch whose other mutations are fine.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use supercolumn::comparator::{AsciiType, LongType, Utf8Type};
use supercolumn::{
    BatchMutation, ColumnFamilyDef, ColumnParent, ColumnPath, Database, Error, KeyspaceDef,
    NameKind, Options, SlicePredicate, WriteOptions,
};

const KS: &str = "Bad";

fn setup() -> TestDb {
    open_schema(vec![KeyspaceDef::new(KS)
        .with_column_family(ColumnFamilyDef::standard("Longs").with_comparator(LongType))
        .with_column_family(
            ColumnFamilyDef::standard("Uuids")
                .with_comparator(supercolumn::comparator::TimeUuidType),
        )
        .with_column_family(ColumnFamilyDef::standard("Texts").with_comparator(Utf8Type))
        .with_column_family(ColumnFamilyDef::standard("Ascii").with_comparator(AsciiType))
        .with_column_family(ColumnFamilyDef::standard("Plain"))
        .with_column_family(ColumnFamilyDef::standard("Typed").with_validator(Utf8Type))
        .with_column_family(ColumnFamilyDef::super_family("Sup"))])
}

/// Every row of every CF is still empty.
fn assert_unchanged(t: &TestDb) {
    for cf in ["Longs", "Uuids", "Texts", "Ascii", "Plain", "Typed", "Sup"] {
        let n =
            t.db.get_count(
                KS,
                "k",
                &ColumnParent::new(cf),
                &SlicePredicate::everything(),
            )
            .unwrap();
        assert_eq!(n, 0, "{cf} changed");
    }
}

fn invalid_name(e: Error, cf: &str, comparator: &str) {
    match e {
        Error::InvalidName {
            column_family,
            comparator: c,
            ..
        } => {
            assert_eq!(column_family, cf);
            assert_eq!(c, comparator);
        }
        other => panic!("expected InvalidName for {cf}, got {other:?}"),
    }
}

fn put(t: &TestDb, cf: &str, name: &[u8]) -> Error {
    t.db.insert(
        KS,
        "k",
        &ColumnPath::new(cf).column(name),
        "v",
        WriteOptions::at(1),
    )
    .unwrap_err()
}

#[test]
fn a_seven_byte_name_in_a_long_type_cf() {
    let t = setup();
    let e = put(&t, "Longs", &[0; 7]);
    assert!(e.to_string().contains("Bad.Longs (LongType)"), "{e}");
    invalid_name(e, "Longs", "LongType");
    assert_unchanged(&t);
}

#[test]
fn non_uuid_and_non_version_1_names_in_a_time_uuid_cf() {
    let t = setup();
    invalid_name(put(&t, "Uuids", b"not a uuid"), "Uuids", "TimeUUIDType");
    let v4 = uuid::Uuid::from_bytes([0x42; 16]);
    let e = put(&t, "Uuids", v4.as_bytes());
    assert!(e.to_string().contains("version 1"), "{e}");
    invalid_name(e, "Uuids", "TimeUUIDType");
    assert_unchanged(&t);
}

#[test]
fn invalid_utf8_and_non_ascii_names() {
    let t = setup();
    invalid_name(put(&t, "Texts", &[0xc3, 0x28]), "Texts", "UTF8Type");
    invalid_name(put(&t, "Ascii", "héllo".as_bytes()), "Ascii", "AsciiType");
    assert_unchanged(&t);
}

#[test]
fn values_are_checked_by_the_validator() {
    let t = setup();
    let e =
        t.db.insert(
            KS,
            "k",
            &ColumnPath::new("Typed").column("c"),
            [0xff, 0xfe],
            WriteOptions::at(1),
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidName {
                kind: NameKind::Value,
                ..
            }
        ),
        "{e:?}"
    );
    assert_unchanged(&t);
}

#[test]
fn super_column_path_against_a_standard_cf_and_the_reverse() {
    let t = setup();
    let p = ColumnPath::new("Plain").super_column("sc").column("c");
    let e =
        t.db.insert(KS, "k", &p, "v", WriteOptions::at(1))
            .unwrap_err();
    assert!(
        matches!(e, Error::InvalidRequest(ref m) if m.contains("Standard")),
        "{e}"
    );
    let e =
        t.db.get_slice(
            KS,
            "k",
            &ColumnParent::new("Plain").super_column("sc"),
            &SlicePredicate::everything(),
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidRequest(_)));
    let e =
        t.db.insert(
            KS,
            "k",
            &ColumnPath::new("Sup").column("c"),
            "v",
            WriteOptions::at(1),
        )
        .unwrap_err();
    assert!(
        matches!(e, Error::InvalidRequest(ref m) if m.contains("Super")),
        "{e}"
    );
    assert_unchanged(&t);
}

#[test]
fn unknown_keyspace_and_column_family() {
    let t = setup();
    let e =
        t.db.insert(
            "Nope",
            "k",
            &ColumnPath::new("Plain").column("c"),
            "v",
            WriteOptions::at(1),
        )
        .unwrap_err();
    assert!(matches!(e, Error::UnknownKeyspace(ref k) if k == "Nope"));
    let e = put(&t, "Nope", b"c");
    assert!(
        matches!(e, Error::UnknownColumnFamily { ref column_family, .. } if column_family == "Nope")
    );
    let e =
        t.db.get_slice(
            KS,
            "k",
            &ColumnParent::new("Nope"),
            &SlicePredicate::everything(),
        )
        .unwrap_err();
    assert!(matches!(e, Error::UnknownColumnFamily { .. }));
    assert_unchanged(&t);
}

#[test]
fn empty_row_keys_and_names() {
    let t = setup();
    let e =
        t.db.insert(
            KS,
            "",
            &ColumnPath::new("Plain").column("c"),
            "v",
            WriteOptions::at(1),
        )
        .unwrap_err();
    assert!(
        matches!(e, Error::InvalidRequest(ref m) if m.contains("Key may not be empty")),
        "{e}"
    );
    invalid_name(put(&t, "Plain", b""), "Plain", "BytesType");
    let e =
        t.db.get(KS, "", &ColumnPath::new("Plain").column("c"))
            .unwrap_err();
    assert!(matches!(e, Error::InvalidRequest(_)));
    let long_key = vec![b'k'; 65_536];
    assert!(t
        .db
        .insert(
            KS,
            &long_key,
            &ColumnPath::new("Plain").column("c"),
            "v",
            WriteOptions::at(1)
        )
        .is_err());
    invalid_name(put(&t, "Plain", &vec![b'n'; 65_536]), "Plain", "BytesType");
    assert_unchanged(&t);
}

#[test]
fn zero_ttl_is_rejected() {
    let t = setup();
    let e =
        t.db.insert(
            KS,
            "k",
            &ColumnPath::new("Plain").column("c"),
            "v",
            WriteOptions::at(1).with_ttl(0),
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidRequest(_)));
    assert_unchanged(&t);
}

#[test]
fn one_bad_mutation_spoils_the_whole_batch() {
    let t = setup();
    let mut b = BatchMutation::new();
    b.insert(
        "k",
        ColumnPath::new("Plain").column("fine"),
        "v",
        WriteOptions::at(1),
    );
    b.insert(
        "k",
        ColumnPath::new("Longs").column(long(1)),
        "v",
        WriteOptions::at(1),
    );
    b.insert(
        "k",
        ColumnPath::new("Longs").column([1, 2, 3]),
        "v",
        WriteOptions::at(1),
    );
    let e = t.db.batch_mutate(KS, &b).unwrap_err();
    invalid_name(e, "Longs", "LongType");
    assert_unchanged(&t);
}

#[test]
fn bad_identifiers_never_reach_the_file_system() {
    // The data directory inside a directory of the test's own, so that "../x" would land
    // where nothing else can have put an `x`.
    let outer = tempfile::tempdir().unwrap();
    let data = outer.path().join("data");
    let db = Database::open(&data, Options::default()).unwrap();
    db.create_keyspace(KeyspaceDef::new(KS)).unwrap();
    for bad in ["../x", "a/b", "", "with space", &"x".repeat(49)] {
        let e = db.create_keyspace(KeyspaceDef::new(bad)).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidIdentifier {
                    what: "keyspace",
                    ..
                }
            ),
            "{bad}: {e}"
        );
        let e = db
            .create_column_family(KS, ColumnFamilyDef::standard(bad))
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidIdentifier {
                    what: "column family",
                    ..
                }
            ),
            "{bad}: {e}"
        );
    }
    let beside: Vec<_> = std::fs::read_dir(outer.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        beside,
        ["data"],
        "something was created beside the data directory"
    );
    assert!(!data.join("a").exists() && !data.join("with space").exists());
    assert_eq!(db.keyspaces().iter().filter(|k| *k == KS).count(), 1);
    assert!(db
        .keyspaces()
        .iter()
        .all(|k| !k.contains('/') && !k.is_empty()));
}

/// `create_if_missing: false` (what the read-only tools open with) refuses a directory that holds
/// no database, missing or empty, and creates nothing there, not even the lock marker; a
/// database that exists opens.
#[test]
fn without_create_if_missing_an_empty_directory_is_refused_untouched() {
    let outer = tempfile::tempdir().unwrap();
    let strict = || {
        let mut o = Options::default();
        o.create_if_missing = false;
        o
    };
    let missing = outer.path().join("missing");
    let e = Database::open(&missing, strict()).unwrap_err();
    assert!(matches!(&e, Error::NoDatabase(d) if d == &missing), "{e}");
    assert!(!missing.exists());
    let empty = outer.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert!(matches!(
        Database::open(&empty, strict()),
        Err(Error::NoDatabase(_))
    ));
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
    assert!(!Database::exists(&empty));
    Database::open(&empty, Options::default())
        .unwrap()
        .close()
        .unwrap();
    assert!(Database::exists(&empty));
    Database::open(&empty, strict()).unwrap().close().unwrap();
}
