//! Columns dropped from a table (`ALTER TABLE … DROP`), kept as Cassandra's `dropped_columns`
//! keeps them, and what the catalog stores of a table that has some: its `CREATE TABLE`, then
//! the drops and the columns added back, replayed when the table is loaded. Hiding a dropped
//! column's cells is the readers' (`collect.rs`, `select.rs`, export).

use super::{ColumnDef, Kind, Table, TableIndex};
use crate::ast::Statement;
use crate::error::CqlError;
use crate::parser::parse;
use crate::types::CqlType;
use crate::user_types::UserTypes;
use supercolumn::schema::ColumnFamilyDef;

use crate::types::quote_ident;

/// A column dropped from a table (`ALTER TABLE … DROP`), as Cassandra's `dropped_columns` keeps
/// it: its cells written at or before `at` are never read again, also after a column of that
/// name is added back.
#[derive(Debug, Clone, PartialEq)]
pub struct Dropped {
    /// Its name.
    pub name: String,
    /// Its type when dropped.
    pub ty: CqlType,
    /// Whether it was static.
    pub is_static: bool,
    /// When it was dropped (microseconds).
    pub at: i64,
}

impl Table {
    /// This table with the regular `columns` dropped at `at` (`ALTER TABLE … DROP`): gone from
    /// it, and recorded so that their cells stay hidden.
    pub fn with_dropped(&self, columns: &[String], at: i64) -> Result<Table, CqlError> {
        let mut t = self.clone();
        for name in columns {
            let i = t
                .columns
                .iter()
                .position(|c| &c.name == name)
                .ok_or_else(|| {
                    CqlError::invalid(format!(
                        "Column {name} was not found in table {}.{}",
                        self.keyspace, self.name
                    ))
                })?;
            if t.columns[i].kind != Kind::Regular {
                return Err(CqlError::invalid(format!(
                    "Cannot drop PRIMARY KEY column {name}"
                )));
            }
            let dependent: Vec<&str> = t
                .indexes
                .iter()
                .filter(|x| &x.column == name)
                .map(|x| x.name.as_str())
                .collect();
            if !dependent.is_empty() {
                return Err(CqlError::invalid(format!(
                    "Cannot drop column {name} because it has dependent secondary indexes ({})",
                    dependent.join(", ")
                )));
            }
            let c = t.columns.remove(i);
            // The key columns' indexes past the one removed move down by one.
            for k in t.partition_key.iter_mut().chain(t.clustering.iter_mut()) {
                if *k > i {
                    *k -= 1;
                }
            }
            let at = at.max(c.dropped_at.unwrap_or(i64::MIN));
            t.dropped.retain(|d| d.name != c.name);
            t.dropped.push(Dropped {
                name: c.name,
                ty: c.ty,
                is_static: c.is_static,
                at,
            });
        }
        Ok(t)
    }

    /// The table a column family stores, if it stores one: its `CREATE TABLE`, then the
    /// `ALTER TABLE` statements that drop columns and add some back (see
    /// [`catalog_text`](Self::catalog_text)).
    /// The user types it names are looked up in `types` (its keyspace's).
    pub fn from_cf(
        keyspace: &str,
        cf: &ColumnFamilyDef,
        types: &UserTypes,
    ) -> Result<Option<Table>, CqlError> {
        let Some(text) = &cf.cql_table else {
            return Ok(None);
        };
        let stmts = parse(text)?;
        let not_a_table = || {
            CqlError::invalid(format!(
                "the stored schema of {keyspace}.{} is not a CREATE TABLE and its drops",
                cf.name
            ))
        };
        let (first, rest) = stmts.split_first().ok_or_else(not_a_table)?;
        let mut t = Table::from_statement_with(keyspace, first, types)?;
        for stmt in rest {
            t = match stmt {
                Statement::AlterTableDrop {
                    columns,
                    timestamp: Some(at),
                    ..
                } => t.with_dropped(columns, *at)?,
                Statement::AlterTableAdd {
                    columns, statics, ..
                } => t.with_columns(&types.resolve_columns(columns)?, statics)?,
                _ => return Err(not_a_table()),
            };
        }
        t.indexes = cf
            .indexes
            .iter()
            .map(|i| TableIndex {
                name: i.name.clone(),
                column: String::from_utf8_lossy(&i.column).into_owned(),
                of: i.of,
                class: i.class.clone(),
                built: i.built,
            })
            .collect();
        Ok(Some(t))
    }

    /// What the catalog keeps of this table: a `CREATE TABLE` holding its columns and, in place
    /// of any added back, the dropped ones, then `ALTER TABLE … DROP … USING TIMESTAMP` for each
    /// dropped column and `ALTER TABLE … ADD` for each added back (what Cassandra's `DESCRIBE
    /// … WITH INTERNALS` writes). Without drops, it is the `CREATE TABLE`.
    pub fn catalog_text(&self) -> String {
        if self.dropped.is_empty() {
            return self.create_statement();
        }
        let mut base = self.clone();
        base.dropped.clear();
        let mut readded = Vec::new();
        for d in &self.dropped {
            if let Some(i) = base.columns.iter().position(|c| c.name == d.name) {
                readded.push(base.columns.remove(i));
            }
            base.columns.push(ColumnDef {
                name: d.name.clone(),
                ty: d.ty.clone(),
                kind: Kind::Regular,
                is_static: d.is_static,
                dropped_at: None,
            });
        }
        base.partition_key = self.key_indexes(&base, &self.partition_key);
        base.clustering = self.key_indexes(&base, &self.clustering);
        let table = format!(
            "{}.{}",
            quote_ident(&self.keyspace),
            quote_ident(&self.name)
        );
        let mut s = base.create_statement();
        for d in &self.dropped {
            let c = quote_ident(&d.name);
            s.push_str(&format!(
                "\nALTER TABLE {table} DROP {c} USING TIMESTAMP {};",
                d.at
            ));
        }
        for c in readded {
            let kind = if c.is_static { " static" } else { "" };
            let name = quote_ident(&c.name);
            s.push_str(&format!("\nALTER TABLE {table} ADD {name} {}{kind};", c.ty));
        }
        s
    }

    /// The indexes in `other` of the key columns `keys` index here.
    fn key_indexes(&self, other: &Table, keys: &[usize]) -> Vec<usize> {
        keys.iter()
            .filter_map(|&k| {
                let name = &self.columns[k].name;
                other.columns.iter().position(|c| &c.name == name)
            })
            .collect()
    }

    /// Whether a column was ever dropped from this table.
    pub fn has_dropped(&self) -> bool {
        !self.dropped.is_empty()
    }
}
