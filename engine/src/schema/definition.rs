//! Keyspace and column family definitions, their validation, and the embedded default schema.

use std::fmt;
use std::sync::Arc;

use super::index::IndexDef;
use crate::error::{Error, Result};
use crate::model::comparator::{BytesType, Comparator, TimeUuidType, Utf8Type};

/// The largest SSTable block a column family may ask for (64 MiB): a block is read whole, and
/// its lengths are 32-bit.
pub const MAX_BLOCK_SIZE_KB: u32 = 64 * 1024;

/// Standard (rows of columns) or Super (rows of super columns of columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// A row holds columns.
    Standard,
    /// A row holds super columns, each holding columns.
    Super,
}

impl ColumnType {
    /// "Standard" or "Super".
    pub fn as_str(&self) -> &'static str {
        match self {
            ColumnType::Standard => "Standard",
            ColumnType::Super => "Super",
        }
    }
}

/// Cassandra 0.6's per-CF `KeysCached`: a fraction of the row keys, or an absolute count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeysCached {
    /// A fraction in 0..=1 of the row keys in the CF's SSTables.
    Fraction(f64),
    /// A fixed number of keys.
    Absolute(u64),
}

impl KeysCached {
    /// Parses `0.5`, `50%` or `200000`.
    pub fn parse(text: &str) -> std::result::Result<KeysCached, String> {
        let t = text.trim();
        if let Some(p) = t.strip_suffix('%') {
            let v: f64 = p
                .trim()
                .parse()
                .map_err(|_| format!("'{text}' is not a percentage"))?;
            if !(0.0..=100.0).contains(&v) {
                return Err(format!("'{text}' is outside 0%..=100%"));
            }
            return Ok(KeysCached::Fraction(v / 100.0));
        }
        if let Ok(n) = t.parse::<u64>() {
            return Ok(if n == 1 {
                KeysCached::Fraction(1.0)
            } else {
                KeysCached::Absolute(n)
            });
        }
        let v: f64 = t
            .parse()
            .map_err(|_| format!("'{text}' is not a number, fraction or percentage"))?;
        if !(0.0..=1.0).contains(&v) {
            return Err(format!("'{text}' is outside 0..=1"));
        }
        Ok(KeysCached::Fraction(v))
    }
}

impl fmt::Display for KeysCached {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeysCached::Fraction(v) => write!(f, "{}%", v * 100.0),
            KeysCached::Absolute(n) => write!(f, "{n}"),
        }
    }
}

/// A column family's definition.
#[derive(Clone, Debug)]
pub struct ColumnFamilyDef {
    /// `Name`: `[A-Za-z0-9_]{1,48}`.
    pub name: String,
    /// `ColumnType` (default Standard).
    pub column_type: ColumnType,
    /// `CompareWith` (default BytesType): orders columns (Standard) or super columns (Super).
    pub comparator: Arc<dyn Comparator>,
    /// `CompareSubcolumnsWith` (default BytesType): orders the columns inside a super column. Super only.
    pub subcomparator: Option<Arc<dyn Comparator>>,
    /// `DefaultValidationClass` (default BytesType): checks and displays values.
    pub default_validation_class: Arc<dyn Comparator>,
    /// `Comment`.
    pub comment: Option<String>,
    /// `KeysCached`: overrides the keyspace's `KeysCachedFraction`.
    pub keys_cached: Option<KeysCached>,
    /// `GCGraceSeconds`: overrides the database's.
    pub gc_grace_seconds: Option<u32>,
    /// `MinimumCompactionThreshold`: overrides the database's.
    pub min_compaction_threshold: Option<u32>,
    /// `MaximumCompactionThreshold`: overrides the database's.
    pub max_compaction_threshold: Option<u32>,
    /// `KeyValidationClass` (Cassandra 0.7): the row keys' type, which shows them (a CQL
    /// table's partition key type). Unset: keys show as text when printable, else hex.
    pub key_validation_class: Option<Arc<dyn Comparator>>,
    /// The CQL table this column family stores, as the `CREATE TABLE` statement the CQL layer
    /// wrote; the engine keeps it and never reads it.
    pub cql_table: Option<String>,
    /// Target bytes of its SSTables' data blocks, in KiB (a CQL table's compression
    /// `chunk_length_in_kb`): overrides the database's `ColumnIndexSizeInKB`.
    pub block_size_kb: Option<u32>,
    /// Its SSTables' row filter false-positive rate: overrides the database's.
    pub bloom_filter_fp_chance: Option<f64>,
    /// Whether its SSTables' blocks are compressed (unset: they are; a CQL table's
    /// `compression = {'enabled': false}` turns it off).
    pub compression: Option<bool>,
    /// Its secondary indexes (each stored in a hidden column family; see
    /// [`crate::schema::index`]).
    pub indexes: Vec<IndexDef>,
}

impl PartialEq for ColumnFamilyDef {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name
            && self.column_type == o.column_type
            && self.comparator.name() == o.comparator.name()
            && self.subcomparator.as_ref().map(|c| c.name())
                == o.subcomparator.as_ref().map(|c| c.name())
            && self.default_validation_class.name() == o.default_validation_class.name()
            && self.comment == o.comment
            && self.keys_cached == o.keys_cached
            && self.gc_grace_seconds == o.gc_grace_seconds
            && self.min_compaction_threshold == o.min_compaction_threshold
            && self.max_compaction_threshold == o.max_compaction_threshold
            && self.key_validation_class.as_ref().map(|c| c.name())
                == o.key_validation_class.as_ref().map(|c| c.name())
            && self.cql_table == o.cql_table
            && self.block_size_kb == o.block_size_kb
            && self.bloom_filter_fp_chance == o.bloom_filter_fp_chance
            && self.compression == o.compression
            && self.indexes == o.indexes
    }
}

impl ColumnFamilyDef {
    /// A Standard CF with BytesType names and values.
    pub fn standard(name: impl Into<String>) -> Self {
        ColumnFamilyDef {
            name: name.into(),
            column_type: ColumnType::Standard,
            comparator: Arc::new(BytesType),
            subcomparator: None,
            default_validation_class: Arc::new(BytesType),
            comment: None,
            keys_cached: None,
            gc_grace_seconds: None,
            min_compaction_threshold: None,
            max_compaction_threshold: None,
            key_validation_class: None,
            cql_table: None,
            block_size_kb: None,
            bloom_filter_fp_chance: None,
            compression: None,
            indexes: Vec::new(),
        }
    }

    /// A Super CF with BytesType super column and sub-column names.
    pub fn super_family(name: impl Into<String>) -> Self {
        ColumnFamilyDef {
            column_type: ColumnType::Super,
            subcomparator: Some(Arc::new(BytesType)),
            ..Self::standard(name)
        }
    }

    /// Sets `CompareWith`.
    pub fn with_comparator(mut self, c: impl Comparator + 'static) -> Self {
        self.comparator = Arc::new(c);
        self
    }

    /// Sets `CompareSubcolumnsWith` (meaningful for Super CFs only).
    pub fn with_subcomparator(mut self, c: impl Comparator + 'static) -> Self {
        self.subcomparator = Some(Arc::new(c));
        self
    }

    /// Sets `DefaultValidationClass`.
    pub fn with_validator(mut self, c: impl Comparator + 'static) -> Self {
        self.default_validation_class = Arc::new(c);
        self
    }

    /// Sets the comment.
    pub fn with_comment(mut self, comment: impl Into<String>) -> Self {
        self.comment = Some(comment.into());
        self
    }

    /// The sub-column comparator of a Super CF (BytesType when unset).
    pub fn subcomparator(&self) -> Arc<dyn Comparator> {
        self.subcomparator
            .clone()
            .unwrap_or_else(|| Arc::new(BytesType))
    }

    /// Checks the name and that only a Super CF has a sub-comparator.
    pub fn validate(&self) -> Result<()> {
        validate_identifier(&self.name, "column family")?;
        for (i, idx) in self.indexes.iter().enumerate() {
            validate_identifier(&idx.name, "index")?;
            if self.indexes[..i].iter().any(|o| o.name == idx.name) {
                return Err(Error::Schema(format!(
                    "column family '{}' has two indexes named '{}'",
                    self.name, idx.name
                )));
            }
        }
        if self.column_type == ColumnType::Super && !self.indexes.is_empty() {
            return Err(Error::Schema(format!(
                "column family '{}' is Super: its columns cannot be indexed",
                self.name
            )));
        }
        if self.column_type == ColumnType::Standard && self.subcomparator.is_some() {
            return Err(Error::Schema(format!(
                "column family '{}' is Standard but has CompareSubcolumnsWith",
                self.name
            )));
        }
        if let Some(p) = self.bloom_filter_fp_chance {
            if !(p > 0.0 && p <= 1.0) {
                return Err(Error::Schema(format!(
                    "column family '{}': bloom filter false-positive chance {p} is outside (0, 1]",
                    self.name
                )));
            }
        }
        if self
            .block_size_kb
            .is_some_and(|kb| kb == 0 || kb > MAX_BLOCK_SIZE_KB)
        {
            return Err(Error::Schema(format!(
                "column family '{}': block size must be 1 to {MAX_BLOCK_SIZE_KB} KiB",
                self.name
            )));
        }
        if let (Some(min), Some(max)) =
            (self.min_compaction_threshold, self.max_compaction_threshold)
        {
            if min > max && max != 0 {
                return Err(Error::Schema(format!(
                    "column family '{}': MinimumCompactionThreshold {min} > MaximumCompactionThreshold {max}",
                    self.name
                )));
            }
        }
        Ok(())
    }
}

/// A keyspace's definition.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyspaceDef {
    /// `Name`: `[A-Za-z0-9_]{1,48}`.
    pub name: String,
    /// The column families.
    pub column_families: Vec<ColumnFamilyDef>,
    /// `<KeysCachedFraction>` (default 0.01): the fraction of each SSTable's row keys the key cache may
    /// hold; 0 disables it.
    pub keys_cached_fraction: f64,
    /// `<ReplicaPlacementStrategy>` (default RackUnawareStrategy) (kept and shown; one node).
    pub replica_placement_strategy: String,
    /// `<ReplicationFactor>` (default 1).
    pub replication_factor: u32,
    /// `<EndPointSnitch>` (default EndPointSnitch).
    pub endpoint_snitch: String,
    /// Whether its writes go through the commit log (CQL's `durable_writes`, default true).
    /// When false a write is only in a memtable until it is flushed: a crash loses it, as in
    /// Cassandra; a clean close flushes it.
    pub durable_writes: bool,
    /// CQL's user-defined types of this keyspace, each as its `CREATE TYPE` statement, in the
    /// order they were created (a type names only types before it). The engine keeps them and
    /// does not read them: the CQL layer owns their meaning.
    pub cql_types: Vec<String>,
}

impl KeyspaceDef {
    /// An empty keyspace with the defaults.
    pub fn new(name: impl Into<String>) -> Self {
        KeyspaceDef {
            name: name.into(),
            column_families: Vec::new(),
            keys_cached_fraction: 0.01,
            replica_placement_strategy: "org.apache.cassandra.locator.RackUnawareStrategy".into(),
            replication_factor: 1,
            endpoint_snitch: "org.apache.cassandra.locator.EndPointSnitch".into(),
            durable_writes: true,
            cql_types: Vec::new(),
        }
    }

    /// Adds a column family.
    pub fn with_column_family(mut self, cf: ColumnFamilyDef) -> Self {
        self.column_families.push(cf);
        self
    }

    /// The column family of that name.
    pub fn column_family(&self, name: &str) -> Option<&ColumnFamilyDef> {
        self.column_families.iter().find(|c| c.name == name)
    }

    /// Checks names, duplicates, fractions and each column family.
    pub fn validate(&self) -> Result<()> {
        validate_identifier(&self.name, "keyspace")?;
        if !(0.0..=1.0).contains(&self.keys_cached_fraction) {
            return Err(Error::Schema(format!(
                "keyspace '{}': KeysCachedFraction {} is outside 0..=1",
                self.name, self.keys_cached_fraction
            )));
        }
        for (i, cf) in self.column_families.iter().enumerate() {
            cf.validate()?;
            if self.column_families[..i].iter().any(|o| o.name == cf.name) {
                return Err(Error::Schema(format!(
                    "keyspace '{}' defines column family '{}' twice",
                    self.name, cf.name
                )));
            }
            // An index's name is the keyspace's (`DROP INDEX ks.name`), not its table's.
            let mut before = self.column_families[..i].iter().flat_map(|o| &o.indexes);
            if let Some(dup) = before.find(|o| cf.indexes.iter().any(|x| x.name == o.name)) {
                return Err(Error::Schema(format!(
                    "keyspace '{}' has two indexes named '{}'",
                    self.name, dup.name
                )));
            }
        }
        Ok(())
    }
}

/// Checks a keyspace or column family name: `[A-Za-z0-9_]{1,48}`. Such names become directory
/// and file names, so nothing else may pass.
pub fn validate_identifier(name: &str, what: &'static str) -> Result<()> {
    let ok = (1..=48).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidIdentifier {
            what,
            name: name.to_string(),
        })
    }
}

/// The embedded default schema: the seeds' `Keyspace1`.
pub fn default_keyspaces() -> Vec<KeyspaceDef> {
    vec![KeyspaceDef::new("Keyspace1")
        .with_column_family(ColumnFamilyDef::standard("Standard1"))
        .with_column_family(ColumnFamilyDef::standard("Standard2").with_comparator(Utf8Type))
        .with_column_family(
            ColumnFamilyDef::standard("StandardByUUID1").with_comparator(TimeUuidType),
        )
        .with_column_family(
            ColumnFamilyDef::super_family("Super1")
                .with_comparator(Utf8Type)
                .with_subcomparator(Utf8Type)
                .with_comment(
                    "A column family with supercolumns, whose column and subcolumn names are UTF8 strings",
                ),
        )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert!(validate_identifier("Keyspace1", "keyspace").is_ok());
        assert!(validate_identifier("../x", "keyspace").is_err());
        assert!(validate_identifier("", "keyspace").is_err());
        assert!(validate_identifier(&"a".repeat(49), "keyspace").is_err());
        assert!(validate_identifier("a-b", "column family").is_err());
    }

    #[test]
    fn keys_cached_forms() {
        assert_eq!(KeysCached::parse("50%").unwrap(), KeysCached::Fraction(0.5));
        assert_eq!(
            KeysCached::parse("0.25").unwrap(),
            KeysCached::Fraction(0.25)
        );
        assert_eq!(
            KeysCached::parse("200000").unwrap(),
            KeysCached::Absolute(200000)
        );
        assert!(KeysCached::parse("1.5").is_err());
        assert!(KeysCached::parse("lots").is_err());
    }

    #[test]
    fn default_schema_is_the_seeds_keyspace1() {
        let ks = &default_keyspaces()[0];
        ks.validate().unwrap();
        let names: Vec<&str> = ks.column_families.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["Standard1", "Standard2", "StandardByUUID1", "Super1"]
        );
        assert_eq!(ks.keys_cached_fraction, 0.01);
        let s1 = ks.column_family("Super1").unwrap();
        assert_eq!(s1.subcomparator().name(), "UTF8Type");
    }
}
