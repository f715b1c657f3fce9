//! The markers inside a literal: a function's or operator's arguments (`intAsBlob(?)`,
//! `? + 1`), a type hint's (`(int) ?`), and the elements of a collection, vector, tuple or user
//! type literal (`[1, ?]`, `{?: ?}`), each typed and named as Cassandra types and names them.
//! Must not touch: the clauses that hold the literals (`binds.rs`).

use super::super::ast::Term;
use super::super::functions::chosen;
use super::super::types::{CqlType, Literal};
use super::{bind_of, put, Out};

/// Records the markers among the arguments of the function calls and operations in `lit`,
/// whose value goes to a `receiver` if known: each takes its parameter's type and Cassandra's
/// name for it, `arg<i>(system.<function>)` (`arg0(system._add)` in `? + 1`), or a type
/// hint's, `(int)?`. A call that names no one function leaves them unknown (the call is
/// refused when it runs). A marker standing as an element of a collection, vector, tuple or
/// user type literal takes the element's type and Cassandra's name for it (`value(l)`,
/// `key(m)`, `t[1]`, `u.f`), `spec` being the name of the value the literal is.
pub(super) fn call_markers(out: &mut Out, lit: &Literal, receiver: Option<&CqlType>) {
    call_markers_of(out, lit, receiver, "")
}

pub(super) fn call_markers_of(
    out: &mut Out,
    lit: &Literal,
    receiver: Option<&CqlType>,
    spec: &str,
) {
    let receiver = match receiver {
        Some(CqlType::Frozen(inner)) => Some(inner.as_ref()),
        r => r,
    };
    let (name, args) = match lit {
        Literal::Call(name, args) => (name, args),
        Literal::Marker(at, given) => {
            if let Some(ty) = receiver.filter(|_| !spec.is_empty()) {
                put(out, &Term::Bind(bind_of(*at, given)), spec, ty.clone());
            }
            return;
        }
        Literal::Hint(t, inner) => {
            if let Literal::Marker(at, given) = inner.as_ref() {
                put(
                    out,
                    &Term::Bind(bind_of(*at, given)),
                    &lit.text(),
                    t.clone(),
                );
            } else {
                call_markers(out, inner, Some(t));
            }
            return;
        }
        _ => return element_markers(out, lit, receiver, spec),
    };
    let Ok(chosen) = chosen(name, args, receiver) else {
        return;
    };
    for (i, (arg, param)) in args.iter().zip(&chosen.params).enumerate() {
        match arg {
            Literal::Marker(at, given) => {
                let spec = format!("arg{i}(system.{})", name.to_ascii_lowercase());
                put(out, &Term::Bind(bind_of(*at, given)), &spec, param.clone());
            }
            other => call_markers(out, other, Some(param)),
        }
    }
}

/// The markers among the elements of a collection, vector, tuple or user type literal `lit`
/// of type `receiver`, named after `spec`.
fn element_markers(out: &mut Out, lit: &Literal, receiver: Option<&CqlType>, spec: &str) {
    match lit {
        Literal::List(items) | Literal::Set(items) | Literal::Tuple(items) => {
            for (i, item) in items.iter().enumerate() {
                match receiver {
                    Some(CqlType::List(e) | CqlType::Set(e) | CqlType::Vector(e, _)) => {
                        call_markers_of(out, item, Some(e), &format!("value({spec})"))
                    }
                    Some(CqlType::Tuple(ts)) => {
                        call_markers_of(out, item, ts.get(i), &format!("{spec}[{i}]"))
                    }
                    // A parenthesized operand, `(? + 1)`, stands where its receiver's value
                    // does.
                    r if items.len() == 1 => call_markers_of(out, item, r, spec),
                    _ => call_markers(out, item, None),
                }
            }
        }
        Literal::Map(pairs) => {
            let (k, v) = match receiver {
                Some(CqlType::Map(k, v)) => (Some(k.as_ref()), Some(v.as_ref())),
                _ => (None, None),
            };
            for (a, b) in pairs {
                call_markers_of(out, a, k, &format!("key({spec})"));
                call_markers_of(out, b, v, &format!("value({spec})"));
            }
        }
        Literal::Udt(fields) => {
            for (f, v) in fields {
                let ty = match receiver {
                    Some(CqlType::Udt(u)) => u.field(f).map(|(_, t)| t),
                    _ => None,
                };
                call_markers_of(out, v, ty, &format!("{spec}.{f}"));
            }
        }
        _ => {}
    }
}
