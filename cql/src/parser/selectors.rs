//! What a `SELECT` returns per row, as written: columns, `WRITETIME`/`TTL`, function and
//! aggregate calls, `CAST`, arithmetic with Cassandra's precedence (`* / %` before `+ -`),
//! literal operands, each with an optional `AS` alias; and a function call where a value
//! stands (`now()`, `textAsBlob('x')`, nested calls of literals).

use super::super::ast::{Arith, Selector};
use super::super::error::CqlError;
use super::super::lexer::Tok;
use super::super::types::Literal;
use super::{Parser, MAX_NESTING};

/// Operations one selector may chain (`a + b + …`): each nests the tree its evaluation walks
/// recursively, so a client's chain is bounded before it could exhaust a stack.
const MAX_OPERATIONS: usize = 64;

impl Parser {
    /// One selector and its alias.
    pub(super) fn aliased_selector(&mut self) -> Result<(Selector, Option<String>), CqlError> {
        let s = self.selector_sum(0)?;
        let alias = if self.eat_word("as") {
            Some(self.ident()?)
        } else {
            None
        };
        Ok((s, alias))
    }

    fn selector_sum(&mut self, depth: usize) -> Result<Selector, CqlError> {
        let mut left = self.selector_product(depth)?;
        for _ in 0..=MAX_OPERATIONS {
            let op = match self.peek() {
                Some(Tok::Sym("+")) => Arith::Add,
                Some(Tok::Sym("-")) => Arith::Sub,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.selector_product(depth)?;
            left = Selector::Arith(op, Box::new(left), Box::new(right));
        }
        Err(self.unexpected(&format!("at most {MAX_OPERATIONS} operations in a row")))
    }

    fn selector_product(&mut self, depth: usize) -> Result<Selector, CqlError> {
        let mut left = self.selector_unary(depth)?;
        for _ in 0..=MAX_OPERATIONS {
            let op = match self.peek() {
                Some(Tok::Sym("*")) => Arith::Mul,
                Some(Tok::Sym("/")) => Arith::Div,
                Some(Tok::Sym("%")) => Arith::Rem,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.selector_unary(depth)?;
            left = Selector::Arith(op, Box::new(left), Box::new(right));
        }
        Err(self.unexpected(&format!("at most {MAX_OPERATIONS} operations in a row")))
    }

    fn selector_unary(&mut self, depth: usize) -> Result<Selector, CqlError> {
        if depth > MAX_NESTING {
            return Err(self.unexpected("a less deeply nested selector"));
        }
        if matches!(self.peek(), Some(Tok::Sym("-"))) {
            if matches!(self.peek_at(1), Some(Tok::Number(_))) {
                return Ok(Selector::Literal(self.simple_literal()?));
            }
            self.pos += 1;
            return Ok(Selector::Negate(Box::new(self.selector_unary(depth + 1)?)));
        }
        self.selector_primary(depth)
    }

    /// A parenthesized selector or a literal operand, if one starts here.
    fn selector_literal(&mut self, depth: usize) -> Option<Result<Selector, CqlError>> {
        // `(type) literal`: a literal read as the hinted type (`(int) -1`, `(bigint) 1`).
        // `(type) ?`, `(list<int>) [1, 2]`, `(t) {a: 1}` too.
        if let Some(ty) = self.type_hint(depth) {
            let hinted = self
                .call_argument(depth)
                .map(|l| Literal::Hint(ty, Box::new(l)));
            return Some(hinted.map(Selector::Literal));
        }
        Some(match self.peek() {
            Some(Tok::Sym("(")) => {
                self.pos += 1;
                self.selector_sum(depth + 1)
                    .and_then(|inner| self.sym(")").map(|()| inner))
            }
            Some(Tok::Str(_) | Tok::Number(_) | Tok::Hex(_) | Tok::Uuid(_) | Tok::Duration(_)) => {
                self.simple_literal().map(Selector::Literal)
            }
            Some(Tok::Sym("[" | "{")) => self.collection_literal(depth + 1).map(Selector::Literal),
            // A marker: typed by the function or operator it is an argument of, or a hint.
            Some(Tok::Question | Tok::Named(_)) => self.call_argument(depth).map(Selector::Literal),
            Some(Tok::Word(w))
                if matches!(w.to_ascii_lowercase().as_str(), "true" | "false" | "null") =>
            {
                self.simple_literal().map(Selector::Literal)
            }
            _ => return None,
        })
    }

    fn selector_primary(&mut self, depth: usize) -> Result<Selector, CqlError> {
        if let Some(s) = self.selector_literal(depth) {
            return s;
        }
        let called = matches!(self.peek(), Some(Tok::Word(_)))
            && matches!(self.peek_at(1), Some(Tok::Sym("(")));
        // `system.f(…)`: a native function named with its keyspace.
        let qualified = self.is_word("system")
            && matches!(self.peek_at(1), Some(Tok::Sym(".")))
            && matches!(self.peek_at(3), Some(Tok::Sym("(")));
        if !called && !qualified {
            return self.column_path();
        }
        if qualified {
            self.pos += 2;
        }
        let name = self.ident()?;
        self.sym("(")?;
        match name.as_str() {
            "writetime" | "maxwritetime" | "minwritetime" | "ttl" => {
                let of = self.column_path()?;
                self.sym(")")?;
                let f = match name.as_str() {
                    "ttl" => "ttl",
                    "maxwritetime" => "maxwritetime",
                    "minwritetime" => "minwritetime",
                    _ => "writetime",
                };
                return Ok(match of {
                    Selector::Column(c) if f == "ttl" => Selector::Ttl(c),
                    Selector::Column(c) => Selector::WriteTime(c, f),
                    part => Selector::TimeOf(Box::new(part), f),
                });
            }
            "count" if self.eat_sym("*") => {
                self.sym(")")?;
                return Ok(Selector::Count);
            }
            "count"
                if matches!(self.peek(), Some(Tok::Number(n)) if n == "1")
                    && matches!(self.peek_at(1), Some(Tok::Sym(")"))) =>
            {
                self.pos += 2;
                return Ok(Selector::Count);
            }
            "cast" => {
                let x = self.selector_sum(depth + 1)?;
                self.word("as")?;
                let ty = self.cql_type(0)?;
                self.sym(")")?;
                return Ok(Selector::Cast(Box::new(x), ty));
            }
            _ => {}
        }
        let mut args = Vec::new();
        if !self.eat_sym(")") {
            loop {
                args.push(self.selector_sum(depth + 1)?);
                if self.eat_sym(")") {
                    break;
                }
                self.sym(",")?;
            }
        }
        Ok(Selector::Call(name, args))
    }

    /// A column, then any `[key]` elements and `.field`s of it, in order.
    fn column_path(&mut self) -> Result<Selector, CqlError> {
        let mut s = Selector::Column(self.ident()?);
        for _ in 0..=MAX_NESTING {
            if self.eat_sym("[") {
                s = self.element_selector(s)?;
            } else if self.eat_sym(".") {
                s = Selector::Field(Box::new(s), self.ident()?);
            } else {
                return Ok(s);
            }
        }
        Err(self.unexpected("a less deeply nested selector"))
    }

    /// `c[key]` or `c[from..to]` (an end may be left out), after the `[`.
    fn element_selector(&mut self, of: Selector) -> Result<Selector, CqlError> {
        let range = |p: &mut Parser| p.eat_sym(".") && p.eat_sym(".");
        if range(self) {
            let to = self.simple_literal()?;
            self.sym("]")?;
            return Ok(Selector::Slice(Box::new(of), None, Some(to)));
        }
        let first = self.simple_literal()?;
        if range(self) {
            let to = if matches!(self.peek(), Some(Tok::Sym("]"))) {
                None
            } else {
                Some(self.simple_literal()?)
            };
            self.sym("]")?;
            return Ok(Selector::Slice(Box::new(of), Some(first), to));
        }
        self.sym("]")?;
        Ok(Selector::Element(Box::new(of), first))
    }

    /// `f(args…)` where a value stands (the name already seen, `(` next): its arguments are
    /// literals, collections, calls or bind markers.
    pub(super) fn call_literal(&mut self, depth: usize) -> Result<Literal, CqlError> {
        if depth > MAX_NESTING {
            return Err(self.unexpected("a less deeply nested function call"));
        }
        if self.is_word("system") && matches!(self.peek_at(1), Some(Tok::Sym("."))) {
            self.pos += 2;
        }
        let name = self.ident()?;
        self.sym("(")?;
        let mut args = Vec::new();
        if !self.eat_sym(")") {
            loop {
                args.push(self.call_argument(depth)?);
                if self.eat_sym(")") {
                    break;
                }
                self.sym(",")?;
            }
        }
        Ok(Literal::Call(name, args))
    }

    fn call_argument(&mut self, depth: usize) -> Result<Literal, CqlError> {
        match self.peek() {
            Some(Tok::Question) => {
                self.pos += 1;
                self.binds += 1;
                Ok(Literal::Marker(self.binds - 1, None))
            }
            Some(Tok::Named(n)) => {
                let n = n.clone();
                self.pos += 1;
                self.binds += 1;
                Ok(Literal::Marker(self.binds - 1, Some(n)))
            }
            Some(Tok::Sym("[" | "{")) => self.collection_literal(depth + 1),
            Some(Tok::Sym("(")) => self.tuple_literal(depth + 1),
            _ => self.literal_at(depth + 1),
        }
    }
}
