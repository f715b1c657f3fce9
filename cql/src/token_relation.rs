//! `token(k1, k2) op token(v1, v2)` and `token(k1, k2) op <token>` in a `WHERE`: the span of
//! the ring a scan keeps. A key's token bound keeps its own partition on the inclusive side
//! and skips it on the strict one; a number is a token of the table's partitioner. What a
//! span does to a scan is `key_span.rs`'s.

use super::ast::Term;
use super::bounds::token_bound;
use super::error::CqlError;
use super::key_span::KeySpan;
use super::session::Session;
use super::table::Table;
use super::types::{Literal, Op};
use supercolumn::query::RangeBound;

impl Session<'_> {
    /// Narrows a scan by `token(pk) op token(key)` (`of_key`, a term per key column) or
    /// `token(pk) op <token>` (one term).
    pub(super) fn token_restriction(
        &self,
        t: &Table,
        cols: &[String],
        op: Op,
        terms: &[Term],
        of_key: bool,
        span: &mut KeySpan,
    ) -> Result<(), CqlError> {
        let pk: Vec<&str> = t
            .partition_key
            .iter()
            .map(|&i| t.columns[i].name.as_str())
            .collect();
        let mut named: Vec<&str> = cols.iter().map(String::as_str).collect();
        named.sort_unstable();
        let mut all = pk.clone();
        all.sort_unstable();
        if named != all {
            return Err(CqlError::invalid(
                "The token() function must be applied to all partition key components or none of them",
            ));
        }
        if cols.iter().map(String::as_str).ne(pk.iter().copied()) {
            return Err(CqlError::invalid(format!(
                "The token function arguments must be in the partition key order: {}",
                pk.join(", ")
            )));
        }
        let (bound, key) = if of_key {
            let key = self.key_of(t, terms)?;
            (RangeBound::Key(key.clone()), Some(key))
        } else {
            let [term] = terms else {
                return Err(CqlError::invalid("token() compares with one token"));
            };
            let text = match term {
                Term::Literal(Literal::Number(n)) => n.clone(),
                _ => self.integer(term, "a token")?.to_string(),
            };
            let (up, strict) = match op {
                Op::Gt | Op::Ge => (true, op == Op::Gt),
                _ => (false, op == Op::Lt),
            };
            match token_bound(self.db.partitioner(), &text, up, strict)? {
                Some(inclusive) => (RangeBound::Token(inclusive), None),
                None => {
                    span.empty = true;
                    return Ok(());
                }
            }
        };
        match op {
            Op::Gt | Op::Ge => {
                span.start = bound;
                span.skip_start = if op == Op::Gt { key } else { None };
            }
            Op::Lt | Op::Le => {
                span.end = bound;
                span.skip_end = if op == Op::Lt { key } else { None };
            }
            Op::Eq => {
                span.start = bound.clone();
                span.end = bound;
            }
            Op::Ne | Op::Contains | Op::ContainsKey | Op::In => {
                return Err(CqlError::invalid("token() takes =, <, <=, > and >= here"))
            }
        }
        Ok(())
    }

    /// The row key `token(v1, v2)` names: a value per partition key column, none null.
    fn key_of(&self, t: &Table, terms: &[Term]) -> Result<Vec<u8>, CqlError> {
        if terms.len() != t.partition_key.len() {
            return Err(CqlError::invalid(format!(
                "Invalid number of arguments in call to function system.token: {} required but {} provided",
                t.partition_key.len(),
                terms.len()
            )));
        }
        let mut values = Vec::with_capacity(terms.len());
        for (&i, term) in t.partition_key.iter().zip(terms) {
            let c = &t.columns[i];
            values.push(
                self.value(&c.ty, term, &c.name)?
                    .ok_or_else(|| CqlError::invalid("token() of null"))?,
            );
        }
        let parts: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
        t.row_key(&parts)
    }
}
