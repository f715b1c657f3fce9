//! The schema in force, persisted in the data directory as `SCHEMA.db` so a database reopens without
//! its XML, and the rules for combining it with a schema given at open.
//!
//! Layout (see `engine/FORMAT.md`): magic `SCSCHEMA`, version, payload length, payload, CRC32 (IEEE) of
//! everything before it. Replaced atomically on every schema change.
//!
//! Long because the catalog's encoder, its decoder (every version it still reads) and their
//! tests are one format, kept together.

use std::collections::BTreeMap;
use std::path::Path;

use crate::codec::{seal, unseal, Reader, Writer};
use crate::error::FormatError;
use crate::error::{Error, Result};
use crate::io::{atomic_file, FileSystem};
use crate::model::comparator::ComparatorRegistry;
use crate::model::partitioner::Partitioner;
use crate::schema::index::IndexOf;
use crate::schema::{ColumnFamilyDef, ColumnType, IndexDef, KeysCached, KeyspaceDef};

/// The file name of the catalog inside the data directory.
pub const FILE_NAME: &str = "SCHEMA.db";
const MAGIC: &[u8; 8] = b"SCSCHEMA";
/// The catalog format version this build writes; it reads versions 2 to 7 too. Version 8
/// adds an index kind (6, a map's entries) and nothing else: an older build refuses the file
/// rather than misread such an index.
pub const VERSION: u32 = 8;

/// The persisted schema: the partitioner the data was written with, the keyspaces, and the
/// column family ids that commit log records and the manifest name CFs by.
#[derive(Clone, Debug, PartialEq)]
pub struct Catalog {
    /// Fixed at creation.
    pub partitioner: Partitioner,
    /// Every keyspace and its column families.
    pub keyspaces: Vec<KeyspaceDef>,
    /// The id of each column family, by (keyspace, column family). Never reused, so a dropped
    /// and re-created CF cannot receive the old one's data.
    pub cf_ids: BTreeMap<(String, String), u32>,
    /// The id the next new column family gets.
    pub next_cf_id: u32,
    /// The database-wide settings in force, as [`crate::options`] encodes them (`None` in a
    /// version 2 catalog, which kept none).
    pub settings: Option<Vec<u8>>,
}

impl Catalog {
    /// A catalog for a new database, giving every column family an id.
    pub fn new(partitioner: Partitioner, keyspaces: Vec<KeyspaceDef>) -> Result<Catalog> {
        let mut c = Catalog {
            partitioner,
            keyspaces,
            cf_ids: BTreeMap::new(),
            next_cf_id: 1,
            settings: None,
        };
        c.assign_missing_ids()?;
        Ok(c)
    }

    /// Gives an id to every column family that lacks one.
    pub fn assign_missing_ids(&mut self) -> Result<()> {
        for ks in &self.keyspaces {
            let names = ks.column_families.iter().flat_map(|cf| {
                std::iter::once(cf.name.clone())
                    .chain(cf.indexes.iter().map(|i| i.column_family_name(&cf.name)))
            });
            for name in names {
                let id = (ks.name.clone(), name);
                if !self.cf_ids.contains_key(&id) {
                    self.cf_ids.insert(id, self.next_cf_id);
                    self.next_cf_id = self
                        .next_cf_id
                        .checked_add(1)
                        .ok_or_else(|| Error::Schema("column family ids are exhausted".into()))?;
                }
            }
        }
        Ok(())
    }

    /// The id of a column family.
    pub fn cf_id(&self, keyspace: &str, cf: &str) -> Option<u32> {
        self.cf_ids
            .get(&(keyspace.to_string(), cf.to_string()))
            .copied()
    }

    /// Encodes the catalog file.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Writer::default();
        p.str(self.partitioner.class_name());
        p.u32(self.next_cf_id);
        p.u32(self.keyspaces.len() as u32);
        for ks in &self.keyspaces {
            p.str(&ks.name);
            p.f64(ks.keys_cached_fraction);
            p.str(&ks.replica_placement_strategy);
            p.u32(ks.replication_factor);
            p.str(&ks.endpoint_snitch);
            p.u32(ks.column_families.len() as u32);
            for cf in &ks.column_families {
                p.str(&cf.name);
                p.u32(self.cf_id(&ks.name, &cf.name).unwrap_or(0));
                p.u8(match cf.column_type {
                    ColumnType::Standard => 0,
                    ColumnType::Super => 1,
                });
                p.str(&cf.comparator.name());
                p.opt(cf.subcomparator.as_ref(), |w, c| w.str(&c.name()));
                p.str(&cf.default_validation_class.name());
                p.opt(cf.comment.as_deref(), |w, c| w.str(c));
                match cf.keys_cached {
                    None => p.u8(0),
                    Some(KeysCached::Fraction(f)) => {
                        p.u8(1);
                        p.f64(f);
                    }
                    Some(KeysCached::Absolute(n)) => {
                        p.u8(2);
                        p.u64(n);
                    }
                }
                p.opt(cf.gc_grace_seconds, |w, v| w.u32(v));
                p.opt(cf.min_compaction_threshold, |w, v| w.u32(v));
                p.opt(cf.max_compaction_threshold, |w, v| w.u32(v));
                p.opt(cf.key_validation_class.as_ref(), |w, c| w.str(&c.name()));
                p.opt(cf.cql_table.as_deref(), |w, t| w.str(t));
                p.opt(cf.block_size_kb, |w, v| w.u32(v));
                p.opt(cf.bloom_filter_fp_chance, |w, v| w.f64(v));
                p.opt(cf.compression, |w, v| w.u8(u8::from(v)));
                p.u32(cf.indexes.len() as u32);
                for idx in &cf.indexes {
                    let hidden = idx.column_family_name(&cf.name);
                    p.str(&idx.name);
                    p.u32(self.cf_id(&ks.name, &hidden).unwrap_or(0));
                    p.bytes(&idx.column);
                    p.u32(u32::from(idx.clustering));
                    p.u8(idx.of.code());
                    if let Some(position) = idx.of.position() {
                        p.u32(u32::from(position));
                    }
                    p.opt(idx.class.as_deref(), |w, c| w.str(c));
                    p.u8(u8::from(idx.built));
                }
            }
            p.u8(u8::from(ks.durable_writes));
            p.u32(ks.cql_types.len() as u32);
            for t in &ks.cql_types {
                p.str(t);
            }
        }
        p.opt(self.settings.as_deref(), |w, s| w.bytes(s));
        seal(MAGIC, VERSION, &p.buf)
    }

    /// Decodes a catalog file; `path` names it in errors.
    pub fn decode(bytes: &[u8], path: &Path, registry: &ComparatorRegistry) -> Result<Catalog> {
        let (version, payload) = unseal(bytes, MAGIC, 2..=VERSION, "schema file")
            .map_err(|e| Error::corrupt(path, e))?;
        decode_payload(version, payload, registry).map_err(|e| match e {
            PayloadError::Decode(d) => Error::corrupt(path, d),
            PayloadError::Other(reason) => Error::corrupt(path, FormatError::malformed(reason)),
        })
    }

    /// Loads the catalog of `dir`, if it has one.
    pub fn load(
        fs: &dyn FileSystem,
        dir: &Path,
        registry: &ComparatorRegistry,
    ) -> Result<Option<Catalog>> {
        atomic_file::remove_leftover(fs, dir, FILE_NAME)?;
        let path = dir.join(FILE_NAME);
        match atomic_file::read_if_exists(&path)? {
            None => Ok(None),
            Some(b) => Self::decode(&b, &path, registry).map(Some),
        }
    }

    /// Stores the catalog in `dir`, atomically.
    pub fn store(&self, fs: &dyn FileSystem, dir: &Path) -> Result<()> {
        atomic_file::replace(fs, dir, FILE_NAME, &self.encode())
    }

    /// Combines a schema given at open with this stored one: new keyspaces and column families
    /// are added, and the given settings that do not change how stored data is laid out
    /// (validator, comment, caching, grace period, thresholds, keyspace attributes) replace the
    /// stored ones; a column family whose type or comparators differ, or another partitioner, is
    /// a conflict that names what differs. Returns whether anything changed.
    pub fn merge_given(&mut self, partitioner: Partitioner, given: &[KeyspaceDef]) -> Result<bool> {
        if partitioner != self.partitioner {
            return Err(Error::SchemaConflict(format!(
                "the data was written with {}, the options ask for {}",
                self.partitioner.class_name(),
                partitioner.class_name()
            )));
        }
        let mut changed = false;
        for g in given {
            let Some(stored) = self.keyspaces.iter_mut().find(|k| k.name == g.name) else {
                self.keyspaces.push(g.clone());
                changed = true;
                continue;
            };
            for gcf in &g.column_families {
                match stored
                    .column_families
                    .iter_mut()
                    .find(|c| c.name == gcf.name)
                {
                    None => {
                        stored.column_families.push(gcf.clone());
                        changed = true;
                    }
                    Some(scf) => {
                        check_compatible(&g.name, scf, gcf)?;
                        // What a `storage-conf.xml` cannot say (its CQL table, its key
                        // validator, its SSTable tuning) stays as stored, and so do the indexes
                        // it does not name: a file that names the column family does not undo
                        // them.
                        let merged = ColumnFamilyDef {
                            key_validation_class: gcf
                                .key_validation_class
                                .clone()
                                .or_else(|| scf.key_validation_class.clone()),
                            cql_table: gcf.cql_table.clone().or_else(|| scf.cql_table.clone()),
                            block_size_kb: gcf.block_size_kb.or(scf.block_size_kb),
                            bloom_filter_fp_chance: gcf
                                .bloom_filter_fp_chance
                                .or(scf.bloom_filter_fp_chance),
                            compression: gcf.compression.or(scf.compression),
                            indexes: merge_indexes(&g.name, scf, gcf)?,
                            ..gcf.clone()
                        };
                        if *scf != merged {
                            *scf = merged;
                            changed = true;
                        }
                    }
                }
            }
            let attrs = |k: &KeyspaceDef| {
                (
                    k.keys_cached_fraction,
                    k.replica_placement_strategy.clone(),
                    k.replication_factor,
                    k.endpoint_snitch.clone(),
                )
            };
            if attrs(stored) != attrs(g) {
                stored.keys_cached_fraction = g.keys_cached_fraction;
                stored.replica_placement_strategy = g.replica_placement_strategy.clone();
                stored.replication_factor = g.replication_factor;
                stored.endpoint_snitch = g.endpoint_snitch.clone();
                changed = true;
            }
        }
        for ks in &self.keyspaces {
            ks.validate()?;
        }
        self.assign_missing_ids()?;
        Ok(changed)
    }
}

/// The indexes of a column family both stored and given: the stored ones (built or not, as
/// they are), and each given one the store lacks, to be built at open. A given index that
/// names a stored one but another column is a conflict.
fn merge_indexes(
    ks: &str,
    stored: &ColumnFamilyDef,
    given: &ColumnFamilyDef,
) -> Result<Vec<crate::schema::IndexDef>> {
    let mut out = stored.indexes.clone();
    for g in &given.indexes {
        match stored.indexes.iter().find(|s| s.name == g.name) {
            Some(s) if s.column == g.column && s.of == g.of => {}
            Some(_) => {
                return Err(Error::SchemaConflict(format!(
                    "{ks}.{}: index '{}' is stored on another column than the one given",
                    given.name, g.name
                )))
            }
            None => out.push(g.clone()),
        }
    }
    Ok(out)
}

fn check_compatible(ks: &str, stored: &ColumnFamilyDef, given: &ColumnFamilyDef) -> Result<()> {
    let mut diffs = Vec::new();
    if stored.column_type != given.column_type {
        diffs.push(format!(
            "ColumnType {} (stored) vs {} (given)",
            stored.column_type.as_str(),
            given.column_type.as_str()
        ));
    }
    if stored.comparator.name() != given.comparator.name() {
        diffs.push(format!(
            "CompareWith {} (stored) vs {} (given)",
            stored.comparator.name(),
            given.comparator.name()
        ));
    }
    if stored.column_type == ColumnType::Super
        && stored.subcomparator().name() != given.subcomparator().name()
    {
        diffs.push(format!(
            "CompareSubcolumnsWith {} (stored) vs {} (given)",
            stored.subcomparator().name(),
            given.subcomparator().name()
        ));
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(Error::SchemaConflict(format!(
            "column family {ks}.{}: {}",
            stored.name,
            diffs.join("; ")
        )))
    }
}

/// One secondary index of a column family (catalog version 6), and its column family's id.
fn decode_index(
    r: &mut Reader<'_>,
    next_cf_id: u32,
    cf_ids: &BTreeMap<(String, String), u32>,
) -> std::result::Result<(IndexDef, u32), FormatError> {
    let name = r.str()?.to_string();
    let id = r.u32()?;
    if id == 0 || id >= next_cf_id || cf_ids.values().any(|v| *v == id) {
        return Err(r.error(format!(
            "index '{name}': column family id {id} is out of range or repeated"
        )));
    }
    let column = r.bytes()?.to_vec();
    let clustering = u16::try_from(r.u32()?)
        .map_err(|_| r.error(format!("index '{name}': too many clustering components")))?;
    let code = r.u8()?;
    let position = if matches!(code, 4 | 5) {
        u16::try_from(r.u32()?)
            .map_err(|_| r.error(format!("index '{name}': a key position out of range")))?
    } else {
        0
    };
    let of = IndexOf::from_code(code, position)
        .ok_or_else(|| r.error(format!("index '{name}': target code {code}")))?;
    let class = r.opt(|r| r.str().map(str::to_string))?;
    let built = flag(r, "index built")?;
    let idx = IndexDef {
        name,
        column,
        clustering,
        of,
        class,
        built,
    };
    Ok((idx, id))
}

/// A stored boolean: 0 or 1, anything else is damage.
fn flag(r: &mut Reader<'_>, what: &str) -> std::result::Result<bool, FormatError> {
    match r.u8()? {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(r.error(format!("{what} flag {v}"))),
    }
}

enum PayloadError {
    Decode(FormatError),
    Other(String),
}

impl From<FormatError> for PayloadError {
    fn from(e: FormatError) -> Self {
        PayloadError::Decode(e)
    }
}

// Long because it decodes the catalog's fields in the order FORMAT.md lays them out.
fn decode_payload(
    version: u32,
    payload: &[u8],
    registry: &ComparatorRegistry,
) -> std::result::Result<Catalog, PayloadError> {
    let mut r = Reader::new(payload);
    let pname = r.str()?;
    let partitioner = Partitioner::from_class_name(pname)
        .ok_or_else(|| PayloadError::Other(format!("unknown partitioner '{pname}'")))?;
    let next_cf_id = r.u32()?;
    let mut cf_ids = BTreeMap::new();
    let resolve = |name: &str| {
        registry.resolve(name).map_err(|e| {
            PayloadError::Other(format!(
                "comparator '{name}' is not registered with this database: {e}"
            ))
        })
    };
    let nks = r.count(4)?;
    let mut keyspaces = Vec::with_capacity(nks);
    for _ in 0..nks {
        let mut ks = KeyspaceDef::new(r.str()?);
        ks.keys_cached_fraction = r.f64()?;
        ks.replica_placement_strategy = r.str()?.to_string();
        ks.replication_factor = r.u32()?;
        ks.endpoint_snitch = r.str()?.to_string();
        let ncf = r.count(4)?;
        for _ in 0..ncf {
            let name = r.str()?.to_string();
            let id = r.u32()?;
            if id == 0 || id >= next_cf_id || cf_ids.values().any(|v| *v == id) {
                return Err(r
                    .error(format!("column family id {id} is out of range or repeated"))
                    .into());
            }
            cf_ids.insert((ks.name.clone(), name.clone()), id);
            let mut cf = match r.u8()? {
                0 => ColumnFamilyDef::standard(name),
                1 => ColumnFamilyDef::super_family(name),
                t => return Err(r.error(format!("column type {t}")).into()),
            };
            cf.comparator = resolve(r.str()?)?;
            cf.subcomparator = r
                .opt(|r| r.str().map(str::to_string))?
                .map(|n| resolve(&n))
                .transpose()?;
            cf.default_validation_class = resolve(r.str()?)?;
            cf.comment = r.opt(|r| r.str().map(str::to_string))?;
            cf.keys_cached = match r.u8()? {
                0 => None,
                1 => Some(KeysCached::Fraction(r.f64()?)),
                2 => Some(KeysCached::Absolute(r.u64()?)),
                t => return Err(r.error(format!("keys cached tag {t}")).into()),
            };
            cf.gc_grace_seconds = r.opt(|r| r.u32())?;
            cf.min_compaction_threshold = r.opt(|r| r.u32())?;
            cf.max_compaction_threshold = r.opt(|r| r.u32())?;
            if version >= 4 {
                cf.key_validation_class = r
                    .opt(|r| r.str().map(str::to_string))?
                    .map(|n| resolve(&n))
                    .transpose()?;
                cf.cql_table = r.opt(|r| r.str().map(str::to_string))?;
            }
            if version >= 5 {
                cf.block_size_kb = r.opt(|r| r.u32())?;
                cf.bloom_filter_fp_chance = r.opt(|r| r.f64())?;
                cf.compression = r.opt(|r| flag(r, "compression"))?;
            }
            if version >= 6 {
                for _ in 0..r.count(4)? {
                    let (idx, id) = decode_index(&mut r, next_cf_id, &cf_ids)?;
                    cf_ids.insert((ks.name.clone(), idx.column_family_name(&cf.name)), id);
                    cf.indexes.push(idx);
                }
            }
            ks.column_families.push(cf);
        }
        if version >= 5 {
            ks.durable_writes = flag(&mut r, "durable writes")?;
        }
        if version >= 7 {
            for _ in 0..r.count(4)? {
                ks.cql_types.push(r.str()?.to_string());
            }
        }
        ks.validate()
            .map_err(|e| PayloadError::Other(e.to_string()))?;
        keyspaces.push(ks);
    }
    let settings = if version >= 3 {
        r.opt(|r| r.bytes().map(<[u8]>::to_vec))?
    } else {
        None
    };
    if r.remaining() != 0 {
        return Err(r.error("trailing bytes after the last keyspace").into());
    }
    Ok(Catalog {
        partitioner,
        keyspaces,
        cf_ids,
        next_cf_id,
        settings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::default_keyspaces;

    fn sample() -> Catalog {
        let mut c = Catalog::new(Partitioner::Murmur3, default_keyspaces()).unwrap();
        c.settings = Some(vec![1, 2, 3]);
        let ks = &mut c.keyspaces[0];
        ks.durable_writes = false;
        ks.cql_types = vec!["CREATE TYPE \"Keyspace1\".a (f int)".into()];
        let cf = &mut ks.column_families[0];
        cf.block_size_kb = Some(64);
        cf.bloom_filter_fp_chance = Some(0.1);
        cf.compression = Some(false);
        c
    }

    #[test]
    fn roundtrip() {
        let c = sample();
        let back =
            Catalog::decode(&c.encode(), Path::new("S"), &ComparatorRegistry::default()).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn every_flipped_byte_is_detected() {
        let bytes = sample().encode();
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x40;
            let e = Catalog::decode(&b, Path::new("S"), &ComparatorRegistry::default());
            assert!(matches!(e, Err(Error::Corrupt { .. })), "byte {i}");
        }
        for n in 0..bytes.len() {
            let e = Catalog::decode(&bytes[..n], Path::new("S"), &ComparatorRegistry::default());
            assert!(matches!(e, Err(Error::Corrupt { .. })), "truncated at {n}");
        }
    }

    #[test]
    fn a_given_column_family_keeps_what_the_xml_cannot_say() {
        let mut c = sample();
        let stored = &mut c.keyspaces[0].column_families[0];
        stored.cql_table = Some("CREATE TABLE t (k int PRIMARY KEY)".into());
        stored.indexes.push(crate::schema::IndexDef {
            name: "by_v".into(),
            column: b"v".to_vec(),
            clustering: 0,
            of: crate::schema::IndexOf::Value,
            class: None,
            built: true,
        });
        let before = stored.clone();
        let mut given = default_keyspaces();
        given[0].column_families[0].comment = Some("from the file".into());
        assert!(c.merge_given(Partitioner::Murmur3, &given).unwrap());
        let after = &c.keyspaces[0].column_families[0];
        assert_eq!(after.comment.as_deref(), Some("from the file"));
        assert_eq!(after.indexes, before.indexes);
        assert_eq!(after.cql_table, before.cql_table);
        assert_eq!(after.block_size_kb, Some(64));
        assert_eq!(after.compression, Some(false));
    }

    #[test]
    fn conflicts_name_what_differs() {
        let mut c = sample();
        let mut given = default_keyspaces();
        given[0].column_families[1] = ColumnFamilyDef::standard("Standard2");
        let e = c.merge_given(Partitioner::Murmur3, &given).unwrap_err();
        assert!(
            e.to_string()
                .contains("CompareWith UTF8Type (stored) vs BytesType (given)"),
            "{e}"
        );
        let e = c.merge_given(Partitioner::Random, &[]).unwrap_err();
        assert!(e.to_string().contains("Murmur3Partitioner"), "{e}");
        let added =
            vec![KeyspaceDef::new("Other").with_column_family(ColumnFamilyDef::standard("New"))];
        assert!(c.merge_given(Partitioner::Murmur3, &added).unwrap());
        assert_eq!(c.keyspaces.len(), 2);
        assert_eq!(
            c.cf_id("Other", "New"),
            Some(5),
            "ids continue after Keyspace1's four"
        );
    }
}
