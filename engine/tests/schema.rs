//! The schema in force: stored in the data directory and reopened without XML, changed from
//! code, refused when a reopen conflicts with it, and a user comparator registered by class name.
//! Also the data directory lock.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::cmp::Ordering;
use std::sync::Arc;

use common::*;
use supercolumn::comparator::{Comparator, MarshalError, Utf8Type};
use supercolumn::{
    ColumnFamilyDef, ColumnParent, ColumnPath, Database, Error, KeyspaceDef, Options, Partitioner,
    SlicePredicate, StorageConf, WriteOptions,
};

#[test]
fn a_new_database_gets_keyspace1_and_reopens_with_it() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path(), Options::default()).unwrap();
        assert_eq!(db.keyspaces(), ["Keyspace1"]);
        let ks = db.describe_keyspace("Keyspace1").unwrap();
        let cfs: Vec<_> = ks.column_families.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(cfs, ["Standard1", "Standard2", "StandardByUUID1", "Super1"]);
        db.create_keyspace(
            KeyspaceDef::new("Blog")
                .with_column_family(ColumnFamilyDef::standard("Posts").with_comparator(Utf8Type)),
        )
        .unwrap();
        db.drop_column_family("Keyspace1", "Standard1").unwrap();
    }
    let db = Database::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.keyspaces(), ["Blog", "Keyspace1"]);
    assert_eq!(
        db.describe_column_family("Blog", "Posts")
            .unwrap()
            .comparator
            .name(),
        "UTF8Type"
    );
    assert!(matches!(
        db.describe_column_family("Keyspace1", "Standard1"),
        Err(Error::UnknownColumnFamily { .. })
    ));
}

#[test]
fn a_database_created_from_xml_reopens_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let xml = r#"<Storage><Partitioner>Murmur3Partitioner</Partitioner><Keyspaces>
      <Keyspace Name="Twitter"><ColumnFamily CompareWith="UTF8Type" Name="UserRelationships"
          CompareSubcolumnsWith="TimeUUIDType" ColumnType="Super"/></Keyspace></Keyspaces></Storage>"#;
    let conf = StorageConf::parse(xml, &Default::default()).unwrap();
    drop(Database::open(dir.path(), conf.options).unwrap());
    let db = Database::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.partitioner(), Partitioner::Murmur3);
    let cf = db
        .describe_column_family("Twitter", "UserRelationships")
        .unwrap();
    assert_eq!(cf.subcomparator().name(), "TimeUUIDType");
}

#[test]
fn conflicting_schemas_and_partitioners_are_refused_with_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    drop(Database::open(dir.path(), Options::default()).unwrap());
    let clash = vec![KeyspaceDef::new("Keyspace1")
        .with_column_family(ColumnFamilyDef::super_family("Standard2"))];
    let e = Database::open(dir.path(), Options::default().with_keyspaces(clash)).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::SchemaConflict(_)), "{msg}");
    assert!(
        msg.contains("Keyspace1.Standard2")
            && msg.contains("ColumnType Standard (stored) vs Super (given)"),
        "{msg}"
    );
    let e = Database::open(
        dir.path(),
        Options::default().with_partitioner(Partitioner::OrderPreserving),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("RandomPartitioner")
            && e.to_string().contains("OrderPreservingPartitioner"),
        "{e}"
    );
    // A compatible schema adds what is new.
    let more =
        vec![KeyspaceDef::new("Keyspace1")
            .with_column_family(ColumnFamilyDef::standard("Standard3"))];
    let db = Database::open(dir.path(), Options::default().with_keyspaces(more)).unwrap();
    assert!(db.describe_column_family("Keyspace1", "Standard3").is_ok());
}

#[test]
fn schema_changes_from_code() {
    let t = open_default();
    let db = &t.db;
    let ks = KeyspaceDef::new("Blog");
    db.create_keyspace(ks.clone()).unwrap();
    assert!(matches!(db.create_keyspace(ks), Err(Error::Schema(_))));
    db.create_column_family("Blog", ColumnFamilyDef::standard("Posts"))
        .unwrap();
    assert!(matches!(
        db.create_column_family("Blog", ColumnFamilyDef::standard("Posts")),
        Err(Error::Schema(_))
    ));
    db.insert(
        "Blog",
        "p1",
        &ColumnPath::new("Posts").column("title"),
        "hi",
        WriteOptions::now(),
    )
    .unwrap();
    db.drop_column_family("Blog", "Posts").unwrap();
    assert!(matches!(
        db.get_count(
            "Blog",
            "p1",
            &ColumnParent::new("Posts"),
            &SlicePredicate::everything()
        ),
        Err(Error::UnknownColumnFamily { .. })
    ));
    // Re-created, it starts empty.
    db.create_column_family("Blog", ColumnFamilyDef::standard("Posts"))
        .unwrap();
    assert_eq!(
        db.get_count(
            "Blog",
            "p1",
            &ColumnParent::new("Posts"),
            &SlicePredicate::everything()
        )
        .unwrap(),
        0
    );
    db.drop_keyspace("Blog").unwrap();
    assert!(matches!(
        db.drop_keyspace("Blog"),
        Err(Error::UnknownKeyspace(_))
    ));
    let bad = ColumnFamilyDef::standard("X").with_subcomparator(Utf8Type);
    assert!(matches!(
        db.create_column_family("Keyspace1", bad),
        Err(Error::Schema(_))
    ));
}

/// Names are ASCII words compared case-insensitively.
#[derive(Debug)]
struct CaseInsensitive;

impl Comparator for CaseInsensitive {
    fn name(&self) -> String {
        "com.example.CaseInsensitiveType".into()
    }
    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        if name.iter().all(u8::is_ascii_alphabetic) {
            Ok(())
        } else {
            Err(MarshalError::new("letters only"))
        }
    }
    // Lower-cased letters, then the original bytes after a 0 separator, so the key is
    // reversible and ties between cases still order deterministically.
    fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
        out.extend(name.iter().map(u8::to_ascii_lowercase));
        if !name.is_empty() {
            out.push(0);
            out.extend_from_slice(name);
        }
    }
    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        let n = key.len().saturating_sub(1) / 2;
        match key.get(n) {
            Some(0) => {
                out.extend_from_slice(&key[n + 1..]);
                Ok(())
            }
            _ => Err(MarshalError::new("malformed key")),
        }
    }
    fn to_text(&self, name: &[u8]) -> String {
        String::from_utf8_lossy(name).into_owned()
    }
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        Ok(text.as_bytes().to_vec())
    }
}

#[test]
fn user_comparators_register_by_class_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options
        .comparators
        .register(Arc::new(CaseInsensitive))
        .unwrap();
    let xml = r#"<Keyspace Name="K"><ColumnFamily Name="Words" CompareWith="com.example.CaseInsensitiveType"/></Keyspace>"#;
    let conf = StorageConf::parse(xml, &options.comparators).unwrap();
    options.keyspaces = conf.options.keyspaces;
    let db = Database::open(dir.path(), options.clone()).unwrap();
    for w in ["banana", "Apple", "cherry"] {
        db.insert(
            "K",
            "r",
            &ColumnPath::new("Words").column(w),
            "",
            WriteOptions::now(),
        )
        .unwrap();
    }
    let got = whole_row(&db, "K", "r", "Words");
    assert_eq!(strings(names(&got)), ["Apple", "banana", "cherry"]);
    assert_eq!(CaseInsensitive.compare(b"Apple", b"banana"), Ordering::Less);
    let e = db
        .insert(
            "K",
            "r",
            &ColumnPath::new("Words").column("no1"),
            "",
            WriteOptions::now(),
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("com.example.CaseInsensitiveType"),
        "{e}"
    );
    drop(db);
    // Reopening without the type registered is a clear error, not a guess.
    let e = Database::open(dir.path(), Options::default()).unwrap_err();
    assert!(
        e.to_string().contains("com.example.CaseInsensitiveType"),
        "{e}"
    );
    Database::open(dir.path(), options).unwrap();
}

#[test]
fn a_second_open_of_a_locked_directory_is_refused_and_the_lock_is_released_on_close() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let e = Database::open(dir.path(), Options::default()).unwrap_err();
    assert!(matches!(e, Error::Locked { .. }), "{e}");
    db.close().unwrap();
    Database::open(dir.path(), Options::default()).unwrap();
}

#[test]
fn a_corrupt_schema_file_is_a_typed_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    drop(Database::open(dir.path(), Options::default()).unwrap());
    let path = dir.path().join("SCHEMA.db");
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    let e = Database::open(dir.path(), Options::default()).unwrap_err();
    assert!(
        matches!(e, Error::Corrupt { ref path, .. } if path.ends_with("SCHEMA.db")),
        "{e}"
    );
}
