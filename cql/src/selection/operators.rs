//! A selector's operators (`a + 1`, `ts - 10m`, `-x`): the overload each is, chosen as
//! Cassandra chooses (`functions::resolve`, a literal operand fitting its preferred type), and
//! the expression that computes it. Must not touch: other selectors (`selection.rs`).

use super::super::ast::{Arith, Selector};
use super::super::error::CqlError;
use super::super::functions::{self, ArithOp, Operand};
use super::super::types::CqlType;
use super::{literal, Builder, Expr};

impl Builder<'_> {
    /// `l op r`; a literal operand takes the other's type.
    pub(super) fn arith(
        &mut self,
        op: Arith,
        l: &Selector,
        r: &Selector,
        in_aggregate: bool,
    ) -> Result<(Expr, CqlType), CqlError> {
        let op = match op {
            Arith::Add => ArithOp::Add,
            Arith::Sub => ArithOp::Sub,
            Arith::Mul => ArithOp::Mul,
            Arith::Div => ArithOp::Div,
            Arith::Rem => ArithOp::Rem,
        };
        self.operation(Some(op), &[l, r], in_aggregate)
    }

    /// An operator (`None`: the negation) applied to selectors, its overload chosen as
    /// Cassandra chooses it (a literal operand fits its preferred type exactly: `a + 1` of a
    /// tinyint `a` is an int).
    pub(super) fn operation(
        &mut self,
        op: Option<ArithOp>,
        sides: &[&Selector],
        in_aggregate: bool,
    ) -> Result<(Expr, CqlType), CqlError> {
        let mut exprs = Vec::with_capacity(sides.len());
        let mut operands = Vec::with_capacity(sides.len());
        for side in sides {
            if let Selector::Literal(lit) = side {
                exprs.push(None);
                operands.push(Operand::Literal(lit));
            } else {
                let (e, t) = self.expr(side, in_aggregate)?;
                exprs.push(Some(e));
                operands.push(Operand::Typed(t, side.text()));
            }
        }
        let f = functions::resolve(op, &operands, None)?;
        let mut args = Vec::with_capacity(sides.len());
        for ((e, side), p) in exprs.into_iter().zip(sides).zip(&f.params) {
            args.push(match (e, side) {
                (Some(e), _) => e,
                (None, Selector::Literal(lit)) => literal(lit, p, "operand")?,
                (None, _) => unreachable!("only a literal operand has no expression"),
            });
        }
        Ok((Expr::Call(f.native, args), f.returns))
    }
}
