//! `CREATE [CUSTOM] INDEX` and `DROP INDEX`: checked in Cassandra's words, then made through
//! the engine's index API, which builds a new index over the rows already written before the
//! statement returns. An index here covers a regular column's value (a frozen collection's
//! whole value with `full()`, a collection's values or a map's keys), a static column's, a
//! clustering column's or a composite partition key's column; other targets are refused as
//! not supported yet. A storage-attached index (`USING 'StorageAttachedIndex'`,
//! Cassandra 5) is the same index.

use super::ast::{IndexOn, IndexTarget, Statement, TableName};
use super::error::CqlError;
use super::session::{CqlResult, Session};
use super::table::{Kind, Table, SAI_CLASS};
use super::types::{CqlType, Literal};
use std::time::Duration;

use supercolumn::schema::{IndexDef, IndexOf};

/// The class names of Cassandra 5's storage-attached index, as `USING` may give them.
const SAI: &[&str] = &[
    "StorageAttachedIndex",
    "org.apache.cassandra.index.sai.StorageAttachedIndex",
    "sai",
];

/// Whether `class` names the storage-attached index.
pub fn is_sai(class: &str) -> bool {
    SAI.iter().any(|c| c.eq_ignore_ascii_case(class))
}

/// Cassandra 5's storage-attached index of a vector is an ANN index, which answers `ORDER BY
/// v ANN OF …`, not equality: until that search exists, it is refused.
fn refuse_ann(t: &Table, target: &IndexTarget) -> Result<(), CqlError> {
    let vector = t
        .columns
        .iter()
        .any(|c| c.name == target.column && matches!(c.ty, CqlType::Vector(..)));
    if vector {
        return Err(CqlError::invalid(format!(
            "a storage-attached index of vector column {} is an ANN index, and ANN search is not supported yet",
            target.column
        )));
    }
    Ok(())
}

impl Session<'_> {
    /// Runs a `CREATE INDEX` or `DROP INDEX`.
    pub(super) fn index_statement(&mut self, stmt: &Statement) -> Result<CqlResult, CqlError> {
        match stmt {
            Statement::CreateIndex {
                name,
                table,
                target,
                if_not_exists,
                class,
                options,
            } => self.create_index(
                name.as_deref(),
                table,
                target,
                *if_not_exists,
                class,
                options,
            ),
            Statement::DropIndex { index, if_exists } => self.drop_index(index, *if_exists),
            _ => Err(CqlError::invalid("not an index statement")),
        }
    }

    fn create_index(
        &mut self,
        name: Option<&str>,
        table: &TableName,
        target: &IndexTarget,
        if_not_exists: bool,
        class: &Option<String>,
        options: &[(String, Literal)],
    ) -> Result<CqlResult, CqlError> {
        let t = self.table(table)?;
        if let Some(c) = class {
            refuse_class(c)?;
        } else if let Some((k, _)) = options.first() {
            return Err(CqlError::invalid(format!(
                "Unsupported index option '{k}' for a non-CUSTOM index"
            )));
        }
        let of = check_target(&t, target)?;
        if class.is_some() {
            refuse_ann(&t, target)?;
        }
        let existing = self.keyspace_indexes(&t.keyspace)?;
        let name = match name {
            Some(n) => n.to_string(),
            None => default_name(&t.name, &target.column, &existing),
        };
        if existing.iter().any(|(n, _)| *n == name) {
            return if if_not_exists {
                Ok(CqlResult::Void)
            } else {
                Err(CqlError::invalid(format!("Index '{name}' already exists")))
            };
        }
        if let Some(other) = t
            .indexes
            .iter()
            // A storage-attached index beside a legacy one of the same target is no duplicate
            // (Cassandra compares the whole definition, class included).
            .find(|i| {
                i.column == target.column && i.of == of && i.class.is_some() == class.is_some()
            })
        {
            return if if_not_exists {
                Ok(CqlResult::Void)
            } else {
                Err(CqlError::invalid(format!(
                    "Index {name} is a duplicate of existing index {}",
                    other.name
                )))
            };
        }
        if supercolumn::schema::validate_identifier(&name, "index").is_err() {
            return Err(CqlError::invalid(format!(
                "Index name must not be empty, or contain non-alphanumeric-underscore characters (got \"{name}\")"
            )));
        }
        let clustering = u16::try_from(t.clustering.len())
            .map_err(|_| CqlError::invalid("too many clustering columns to index"))?;
        let mut def = IndexDef::new(name, target.column.as_bytes().to_vec(), clustering).of(of);
        // Every spelling of the storage-attached index's class is kept as its one name.
        def.class = class.as_ref().map(|_| SAI_CLASS.to_string());
        let index = def.name.clone();
        self.db.create_index(&t.keyspace, &t.name, def)?;
        self.settle_index(&t.keyspace, &index)?;
        Ok(CqlResult::SchemaChange(format!(
            "UPDATED TABLE {}.{}",
            t.keyspace, t.name
        )))
    }

    fn drop_index(&mut self, index: &TableName, if_exists: bool) -> Result<CqlResult, CqlError> {
        let ks = self.keyspace_of(index)?;
        let known = self.keyspace_indexes(&ks)?;
        if !known.iter().any(|(n, _)| *n == index.table) {
            return if if_exists {
                Ok(CqlResult::Void)
            } else {
                Err(CqlError::invalid(format!(
                    "Index '{ks}.{}' doesn't exist",
                    index.table
                )))
            };
        }
        let table = self.db.drop_index(&ks, &index.table)?;
        Ok(CqlResult::SchemaChange(format!(
            "UPDATED TABLE {ks}.{table}"
        )))
    }

    /// Every index of keyspace `ks`: its name and its table.
    fn keyspace_indexes(&self, ks: &str) -> Result<Vec<(String, String)>, CqlError> {
        let def = self
            .db
            .describe_keyspace(ks)
            .map_err(|_| CqlError::Unconfigured(format!("keyspace {ks}")))?;
        Ok(def
            .column_families
            .iter()
            .flat_map(|cf| cf.indexes.iter().map(|i| (i.name.clone(), cf.name.clone())))
            .collect())
    }
}

/// What of `target` this build can index: a regular or static column's value, a frozen
/// collection whole (`full()`), a collection's values (`values()`, the default), a map's keys
/// (`keys()`), a key column's values; refused in Cassandra's words where it has them.
fn check_target(t: &Table, target: &IndexTarget) -> Result<IndexOf, CqlError> {
    let c = &target.column;
    let (_, def) = t
        .column(c)
        .map_err(|_| CqlError::invalid(format!("Column '{c}' doesn't exist")))?;
    refuse_durations(&def.ty)?;
    if t.columns.iter().any(|c| c.ty == CqlType::Counter) {
        return Err(CqlError::invalid(
            "Secondary indexes on counter tables aren't supported",
        ));
    }
    match def.kind {
        Kind::PartitionKey(_) if t.partition_key.len() == 1 => {
            return Err(CqlError::invalid(format!(
                "Cannot create secondary index on the only partition key column {c}"
            )))
        }
        Kind::PartitionKey(_) | Kind::Clustering(_) if target.explicit => {
            return Err(CqlError::invalid(format!(
                "Cannot create {}() index on {c}. Non-collection columns only support simple indexes",
                on_word(target.on)
            )))
        }
        // A partition holding only statics is a row no entry of a key column's index names.
        Kind::PartitionKey(_) if t.has_statics() => {
            return Err(CqlError::invalid(format!(
                "Indexes on the partition key column {c} of a table with static columns are not supported yet"
            )))
        }
        Kind::PartitionKey(j) => return Ok(IndexOf::KeyComponent(position(j)?)),
        Kind::Clustering(j) => return Ok(IndexOf::Clustering(position(j)?)),
        Kind::Regular if def.is_static && (def.ty.is_collection() || target.explicit) => {
            return Err(CqlError::invalid(format!(
                "Indexes on {}() of the static column {c} are not supported yet",
                on_word(target.on)
            )))
        }
        Kind::Regular if def.is_static => return Ok(IndexOf::StaticValue),
        Kind::Regular => {}
    }
    let frozen = matches!(def.ty, CqlType::Frozen(_));
    let on = on_word(target.on);
    match (target.on, &def.ty) {
        (IndexOn::Full, _) if frozen => Ok(IndexOf::Value),
        (IndexOn::Full, _) => Err(CqlError::invalid(
            "full() indexes can only be created on frozen collections",
        )),
        _ if frozen && def.ty.is_frozen_collection() => Err(CqlError::invalid(format!(
            "Cannot create {on}() index on frozen column {c}. Frozen collections are immutable and must be fully indexed by using the 'full({c})' modifier"
        ))),
        (IndexOn::Values, CqlType::Set(_)) => Ok(IndexOf::ElementNames),
        (IndexOn::Values, CqlType::List(_) | CqlType::Map(..)) => Ok(IndexOf::ElementValues),
        (IndexOn::Keys, CqlType::Map(..)) => Ok(IndexOf::ElementNames),
        (IndexOn::Entries, CqlType::Map(..)) => Ok(IndexOf::ElementEntries),
        (IndexOn::Keys | IndexOn::Entries, CqlType::List(_) | CqlType::Set(_)) => {
            Err(CqlError::invalid(format!(
                "Cannot create index on {on} of column {c} with non-map type"
            )))
        }
        (IndexOn::Keys | IndexOn::Entries, _) => Err(CqlError::invalid(format!(
            "Cannot create {on}() index on {c}. Non-collection columns only support simple indexes"
        ))),
        (IndexOn::Values, _) if target.explicit => Err(CqlError::invalid(format!(
            "Cannot create values() index on {c}. Non-collection columns only support simple indexes"
        ))),
        (IndexOn::Values, CqlType::Udt(_)) => Err(CqlError::invalid(format!(
            "Cannot create index on non-frozen UDT column {c}"
        ))),
        (IndexOn::Values, _) => Ok(IndexOf::Value),
    }
}

/// Refuses a custom index class other than a storage-attached index, in Cassandra's words.
fn refuse_class(c: &str) -> Result<(), CqlError> {
    // Cassandra 5 ships SASI disabled by default; this has no SASI at all.
    let sasi = c.eq_ignore_ascii_case("org.apache.cassandra.index.sasi.SASIIndex")
        || c.eq_ignore_ascii_case("SASIIndex");
    if sasi {
        return Err(CqlError::invalid(
            "SASI indexes are disabled. Enable in cassandra.yaml to use.",
        ));
    }
    if !is_sai(c) {
        return Err(CqlError::invalid(format!(
            "Unable to find custom indexer class '{c}'"
        )));
    }
    Ok(())
}

/// Cassandra's refusal of an index of a column whose type holds a duration anywhere.
fn refuse_durations(ty: &CqlType) -> Result<(), CqlError> {
    if !ty.references_duration() {
        return Ok(());
    }
    let inner = match ty {
        CqlType::Frozen(t) => t.as_ref(),
        t => t,
    };
    Err(CqlError::invalid(match inner {
        CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) => {
            "Secondary indexes are not supported on collections containing durations"
        }
        CqlType::Tuple(_) => "Secondary indexes are not supported on tuples containing durations",
        CqlType::Udt(_) => "Secondary indexes are not supported on UDTs containing durations",
        _ => "Secondary indexes are not supported on duration columns",
    }))
}

/// A key column's position, as an index keeps it.
fn position(j: usize) -> Result<u16, CqlError> {
    u16::try_from(j).map_err(|_| CqlError::invalid("too many key columns to index"))
}

fn on_word(on: IndexOn) -> &'static str {
    match on {
        IndexOn::Values => "values",
        IndexOn::Keys => "keys",
        IndexOn::Entries => "entries",
        IndexOn::Full => "full",
    }
}

/// Cassandra's default name, `<table>_<column>_idx`, numbered when taken.
fn default_name(table: &str, column: &str, taken: &[(String, String)]) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let base = format!("{}_{}_idx", clean(table), clean(column));
    let free = |n: &str| !taken.iter().any(|(t, _)| t == n);
    if free(&base) {
        return base;
    }
    (1..)
        .map(|i| format!("{base}_{i}"))
        .find(|n| free(n))
        .unwrap_or(base)
}

/// How long a statement that creates an index waits for its build before it answers: long
/// enough that an index over a small table answers the next query, short enough that a
/// driver's request does not time out on a large one (whose build goes on in the background,
/// reads through it refused as not yet available until it ends).
const BUILD_WAIT: Duration = Duration::from_secs(1);

impl Session<'_> {
    /// Waits, at most [`BUILD_WAIT`], for the build of index `index` of `keyspace`.
    pub(super) fn settle_index(&self, keyspace: &str, index: &str) -> Result<(), CqlError> {
        self.db.wait_for_index(keyspace, index, BUILD_WAIT)?;
        Ok(())
    }
}
