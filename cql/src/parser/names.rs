//! Names in statements: a keyspace, table or column name is an identifier that is not one of
//! CQL's reserved words unless quoted, and never a bind marker (Cassandra's rules and words).

use super::super::ast::TableName;
use super::super::error::CqlError;
use super::super::lexer::Tok;
use super::Parser;

/// Cassandra's reserved words: a name that is one of them must be quoted.
#[rustfmt::skip]
const RESERVED: &[&str] = &[
    "ADD", "ALLOW", "ALTER", "AND", "APPLY", "ASC", "AUTHORIZE", "BATCH", "BEGIN", "BY",
    "COLUMNFAMILY", "CREATE", "DEFAULT", "DELETE", "DESC", "DESCRIBE", "DROP", "ENTRIES",
    "EXECUTE", "FROM", "FULL", "GRANT", "IF", "IN", "INDEX", "INFINITY", "INSERT", "INTO", "IS",
    "KEYSPACE", "LIMIT", "MATERIALIZED", "MBEAN", "MBEANS", "MODIFY", "NAN", "NORECURSIVE",
    "NOT", "NULL", "OF", "ON", "OR", "ORDER", "PRIMARY", "RENAME", "REPLACE", "REVOKE", "SCHEMA",
    "SELECT", "SET", "TABLE", "TO", "TOKEN", "TRUNCATE", "UNLOGGED", "UNSET", "UPDATE", "USE",
    "USING", "VIEW", "WHERE", "WITH",
];

impl Parser {
    /// A keyspace, table or column name being defined or named: an identifier that is not one
    /// of CQL's reserved words unless quoted (`CREATE KEYSPACE WITH …` is a syntax error, as
    /// in Cassandra, not a keyspace named `with`).
    pub(super) fn name(&mut self) -> Result<String, CqlError> {
        self.no_marker("keyspace")?;
        self.name_of_table()
    }

    /// A name where a bind marker cannot stand (Cassandra's words).
    fn no_marker(&self, what: &str) -> Result<(), CqlError> {
        if let Some(t) = self
            .tokens
            .get(self.pos)
            .filter(|t| matches!(t.kind, Tok::Question | Tok::Named(_)))
        {
            return Err(CqlError::syntax(
                t.line,
                t.col,
                format!("Bind variables cannot be used for {what} names"),
            ));
        }
        Ok(())
    }

    fn name_of_table(&mut self) -> Result<String, CqlError> {
        if let Some(Tok::Word(w)) = self.peek() {
            if RESERVED.contains(&w.to_ascii_uppercase().as_str()) {
                return Err(self.unexpected("a name (a reserved word must be quoted)"));
            }
        }
        self.ident()
    }

    pub(super) fn table_name(&mut self) -> Result<TableName, CqlError> {
        let dotted = self.peek_at(1) == Some(&Tok::Sym("."));
        self.no_marker(if dotted { "keyspace" } else { "table" })?;
        let first = self.name_of_table()?;
        if self.eat_sym(".") {
            self.no_marker("table")?;
            Ok(TableName {
                keyspace: Some(first),
                table: self.name_of_table()?,
            })
        } else {
            Ok(TableName {
                keyspace: None,
                table: first,
            })
        }
    }
}
