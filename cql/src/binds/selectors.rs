//! The markers of a `SELECT`'s selectors: a hinted one, `(int)?`, is a `[selection]` of the
//! hint's type (a `:name` marker keeps its name), and one given to a native function,
//! `intAsBlob(?)`, takes its parameter's type and is named `arg<i>(system.<function>)`, as
//! Cassandra names them. A marker whose type nothing gives is refused when the statement is
//! resolved (`selection.rs`), so it is left unknown here. Must not touch: the other clauses'
//! markers (`binds.rs`).

use super::super::ast::{Selector, Term};
use super::super::functions::{choose, Arg};
use super::super::table::Table;
use super::super::types::Literal;
use super::{bind_of, call_markers, column_type, put, Out};

/// Records the markers of `sel`, a selector of a `SELECT` on `table`.
pub(super) fn selector_markers(out: &mut Out, sel: &Selector, table: Option<&Table>) {
    match sel {
        Selector::Literal(Literal::Hint(t, inner)) => match inner.as_ref() {
            Literal::Marker(at, given) => {
                put(
                    out,
                    &Term::Bind(bind_of(*at, given)),
                    "[selection]",
                    t.clone(),
                );
            }
            other => call_markers(out, other, Some(t)),
        },
        Selector::Call(name, args) => {
            let known: Option<Vec<Arg<'_>>> = args
                .iter()
                .map(|a| match a {
                    Selector::Column(c) => Some(Arg::Typed(column_type(table, c))),
                    Selector::Literal(l) => Some(Arg::Literal(l)),
                    _ => None,
                })
                .collect();
            let chosen = known.and_then(|k| choose(name, &k).ok());
            for (i, a) in args.iter().enumerate() {
                let param = chosen.as_ref().and_then(|c| c.params.get(i));
                match (a, param) {
                    (Selector::Literal(Literal::Marker(at, given)), Some(p)) => {
                        let spec = format!("arg{i}(system.{})", name.to_ascii_lowercase());
                        put(out, &Term::Bind(bind_of(*at, given)), &spec, p.clone());
                    }
                    (other, _) => selector_markers(out, other, table),
                }
            }
        }
        Selector::Arith(_, l, r) => {
            selector_markers(out, l, table);
            selector_markers(out, r, table);
        }
        Selector::Negate(x)
        | Selector::Cast(x, _)
        | Selector::Element(x, ..)
        | Selector::Slice(x, ..)
        | Selector::Field(x, _)
        | Selector::TimeOf(x, _) => selector_markers(out, x, table),
        _ => {}
    }
}
