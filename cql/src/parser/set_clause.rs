//! The `SET` clause of an `UPDATE`: its assignments (a column set whole, an element, a
//! field, an addition, a removal, a prepend), and Cassandra's parser's refusal of a column
//! set twice in ways that cannot stand together. What each assignment does is the writer's.

use super::super::ast::Assignment;
use super::super::error::CqlError;
use super::super::lexer::Tok;
use super::Parser;

impl Parser {
    /// `a = …, b = …`: the assignments, in statement order.
    pub(super) fn set_clause(&mut self) -> Result<Vec<Assignment>, CqlError> {
        let mut assignments = vec![self.assignment()?];
        while self.eat_sym(",") {
            let (line, col) = self.position();
            let next = self.assignment()?;
            if assignments.iter().any(|a| !compatible(a, &next)) {
                return Err(CqlError::syntax(
                    line,
                    col,
                    format!("Multiple incompatible setting of column {}", next.column()),
                ));
            }
            assignments.push(next);
        }
        Ok(assignments)
    }

    fn assignment(&mut self) -> Result<Assignment, CqlError> {
        let col = self.ident()?;
        if self.eat_sym("[") {
            let k = self.term()?;
            self.sym("]")?;
            self.sym("=")?;
            return Ok(Assignment::SetElement(col, k, self.term()?));
        }
        if self.eat_sym(".") {
            let field = self.ident()?;
            self.sym("=")?;
            return Ok(Assignment::SetField(col, field, self.term()?));
        }
        // Cassandra's shorthands: `c += v` is `c = c + v`, `c -= v` is `c = c - v`.
        if matches!(self.peek_at(1), Some(Tok::Sym("="))) {
            if self.eat_sym("+") {
                self.sym("=")?;
                return Ok(Assignment::Add(col, self.term()?));
            }
            if self.eat_sym("-") {
                self.sym("=")?;
                return Ok(Assignment::Discard(col, self.term()?));
            }
        }
        self.sym("=")?;
        let same_col = |p: &Parser, n: usize| match p.peek_at(n) {
            Some(Tok::Word(w)) => w.to_lowercase() == col,
            Some(Tok::Quoted(q)) => *q == col,
            _ => false,
        };
        if same_col(self, 0) && matches!(self.peek_at(1), Some(Tok::Sym("+" | "-"))) {
            let add = matches!(self.peek_at(1), Some(Tok::Sym("+")));
            self.pos += 2;
            let t = self.term()?;
            return Ok(if add {
                Assignment::Add(col, t)
            } else {
                Assignment::Discard(col, t)
            });
        }
        let value = self.term()?;
        if self.eat_sym("+") {
            let other = self.ident()?;
            if other != col {
                return Err(self.unexpected(&format!("{col} (a list prepends to itself)")));
            }
            return Ok(Assignment::Prepend(col, value));
        }
        Ok(Assignment::Set(col, value))
    }
}

/// Whether two assignments may stand together in one `SET` (Cassandra's rules): a column set
/// whole is set once, with nothing else; its elements, additions and removals go together; a
/// user type's fields each once.
fn compatible(a: &Assignment, b: &Assignment) -> bool {
    if a.column() != b.column() {
        return true;
    }
    match (a, b) {
        (Assignment::Set(..), _) | (_, Assignment::Set(..)) => false,
        (Assignment::SetField(_, f, _), Assignment::SetField(_, g, _)) => f != g,
        _ => true,
    }
}
