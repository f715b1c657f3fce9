//! A literal as a statement writes it, before it meets a type, and how it reads back as text
//! (a result column named after a selector holding one).

use super::CqlType;

/// A literal as a statement gives it, before it meets a type.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `'text'`
    Str(String),
    /// A number as typed, with its sign.
    Number(String),
    /// `0x…`
    Hex(String),
    /// A UUID.
    Uuid(String),
    /// `true` / `false`
    Bool(bool),
    /// `null`
    Null,
    /// A duration as typed (`1h30m`, `-2d`, `P1DT2H`), its sign included.
    Duration(String),
    /// `f(args…)`: a native function's call, evaluated by the session before encoding.
    Call(String, Vec<Literal>),
    /// A value already computed (a function's result), of its type (`None`: null).
    Typed(CqlType, Option<Vec<u8>>),
    /// `[…]`
    List(Vec<Literal>),
    /// `{…}` (also `{}`, which a map takes as empty too)
    Set(Vec<Literal>),
    /// `{k: v, …}`
    Map(Vec<(Literal, Literal)>),
    /// `(a, b, …)`
    Tuple(Vec<Literal>),
    /// `{field: value, …}`: a user-defined type's value
    Udt(Vec<(String, Literal)>),
    /// A bind marker as a function's argument (`blobAsInt(?)`): its position among the
    /// statement's markers, and its name for `:name`.
    Marker(usize, Option<String>),
    /// `(type) value`: a type hint, the value read as that type (`(int) ?`, `(bigint) 1`).
    Hint(CqlType, Box<Literal>),
}

/// Cassandra's names for the native functions its operators call, with their symbols: an
/// operation where a value stands (`? - 5m`) is a call, `_substract(?, 5m)`.
pub const OPERATORS: [(&str, &str); 5] = [
    ("_add", "+"),
    ("_substract", "-"),
    ("_multiply", "*"),
    ("_divide", "/"),
    ("_modulo", "%"),
];

/// The function unary `-` calls where a value stands (`-?`).
pub const NEGATION: &str = "_negate";

/// The symbol of an operator's function (`-` for the negation too).
pub fn operator_symbol(name: &str) -> Option<&'static str> {
    if name == NEGATION {
        return Some("-");
    }
    OPERATORS.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

impl Literal {
    /// Its text where a selection's column names it: a marker as `?`, named or not.
    pub fn selection_text(&self) -> String {
        match self {
            Literal::Marker(..) => "?".into(),
            Literal::Hint(t, x) if matches!(**x, Literal::Marker(..)) => {
                Literal::Hint(t.clone(), Box::new(Literal::Marker(0, None))).text()
            }
            _ => self.text(),
        }
    }

    /// The literal as a statement writes it.
    pub fn text(&self) -> String {
        let list = |items: &[Literal]| {
            items
                .iter()
                .map(Literal::text)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Literal::Str(s) => format!("'{}'", s.replace('\'', "''")),
            Literal::Number(n) | Literal::Duration(n) | Literal::Uuid(n) => n.clone(),
            Literal::Hex(h) => format!("0x{h}"),
            Literal::Bool(b) => b.to_string(),
            Literal::Null => "null".into(),
            Literal::Call(f, args) => match (operator_symbol(f), args.as_slice()) {
                (Some(op), [l, r]) => format!("{} {op} {}", l.text(), r.text()),
                (Some(_), [x]) => format!("-{}", x.text()),
                _ => format!("system.{}({})", f.to_ascii_lowercase(), list(args)),
            },
            // A tuple is frozen whether written so or not; the hint names it as written.
            Literal::Hint(CqlType::Frozen(t), x) if matches!(**t, CqlType::Tuple(_)) => {
                format!("({t}){}", x.text())
            }
            Literal::Hint(t, x) => format!("({t}){}", x.text()),
            Literal::Typed(t, _) => format!("({t})?"),
            Literal::Marker(_, None) => "?".into(),
            Literal::Marker(_, Some(n)) => format!(":{n}"),
            Literal::List(items) => format!("[{}]", list(items)),
            Literal::Set(items) => format!("{{{}}}", list(items)),
            Literal::Tuple(items) => format!("({})", list(items)),
            Literal::Map(pairs) => {
                let ps: Vec<String> = pairs
                    .iter()
                    .map(|(k, v)| format!("{}: {}", k.text(), v.text()))
                    .collect();
                format!("{{{}}}", ps.join(", "))
            }
            Literal::Udt(fields) => {
                let fs: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{}: {}", super::quote_name(k), v.text()))
                    .collect();
                format!("{{{}}}", fs.join(", "))
            }
        }
    }

    /// Calls `f` with the position of each marker among its function calls' arguments.
    pub fn markers(&self, f: &mut dyn FnMut(usize)) {
        match self {
            Literal::Marker(i, _) => f(*i),
            Literal::Call(_, items)
            | Literal::List(items)
            | Literal::Set(items)
            | Literal::Tuple(items) => items.iter().for_each(|i| i.markers(f)),
            Literal::Map(pairs) => pairs.iter().for_each(|(k, v)| {
                k.markers(f);
                v.markers(f);
            }),
            Literal::Udt(fields) => fields.iter().for_each(|(_, v)| v.markers(f)),
            Literal::Hint(_, x) => x.markers(f),
            _ => {}
        }
    }

    /// Whether a function call (or a marker, which only a call's arguments hold) is part of
    /// it: what the session computes before encoding.
    pub fn has_call(&self) -> bool {
        match self {
            Literal::Call(..) | Literal::Marker(..) | Literal::Hint(..) => true,
            Literal::List(items) | Literal::Set(items) | Literal::Tuple(items) => {
                items.iter().any(Literal::has_call)
            }
            Literal::Map(pairs) => pairs.iter().any(|(k, v)| k.has_call() || v.has_call()),
            Literal::Udt(fields) => fields.iter().any(|(_, v)| v.has_call()),
            _ => false,
        }
    }
}

pub(super) fn describe(lit: &Literal) -> &'static str {
    match lit {
        Literal::Str(_) => "STRING",
        Literal::Number(_) => "NUMBER",
        Literal::Hex(_) => "BLOB",
        Literal::Uuid(_) => "UUID",
        Literal::Bool(_) => "BOOLEAN",
        Literal::Null => "NULL",
        Literal::Duration(_) => "DURATION",
        Literal::Tuple(_) => "TUPLE",
        Literal::Call(..) | Literal::Typed(..) => "function call",
        Literal::Hint(..) => "type hint",
        Literal::Marker(..) => "bind marker",
        Literal::List(_) => "LIST",
        Literal::Set(_) => "SET",
        Literal::Map(_) => "MAP",
        Literal::Udt(_) => "USER TYPE",
    }
}
