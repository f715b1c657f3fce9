//! The schema statements' own clauses: `CREATE KEYSPACE` and `ALTER KEYSPACE` options,
//! `CREATE TABLE`'s columns, keys and `WITH`, and `ALTER TABLE … DROP`. `mod.rs` dispatches on
//! the statement's first words; this file only parses.

use super::super::ast::{Statement, TableName};
use super::super::error::CqlError;
use super::super::lexer::Tok;
use super::super::table_options::tuning as table_tuning;
use super::super::types::{CqlType, Literal};
use super::Parser;

/// A keyspace's `replication` entries and its `durable_writes`, when given.
type KeyspaceOptions = (Vec<(String, String)>, Option<bool>);

impl Parser {
    pub(super) fn create_keyspace(&mut self) -> Result<Statement, CqlError> {
        let if_not_exists = self.if_not_exists()?;
        let name = self.name()?;
        let (replication, durable_writes) = if self.eat_word("with") {
            self.keyspace_options()?
        } else {
            (Vec::new(), None)
        };
        Ok(Statement::CreateKeyspace {
            name,
            if_not_exists,
            replication,
            durable_writes: durable_writes.unwrap_or(true),
        })
    }

    /// The rest of `ALTER KEYSPACE`: its name and `WITH` options.
    pub(super) fn alter_keyspace(&mut self) -> Result<Statement, CqlError> {
        let name = self.name()?;
        self.word("with")?;
        let (replication, durable_writes) = self.keyspace_options()?;
        Ok(Statement::AlterKeyspace {
            name,
            replication,
            durable_writes,
        })
    }

    /// A keyspace's options after `WITH`: `replication = {…}` and `durable_writes = …`, joined
    /// by `AND`.
    fn keyspace_options(&mut self) -> Result<KeyspaceOptions, CqlError> {
        let (mut replication, mut durable_writes) = (Vec::new(), None);
        loop {
            let option = self.ident()?;
            self.sym("=")?;
            if option == "replication" {
                self.sym("{")?;
                loop {
                    let k = self.string()?;
                    self.sym(":")?;
                    let v = match self.peek().cloned() {
                        Some(Tok::Str(s) | Tok::Number(s)) => {
                            self.pos += 1;
                            s
                        }
                        _ => return Err(self.unexpected("a replication value")),
                    };
                    replication.push((k, v));
                    if !self.eat_sym(",") {
                        break;
                    }
                }
                self.sym("}")?;
            } else if option == "durable_writes" {
                let (line, col) = self
                    .tokens
                    .get(self.pos)
                    .map_or((1, 1), |t| (t.line, t.col));
                let b = table_tuning::boolean(&option, &self.literal()?)
                    .map_err(|m| CqlError::syntax(line, col, m))?;
                durable_writes = Some(b);
            } else {
                return Err(self.unexpected("replication or durable_writes"));
            }
            if !self.eat_word("and") {
                return Ok((replication, durable_writes));
            }
        }
    }

    pub(super) fn create_table(&mut self) -> Result<Statement, CqlError> {
        let if_not_exists = self.if_not_exists()?;
        let table = self.table_name()?;
        self.sym("(")?;
        let (mut columns, mut partition_key, mut clustering) = (Vec::new(), Vec::new(), Vec::new());
        let mut statics = Vec::new();
        loop {
            if self.eat_word("primary") {
                self.word("key")?;
                if !partition_key.is_empty() {
                    return Err(self.unexpected("one PRIMARY KEY"));
                }
                self.sym("(")?;
                if self.eat_sym("(") {
                    partition_key = self.ident_list()?;
                    self.sym(")")?;
                } else {
                    partition_key.push(self.ident()?);
                }
                while self.eat_sym(",") {
                    clustering.push(self.ident()?);
                }
                self.sym(")")?;
            } else {
                let name = self.name()?;
                let t = self.cql_type(0)?;
                if self.eat_word("static") {
                    statics.push(name.clone());
                }
                if self.eat_word("primary") {
                    self.word("key")?;
                    if !partition_key.is_empty() {
                        return Err(self.unexpected("one PRIMARY KEY"));
                    }
                    partition_key.push(name.clone());
                }
                columns.push((name, t));
            }
            if self.eat_sym(")") {
                break;
            }
            self.sym(",")?;
            if self.eat_sym(")") {
                break;
            }
        }
        let (mut order, mut options) = (Vec::new(), Vec::new());
        if self.eat_word("with") {
            loop {
                if self.eat_word("clustering") {
                    self.word("order")?;
                    self.word("by")?;
                    order = self.order_list()?;
                } else if self.eat_word("compact") {
                    self.word("storage")?;
                    // Cassandra 4 creates none (a Thrift-era column family is one, seen so).
                    return Err(CqlError::invalid(
                        "Compact tables are not allowed in Cassandra starting with 4.0 version.",
                    ));
                } else {
                    let name = self.ident()?;
                    self.sym("=")?;
                    options.push((name, self.literal()?));
                }
                if !self.eat_word("and") {
                    break;
                }
            }
        }
        Ok(Statement::CreateTable {
            table,
            if_not_exists,
            columns,
            partition_key,
            clustering,
            statics,
            order,
            options,
        })
    }

    /// The rest of `ALTER TABLE t DROP …`: a column or a parenthesized list of them, then an
    /// optional `USING TIMESTAMP t`.
    pub(super) fn alter_drop(&mut self, table: TableName) -> Result<Statement, CqlError> {
        // Cassandra 4.1 and 5 answer `DROP COMPACT STORAGE` so unless their configuration
        // enables it; here no table is compact in Cassandra's sense (a Thrift-era column
        // family already reads as the table it would become), so it is always refused.
        let is =
            |t: Option<&Tok>, w: &str| matches!(t, Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w));
        if is(self.peek(), "compact") && is(self.peek_at(1), "storage") {
            return Err(CqlError::invalid(
                "DROP COMPACT STORAGE is disabled. Enable in cassandra.yaml to use.",
            ));
        }
        let columns = if self.eat_sym("(") {
            let list = self.ident_list()?;
            self.sym(")")?;
            list
        } else {
            vec![self.ident()?]
        };
        let mut timestamp = None;
        if self.eat_word("using") {
            self.word("timestamp")?;
            match self.literal()? {
                Literal::Number(n) => {
                    let t = n.parse::<i64>().map_err(|_| {
                        CqlError::invalid(format!("USING TIMESTAMP takes a bigint, not {n}"))
                    })?;
                    timestamp = Some(t);
                }
                _ => return Err(self.unexpected("a timestamp (microseconds)")),
            }
        }
        Ok(Statement::AlterTableDrop {
            table,
            columns,
            timestamp,
        })
    }

    pub(super) fn ident_list(&mut self) -> Result<Vec<String>, CqlError> {
        let mut out = vec![self.ident()?];
        while self.eat_sym(",") {
            out.push(self.ident()?);
        }
        Ok(out)
    }

    pub(super) fn order_list(&mut self) -> Result<Vec<(String, bool)>, CqlError> {
        let parens = self.eat_sym("(");
        let mut out = Vec::new();
        loop {
            let c = self.ident()?;
            let desc = if self.eat_word("desc") {
                true
            } else {
                self.eat_word("asc");
                false
            };
            out.push((c, desc));
            if !self.eat_sym(",") {
                break;
            }
        }
        if parens {
            self.sym(")")?;
        }
        Ok(out)
    }

    /// The rest of `vector<T, n>` (after `vector`): an element type (any but `counter`, a
    /// collection or user type frozen) and a positive dimension.
    pub(super) fn vector_type(&mut self, depth: usize) -> Result<CqlType, CqlError> {
        self.sym("<")?;
        let e = Box::new(self.cql_type(depth + 1)?);
        self.sym(",")?;
        let n = match self.literal()? {
            Literal::Number(n) => n.parse::<usize>().ok().filter(|&n| n > 0),
            _ => None,
        };
        self.sym(">")?;
        let Some(n) = n else {
            return Err(CqlError::invalid(
                "vectors may only have positive dimensions",
            ));
        };
        if matches!(*e, CqlType::Counter) {
            return Err(CqlError::invalid("vectors may not hold counters"));
        }
        // A vector is one cell: a collection or user type inside it is frozen, as in
        // Cassandra.
        let e = if e.is_multi_cell() {
            Box::new(CqlType::Frozen(Box::new(e.frozen_within())))
        } else {
            e
        };
        Ok(CqlType::Vector(e, n))
    }

    /// The rest of `tuple<T1, …>` (after `tuple`); its elements may not be collections that
    /// are not frozen (Cassandra's words).
    pub(super) fn tuple_type(&mut self, depth: usize) -> Result<CqlType, CqlError> {
        self.sym("<")?;
        let mut ts = vec![self.cql_type(depth + 1)?];
        while self.eat_sym(",") {
            ts.push(self.cql_type(depth + 1)?);
        }
        self.sym(">")?;
        let nested = ts.iter().any(CqlType::is_collection);
        let t = CqlType::Tuple(ts);
        if nested {
            return Err(CqlError::invalid(format!(
                "Non-frozen collections are not allowed inside tuples: {t}"
            )));
        }
        Ok(t)
    }
}
