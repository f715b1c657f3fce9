//! `CREATE TYPE`, `ALTER TYPE … ADD/RENAME` and `DROP TYPE`: checked in Cassandra's words,
//! then kept in the keyspace's definition through the engine's `alter_keyspace` (each type its
//! `CREATE TYPE` statement, `user_types.rs`). A table names its types by name, so a change to
//! a type is seen by every table using it the next time it is read; what must not change
//! under a table is how its cells are ordered, so a field cannot be added to a type that
//! orders a table's keys, a set's elements or a map's keys (refused, naming the table).

use super::ast::{Statement, TableName, TypeChange};
use super::error::CqlError;
use super::session::{CqlResult, Session};
use super::table::Table;
use super::types::CqlType;
use super::user_types::{create_statement, uses, UserTypes};
use supercolumn::schema::definition::validate_identifier;

impl Session<'_> {
    /// Runs a `CREATE TYPE`, `ALTER TYPE` or `DROP TYPE`.
    pub(super) fn type_statement(&mut self, stmt: &Statement) -> Result<CqlResult, CqlError> {
        match stmt {
            Statement::CreateType {
                name,
                if_not_exists,
                fields,
            } => self.create_type(name, *if_not_exists, fields),
            Statement::AlterType { name, change } => self.alter_type(name, change),
            Statement::DropType { name, if_exists } => self.drop_type(name, *if_exists),
            _ => Err(CqlError::invalid("not a type statement")),
        }
    }

    fn create_type(
        &mut self,
        name: &TableName,
        if_not_exists: bool,
        fields: &[(String, CqlType)],
    ) -> Result<CqlResult, CqlError> {
        let ks = self.keyspace_of(name)?;
        let types = self.user_types(&ks)?;
        if types.get(&name.table).is_some() {
            return if if_not_exists {
                Ok(CqlResult::Void)
            } else {
                Err(CqlError::AlreadyExists(format!(
                    "A user type with name '{}' already exists",
                    name.table
                )))
            };
        }
        validate_identifier(&name.table, "type").map_err(|_| {
            CqlError::invalid(format!(
                "'{}' is not a valid type name (letters, digits and _, at most 48)",
                name.table
            ))
        })?;
        let t = types.define(&name.table, fields)?;
        self.store_types(&ks, &types, |list| list.push(create_statement(&t)))?;
        Ok(CqlResult::SchemaChange(format!(
            "CREATED TYPE {ks}.{}",
            name.table
        )))
    }

    fn alter_type(&mut self, name: &TableName, change: &TypeChange) -> Result<CqlResult, CqlError> {
        let ks = self.keyspace_of(name)?;
        let types = self.user_types(&ks)?;
        let Some(old) = types.get(&name.table).cloned() else {
            return Err(CqlError::invalid(format!(
                "Type {ks}.{} doesn't exist",
                name.table
            )));
        };
        let mut fields = old.fields.clone();
        match change {
            TypeChange::Add(field, ty) => {
                if old.field(field).is_some() {
                    return Err(CqlError::invalid(format!(
                        "Cannot add new field {field} of type {ty} to user type {ks}.{} as a field with the same name already exists",
                        old.name
                    )));
                }
                if types.resolve(ty).is_ok_and(|t| uses(&t, &old.name)) {
                    return Err(CqlError::invalid(format!(
                        "Cannot add new field {field} of type {ty} to user type {ks}.{} as this would create a circular reference",
                        old.name
                    )));
                }
                fields.push((field.clone(), ty.clone()));
            }
            TypeChange::Rename(renames) => {
                for (from, to) in renames {
                    let i = fields.iter().position(|(n, _)| n == from).ok_or_else(|| {
                        CqlError::invalid(format!(
                            "Unkown field {from} in user type {ks}.{}",
                            old.name
                        ))
                    })?;
                    fields[i].0.clone_from(to);
                }
            }
        }
        let new = create_statement(&types.define(&old.name, &fields)?);
        let position = types.list().iter().position(|t| t.name == old.name);
        let users = self.tables_using(&ks, &types, &old.name)?;
        let mut texts: Vec<String> = types.list().iter().map(|t| create_statement(t)).collect();
        if let Some(i) = position {
            texts[i].clone_from(&new);
        }
        // Every type nesting this one sees the change too.
        let after = UserTypes::from_statements(&ks, &texts)?;
        self.check_orders_unchanged(&users, &after)?;
        self.store_types(&ks, &types, |list| *list = texts)?;
        // Statements prepared against a table using it are prepared again (its values' shape
        // changed under them).
        for t in &users {
            self.db.alter_cql_table(&ks, &t.name, |_| Ok(true))?;
        }
        Ok(CqlResult::SchemaChange(format!(
            "UPDATED TYPE {ks}.{}",
            old.name
        )))
    }

    fn drop_type(&mut self, name: &TableName, if_exists: bool) -> Result<CqlResult, CqlError> {
        let ks = self.keyspace_of(name)?;
        let types = self.user_types(&ks)?;
        if types.get(&name.table).is_none() {
            return if if_exists {
                Ok(CqlResult::Void)
            } else {
                Err(CqlError::invalid(format!(
                    "Type '{ks}.{}' doesn't exist",
                    name.table
                )))
            };
        }
        let in_types: Vec<String> = types
            .list()
            .iter()
            .filter(|t| t.fields.iter().any(|(_, f)| uses(f, &name.table)))
            .map(|t| t.name.clone())
            .collect();
        if !in_types.is_empty() {
            return Err(CqlError::invalid(format!(
                "Cannot drop user type '{ks}.{}' as it is still used by user types {}",
                name.table,
                in_types.join(", ")
            )));
        }
        let tables = self.tables_using(&ks, &types, &name.table)?;
        if !tables.is_empty() {
            let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
            return Err(CqlError::invalid(format!(
                "Cannot drop user type '{ks}.{}' as it is still used by tables {}",
                name.table,
                names.join(", ")
            )));
        }
        let position = types.list().iter().position(|t| t.name == name.table);
        self.store_types(&ks, &types, |list| {
            if let Some(i) = position {
                list.remove(i);
            }
        })?;
        Ok(CqlResult::SchemaChange(format!(
            "DROPPED TYPE {ks}.{}",
            name.table
        )))
    }

    /// Changes keyspace `ks`'s stored types with `change`, if they are still `read` (a
    /// concurrent type statement makes this one fail, to be run again, rather than be lost).
    fn store_types(
        &self,
        ks: &str,
        read: &UserTypes,
        change: impl FnOnce(&mut Vec<String>),
    ) -> Result<(), CqlError> {
        let expected: Vec<String> = read.list().iter().map(|t| create_statement(t)).collect();
        self.db.alter_keyspace(ks, |def| {
            let now: Vec<String> = match UserTypes::of(def) {
                Ok(t) => t.list().iter().map(|t| create_statement(t)).collect(),
                Err(e) => return Err(supercolumn::Error::InvalidRequest(e.to_string())),
            };
            if now != expected {
                return Err(supercolumn::Error::InvalidRequest(format!(
                    "the types of keyspace {ks} changed while this statement ran: run it again"
                )));
            }
            def.cql_types = expected;
            change(&mut def.cql_types);
            // What is stored must read back (a name written as it parses, every type found).
            UserTypes::from_statements(ks, &def.cql_types)
                .map_err(|e| supercolumn::Error::InvalidRequest(e.to_string()))?;
            Ok(())
        })?;
        Ok(())
    }

    /// The CQL tables of `ks` whose columns (or dropped columns) use the type `name`.
    fn tables_using(
        &self,
        ks: &str,
        types: &UserTypes,
        name: &str,
    ) -> Result<Vec<Table>, CqlError> {
        let def = self
            .db
            .describe_keyspace(ks)
            .map_err(|_| CqlError::Unconfigured(format!("keyspace {ks}")))?;
        let mut out = Vec::new();
        for cf in &def.column_families {
            if let Some(t) = Table::from_cf(ks, cf, types)? {
                let named = t.columns.iter().any(|c| uses(&c.ty, name))
                    || t.dropped.iter().any(|d| uses(&d.ty, name));
                if named {
                    out.push(t);
                }
            }
        }
        Ok(out)
    }

    /// Refuses a change of types under which one of `tables` would order its cells or keys
    /// differently (a field added to a type in a key, a set's element or a map's key).
    fn check_orders_unchanged(&self, tables: &[Table], after: &UserTypes) -> Result<(), CqlError> {
        for t in tables {
            let stored = self.db.describe_column_family(&t.keyspace, &t.name)?;
            let Some(now) = Table::from_cf(&t.keyspace, &stored, after)? else {
                continue;
            };
            let new = now.cf_def()?;
            let same = new.comparator.name() == stored.comparator.name()
                && new.key_validation_class.as_ref().map(|k| k.name())
                    == stored.key_validation_class.as_ref().map(|k| k.name());
            if !same {
                return Err(CqlError::invalid(format!(
                    "Cannot add a field to a type that orders table {}.{} (in its primary key, a set's elements or a map's keys): its stored order would change",
                    t.keyspace, t.name
                )));
            }
        }
        Ok(())
    }
}
