//! Schema statements: `CREATE`/`DROP` of keyspaces and tables, `ALTER TABLE`, `TRUNCATE` and
//! `USE`, run through the engine's public schema API. A table's CQL schema and the options the
//! engine acts on go into the column family definition that stores it (`table.rs`,
//! `table_options/tuning.rs`); writes and reads are `execute.rs`'s and `select.rs`'s.

use super::ast::{Statement, TableName};
use super::error::CqlError;
use super::session::{CqlResult, Session};
use super::table::Table;
use super::user_types::UserTypes;
use supercolumn::clock::Clock;
use supercolumn::schema::KeyspaceDef;

/// Checks `replication` (Cassandra's rules) and sets it on `def`.
fn replicate(def: &mut KeyspaceDef, replication: &[(String, String)]) -> Result<(), CqlError> {
    super::replication::check(replication)?;
    for (k, v) in replication {
        match k.as_str() {
            "class" => def.replica_placement_strategy = v.clone(),
            "replication_factor" => {
                def.replication_factor = v.parse().map_err(|_| {
                    CqlError::invalid(format!("replication_factor '{v}' is not a number"))
                })?
            }
            _ => {}
        }
    }
    Ok(())
}

impl Session<'_> {
    /// Stores `altered` as table `t`'s schema, if the catalog still holds `t` (an ALTER that
    /// raced another, or a table dropped and created again, is refused, not lost).
    fn store_altered(&self, t: &Table, altered: &Table) -> Result<(), CqlError> {
        // A collection column added to the table adds to the cell names' comparator.
        let comparator = altered.comparator();
        let grows = comparator.name() != t.comparator().name();
        // The options the engine acts on, as a new table's would be set.
        let tuned = altered.cf_def()?;
        let types = self.user_types(&t.keyspace)?;
        self.db.alter_cql_table(&t.keyspace, &t.name, |def| {
            match Table::from_cf(&t.keyspace, def, &types) {
                Ok(Some(now)) if now == *t => {
                    def.cql_table = Some(altered.catalog_text());
                    def.comment.clone_from(&altered.options.comment);
                    def.gc_grace_seconds = altered.options.gc_grace_seconds;
                    def.block_size_kb = tuned.block_size_kb;
                    def.bloom_filter_fp_chance = tuned.bloom_filter_fp_chance;
                    def.compression = tuned.compression;
                    def.min_compaction_threshold = tuned.min_compaction_threshold;
                    def.max_compaction_threshold = tuned.max_compaction_threshold;
                    if grows {
                        def.comparator = comparator;
                    }
                    // A statement prepared before still writes and reads what it names (as in
                    // Cassandra) unless an option it applies changed: the default TTL (the
                    // comment and the grace period are no statement's business), or a column
                    // it may name was dropped.
                    Ok(altered.options.default_ttl != t.options.default_ttl
                        || altered.dropped != t.dropped)
                }
                _ => Err(supercolumn::Error::InvalidRequest(format!(
                    "{}.{} changed while it was being altered: alter it again",
                    t.keyspace, t.name
                ))),
            }
        })?;
        Ok(())
    }

    /// An `ALTER TABLE`: `change` makes the altered table from the current one, which is
    /// stored in its place.
    fn alter(
        &self,
        table: &TableName,
        change: impl FnOnce(&Table) -> Result<Table, CqlError>,
    ) -> Result<CqlResult, CqlError> {
        let t = self.table(table)?;
        let altered = change(&t)?;
        self.store_altered(&t, &altered)?;
        Ok(CqlResult::SchemaChange(format!(
            "UPDATED TABLE {}.{}",
            t.keyspace, t.name
        )))
    }

    // Long because it is one match with an arm per schema statement.
    pub(super) fn schema_statement(&mut self, stmt: &Statement) -> Result<CqlResult, CqlError> {
        let db = self.db;
        match stmt {
            Statement::CreateKeyspace {
                name,
                if_not_exists,
                replication,
                durable_writes,
            } => {
                if db.keyspaces().contains(name) {
                    return if *if_not_exists {
                        Ok(CqlResult::Void)
                    } else {
                        Err(CqlError::AlreadyExists(format!(
                            "keyspace {name} already exists"
                        )))
                    };
                }
                let mut def = KeyspaceDef::new(name.clone());
                def.durable_writes = *durable_writes;
                replicate(&mut def, replication)?;
                db.create_keyspace(def)?;
                Ok(CqlResult::SchemaChange(format!("CREATED KEYSPACE {name}")))
            }
            Statement::AlterKeyspace {
                name,
                replication,
                durable_writes,
            } => {
                if !db.keyspaces().contains(name) {
                    return Err(CqlError::invalid(format!(
                        "Cannot alter unknown keyspace {name}"
                    )));
                }
                // Checked first, so that a refusal is the CQL layer's, in Cassandra's words.
                replicate(&mut KeyspaceDef::new(name.clone()), replication)?;
                db.alter_keyspace(name, |def| {
                    if !replication.is_empty() {
                        replicate(def, replication)
                            .map_err(|e| supercolumn::Error::InvalidRequest(e.to_string()))?;
                    }
                    if let Some(d) = durable_writes {
                        def.durable_writes = *d;
                    }
                    Ok(())
                })?;
                Ok(CqlResult::SchemaChange(format!("UPDATED KEYSPACE {name}")))
            }
            Statement::Use(name) => {
                if !db.keyspaces().contains(name) {
                    return Err(CqlError::invalid(format!(
                        "keyspace '{name}' does not exist"
                    )));
                }
                self.keyspace = Some(name.clone());
                Ok(CqlResult::SetKeyspace(name.clone()))
            }
            Statement::DropKeyspace { name, if_exists } => {
                if !db.keyspaces().contains(name) {
                    return if *if_exists {
                        Ok(CqlResult::Void)
                    } else {
                        Err(CqlError::invalid(format!("keyspace {name} does not exist")))
                    };
                }
                db.drop_keyspace(name)?;
                if self.keyspace.as_deref() == Some(name) {
                    self.keyspace = None;
                }
                Ok(CqlResult::SchemaChange(format!("DROPPED KEYSPACE {name}")))
            }
            Statement::CreateTable {
                table,
                if_not_exists,
                ..
            } => {
                let ks = self.keyspace_of(table)?;
                let def = db
                    .describe_keyspace(&ks)
                    .map_err(|_| CqlError::Unconfigured(format!("keyspace {ks}")))?;
                if def.column_family(&table.table).is_some() {
                    return if *if_not_exists {
                        Ok(CqlResult::Void)
                    } else {
                        Err(CqlError::AlreadyExists(format!(
                            "table {ks}.{} already exists",
                            table.table
                        )))
                    };
                }
                let t = Table::from_statement_with(&ks, stmt, &UserTypes::of(&def)?)?;
                db.create_column_family(&ks, t.cf_def()?)?;
                Ok(CqlResult::SchemaChange(format!(
                    "CREATED TABLE {ks}.{}",
                    t.name
                )))
            }
            Statement::DropTable { table, if_exists } => {
                let ks = self.keyspace_of(table)?;
                match self.table(table) {
                    Err(CqlError::Unconfigured(_)) if *if_exists => return Ok(CqlResult::Void),
                    Err(e) => return Err(e),
                    Ok(_) => {}
                }
                db.drop_column_family(&ks, &table.table)?;
                Ok(CqlResult::SchemaChange(format!(
                    "DROPPED TABLE {ks}.{}",
                    table.table
                )))
            }
            Statement::AlterTableAdd {
                table,
                columns,
                statics,
            } => {
                let types = self.user_types(&self.keyspace_of(table)?)?;
                let columns = types.resolve_columns(columns)?;
                self.alter(table, |t| t.with_columns(&columns, statics))
            }
            Statement::AlterTableDrop {
                table,
                columns,
                timestamp,
            } => {
                let at = timestamp
                    .or(self.default_timestamp)
                    .unwrap_or_else(|| self.db.options().clock.now_micros());
                self.alter(table, |t| t.with_dropped(columns, at))
            }
            Statement::AlterTableWith { table, options } => {
                self.alter(table, |t| t.with_options(options))
            }
            Statement::AlterTableRename { table, renames } => {
                self.alter(table, |t| t.with_renamed(renames))
            }
            Statement::Truncate(table) => {
                let t = self.table(table)?;
                let indexes = db.describe_column_family(&t.keyspace, &t.name)?.indexes;
                db.drop_column_family(&t.keyspace, &t.name)?;
                db.create_column_family(&t.keyspace, t.cf_def()?)?;
                // Its indexes come back empty with it.
                for idx in indexes {
                    let name = idx.name.clone();
                    db.create_index(&t.keyspace, &t.name, idx)?;
                    self.settle_index(&t.keyspace, &name)?;
                }
                Ok(CqlResult::Void)
            }
            Statement::CreateIndex { .. } | Statement::DropIndex { .. } => {
                self.index_statement(stmt)
            }
            Statement::CreateType { .. }
            | Statement::AlterType { .. }
            | Statement::DropType { .. } => self.type_statement(stmt),
            _ => Err(CqlError::invalid("not a schema statement")),
        }
    }
}
