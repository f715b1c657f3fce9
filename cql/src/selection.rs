//! What a `SELECT`'s selectors compute, once they are more than columns: function calls,
//! `CAST`, arithmetic and aggregates, resolved against the table into expressions over the
//! values each row yields (its columns, write times, TTLs, row key), with their result types
//! and Cassandra's refusals; and their evaluation, per row, or per group of rows for
//! aggregates (a plain selector beside an aggregate takes the group's first row, as
//! Cassandra's does). Reading and grouping rows is `collect.rs`'s; this file reads nothing.

use super::assemble::Resolved;
use super::ast::Selector;
use super::error::CqlError;
use super::functions::aggregate::{self, Aggregate, State};
use super::functions::{self, call, element, Arg, Context, Native, Similarity};
use super::table::{ColumnDef, Kind, Table};
use super::types::{CqlType, Literal};
use supercolumn::model::partitioner::Partitioner;

mod operators;
mod times;
mod token;

/// A value computed from a row's inputs.
pub(super) enum Expr {
    /// One of the row's inputs.
    Input(usize),
    /// A literal operand, encoded.
    Const(Option<Vec<u8>>),
    /// The value bound to a marker, of this type.
    Bind(usize, CqlType),
    Call(Native, Vec<Expr>),
    /// An aggregate's result over the group.
    Aggregate(usize),
}

/// The selectors of a `SELECT` that computes.
pub(super) struct Selection {
    /// What each row yields, in the order `assemble::project` fills them.
    pub inputs: Vec<Resolved>,
    /// One per output column.
    pub outputs: Vec<Expr>,
    /// The aggregates, each with its argument (`None`: `count(*)`).
    pub aggregates: Vec<(Aggregate, Option<Expr>)>,
}

/// A group's aggregates as rows are added, and its first row's inputs.
pub(super) struct Group {
    states: Vec<State>,
    first: Option<Vec<Option<Vec<u8>>>>,
}

/// Row values: one per input or output.
type Values = Vec<Option<Vec<u8>>>;

/// Whether every selector is a column, or a `WRITETIME` or a `TTL` of a column of one cell:
/// no selection needed.
pub(super) fn plain(t: &Table, selectors: &[Selector]) -> bool {
    selectors.iter().all(|s| match s {
        Selector::Column(_) => true,
        Selector::WriteTime(c, _) | Selector::Ttl(c) => {
            t.column(c).map_or(true, |(_, d)| !d.ty.is_multi_cell())
        }
        _ => false,
    })
}

/// The name Cassandra's refusals give a write-time or TTL selector: `writeTime` (Cassandra 4's
/// spelling), `maxwritetime`, `minwritetime` or `ttl`.
pub(super) fn function_word(sel: &Selector) -> &'static str {
    match sel {
        Selector::WriteTime(_, "writetime") => "writeTime",
        Selector::WriteTime(_, f) => f,
        _ => "ttl",
    }
}

/// `writeTime`, `ttl` and their kin take a regular column that is not a counter (Cassandra's
/// messages); of a multi-cell column, `times.rs` selects each cell's.
pub(super) fn selection_function(d: &ColumnDef, f: &str) -> Result<(), CqlError> {
    let c = &d.name;
    if d.kind != Kind::Regular {
        return Err(CqlError::invalid(format!(
            "Cannot use selection function {f} on PRIMARY KEY part {c}"
        )));
    }
    if d.ty == CqlType::Counter {
        return Err(CqlError::invalid(format!(
            "Cannot use selection function {f} on counter column {c}"
        )));
    }
    Ok(())
}

/// Resolves `selectors` against `t`: the selection, and each output's type.
pub(super) fn resolve(
    t: &Table,
    selectors: &[Selector],
    partitioner: Partitioner,
) -> Result<(Selection, Vec<CqlType>), CqlError> {
    let mut b = Builder {
        t,
        partitioner,
        s: Selection {
            inputs: Vec::new(),
            outputs: Vec::new(),
            aggregates: Vec::new(),
        },
    };
    let mut types = Vec::with_capacity(selectors.len());
    for sel in selectors {
        let (e, ty) = b.expr(sel, false)?;
        b.s.outputs.push(e);
        types.push(ty);
    }
    Ok((b.s, types))
}

struct Builder<'t> {
    t: &'t Table,
    partitioner: Partitioner,
    s: Selection,
}

impl Builder<'_> {
    fn input(&mut self, r: Resolved) -> Expr {
        self.s.inputs.push(r);
        Expr::Input(self.s.inputs.len() - 1)
    }

    // Long because it is one match with an arm per kind of selector.
    fn expr(&mut self, sel: &Selector, in_aggregate: bool) -> Result<(Expr, CqlType), CqlError> {
        Ok(match sel {
            Selector::Column(c) => {
                let (i, d) = self.t.column(c)?;
                let r = match d.kind {
                    Kind::PartitionKey(k) => Resolved::PartitionKey(k),
                    Kind::Clustering(k) => Resolved::Clustering(k),
                    Kind::Regular => Resolved::Value(i, false),
                };
                (self.input(r), d.ty.clone())
            }
            Selector::WriteTime(c, f) if self.t.column(c)?.1.ty.is_multi_cell() => {
                self.time_of(&Selector::Column(c.clone()), f)?
            }
            Selector::Ttl(c) if self.t.column(c)?.1.ty.is_multi_cell() => {
                self.time_of(&Selector::Column(c.clone()), "ttl")?
            }
            Selector::TimeOf(x, f) => self.time_of(x, f)?,
            Selector::WriteTime(c, _) | Selector::Ttl(c) => {
                let (i, d) = self.t.column(c)?;
                let wt = matches!(sel, Selector::WriteTime(..));
                selection_function(d, function_word(sel))?;
                if wt {
                    (self.input(Resolved::WriteTime(i)), CqlType::Bigint)
                } else {
                    (self.input(Resolved::Ttl(i)), CqlType::Int)
                }
            }
            Selector::Count => self.aggregate("count", None, in_aggregate)?,
            Selector::Call(name, args) => self.call(name, args, in_aggregate)?,
            Selector::Cast(x, to) => {
                let (e, from) = self.expr(x, in_aggregate)?;
                let f = functions::cast(&from, to)?;
                (Expr::Call(f.native, vec![e]), f.returns)
            }
            Selector::Arith(op, l, r) => self.arith(*op, l, r, in_aggregate)?,
            Selector::Negate(x) => self.operation(None, &[x], in_aggregate)?,
            Selector::Element(x, _) | Selector::Slice(x, ..) => self.element(sel, x, in_aggregate)?,
            Selector::Field(x, name) => {
                let (e, ty) = self.expr(x, in_aggregate)?;
                let u = match &ty {
                    CqlType::Frozen(inner) => inner.as_ref(),
                    t => t,
                };
                let CqlType::Udt(u) = u else {
                    return Err(CqlError::invalid(format!(
                        "Invalid field selection: {} of type {ty} is not a user type",
                        x.text()
                    )));
                };
                let (i, field) = u.field(name).ok_or_else(|| {
                    CqlError::invalid(format!("{} of type {ty} has no field {name}", x.text()))
                })?;
                let field = field.clone();
                (Expr::Call(Native::Field(ty.clone(), i), vec![e]), field)
            }
            // `(int) 1`, `(text) ?`: a literal or marker whose type its hint gives.
            Selector::Literal(Literal::Hint(t, lit)) => (literal(lit, t, &sel.text())?, t.clone()),
            Selector::Literal(l) => {
                return Err(CqlError::invalid(format!(
                    "Cannot infer type for term {} in selection clause (try using a cast to force a type)",
                    l.text()
                )))
            }
        })
    }

    fn call(
        &mut self,
        name: &str,
        args: &[Selector],
        in_aggregate: bool,
    ) -> Result<(Expr, CqlType), CqlError> {
        let lower = name.to_ascii_lowercase();
        if lower == "token" {
            return self.token(args);
        }
        if let Some(kind) = lower.strip_prefix("similarity_") {
            return self.similarity(kind, args, in_aggregate);
        }
        if super::functions::unsnaked(&lower) == "tojson" {
            let [arg] = args else {
                return Err(CqlError::invalid(format!(
                    "toJson() takes one argument, not {}",
                    args.len()
                )));
            };
            let (e, ty) = self.expr(arg, in_aggregate)?;
            return Ok((Expr::Call(Native::ToJson(ty), vec![e]), CqlType::Text));
        }
        if matches!(lower.as_str(), "count" | "min" | "max" | "sum" | "avg") {
            let [arg] = args else {
                return Err(CqlError::invalid(format!(
                    "Invalid number of arguments in call to function system.{lower}: 1 required but {} provided",
                    args.len()
                )));
            };
            return self.aggregate(&lower, Some(arg), in_aggregate);
        }
        if !functions::exists(&lower) {
            return Err(CqlError::invalid(format!("Unknown function '{lower}'")));
        }
        let mut exprs = Vec::with_capacity(args.len());
        for a in args {
            exprs.push(match a {
                Selector::Literal(_) => None,
                other => Some(self.expr(other, in_aggregate)?),
            });
        }
        let known: Vec<Arg<'_>> = args
            .iter()
            .zip(&exprs)
            .map(|(a, e)| match (a, e) {
                (Selector::Literal(l), _) => Arg::Literal(l),
                (_, Some((_, ty))) => Arg::Typed(ty.clone()),
                (_, None) => Arg::Literal(&Literal::Null),
            })
            .collect();
        let f = functions::choose(&lower, &known)?;
        let mut inputs = Vec::with_capacity(args.len());
        for ((a, e), p) in args.iter().zip(exprs).zip(&f.params) {
            inputs.push(match (a, e) {
                (_, Some((e, _))) => e,
                (Selector::Literal(l), None) => literal(l, p, &lower)?,
                (_, None) => Expr::Const(None),
            });
        }
        Ok((Expr::Call(f.native, inputs), f.returns))
    }

    /// `c[key]` or `c[from..to]` of a map or set.
    fn element(
        &mut self,
        sel: &Selector,
        x: &Selector,
        in_aggregate: bool,
    ) -> Result<(Expr, CqlType), CqlError> {
        let (e, ty) = self.expr(x, in_aggregate)?;
        let what = match sel {
            Selector::Slice(..) => "Slice",
            _ => "Element",
        };
        let (k, v) = element::key_and_value(&ty, &x.text(), what)?;
        let key =
            |l: &Literal| -> Result<Expr, CqlError> { Ok(Expr::Const(k.encode(l, &x.text())?)) };
        Ok(match sel {
            Selector::Element(_, l) => {
                (Expr::Call(Native::Element(ty.clone()), vec![e, key(l)?]), v)
            }
            Selector::Slice(_, a, b) => {
                let end = |l: &Option<Literal>| l.as_ref().map_or(Ok(Expr::Const(None)), key);
                let args = vec![e, end(a)?, end(b)?];
                let whole = match &ty {
                    CqlType::Frozen(t) => (**t).clone(),
                    t => t.clone(),
                };
                (Expr::Call(Native::Slice(ty.clone()), args), whole)
            }
            _ => return Err(CqlError::invalid("not an element selection")),
        })
    }

    /// `similarity_cosine|euclidean|dot_product(a, b)` of two `vector<float, n>` (one may be a
    /// literal, taking the other's type): a float, as Cassandra 5's.
    fn similarity(
        &mut self,
        kind: &str,
        args: &[Selector],
        in_aggregate: bool,
    ) -> Result<(Expr, CqlType), CqlError> {
        let name = format!("similarity_{kind}");
        let f = match kind {
            "cosine" => Native::Similarity(Similarity::Cosine),
            "euclidean" => Native::Similarity(Similarity::Euclidean),
            "dot_product" => Native::Similarity(Similarity::DotProduct),
            _ => return Err(CqlError::invalid(format!("Unknown function '{name}'"))),
        };
        let [a, b] = args else {
            return Err(CqlError::invalid(format!(
                "Invalid number of arguments in call to function system.{name}: 2 required but {} provided",
                args.len()
            )));
        };
        let (ea, eb, ty) = match (a, b) {
            (Selector::Literal(_), Selector::Literal(_)) => {
                return Err(CqlError::invalid(format!(
                    "{name}() needs a vector column among its arguments"
                )))
            }
            (Selector::Literal(l), other) | (other, Selector::Literal(l)) => {
                let (e, ty) = self.expr(other, in_aggregate)?;
                (e, Expr::Const(ty.encode(l, &name)?), ty)
            }
            (a, b) => {
                let (ea, ta) = self.expr(a, in_aggregate)?;
                let (eb, tb) = self.expr(b, in_aggregate)?;
                if ta != tb {
                    return Err(CqlError::invalid(format!(
                        "{name}() compares two vectors of one type, not {ta} and {tb}"
                    )));
                }
                (ea, eb, ta)
            }
        };
        if !matches!(&ty, CqlType::Vector(e, _) if **e == CqlType::Float) {
            return Err(CqlError::invalid(format!(
                "Function system.{name} requires a float vector argument, but found argument of type {ty}"
            )));
        }
        Ok((Expr::Call(f, vec![ea, eb]), CqlType::Float))
    }

    fn aggregate(
        &mut self,
        name: &str,
        arg: Option<&Selector>,
        in_aggregate: bool,
    ) -> Result<(Expr, CqlType), CqlError> {
        if in_aggregate {
            return Err(CqlError::invalid(
                "aggregate functions cannot be used as arguments of aggregate functions",
            ));
        }
        let (arg, ty) = match arg {
            Some(a) => {
                let (e, ty) = self.expr(a, true)?;
                (Some(e), Some(ty))
            }
            None => (None, None),
        };
        let Some(agg) = aggregate::choose(name, ty.as_ref())? else {
            return Err(CqlError::invalid(format!("Unknown function '{name}'")));
        };
        let returns = agg.returns();
        self.s.aggregates.push((agg, arg));
        Ok((Expr::Aggregate(self.s.aggregates.len() - 1), returns))
    }
}

impl Selection {
    /// Whether it aggregates rows into one per group.
    pub(super) fn aggregating(&self) -> bool {
        !self.aggregates.is_empty()
    }

    /// One row's outputs.
    pub(super) fn row(
        &self,
        inputs: &[Option<Vec<u8>>],
        cx: &Context<'_>,
    ) -> Result<Values, CqlError> {
        self.outputs
            .iter()
            .map(|e| eval(e, inputs, &[], cx))
            .collect()
    }

    /// A group with no row yet.
    pub(super) fn group(&self) -> Group {
        Group {
            states: self.aggregates.iter().map(|(a, _)| a.start()).collect(),
            first: None,
        }
    }

    /// Adds a row's inputs to a group.
    pub(super) fn add(
        &self,
        g: &mut Group,
        inputs: Values,
        cx: &Context<'_>,
    ) -> Result<(), CqlError> {
        for ((agg, arg), state) in self.aggregates.iter().zip(&mut g.states) {
            match arg {
                None => agg.add(state, Some(&[]))?,
                Some(e) => agg.add(state, eval(e, &inputs, &[], cx)?.as_deref())?,
            }
        }
        if g.first.is_none() {
            g.first = Some(inputs);
        }
        Ok(())
    }

    /// A group's output row.
    pub(super) fn finish(&self, g: &Group, cx: &Context<'_>) -> Result<Values, CqlError> {
        let results: Values = self
            .aggregates
            .iter()
            .zip(&g.states)
            .map(|((a, _), s)| a.result(s))
            .collect();
        let none = vec![None; self.inputs.len()];
        let first = g.first.as_deref().unwrap_or(&none);
        self.outputs
            .iter()
            .map(|e| eval(e, first, &results, cx))
            .collect()
    }
}

/// A literal argument or operand where a `ty` goes: a marker reads its bound value, a hinted
/// literal its hint's type; others are encoded now (`what` names them in errors).
fn literal(l: &Literal, ty: &CqlType, what: &str) -> Result<Expr, CqlError> {
    Ok(match l {
        Literal::Marker(i, _) => Expr::Bind(*i, ty.clone()),
        Literal::Hint(t, inner) => literal(inner, t, what)?,
        l => Expr::Const(ty.encode(l, what)?),
    })
}

fn eval(
    e: &Expr,
    inputs: &[Option<Vec<u8>>],
    aggregates: &[Option<Vec<u8>>],
    cx: &Context<'_>,
) -> Result<Option<Vec<u8>>, CqlError> {
    Ok(match e {
        Expr::Input(i) => inputs.get(*i).cloned().flatten(),
        Expr::Const(v) => v.clone(),
        Expr::Bind(i, ty) => match cx.binds.get(*i).cloned().flatten() {
            Some(v) => {
                ty.check(&v).map_err(|e| {
                    CqlError::invalid(format!("Invalid value bound to marker {i} ({ty}): {e}"))
                })?;
                Some(v)
            }
            None => None,
        },
        Expr::Aggregate(i) => aggregates.get(*i).cloned().flatten(),
        Expr::Call(f, args) => {
            let values = args
                .iter()
                .map(|a| eval(a, inputs, aggregates, cx))
                .collect::<Result<Vec<_>, _>>()?;
            call(f, &values, cx)?
        }
    })
}
