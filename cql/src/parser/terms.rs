//! Values with Cassandra's operators between them (`? - 5m`, `1 + 1`, `(int) ? / 2 - 5`,
//! `-?`): `* / %` bind before `+ -`, each side to the left; an operation becomes a call of
//! the operator's native function (`_substract(?, 5m)`), which the functions choose and
//! evaluate as they do other calls; `(type) value` is a type hint. Must not touch: single
//! values (`mod.rs`'s `simple_term_at`) and selectors (`selectors.rs`).

use super::super::ast::{Bind, Term};
use super::super::error::CqlError;
use super::super::lexer::Tok;
use super::super::types::{CqlType, Duration, Literal, NEGATION, OPERATORS};
use super::{Parser, MAX_NESTING};

/// Operations one value may hold (`1 + 1 + …`), its nested values' included: each nests the
/// tree its evaluation walks recursively, so a client's chain is bounded before it could
/// exhaust a stack.
const MAX_OPERATIONS: usize = 64;

impl Parser {
    /// A value nested `depth` deep, with any operators between values.
    pub(super) fn term_at(&mut self, depth: usize) -> Result<Term, CqlError> {
        if depth == 0 {
            self.operations = 0;
        }
        let mut left = self.term_product(depth)?;
        while let Some(op) = self.term_operator(&["+", "-"]) {
            let right = self.term_product(depth)?;
            left = self.operation(op, vec![left, right])?;
        }
        Ok(left)
    }

    fn term_product(&mut self, depth: usize) -> Result<Term, CqlError> {
        let mut left = self.term_unary(depth)?;
        while let Some(op) = self.term_operator(&["*", "/", "%"]) {
            let right = self.term_unary(depth)?;
            left = self.operation(op, vec![left, right])?;
        }
        Ok(left)
    }

    /// `-x` of a value that is not a number's or a duration's literal (those are negative
    /// literals), or a value.
    fn term_unary(&mut self, depth: usize) -> Result<Term, CqlError> {
        let negated_literal = match self.peek_at(1) {
            Some(Tok::Number(_) | Tok::Duration(_)) => true,
            Some(Tok::Word(w)) => {
                matches!(w.to_ascii_lowercase().as_str(), "nan" | "infinity") || Duration::is_iso(w)
            }
            _ => false,
        };
        if matches!(self.peek(), Some(Tok::Sym("-"))) && !negated_literal {
            self.pos += 1;
            let x = self.term_hinted(depth)?;
            return self.operation(NEGATION, vec![x]);
        }
        self.term_hinted(depth)
    }

    /// `(type) value`, or a value.
    fn term_hinted(&mut self, depth: usize) -> Result<Term, CqlError> {
        if depth > MAX_NESTING {
            return Err(self.unexpected("a less deeply nested value"));
        }
        if let Some(ty) = self.type_hint(depth) {
            let x = self.term_hinted(depth + 1)?;
            return Ok(Term::Literal(Literal::Hint(ty, Box::new(literal_of(x)))));
        }
        self.simple_term_at(depth)
    }

    /// The type of a `(type)` hint starting here, consumed; nothing (and nothing consumed)
    /// where the parenthesis opens a tuple or a parenthesized value instead.
    pub(super) fn type_hint(&mut self, depth: usize) -> Option<CqlType> {
        let Some(Tok::Sym("(")) = self.peek() else {
            return None;
        };
        let Some(Tok::Word(w)) = self.peek_at(1) else {
            return None;
        };
        let w = w.to_ascii_lowercase();
        let composite = ["list", "set", "map", "frozen", "tuple", "vector"];
        if CqlType::scalar(&w).is_none() && !composite.contains(&w.as_str()) {
            return None;
        }
        let start = self.pos;
        self.pos += 1;
        match self.cql_type(depth + 1) {
            Ok(ty) if self.eat_sym(")") && self.starts_term(0) => Some(ty),
            _ => {
                self.pos = start;
                None
            }
        }
    }

    /// The operator's function named here (one of `symbols`), consumed, when a value follows
    /// it: `SET l = [1] + l` adds a column, not a value.
    fn term_operator(&mut self, symbols: &[&str]) -> Option<&'static str> {
        let Some(Tok::Sym(s)) = self.peek() else {
            return None;
        };
        if !symbols.contains(s) || !self.starts_term(1) {
            return None;
        }
        let name = OPERATORS
            .iter()
            .find(|(_, sym)| sym == s)
            .map(|(n, _)| *n)?;
        self.pos += 1;
        Some(name)
    }

    /// Whether the token `ahead` of the current one starts a value.
    fn starts_term(&self, ahead: usize) -> bool {
        match self.peek_at(ahead) {
            Some(
                Tok::Number(_)
                | Tok::Str(_)
                | Tok::Hex(_)
                | Tok::Uuid(_)
                | Tok::Duration(_)
                | Tok::Question
                | Tok::Named(_),
            ) => true,
            Some(Tok::Sym(s)) => matches!(*s, "(" | "[" | "{" | "-"),
            Some(Tok::Word(w)) => {
                matches!(
                    w.to_ascii_lowercase().as_str(),
                    "true" | "false" | "null" | "nan" | "infinity"
                ) || Duration::is_iso(w)
                    || matches!(self.peek_at(ahead + 1), Some(Tok::Sym("(" | ".")))
            }
            _ => false,
        }
    }

    /// The call of an operator's function on these values.
    fn operation(&mut self, name: &str, args: Vec<Term>) -> Result<Term, CqlError> {
        self.operations += 1;
        if self.operations > MAX_OPERATIONS {
            return Err(self.unexpected(&format!("at most {MAX_OPERATIONS} operations in a value")));
        }
        let args = args.into_iter().map(literal_of).collect();
        Ok(Term::Literal(Literal::Call(name.to_string(), args)))
    }
}

/// A value as an operand: a bind marker becomes a marker among a call's arguments.
pub(super) fn literal_of(t: Term) -> Literal {
    match t {
        Term::Literal(l) => l,
        Term::Bind(Bind::Positional(i)) => Literal::Marker(i, None),
        Term::Bind(Bind::Named(i, n)) => Literal::Marker(i, Some(n)),
    }
}
