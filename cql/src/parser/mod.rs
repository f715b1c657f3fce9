//! Tokens to statements: a recursive-descent parser over the lexer's tokens. It checks the
//! grammar only; whether a table or column exists is the executor's question. Every error
//! names the line and column of the token it stopped at.
//!
//! Long because it holds the statement grammar, one short method per clause; the DML clauses are in
//! dml.rs.

use super::ast::{Bind, Statement, Term};
use super::error::CqlError;
use super::lexer::{tokenize, Tok, Token};
use super::types::{CqlType, Duration, Literal};

/// Parses one or more statements separated by `;`.
pub fn parse(text: &str) -> Result<Vec<Statement>, CqlError> {
    let tokens = tokenize(text)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        binds: 0,
        operations: 0,
    };
    let mut out = Vec::new();
    loop {
        while p.eat_sym(";") {}
        if p.at_end() {
            return Ok(out);
        }
        out.push(p.statement()?);
        if !p.at_end() && !p.eat_sym(";") {
            return Err(p.unexpected("';' or the end of the statement"));
        }
    }
}

/// Parses one literal value (`42`, `'text'`, `[1, 2]`, `{'a': 1}`, a UUID, `0x…`), as a CSV
/// field or a value typed at a prompt is read.
pub fn parse_literal(text: &str) -> Result<Literal, CqlError> {
    let mut p = Parser {
        tokens: tokenize(text)?,
        pos: 0,
        binds: 0,
        operations: 0,
    };
    let literal = p.simple_literal()?;
    if !p.at_end() {
        return Err(p.unexpected("the end of the value"));
    }
    Ok(literal)
}

mod ddl;
mod dml;
mod index;
pub(crate) use dml::MAX_IN_COMBINATIONS;
mod names;
mod selectors;
mod set_clause;
mod terms;
mod user_type;

/// Collections nest at most this deep in a type or a literal.
const MAX_NESTING: usize = 8;

pub(super) struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    binds: usize,
    /// Operations in the value being parsed (`terms.rs` bounds them).
    operations: usize,
}

impl Parser {
    fn at_end(&self) -> bool {
        self.pos >= self.tokens.len()
    }

    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos).map(|t| &t.kind)
    }

    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.tokens.get(self.pos + n).map(|t| &t.kind)
    }

    /// The line and column of the next token (just past the last at the end).
    fn position(&self) -> (usize, usize) {
        match self.tokens.get(self.pos) {
            Some(t) => (t.line, t.col),
            None => self.tokens.last().map_or((1, 1), |t| (t.line, t.col + 1)),
        }
    }

    fn unexpected(&self, expected: &str) -> CqlError {
        match self.tokens.get(self.pos) {
            Some(t) => CqlError::syntax(
                t.line,
                t.col,
                format!("expected {expected}, found {}", t.kind.describe()),
            ),
            None => {
                let (line, col) = self.position();
                CqlError::syntax(line, col, format!("expected {expected}, found the end"))
            }
        }
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w))
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let yes = self.is_word(w);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn word(&mut self, w: &str) -> Result<(), CqlError> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{}'", w.to_ascii_uppercase())))
        }
    }

    fn eat_sym(&mut self, s: &str) -> bool {
        let yes = matches!(self.peek(), Some(Tok::Sym(x)) if *x == s);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn sym(&mut self, s: &str) -> Result<(), CqlError> {
        if self.eat_sym(s) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{s}'")))
        }
    }
}

impl Parser {
    /// An identifier: a bare word folded to lower case, or a quoted name as written.
    fn ident(&mut self) -> Result<String, CqlError> {
        let name = match self.peek() {
            Some(Tok::Word(w)) => w.to_lowercase(),
            Some(Tok::Quoted(q)) => q.clone(),
            _ => return Err(self.unexpected("a name")),
        };
        self.pos += 1;
        Ok(name)
    }

    /// `a TO b [AND c TO d …]` (after `RENAME`).
    fn renames(&mut self) -> Result<Vec<(String, String)>, CqlError> {
        let mut renames = Vec::new();
        loop {
            let from = self.ident()?;
            if !self.eat_word("to") {
                return Err(self.unexpected("TO"));
            }
            renames.push((from, self.ident()?));
            if !self.eat_word("and") {
                return Ok(renames);
            }
        }
    }

    fn if_not_exists(&mut self) -> Result<bool, CqlError> {
        if self.eat_word("if") {
            self.word("not")?;
            self.word("exists")?;
            return Ok(true);
        }
        Ok(false)
    }

    fn if_exists(&mut self) -> Result<bool, CqlError> {
        if self.eat_word("if") {
            self.word("exists")?;
            return Ok(true);
        }
        Ok(false)
    }

    // Long because it is one match with an arm per statement keyword.
    fn statement(&mut self) -> Result<Statement, CqlError> {
        if self.eat_word("create") {
            if self.eat_word("keyspace") || self.eat_word("schema") {
                return self.create_keyspace();
            }
            if self.eat_word("table") || self.eat_word("columnfamily") {
                return self.create_table();
            }
            if self.eat_word("index") {
                return self.create_index(false);
            }
            if self.eat_word("custom") {
                self.word("index")?;
                return self.create_index(true);
            }
            if self.eat_word("type") {
                return self.create_type();
            }
            // Cassandra 4 and 5 ship materialized views disabled; this has none.
            if self.eat_word("materialized") {
                self.word("view")?;
                return Err(CqlError::invalid(
                    "Materialized views are disabled. Enable in cassandra.yaml to use.",
                ));
            }
            return Err(self.unexpected("KEYSPACE, TABLE, INDEX or TYPE"));
        }
        if self.eat_word("use") {
            return Ok(Statement::Use(self.name()?));
        }
        if self.eat_word("drop") {
            if self.eat_word("keyspace") || self.eat_word("schema") {
                let if_exists = self.if_exists()?;
                return Ok(Statement::DropKeyspace {
                    if_exists,
                    name: self.name()?,
                });
            }
            if self.eat_word("table") || self.eat_word("columnfamily") {
                let if_exists = self.if_exists()?;
                return Ok(Statement::DropTable {
                    if_exists,
                    table: self.table_name()?,
                });
            }
            if self.eat_word("index") {
                return self.drop_index();
            }
            if self.eat_word("type") {
                return self.drop_type();
            }
            return Err(self.unexpected("KEYSPACE, TABLE, INDEX or TYPE"));
        }
        if self.eat_word("alter") {
            if self.eat_word("keyspace") || self.eat_word("schema") {
                return self.alter_keyspace();
            }
            if self.eat_word("type") {
                return self.alter_type();
            }
            if !(self.eat_word("table") || self.eat_word("columnfamily")) {
                return Err(self.unexpected("TABLE, KEYSPACE or TYPE"));
            }
            let table = self.table_name()?;
            if self.eat_word("rename") {
                let renames = self.renames()?;
                return Ok(Statement::AlterTableRename { table, renames });
            }
            if self.eat_word("with") {
                let mut options = Vec::new();
                loop {
                    let name = self.ident()?;
                    self.sym("=")?;
                    options.push((name, self.literal()?));
                    if !self.eat_word("and") {
                        break;
                    }
                }
                return Ok(Statement::AlterTableWith { table, options });
            }
            if self.eat_word("drop") {
                return self.alter_drop(table);
            }
            if !self.eat_word("add") {
                return Err(self
                    .unexpected("ADD, DROP, RENAME or WITH (ALTER TABLE cannot retype columns)"));
            }
            let (mut columns, mut statics) = (Vec::new(), Vec::new());
            let parens = self.eat_sym("(");
            loop {
                let (name, ty) = (self.name()?, self.cql_type(0)?);
                if self.eat_word("static") {
                    statics.push(name.clone());
                }
                columns.push((name, ty));
                if !parens || self.eat_sym(")") {
                    break;
                }
                self.sym(",")?;
            }
            return Ok(Statement::AlterTableAdd {
                table,
                columns,
                statics,
            });
        }
        if self.eat_word("truncate") {
            self.eat_word("table");
            return Ok(Statement::Truncate(self.table_name()?));
        }
        if self.eat_word("insert") {
            return self.insert();
        }
        if self.eat_word("update") {
            return self.update();
        }
        if self.eat_word("delete") {
            return self.delete();
        }
        if self.eat_word("select") {
            return Ok(Statement::Select(Box::new(self.select()?)));
        }
        if self.eat_word("begin") {
            return self.batch();
        }
        Err(self.unexpected("a statement"))
    }

    fn string(&mut self) -> Result<String, CqlError> {
        match self.peek().cloned() {
            Some(Tok::Str(s)) => {
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.unexpected("a string")),
        }
    }

    fn cql_type(&mut self, depth: usize) -> Result<CqlType, CqlError> {
        if depth > MAX_NESTING {
            return Err(self.unexpected("a less deeply nested type"));
        }
        let name = match self.peek() {
            Some(Tok::Word(w)) => w.to_ascii_lowercase(),
            Some(Tok::Quoted(_)) => return self.user_type_name(),
            _ => return Err(self.unexpected("a type")),
        };
        self.pos += 1;
        let inner = |p: &mut Parser| -> Result<Box<CqlType>, CqlError> {
            Ok(Box::new(p.cql_type(depth + 1)?))
        };
        let t = match name.as_str() {
            "list" | "set" | "frozen" => {
                self.sym("<")?;
                let t = inner(self)?;
                self.sym(">")?;
                match name.as_str() {
                    "list" => CqlType::List(t),
                    // A duration has no order to keep a set's elements in (Cassandra's words).
                    "set" if *t == CqlType::Duration => {
                        return Err(CqlError::invalid(
                            "Durations are not allowed inside sets: set<duration>",
                        ))
                    }
                    "set" => CqlType::Set(t),
                    // A tuple is frozen already.
                    _ if matches!(*t, CqlType::Tuple(_)) => *t,
                    // What a frozen collection holds is frozen too: `frozen<list<list<int>>>`
                    // is `frozen<list<frozen<list<int>>>>`, as Cassandra reads it.
                    _ => CqlType::Frozen(Box::new(t.frozen_within())),
                }
            }
            "vector" => self.vector_type(depth)?,
            "tuple" => self.tuple_type(depth)?,
            "map" => {
                self.sym("<")?;
                let k = inner(self)?;
                self.sym(",")?;
                let v = inner(self)?;
                self.sym(">")?;
                if *k == CqlType::Duration {
                    return Err(CqlError::invalid(format!(
                        "Durations are not allowed as map keys: map<duration, {v}>"
                    )));
                }
                CqlType::Map(k, v)
            }
            other => match CqlType::scalar(other) {
                Some(t) => t,
                // Any other name is a user-defined type's, looked up where the statement runs.
                None => {
                    self.pos -= 1;
                    return self.user_type_name();
                }
            },
        };
        Ok(t)
    }

    /// A literal value (no bind marker).
    fn literal(&mut self) -> Result<Literal, CqlError> {
        self.literal_at(0)
    }

    /// A literal value nested `depth` deep in collections and calls.
    fn literal_at(&mut self, depth: usize) -> Result<Literal, CqlError> {
        match self.term_at(depth)? {
            Term::Literal(l) => Ok(l),
            Term::Bind(_) => Err(self.unexpected("a literal, not a bind marker")),
        }
    }

    /// An element of a collection, tuple or user type literal: a value with its operators, a
    /// type hint (`[(int) 1]`) or a bind marker (`[1, ?]`), as Cassandra's terms may be.
    fn element_at(&mut self, depth: usize) -> Result<Literal, CqlError> {
        Ok(terms::literal_of(self.term_at(depth)?))
    }

    /// One literal value with no operator after it (a selector's operand, a CSV field).
    fn simple_literal(&mut self) -> Result<Literal, CqlError> {
        match self.simple_term_at(0)? {
            Term::Literal(l) => Ok(l),
            Term::Bind(_) => Err(self.unexpected("a literal, not a bind marker")),
        }
    }

    fn term(&mut self) -> Result<Term, CqlError> {
        self.term_at(0)
    }

    /// One value: a literal, a call, a bind marker (operators between values: `terms.rs`).
    fn simple_term_at(&mut self, depth: usize) -> Result<Term, CqlError> {
        let negative = self.eat_sym("-");
        let tok = self.peek().cloned();
        let lit = match tok {
            Some(Tok::Number(n)) => Literal::Number(if negative { format!("-{n}") } else { n }),
            Some(Tok::Word(w))
                if negative && matches!(w.to_ascii_lowercase().as_str(), "nan" | "infinity") =>
            {
                Literal::Number(format!("-{w}"))
            }
            Some(Tok::Duration(d)) => Literal::Duration(if negative { format!("-{d}") } else { d }),
            Some(Tok::Word(w)) if Duration::is_iso(&w) => {
                Literal::Duration(if negative { format!("-{w}") } else { w })
            }
            _ if negative => return Err(self.unexpected("a number")),
            Some(Tok::Str(s)) => Literal::Str(s),
            Some(Tok::Hex(h)) => Literal::Hex(h),
            Some(Tok::Uuid(u)) => Literal::Uuid(u),
            Some(Tok::Question) => {
                self.pos += 1;
                self.binds += 1;
                return Ok(Term::Bind(Bind::Positional(self.binds - 1)));
            }
            Some(Tok::Named(n)) => {
                self.pos += 1;
                self.binds += 1;
                return Ok(Term::Bind(Bind::Named(self.binds - 1, n)));
            }
            Some(Tok::Sym("[" | "{")) => {
                return Ok(Term::Literal(self.collection_literal(depth)?));
            }
            Some(Tok::Sym("(")) => return Ok(Term::Literal(self.tuple_literal(depth)?)),
            Some(Tok::Word(w)) => match w.to_ascii_lowercase().as_str() {
                "true" => Literal::Bool(true),
                "false" => Literal::Bool(false),
                "null" => Literal::Null,
                "nan" | "infinity" => Literal::Number(w),
                _ if matches!(self.peek_at(1), Some(Tok::Sym("(")))
                    || (w.eq_ignore_ascii_case("system")
                        && matches!(self.peek_at(1), Some(Tok::Sym(".")))) =>
                {
                    return Ok(Term::Literal(self.call_literal(depth)?));
                }
                _ => return Err(self.unexpected("a value")),
            },
            _ => return Err(self.unexpected("a value")),
        };
        self.pos += 1;
        Ok(Term::Literal(lit))
    }

    /// A `[…]` list, `{…}` set or `{k: v, …}` map literal of literals.
    /// `(a, b, …)`: a tuple literal, its elements literals, collections or tuples.
    fn tuple_literal(&mut self, depth: usize) -> Result<Literal, CqlError> {
        if depth > MAX_NESTING {
            return Err(self.unexpected("a less deeply nested tuple"));
        }
        self.sym("(")?;
        let mut items = Vec::new();
        loop {
            items.push(self.element_at(depth + 1)?);
            if self.eat_sym(")") {
                return Ok(Literal::Tuple(items));
            }
            self.sym(",")?;
        }
    }

    fn collection_literal(&mut self, depth: usize) -> Result<Literal, CqlError> {
        if depth > MAX_NESTING {
            return Err(self.unexpected("a less deeply nested collection"));
        }
        let element = |p: &mut Parser| p.element_at(depth + 1);
        if self.eat_sym("[") {
            let mut items = Vec::new();
            if !self.eat_sym("]") {
                loop {
                    items.push(element(self)?);
                    if self.eat_sym("]") {
                        break;
                    }
                    self.sym(",")?;
                }
            }
            return Ok(Literal::List(items));
        }
        self.sym("{")?;
        if self.eat_sym("}") {
            return Ok(Literal::Set(Vec::new()));
        }
        if self.at_udt_literal() {
            return self.udt_literal(depth);
        }
        let first = element(self)?;
        if self.eat_sym(":") {
            let mut pairs = vec![(first, element(self)?)];
            while !self.eat_sym("}") {
                self.sym(",")?;
                let k = element(self)?;
                self.sym(":")?;
                pairs.push((k, element(self)?));
            }
            return Ok(Literal::Map(pairs));
        }
        let mut items = vec![first];
        while !self.eat_sym("}") {
            self.sym(",")?;
            items.push(element(self)?);
        }
        Ok(Literal::Set(items))
    }
}

#[cfg(test)]
mod tests;
