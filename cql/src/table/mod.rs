//! A CQL table's schema and its storage mapping (SPEC §9): the column family that holds it (a
//! composite comparator of the clustering types, then UTF8Type for the column name), how a
//! partition key becomes a row key, and how a CQL row becomes cells named `ck1:ck2:column` with
//! a row marker `ck1:ck2:` (and a collection's elements `ck1:ck2:column:element`, the comparator
//! then ending in `ColumnToCollectionType`); a static column's cells are the partition's static
//! names. The schema is kept in the catalog as its `CREATE TABLE` statement (and its drops,
//! `dropped.rs`), so a table survives reopen without its statements. Writing names is
//! `types/quote.rs`'s.
//!
//! Long because a CQL table's mapping to cells (keys, names, clustering prefixes, static cells)
//! is one concept, built and checked from its `CREATE TABLE` and each `ALTER` in one place.

mod counters;
mod dropped;
mod refusals;

use std::sync::Arc;

use super::ast::Statement;
use super::error::CqlError;
use super::table_options::TableOptions;
pub use super::types::quote_ident;
use super::types::{CqlType, Literal};
use super::user_types::UserTypes;
pub use dropped::Dropped;
use supercolumn::model::comparator::{
    Collection, ColumnToCollectionType, Comparator, CompositeType, ReversedType, Utf8Type,
};
use supercolumn::schema::definition::validate_identifier;
use supercolumn::schema::{ColumnFamilyDef, IndexOf};

/// What part of the primary key a column is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The i-th partition key column.
    PartitionKey(usize),
    /// The i-th clustering column.
    Clustering(usize),
    /// A regular column.
    Regular,
}

/// A column of a table.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    /// Its name (folded).
    pub name: String,
    /// Its type.
    pub ty: CqlType,
    /// Its role.
    pub kind: Kind,
    /// A static column (of kind `Regular`): one value per partition, shared by its rows,
    /// stored in static cells (`CompositeType::build_static`).
    pub is_static: bool,
    /// For a column added again after it was dropped: the drop's time (microseconds). Its
    /// cells written at or before it are the dropped column's, and stay hidden.
    pub dropped_at: Option<i64>,
}

/// A CQL table.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Its keyspace.
    pub keyspace: String,
    /// Its name (the column family's).
    pub name: String,
    /// Columns in declaration order.
    pub columns: Vec<ColumnDef>,
    /// Indexes into `columns` of the partition key.
    pub partition_key: Vec<usize>,
    /// Indexes into `columns` of the clustering columns.
    pub clustering: Vec<usize>,
    /// Per clustering column: declared descending.
    pub descending: Vec<bool>,
    /// The `WITH` options kept.
    pub options: TableOptions,
    /// The columns dropped from it, each once (the latest drop).
    pub dropped: Vec<Dropped>,
    /// Its secondary indexes, as the engine keeps them.
    pub indexes: Vec<TableIndex>,
}

impl TableIndex {
    /// Its target as Cassandra writes it: the column, `full(c)` for a frozen collection,
    /// `values(c)` or `keys(c)` for a collection's elements.
    pub fn target(&self, t: &Table) -> String {
        let name = quote_ident(&self.column);
        let ty = t
            .columns
            .iter()
            .find(|c| c.name == self.column)
            .map(|c| &c.ty);
        match (self.of, ty) {
            (IndexOf::Value, Some(ty)) if ty.is_frozen_collection() => format!("full({name})"),
            (
                IndexOf::Value
                | IndexOf::StaticValue
                | IndexOf::Clustering(_)
                | IndexOf::KeyComponent(_),
                _,
            ) => name,
            (IndexOf::ElementNames, Some(CqlType::Map(..))) => format!("keys({name})"),
            (IndexOf::ElementEntries, _) => format!("entries({name})"),
            (IndexOf::ElementNames | IndexOf::ElementValues, _) => format!("values({name})"),
        }
    }

    /// The `CREATE INDEX` that makes it again.
    pub fn create_statement(&self, t: &Table) -> String {
        let on = format!(
            "{} ON {}.{} ({})",
            quote_ident(&self.name),
            quote_ident(&t.keyspace),
            quote_ident(&t.name),
            self.target(t)
        );
        match &self.class {
            Some(class) => format!("CREATE CUSTOM INDEX {on} USING '{class}';"),
            None => format!("CREATE INDEX {on};"),
        }
    }
}

/// The class of Cassandra 5's storage-attached index, as the schema tables name it.
pub const SAI_CLASS: &str = "org.apache.cassandra.index.sai.StorageAttachedIndex";

/// A secondary index of a table (`CREATE INDEX`).
#[derive(Debug, Clone, PartialEq)]
pub struct TableIndex {
    /// Its name, unique in the keyspace.
    pub name: String,
    /// The indexed column.
    pub column: String,
    /// What of the column it holds: its value, or a collection's element values or names.
    pub of: IndexOf,
    /// `CREATE CUSTOM INDEX … USING 'class'`: the class as given.
    pub class: Option<String>,
    /// Whether it holds every row yet (it answers queries only then).
    pub built: bool,
}

impl Table {
    /// Builds and checks a table from its `CREATE TABLE` (naming no user types).
    pub fn from_statement(keyspace: &str, stmt: &Statement) -> Result<Table, CqlError> {
        Table::from_statement_with(keyspace, stmt, &UserTypes::none(keyspace))
    }

    /// [`Table::from_statement`], the user types it names looked up in `types`.
    // Long because it checks a CREATE TABLE's parts in order (columns, primary key, clustering
    // order, options), each refusal in Cassandra's words.
    pub fn from_statement_with(
        keyspace: &str,
        stmt: &Statement,
        types: &UserTypes,
    ) -> Result<Table, CqlError> {
        let Statement::CreateTable {
            table,
            columns,
            partition_key,
            clustering,
            statics,
            order,
            options,
            ..
        } = stmt
        else {
            return Err(CqlError::invalid("not a CREATE TABLE statement"));
        };
        validate_identifier(&table.table, "table").map_err(|_| {
            CqlError::invalid(format!(
                "'{}' is not a valid table name (letters, digits and _, at most 48)",
                table.table
            ))
        })?;
        if partition_key.is_empty() {
            return Err(CqlError::invalid(format!(
                "table {} has no PRIMARY KEY",
                table.table
            )));
        }
        let mut defs: Vec<ColumnDef> = Vec::with_capacity(columns.len());
        for (name, ty) in columns {
            if defs.iter().any(|c| &c.name == name) {
                return Err(CqlError::invalid(format!(
                    "column {name} is declared twice"
                )));
            }
            if name.is_empty() || name.len() > 255 {
                return Err(CqlError::invalid("column names are 1 to 255 bytes"));
            }
            defs.push(ColumnDef {
                name: name.clone(),
                ty: types.resolve(ty)?,
                kind: Kind::Regular,
                is_static: statics.contains(name),
                dropped_at: None,
            });
        }
        let mut find = |name: &str, kind: Kind| -> Result<usize, CqlError> {
            let i = defs.iter().position(|c| c.name == name).ok_or_else(|| {
                CqlError::invalid(format!("unknown column {name} in the PRIMARY KEY"))
            })?;
            if defs[i].kind != Kind::Regular {
                return Err(CqlError::invalid(format!(
                    "column {name} is in the PRIMARY KEY twice"
                )));
            }
            if defs[i].is_static {
                return Err(CqlError::invalid(format!(
                    "Static column {name} cannot be part of the PRIMARY KEY"
                )));
            }
            if defs[i].ty == CqlType::Duration {
                return Err(CqlError::invalid(format!(
                    "duration type is not supported for PRIMARY KEY column '{name}'"
                )));
            }
            if matches!(defs[i].ty, CqlType::Udt(_)) {
                return Err(CqlError::invalid(format!(
                    "Invalid non-frozen user-defined type for PRIMARY KEY component {name}"
                )));
            }
            if defs[i].ty.comparator().is_none() {
                return Err(CqlError::invalid(format!(
                    "column {name} of type {} cannot be part of the PRIMARY KEY here yet",
                    defs[i].ty
                )));
            }
            defs[i].kind = kind;
            Ok(i)
        };
        let pk = partition_key
            .iter()
            .enumerate()
            .map(|(i, n)| find(n, Kind::PartitionKey(i)))
            .collect::<Result<Vec<_>, _>>()?;
        let ck = clustering
            .iter()
            .enumerate()
            .map(|(i, n)| find(n, Kind::Clustering(i)))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(c) = defs.iter().find(|c| !storable(&c.ty)) {
            return Err(unstorable(&c.name, &c.ty));
        }
        if ck.is_empty() && defs.iter().any(|c| c.is_static) {
            return Err(statics_need_clustering());
        }
        let mut descending = vec![false; ck.len()];
        for (i, (name, desc)) in order.iter().enumerate() {
            match clustering.get(i) {
                Some(c) if c == name => descending[i] = *desc,
                _ => {
                    return Err(CqlError::invalid(format!(
                        "CLUSTERING ORDER BY must name the clustering columns in order; {name} is not clustering column {}",
                        i + 1
                    )))
                }
            }
        }
        let t = Table {
            keyspace: keyspace.to_string(),
            name: table.table.clone(),
            columns: defs,
            partition_key: pk,
            clustering: ck,
            descending,
            options: TableOptions::from_pairs(options)?,
            dropped: Vec::new(),
            indexes: Vec::new(),
        };
        t.check_counters()?;
        Ok(t)
    }

    /// This table with primary key columns renamed (`ALTER TABLE … RENAME`): their names are
    /// in no cell (a cell is named by clustering values and a regular column's name), so the
    /// data stays as it is. A regular column cannot be renamed, as in Cassandra.
    pub fn with_renamed(&self, renames: &[(String, String)]) -> Result<Table, CqlError> {
        let mut t = self.clone();
        for (from, to) in renames {
            let (i, def) = t.column(from)?;
            if def.kind == Kind::Regular {
                return Err(CqlError::invalid(format!(
                    "cannot rename non PRIMARY KEY column {from}"
                )));
            }
            if t.columns.iter().any(|c| &c.name == to) {
                return Err(CqlError::invalid(format!(
                    "cannot rename {from} to {to}: column {to} already exists in table {}.{}",
                    self.keyspace, self.name
                )));
            }
            if to.is_empty() || to.len() > 255 {
                return Err(CqlError::invalid("column names are 1 to 255 bytes"));
            }
            t.columns[i].name = to.clone();
        }
        Ok(t)
    }

    /// This table with regular `columns` added (`ALTER TABLE … ADD`), those named in `statics`
    /// static. A collection adds a column to the cell names' comparator (see
    /// `Database::alter_cql_table`).
    pub fn with_columns(
        &self,
        columns: &[(String, CqlType)],
        statics: &[String],
    ) -> Result<Table, CqlError> {
        if self.clustering.is_empty() && !statics.is_empty() {
            return Err(statics_need_clustering());
        }
        let mut t = self.clone();
        self.counters_take(columns)?;
        for (name, ty) in columns {
            if t.columns.iter().any(|c| &c.name == name) {
                return Err(CqlError::invalid(format!(
                    "column {name} already exists in table {}.{}",
                    self.keyspace, self.name
                )));
            }
            if name.is_empty() || name.len() > 255 {
                return Err(CqlError::invalid("column names are 1 to 255 bytes"));
            }
            if !storable(ty) {
                return Err(unstorable(name, ty));
            }
            let dropped = self.dropped.iter().find(|d| &d.name == name);
            if let Some(d) = dropped.filter(|d| d.ty != *ty) {
                return Err(CqlError::invalid(format!(
                    "Cannot re-add previously dropped column '{name}' of type {ty}, incompatible with previous type {}",
                    d.ty
                )));
            }
            t.columns.push(ColumnDef {
                name: name.clone(),
                ty: ty.clone(),
                kind: Kind::Regular,
                is_static: statics.contains(name),
                dropped_at: dropped.map(|d| d.at),
            });
        }
        t.check_counters()?;
        Ok(t)
    }

    /// This table with the options `pairs` name changed (`ALTER TABLE … WITH`).
    pub fn with_options(&self, pairs: &[(String, Literal)]) -> Result<Table, CqlError> {
        if pairs.iter().any(|(n, _)| n == "id") {
            // A table's id is given once, when it is created (Cassandra refuses it too).
            return Err(CqlError::invalid("Cannot alter table id."));
        }
        let mut t = self.clone();
        t.options = self.options.with_pairs(pairs)?;
        t.check_counters()?;
        Ok(t)
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Result<(usize, &ColumnDef), CqlError> {
        self.columns
            .iter()
            .enumerate()
            .find(|(_, c)| c.name == name)
            .ok_or_else(|| {
                CqlError::invalid(format!(
                    "Undefined column name {name} in table {}.{}",
                    self.keyspace, self.name
                ))
            })
    }

    /// The column family definition that stores this table.
    pub fn cf_def(&self) -> Result<ColumnFamilyDef, CqlError> {
        let mut def = ColumnFamilyDef::standard(&self.name);
        def.comparator = self.comparator();
        def.key_validation_class = Some(self.key_comparator());
        def.cql_table = Some(self.catalog_text());
        def.comment.clone_from(&self.options.comment);
        def.gc_grace_seconds = self.options.gc_grace_seconds;
        super::table_options::tuning::apply(&self.options, &mut def)?;
        Ok(def)
    }

    /// The cell names' comparator: the clustering types (DESC ones reversed), then UTF8Type for
    /// the column name.
    pub fn comparator(&self) -> Arc<dyn Comparator> {
        let mut parts = self.clustering_comparators();
        parts.push(Arc::new(Utf8Type));
        // A dropped collection stays in it (unless added back): its elements are still stored,
        // and keep their order.
        let dropped = self
            .dropped
            .iter()
            .filter(|d| !self.columns.iter().any(|c| c.name == d.name))
            .map(|d| (&d.name, &d.ty));
        let collections: Vec<(Vec<u8>, Collection)> = self
            .columns
            .iter()
            .map(|c| (&c.name, &c.ty))
            .chain(dropped)
            .filter_map(|(name, ty)| Some((name.as_bytes().to_vec(), ty.collection()?)))
            .collect();
        if !collections.is_empty() {
            // Cassandra's layout: a table with collections names elements in a last component.
            parts.push(Arc::new(ColumnToCollectionType::new(collections)));
        }
        Arc::new(CompositeType::new(parts))
    }

    /// The comparator of each clustering column's component of a cell name, in clustering
    /// order (a DESC column's reversed).
    pub fn clustering_comparators(&self) -> Vec<Arc<dyn Comparator>> {
        self.clustering
            .iter()
            .zip(&self.descending)
            .map(|(&i, &desc)| {
                let c = self.type_comparator(i);
                if desc {
                    Arc::new(ReversedType(c)) as Arc<dyn Comparator>
                } else {
                    c
                }
            })
            .collect()
    }

    /// The cell name of one element of collection `column` in the CQL row with these
    /// clustering values (`element`: a map's key, a set's element, a list's TimeUUID); of a
    /// static column, the partition's static element, whatever the clustering values.
    pub fn element_name(
        &self,
        clustering: &[&[u8]],
        column: &str,
        element: &[u8],
    ) -> Result<Vec<u8>, CqlError> {
        self.name_in_row(clustering, column, Some(element), 0)
    }

    /// Whether the table has static columns.
    pub fn has_statics(&self) -> bool {
        self.columns.iter().any(|c| c.is_static)
    }

    /// Whether `column` names a static column.
    pub fn is_static(&self, column: &str) -> bool {
        self.columns.iter().any(|c| c.is_static && c.name == column)
    }

    /// The name of `column` (and of one of its elements) in the CQL row at `clustering`, the
    /// last component ending in `eoc` (±1: a bound around the column's elements). A static
    /// column's name is the partition's static one: the static marker and empty clustering
    /// components, whatever `clustering` holds.
    pub fn name_in_row(
        &self,
        clustering: &[&[u8]],
        column: &str,
        element: Option<&[u8]>,
        eoc: i8,
    ) -> Result<Vec<u8>, CqlError> {
        let is_static = !column.is_empty() && self.is_static(column);
        let mut parts: Vec<&[u8]> = if is_static {
            vec![b""; self.clustering.len()]
        } else {
            clustering.to_vec()
        };
        parts.push(column.as_bytes());
        parts.extend(element);
        if !CompositeType::fits(&parts) {
            return Err(CqlError::invalid(
                "a clustering value or collection element is longer than 65535 bytes",
            ));
        }
        Ok(if is_static {
            CompositeType::build_static(&parts, eoc)
        } else {
            CompositeType::build(&parts, eoc)
        })
    }

    fn type_comparator(&self, i: usize) -> Arc<dyn Comparator> {
        self.columns[i]
            .ty
            .comparator()
            .unwrap_or_else(|| Arc::new(supercolumn::model::comparator::BytesType))
    }

    /// The row keys' type: the partition key's, a composite when it has several columns.
    pub fn key_comparator(&self) -> Arc<dyn Comparator> {
        match self.partition_key.as_slice() {
            [one] => self.type_comparator(*one),
            many => Arc::new(CompositeType::new(
                many.iter().map(|&i| self.type_comparator(i)).collect(),
            )),
        }
    }

    /// The row key of a partition key's values (in key order).
    pub fn row_key(&self, values: &[&[u8]]) -> Result<Vec<u8>, CqlError> {
        match values {
            [one] => Ok(one.to_vec()),
            many => {
                if !CompositeType::fits(many) {
                    return Err(CqlError::invalid(
                        "a partition key component is longer than 65535 bytes",
                    ));
                }
                Ok(CompositeType::build(many, 0))
            }
        }
    }

    /// The partition key values of a row key.
    pub fn split_row_key(&self, key: &[u8]) -> Vec<Vec<u8>> {
        if self.partition_key.len() == 1 {
            return vec![key.to_vec()];
        }
        match CompositeType::split(key) {
            Ok(parts) => parts.into_iter().map(|p| p.bytes.to_vec()).collect(),
            Err(_) => vec![key.to_vec()],
        }
    }

    /// The cell name of `column` (empty: the row marker) in the CQL row with these clustering
    /// values.
    pub fn cell_name(&self, clustering: &[&[u8]], column: &str) -> Result<Vec<u8>, CqlError> {
        self.name_in_row(clustering, column, None, 0)
    }

    /// The composite prefix of every cell of the CQL row with these (all) clustering values.
    pub fn clustering_prefix(&self, clustering: &[&[u8]]) -> Result<Vec<u8>, CqlError> {
        if !CompositeType::fits(clustering) {
            return Err(CqlError::invalid(
                "a clustering value is longer than 65535 bytes",
            ));
        }
        Ok(CompositeType::build(clustering, 0))
    }

    /// The non-key columns in the order `SELECT *` shows them, as Cassandra does: the static
    /// ones by name, then the others by name.
    pub fn regular_sorted(&self) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.columns.len())
            .filter(|&i| self.columns[i].kind == Kind::Regular)
            .collect();
        v.sort_by_key(|&i| (!self.columns[i].is_static, &self.columns[i].name));
        v
    }

    /// The `CREATE TABLE` statement that recreates this table (what the catalog keeps and
    /// `DESCRIBE TABLE` prints).
    pub fn create_statement(&self) -> String {
        let q = |n: &str| quote_ident(n);
        let mut s = format!("CREATE TABLE {}.{} (\n", q(&self.keyspace), q(&self.name));
        for c in &self.columns {
            let kind = if c.is_static { " static" } else { "" };
            s.push_str(&format!("    {} {}{kind},\n", q(&c.name), c.ty));
        }
        let names = |idx: &[usize]| {
            idx.iter()
                .map(|&i| q(&self.columns[i].name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let pk = if self.partition_key.len() == 1 {
            names(&self.partition_key)
        } else {
            format!("({})", names(&self.partition_key))
        };
        let mut with = Vec::new();
        if self.clustering.is_empty() {
            s.push_str(&format!("    PRIMARY KEY ({pk})\n)"));
        } else {
            s.push_str(&format!(
                "    PRIMARY KEY ({pk}, {})\n)",
                names(&self.clustering)
            ));
            let order: Vec<String> = self
                .clustering
                .iter()
                .zip(&self.descending)
                .map(|(&i, &d)| {
                    format!(
                        "{} {}",
                        q(&self.columns[i].name),
                        if d { "DESC" } else { "ASC" }
                    )
                })
                .collect();
            with.push(format!("CLUSTERING ORDER BY ({})", order.join(", ")));
        }
        with.extend(self.options.clauses());
        if !with.is_empty() {
            s.push_str(&format!(" WITH {}", with.join("\n    AND ")));
        }
        s.push(';');
        s
    }
}

/// Whether a column of this type can be stored: a scalar, a collection of scalars (a list's
/// elements and a map's values may be frozen collections of scalars or tuples of them), a
/// frozen collection of scalars, or a tuple of scalars and frozen collections of scalars.
fn storable(ty: &CqlType) -> bool {
    match ty {
        // A frozen user type's fields were checked when it was defined.
        CqlType::Frozen(_) if ty.is_frozen_udt() => true,
        // One cell per field, each holding its field whole: a field may not be a collection
        // that is itself many cells (Cassandra's rule).
        CqlType::Udt(u) => !u.fields.iter().any(|(_, t)| t.is_collection()),
        CqlType::Tuple(_) => ty.is_tuple_of_values(),
        CqlType::Frozen(_) => ty.is_frozen_collection(),
        t if t.is_collection() => t.is_collection_of_scalars(),
        _ => true,
    }
}

fn statics_need_clustering() -> CqlError {
    CqlError::invalid(
        "Static columns are only useful (and thus allowed) if the table has at least one clustering column",
    )
}

fn unstorable(name: &str, ty: &CqlType) -> CqlError {
    CqlError::invalid(match ty {
        CqlType::Udt(_) => {
            "Non-frozen UDTs with nested non-frozen collections are not supported".into()
        }
        CqlType::Frozen(inner) if !inner.is_collection() => {
            "frozen<> is only allowed on collections, tuples, and user-defined types".into()
        }
        CqlType::Tuple(_) => format!(
            "column {name} is {ty}: a tuple holding tuples or nested collections is not supported yet"
        ),
        // Cassandra's words for a collection inside another that is not frozen.
        CqlType::List(e) | CqlType::Set(e) if e.is_collection() => {
            format!("Non-frozen collections are not allowed inside collections: {ty}")
        }
        CqlType::Map(k, v) if k.is_collection() || v.is_collection() => {
            format!("Non-frozen collections are not allowed inside collections: {ty}")
        }
        _ => format!("column {name} is {ty}: this collection's elements cannot be stored"),
    })
}
