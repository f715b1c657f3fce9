//! Cassandra's words for a literal that a type does not take: a constant of the wrong kind
//! (`Invalid STRING constant (a) for "i" of type int`), an element of a collection or vector
//! or tuple literal (`Invalid list literal for l: value 'a' is not of type int`), a null
//! element, and
//! which numbers are FLOAT constants. Only the wording; encoding is `mod.rs`'s.

use super::literal::describe;
use super::{CqlType, Literal};
use crate::error::CqlError;

/// Where a literal stands inside a collection, vector or tuple literal.
#[derive(Clone, Copy)]
pub enum Within<'f> {
    /// In a collection or vector: the literal's kind (`list`, `set`, `map`, `vector`) and the
    /// element's role in it (`value`, `key`).
    Element(&'static str, &'static str),
    /// A tuple's component, by position.
    Component(usize),
    /// A user type's field, by name.
    Field(&'f str),
}

impl Within<'_> {
    pub fn new(kind: &'static str, role: &'static str) -> Self {
        Within::Element(kind, role)
    }
}

/// Whether a number as typed is what Cassandra's lexer calls a FLOAT (a fraction, an
/// exponent, `NaN` or `Infinity`) rather than an INTEGER.
pub(super) fn is_float_constant(n: &str) -> bool {
    let lower = n.to_ascii_lowercase();
    n.contains(['.', 'e', 'E']) || lower.contains("nan") || lower.contains("infinity")
}

impl CqlType {
    /// Whether this type takes whole numbers only (an INTEGER constant, not a FLOAT one).
    pub(super) fn integral(&self) -> bool {
        matches!(
            self,
            CqlType::Int
                | CqlType::Bigint
                | CqlType::Smallint
                | CqlType::Tinyint
                | CqlType::Varint
                | CqlType::Counter
                | CqlType::Timestamp
                | CqlType::Date
                | CqlType::Time
        )
    }
}

/// Cassandra's words for a null element of a collection literal.
pub(super) fn null_inside() -> CqlError {
    CqlError::invalid("null is not supported inside collections")
}

/// Cassandra's words for a literal of a kind that type `ty` (of `column`) does not take: an
/// element of a collection's (`Invalid list literal for l: value 'a' is not of type int`), a
/// constant's (`Invalid STRING constant (a) for "i" of type int`), a collection's, tuple's or
/// user type's (`Invalid list literal for i of type int`).
pub(super) fn mismatch(
    ty: &CqlType,
    lit: &Literal,
    column: &str,
    within: Option<Within<'_>>,
) -> String {
    match within {
        Some(Within::Element(kind, role)) => {
            return format!(
                "Invalid {kind} literal for {column}: {role} {} is not of type {ty}",
                lit.text()
            )
        }
        Some(Within::Component(i)) => {
            return format!("Invalid tuple literal for {column}: component {i} is not of type {ty}")
        }
        Some(Within::Field(f)) => {
            return format!("Invalid user type literal for {column}: field {f} is not of type {ty}")
        }
        None => {}
    }
    let constant = match lit {
        Literal::Str(s) => Some(("STRING", s.clone())),
        Literal::Number(n) if is_float_constant(n) => Some(("FLOAT", n.clone())),
        Literal::Number(n) => Some(("INTEGER", n.clone())),
        Literal::Hex(_) => Some(("HEX", lit.text())),
        Literal::Uuid(u) => Some(("UUID", u.clone())),
        Literal::Bool(b) => Some(("BOOLEAN", b.to_string())),
        Literal::Duration(d) => Some(("DURATION", d.clone())),
        _ => None,
    };
    if let Some((kind, raw)) = constant {
        return format!("Invalid {kind} constant ({raw}) for \"{column}\" of type {ty}");
    }
    let kind = match lit {
        Literal::List(_) => "list",
        Literal::Set(_) => "set",
        Literal::Map(_) => "map",
        Literal::Tuple(_) => "tuple type",
        Literal::Udt(_) => "user type",
        other => return format!("invalid {} for {column} of type {ty}", describe(other)),
    };
    format!("Invalid {kind} literal for {column} of type {ty}")
}
