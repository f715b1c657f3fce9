//! `token(…)` as a selector: of the partition key's columns (each row's token), or, as in
//! Cassandra 5, of values, one per partition key column (`token(1, 'a')`, the token of the key
//! they make). Must not touch: other selectors (`selection.rs`).

use super::super::assemble::Resolved;
use super::super::ast::Selector;
use super::super::error::CqlError;
use super::super::functions;
use super::super::types::{CqlType, Literal};
use super::{Builder, Expr};

impl Builder<'_> {
    /// `token(k…)`: the partition key's columns, in order.
    pub(super) fn token(&mut self, args: &[Selector]) -> Result<(Expr, CqlType), CqlError> {
        let pk: Vec<&str> = self
            .t
            .partition_key
            .iter()
            .map(|&i| self.t.columns[i].name.as_str())
            .collect();
        let named: Vec<Option<&str>> = args
            .iter()
            .map(|a| match a {
                Selector::Column(c) => Some(c.as_str()),
                _ => None,
            })
            .collect();
        let f = functions::token(self.partitioner);
        // Cassandra 5's `token(1, 'a')`: the token of a key given as values, one per column.
        if let Some(key) = self.literal_key(args)? {
            return Ok((
                Expr::Call(f.native, vec![Expr::Const(Some(key))]),
                f.returns,
            ));
        }
        if args.len() != pk.len() {
            return Err(CqlError::invalid(format!(
                "Invalid number of arguments in call to function system.token: {} required but {} provided",
                pk.len(),
                args.len()
            )));
        }
        // Cassandra types each argument against its key column's type.
        for (at, (arg, &i)) in named.iter().zip(&self.t.partition_key).enumerate() {
            let Some(c) = arg else { continue };
            let (_, d) = self.t.column(c)?;
            let want = &self.t.columns[i].ty;
            if d.ty != *want {
                return Err(CqlError::invalid(format!(
                    "Type error: {c} cannot be passed as argument {at} of function system.token of type {want}"
                )));
            }
        }
        if named.iter().copied().ne(pk.iter().map(|c| Some(*c))) {
            return Err(CqlError::invalid(format!(
                "Invalid call to function system.token: it takes the partition key columns in order (token({}))",
                pk.join(", ")
            )));
        }
        let key = self.input(Resolved::RowKey);
        Ok((Expr::Call(f.native, vec![key]), f.returns))
    }

    /// The row key `token(…)`'s arguments give when they are a literal for each partition key
    /// column, each of its column's type; `None` when they are not all literals.
    fn literal_key(&self, args: &[Selector]) -> Result<Option<Vec<u8>>, CqlError> {
        let t = self.t;
        let literals: Option<Vec<&Literal>> = args
            .iter()
            .map(|a| match a {
                Selector::Literal(l) if !l.has_call() => Some(l),
                _ => None,
            })
            .collect();
        let Some(literals) = literals.filter(|l| l.len() == t.partition_key.len()) else {
            return Ok(None);
        };
        let mut parts = Vec::with_capacity(literals.len());
        for (lit, &i) in literals.iter().zip(&t.partition_key) {
            let c = &t.columns[i];
            let value = c.ty.encode(lit, &c.name)?.ok_or_else(|| {
                CqlError::invalid("Invalid null value for partition key part in token()")
            })?;
            parts.push(value);
        }
        let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        t.row_key(&parts).map(Some)
    }
}
