//! `CREATE TYPE`, `ALTER TYPE` and `DROP TYPE`, a user-defined type's name where a type
//! stands (`address`, `ks.address`, `"Address"`), and its literal `{field: value, …}`. `mod.rs`
//! dispatches on the statement's first words; this file only parses. Which type a name means
//! is looked up later, against the keyspace's types (`user_types.rs`).

use super::super::ast::{Statement, TypeChange};
use super::super::error::CqlError;
use super::super::lexer::Tok;
use super::super::types::{Literal, UserType};
use super::Parser;

impl Parser {
    /// The rest of `CREATE TYPE [IF NOT EXISTS] [ks.]name (field type, …)`.
    pub(super) fn create_type(&mut self) -> Result<Statement, CqlError> {
        let if_not_exists = self.if_not_exists()?;
        let name = self.table_name()?;
        self.sym("(")?;
        let mut fields = Vec::new();
        loop {
            let field = self.name()?;
            fields.push((field, self.cql_type(0)?));
            if self.eat_sym(")") {
                break;
            }
            self.sym(",")?;
            // Cassandra's grammar takes a comma after the last field.
            if self.eat_sym(")") {
                break;
            }
        }
        Ok(Statement::CreateType {
            name,
            if_not_exists,
            fields,
        })
    }

    /// The rest of `ALTER TYPE [ks.]name ADD field type | RENAME a TO b [AND c TO d …]`.
    pub(super) fn alter_type(&mut self) -> Result<Statement, CqlError> {
        let name = self.table_name()?;
        let change = if self.eat_word("add") {
            let field = self.name()?;
            TypeChange::Add(field, self.cql_type(0)?)
        } else if self.eat_word("rename") {
            TypeChange::Rename(self.renames()?)
        } else {
            return Err(self.unexpected("ADD or RENAME (ALTER TYPE cannot retype fields)"));
        };
        Ok(Statement::AlterType { name, change })
    }

    /// The rest of `DROP TYPE [IF EXISTS] [ks.]name`.
    pub(super) fn drop_type(&mut self) -> Result<Statement, CqlError> {
        let if_exists = self.if_exists()?;
        Ok(Statement::DropType {
            if_exists,
            name: self.table_name()?,
        })
    }

    /// A user-defined type's name where a type stands, to be looked up later.
    pub(super) fn user_type_name(&mut self) -> Result<super::super::types::CqlType, CqlError> {
        let first = self.ident()?;
        if self.eat_sym(".") {
            return Ok(UserType::named(Some(first), self.ident()?));
        }
        Ok(UserType::named(None, first))
    }

    /// Whether a `{` (already read) opens a user type's literal: a field name, then `:`.
    pub(super) fn at_udt_literal(&self) -> bool {
        let field = match self.peek() {
            Some(Tok::Quoted(_)) => true,
            Some(Tok::Word(w)) => !matches!(
                w.to_ascii_lowercase().as_str(),
                "true" | "false" | "null" | "nan" | "infinity"
            ),
            _ => false,
        };
        field && self.peek_at(1) == Some(&Tok::Sym(":"))
    }

    /// The rest of `{field: value, …}` (after `{`); each value a literal.
    pub(super) fn udt_literal(&mut self, depth: usize) -> Result<Literal, CqlError> {
        let mut fields = Vec::new();
        loop {
            let name = self.ident()?;
            self.sym(":")?;
            let value = self.element_at(depth + 1)?;
            if fields.iter().any(|(n, _)| *n == name) {
                return Err(CqlError::invalid(format!(
                    "Duplicate field '{name}' in a user type's literal"
                )));
            }
            fields.push((name, value));
            if self.eat_sym("}") {
                return Ok(Literal::Udt(fields));
            }
            self.sym(",")?;
        }
    }
}
