//! CQL's data types: their names, how a literal becomes the bytes Cassandra stores for it (an
//! `int` 2 is `00000002`), how stored bytes print in cqlsh's form, and which comparator orders
//! them when they are part of a key or filtered on. A collection's serialized form (the
//! protocol's: a count, then each element's length and bytes) is `collection_value.rs`'s, a
//! part of this module (each needs the other).
//!
//! Long because for each CQL type it says how literals encode, how values print and how they
//! compare: one arm per type in each.

use std::sync::Arc;

use num_bigint::BigInt;

mod access;
mod collection_value;
mod duration;
mod json;
mod kinds;
mod literal;
mod literal_refusal;
mod op;
mod quote;
mod tuple;
mod udt;
mod vector;

use super::error::CqlError;
pub(super) use collection_value::{add_element, serialize, Element};
pub use duration::Duration;
pub use json::quoted as json_string;
pub use literal::{operator_symbol, Literal, NEGATION, OPERATORS};
pub(super) use literal_refusal::Within;
use literal_refusal::{is_float_constant, mismatch, null_inside};
pub use op::Op;
pub use quote::{quote_ident, quote_ident as quote_name};
use supercolumn::model::comparator::builtin::{from_hex, to_hex};
use supercolumn::model::comparator::{
    decimal_text, AsciiType, BooleanType, ByteType, BytesType, Collection, Comparator, DecimalType,
    DoubleType, FloatType, FrozenType, InetAddressType, Int32Type, IntegerType, LongType,
    ShortType, SimpleDateType, TimeType, TimeUuidType, TimestampType, TupleType, Utf8Type,
    UuidType, VectorType,
};
pub use udt::UserType;

/// A CQL type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CqlType {
    /// `ascii`
    Ascii,
    /// `text` / `varchar`
    Text,
    /// `int`
    Int,
    /// `bigint`
    Bigint,
    /// `smallint`
    Smallint,
    /// `tinyint`
    Tinyint,
    /// `varint`
    Varint,
    /// `decimal`
    Decimal,
    /// `boolean`
    Boolean,
    /// `float`
    Float,
    /// `double`
    Double,
    /// `uuid`
    Uuid,
    /// `timeuuid`
    Timeuuid,
    /// `timestamp`
    Timestamp,
    /// `date`
    Date,
    /// `time`
    Time,
    /// `blob`
    Blob,
    /// `inet`
    Inet,
    /// `duration`: months, days and nanoseconds; no order, so never in a key
    Duration,
    /// `counter`: a 64-bit count only incremented and decremented, in tables of counters
    Counter,
    /// `list<T>`
    List(Box<CqlType>),
    /// `set<T>`
    Set(Box<CqlType>),
    /// `map<K, V>`
    Map(Box<CqlType>, Box<CqlType>),
    /// `frozen<T>`
    Frozen(Box<CqlType>),
    /// `tuple<T1, T2, …>`, always frozen (one cell)
    Tuple(Vec<CqlType>),
    /// `vector<T, n>`: `n` elements of a fixed-size type, in one cell
    Vector(Box<CqlType>, usize),
    /// A user-defined type (`udt.rs`); frozen (one cell) inside `Frozen`
    Udt(Arc<UserType>),
}

impl CqlType {
    /// The scalar type a name denotes (`text`, `varchar`, `int`, …).
    pub fn scalar(name: &str) -> Option<CqlType> {
        Some(match name.to_ascii_lowercase().as_str() {
            "ascii" => CqlType::Ascii,
            "text" | "varchar" => CqlType::Text,
            "int" => CqlType::Int,
            "bigint" => CqlType::Bigint,
            "smallint" => CqlType::Smallint,
            "tinyint" => CqlType::Tinyint,
            "varint" => CqlType::Varint,
            "decimal" => CqlType::Decimal,
            "boolean" => CqlType::Boolean,
            "float" => CqlType::Float,
            "double" => CqlType::Double,
            "uuid" => CqlType::Uuid,
            "timeuuid" => CqlType::Timeuuid,
            "timestamp" => CqlType::Timestamp,
            "date" => CqlType::Date,
            "time" => CqlType::Time,
            "blob" => CqlType::Blob,
            "inet" => CqlType::Inet,
            "duration" => CqlType::Duration,
            "counter" => CqlType::Counter,
            _ => return None,
        })
    }

    /// The engine's collection type for a (non-frozen) collection of scalars.
    pub fn collection(&self) -> Option<Collection> {
        // A value's type orders no name: a frozen one stays BytesType there, as it was named
        // before frozen collections had an order (the stored comparator's name must not change).
        let value = |t: &CqlType| match t {
            CqlType::Frozen(_) | CqlType::Tuple(_) => Arc::new(BytesType) as Arc<dyn Comparator>,
            t => t
                .comparator()
                .unwrap_or_else(|| Arc::new(BytesType) as Arc<dyn Comparator>),
        };
        Some(match self {
            // A non-frozen user type's cells are named by their field's position (a `short`,
            // as Cassandra names them), each holding its field's bytes.
            CqlType::Udt(_) => Collection::Map(Arc::new(ShortType), Arc::new(BytesType)),
            CqlType::List(e) => Collection::List(value(e)),
            CqlType::Set(e) => Collection::Set(e.comparator()?),
            CqlType::Map(k, v) => Collection::Map(k.comparator()?, value(v)),
            _ => return None,
        })
    }

    /// The comparator that orders this type inside a key; `None` for types that cannot be in a
    /// key (duration, a collection or user type that is not frozen).
    pub fn comparator(&self) -> Option<Arc<dyn Comparator>> {
        Some(match self {
            CqlType::Ascii => Arc::new(AsciiType),
            CqlType::Text => Arc::new(Utf8Type),
            CqlType::Int => Arc::new(Int32Type),
            CqlType::Bigint | CqlType::Counter => Arc::new(LongType),
            CqlType::Smallint => Arc::new(ShortType),
            CqlType::Tinyint => Arc::new(ByteType),
            CqlType::Varint => Arc::new(IntegerType),
            CqlType::Decimal => Arc::new(DecimalType),
            CqlType::Boolean => Arc::new(BooleanType),
            CqlType::Float => Arc::new(FloatType),
            CqlType::Double => Arc::new(DoubleType),
            CqlType::Uuid => Arc::new(UuidType),
            CqlType::Timeuuid => Arc::new(TimeUuidType),
            CqlType::Timestamp => Arc::new(TimestampType),
            CqlType::Date => Arc::new(SimpleDateType),
            CqlType::Time => Arc::new(TimeType),
            CqlType::Blob => Arc::new(BytesType),
            CqlType::Inet => Arc::new(InetAddressType),
            // A frozen collection of key-able scalars orders element by element.
            CqlType::Frozen(inner) if self.is_frozen_collection() => {
                Arc::new(FrozenType(match &**inner {
                    CqlType::List(e) => Collection::List(e.comparator()?),
                    CqlType::Set(e) => Collection::Set(e.comparator()?),
                    CqlType::Map(k, v) => Collection::Map(k.comparator()?, v.comparator()?),
                    _ => return None,
                }))
            }
            // A frozen user type orders as the tuple of its fields (Cassandra's order).
            CqlType::Frozen(inner) if matches!(**inner, CqlType::Udt(_)) => {
                let CqlType::Udt(u) = &**inner else {
                    return None;
                };
                // A collection field is frozen inside a frozen value, and ordered as one.
                let fields = u.fields.iter().map(|(_, t)| match t {
                    t if t.is_collection() => CqlType::Frozen(Box::new(t.clone())).comparator(),
                    t => t.comparator(),
                });
                return Some(Arc::new(TupleType(fields.collect::<Option<Vec<_>>>()?)));
            }
            // A tuple of ordered types orders element by element (`TupleType`).
            CqlType::Tuple(ts) => Arc::new(TupleType(
                ts.iter()
                    .map(CqlType::comparator)
                    .collect::<Option<Vec<_>>>()?,
            )),
            // A vector orders element by element (Cassandra 5's `VectorType`).
            CqlType::Vector(e, n) => Arc::new(VectorType::new(e.comparator()?, *n).ok()?),
            CqlType::Duration
            | CqlType::List(_)
            | CqlType::Set(_)
            | CqlType::Map(..)
            | CqlType::Udt(_)
            | CqlType::Frozen(_) => return None,
        })
    }

    /// Bytes of a literal of this type, as Cassandra serializes it. `None` for `null`.
    pub fn encode(&self, lit: &Literal, column: &str) -> Result<Option<Vec<u8>>, CqlError> {
        self.encode_in(lit, column, None)
    }

    /// [`CqlType::encode`] of a literal standing `within` a collection or vector literal (its
    /// element, key or value), which a literal of the wrong kind is refused in the words of.
    // Long because it is one match with an arm per CQL type.
    pub(super) fn encode_in(
        &self,
        lit: &Literal,
        column: &str,
        within: Option<Within<'_>>,
    ) -> Result<Option<Vec<u8>>, CqlError> {
        let mismatch = || CqlError::invalid(mismatch(self, lit, column, within));
        let via = |text: &str| -> Result<Vec<u8>, CqlError> {
            let cmp = self.comparator().ok_or_else(mismatch)?;
            cmp.parse_text(text)
                .map_err(|e| CqlError::invalid(format!("invalid value for {column}: {e}")))
        };
        if let Literal::Null = lit {
            return Ok(None);
        }
        let bytes = match (self, lit) {
            // A FLOAT constant goes only where a fractional number does (Cassandra's rule).
            (t, Literal::Number(n)) if t.integral() && is_float_constant(n) => {
                return Err(mismatch())
            }
            (CqlType::Ascii, Literal::Str(s)) if s.is_ascii() => s.as_bytes().to_vec(),
            (CqlType::Text, Literal::Str(s)) => s.as_bytes().to_vec(),
            (
                CqlType::Int
                | CqlType::Bigint
                | CqlType::Smallint
                | CqlType::Tinyint
                | CqlType::Varint
                | CqlType::Float
                | CqlType::Double
                | CqlType::Counter,
                Literal::Number(n),
            ) => via(n)?,
            (CqlType::Decimal, Literal::Number(n)) => encode_decimal(n).ok_or_else(mismatch)?,
            (CqlType::Boolean, Literal::Bool(b)) => vec![u8::from(*b)],
            (CqlType::Uuid | CqlType::Timeuuid, Literal::Uuid(u)) => via(u)?,
            (CqlType::Timestamp, Literal::Number(n)) => via(n)?,
            (
                CqlType::Timestamp | CqlType::Date | CqlType::Time | CqlType::Inet,
                Literal::Str(s),
            ) => via(s)?,
            (CqlType::Date, Literal::Number(n)) => n
                .parse::<u32>()
                .map(|v| v.to_be_bytes().to_vec())
                .map_err(|_| mismatch())?,
            (CqlType::Time, Literal::Number(n)) => {
                let v = n.parse::<i64>().map_err(|_| mismatch())?;
                let b = v.to_be_bytes().to_vec();
                TimeType
                    .validate(&b)
                    .map_err(|e| CqlError::invalid(format!("invalid value for {column}: {e}")))?;
                b
            }
            (CqlType::Blob, Literal::Hex(h)) => from_hex(h).map_err(|_| mismatch())?,
            (CqlType::Tuple(types), Literal::Tuple(items)) => {
                tuple::encode(types, items, column, within)?
            }
            // Cassandra's string form of a tuple: `'1:a'`, `\:` escaping, `@` a null.
            (CqlType::Tuple(types), Literal::Str(s)) => tuple::from_string(types, s)?,
            (CqlType::Udt(u), Literal::Udt(fields)) => udt::encode(u, fields, column)?,
            (CqlType::Vector(..), Literal::List(items)) => vector::encode(self, items, column)?,
            (CqlType::Duration, Literal::Duration(d)) => {
                duration::parse(d).map_err(CqlError::invalid)?.encode()
            }
            // A frozen collection is one cell holding the collection's serialized form.
            (CqlType::Frozen(inner), lit) => return inner.encode_in(lit, column, within),
            (ty, Literal::Typed(t, v)) => {
                let fits = t == ty
                    || matches!((t, ty), (CqlType::Ascii, CqlType::Text))
                    || matches!(ty, CqlType::Frozen(inner) if **inner == *t)
                    || matches!(t, CqlType::Frozen(inner) if **inner == *ty);
                if !fits {
                    return Err(CqlError::invalid(format!(
                        "Type error: cannot assign a value of type {t} to {column} of type {self}"
                    )));
                }
                return Ok(v.clone());
            }
            (CqlType::List(e), Literal::List(items)) | (CqlType::Set(e), Literal::Set(items)) => {
                let kind = if matches!(self, CqlType::Set(_)) {
                    "set"
                } else {
                    "list"
                };
                let mut parts = Vec::with_capacity(items.len());
                for it in items {
                    let within = Some(Within::new(kind, "value"));
                    parts.push(e.encode_in(it, column, within)?.ok_or_else(null_inside)?);
                }
                if matches!(self, CqlType::Set(_)) {
                    let cmp = e.comparator().ok_or_else(mismatch)?;
                    parts.sort_by(|a, b| cmp.compare(a, b));
                    parts.dedup();
                }
                serialize(parts.iter().map(|p| (p.as_slice(), None)))
            }
            (CqlType::Map(..), Literal::Set(items)) if items.is_empty() => {
                serialize(std::iter::empty())
            }
            (CqlType::Map(k, v), Literal::Map(pairs)) => {
                let mut parts = Vec::with_capacity(pairs.len());
                for (a, b) in pairs {
                    parts.push((
                        k.encode_in(a, column, Some(Within::new("map", "key")))?
                            .ok_or_else(null_inside)?,
                        v.encode_in(b, column, Some(Within::new("map", "value")))?
                            .ok_or_else(null_inside)?,
                    ));
                }
                let cmp = k.comparator().ok_or_else(mismatch)?;
                // The last value given for a key stands, as in Cassandra.
                parts.reverse();
                parts.sort_by(|a, b| cmp.compare(&a.0, &b.0));
                parts.dedup_by(|a, b| a.0 == b.0);
                serialize(
                    parts
                        .iter()
                        .map(|(a, b)| (a.as_slice(), Some(b.as_slice()))),
                )
            }
            _ => return Err(mismatch()),
        };
        Ok(Some(bytes))
    }

    /// Checks serialized bytes bound to a marker: they must be a valid value of this type.
    pub fn check(&self, bytes: &[u8]) -> Result<(), String> {
        self.check_with(bytes, None)
    }

    /// [`CqlType::check`] with this type's comparator already built (`None`: built here when
    /// needed), for a caller that checks many values of one type.
    pub fn check_with(&self, bytes: &[u8], cmp: Option<&dyn Comparator>) -> Result<(), String> {
        match self {
            CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) => {
                self.elements(bytes).map(|_| ())
            }
            CqlType::Frozen(inner) => inner.check(bytes),
            // Any bytes are a blob (and building its comparator to say so costs an allocation
            // on every bound value).
            CqlType::Blob => Ok(()),
            CqlType::Text => std::str::from_utf8(bytes)
                .map(|_| ())
                .map_err(|_| "not UTF-8".into()),
            CqlType::Ascii if !bytes.is_ascii() => Err("not ASCII".into()),
            CqlType::Duration => Duration::decode(bytes).map(|_| ()),
            CqlType::Tuple(_) => self.tuple_elements(bytes).map(|_| ()),
            CqlType::Udt(u) => CqlType::udt_fields(u, bytes).map(|_| ()),
            CqlType::Vector(..) => self.vector_elements(bytes).map(|_| ()),
            CqlType::Decimal if bytes.len() < 5 && !bytes.is_empty() => {
                Err("a decimal is a 4-byte scale and an unscaled varint".into())
            }
            _ if bytes.is_empty() => Ok(()),
            other => match cmp {
                Some(c) => c.validate(bytes).map_err(|e| e.0),
                None => other
                    .comparator()
                    .map_or(Ok(()), |c| c.validate(bytes).map_err(|e| e.0)),
            },
        }
    }

    /// Stored bytes in cqlsh's form (`True`, `0xcafe`, `2013-07-23 02:32:34.299000+0000`).
    pub fn display(&self, bytes: &[u8]) -> String {
        match self {
            CqlType::Ascii | CqlType::Text => String::from_utf8_lossy(bytes).into_owned(),
            CqlType::Blob => format!("0x{}", to_hex(bytes)),
            CqlType::Boolean => match bytes {
                [0] => "False".into(),
                [_] => "True".into(),
                _ => format!("0x{}", to_hex(bytes)),
            },
            CqlType::Decimal => decode_decimal(bytes).unwrap_or_else(|| to_hex(bytes)),
            CqlType::Duration => Duration::decode(bytes)
                .map_or_else(|_| format!("0x{}", to_hex(bytes)), |d| d.text()),
            CqlType::Tuple(_) => self
                .tuple_text(bytes)
                .unwrap_or_else(|| format!("0x{}", to_hex(bytes))),
            CqlType::Udt(u) => {
                CqlType::udt_text(u, bytes).unwrap_or_else(|| format!("0x{}", to_hex(bytes)))
            }
            CqlType::Vector(..) => self
                .vector_text(bytes)
                .unwrap_or_else(|| format!("0x{}", to_hex(bytes))),
            CqlType::Frozen(inner) => inner.display(bytes),
            CqlType::List(e) | CqlType::Set(e) | CqlType::Map(e, _) => {
                let show = |t: &CqlType, b: &[u8]| match t {
                    CqlType::Ascii | CqlType::Text => {
                        format!("'{}'", t.display(b).replace('\'', "''"))
                    }
                    _ => t.display(b),
                };
                let Ok(items) = self.elements(bytes) else {
                    // A list a result may hold with a null element.
                    let Some(items) = self.list_items(bytes) else {
                        return format!("0x{}", to_hex(bytes));
                    };
                    let body: Vec<String> = items
                        .iter()
                        .map(|b| b.as_deref().map_or_else(|| "null".into(), |b| show(e, b)))
                        .collect();
                    return format!("[{}]", body.join(", "));
                };
                let body: Vec<String> = items
                    .iter()
                    .map(|(a, b)| match (self, b) {
                        (CqlType::Map(_, v), Some(b)) => format!("{}: {}", show(e, a), show(v, b)),
                        _ => show(e, a),
                    })
                    .collect();
                let (open, close) = if matches!(self, CqlType::List(_)) {
                    ("[", "]")
                } else {
                    ("{", "}")
                };
                format!("{open}{}{close}", body.join(", "))
            }
            other => match other.comparator() {
                Some(c) if c.validate(bytes).is_ok() => c.to_text(bytes),
                _ => format!("0x{}", to_hex(bytes)),
            },
        }
    }
}

/// `decimal`: a 4-byte big-endian scale, then the unscaled value as a varint.
fn encode_decimal(text: &str) -> Option<Vec<u8>> {
    let t = text.trim();
    if t.len() > 1000 {
        return None;
    }
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (int_part, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{int_part}{frac}");
    let unscaled: BigInt = digits.parse().ok()?;
    let scale = i32::try_from(frac.len()).ok()?.checked_sub(exp)?;
    let mut out = scale.to_be_bytes().to_vec();
    out.extend(unscaled.to_signed_bytes_be());
    Some(out)
}

/// A decimal's text as Cassandra's `toString` writes it (`1.50`, `1E+3`); `None` for bytes no
/// decimal has, or an unscaled value too long to print.
fn decode_decimal(bytes: &[u8]) -> Option<String> {
    let (scale, unscaled) = bytes.split_first_chunk::<4>()?;
    if unscaled.is_empty() || unscaled.len() > 4096 {
        return None;
    }
    let v = BigInt::from_signed_bytes_be(unscaled);
    Some(decimal_text(i32::from_be_bytes(*scale), &v))
}

impl std::fmt::Display for CqlType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = match self {
            CqlType::Ascii => "ascii",
            CqlType::Text => "text",
            CqlType::Int => "int",
            CqlType::Bigint => "bigint",
            CqlType::Smallint => "smallint",
            CqlType::Tinyint => "tinyint",
            CqlType::Varint => "varint",
            CqlType::Decimal => "decimal",
            CqlType::Boolean => "boolean",
            CqlType::Float => "float",
            CqlType::Double => "double",
            CqlType::Uuid => "uuid",
            CqlType::Timeuuid => "timeuuid",
            CqlType::Timestamp => "timestamp",
            CqlType::Date => "date",
            CqlType::Time => "time",
            CqlType::Blob => "blob",
            CqlType::Inet => "inet",
            CqlType::Duration => "duration",
            CqlType::Counter => "counter",
            CqlType::List(t) => return write!(f, "list<{t}>"),
            CqlType::Set(t) => return write!(f, "set<{t}>"),
            CqlType::Map(k, v) => return write!(f, "map<{k}, {v}>"),
            CqlType::Frozen(t) => return write!(f, "frozen<{t}>"),
            CqlType::Vector(t, n) => return write!(f, "vector<{t}, {n}>"),
            // By its name alone: a table uses only its own keyspace's types.
            CqlType::Udt(u) => return f.write_str(&u.quoted_name()),
            // As Cassandra names it in `system_schema` and `DESCRIBE`.
            CqlType::Tuple(ts) => {
                let ts: Vec<String> = ts.iter().map(ToString::to_string).collect();
                return write!(f, "frozen<tuple<{}>>", ts.join(", "));
            }
        };
        f.write_str(s)
    }
}

/// Whether a regular column's value passes a filter (`null` passes none).
pub(super) fn matches_filter(ty: &CqlType, value: Option<&[u8]>, op: Op, v: &[u8]) -> bool {
    let Some(value) = value else { return false };
    if matches!(op, Op::Contains | Op::ContainsKey) {
        return contains(ty, value, op == Op::ContainsKey, v);
    }
    let compare = |v: &[u8]| match ty.comparator() {
        Some(c) => c.compare(value, v),
        None => value.cmp(v),
    };
    if op == Op::In {
        return in_values(v).any(|x| compare(x).is_eq());
    }
    let ord = compare(v);
    match op {
        Op::Eq => ord.is_eq(),
        Op::Lt => ord.is_lt(),
        Op::Le => ord.is_le(),
        Op::Gt => ord.is_gt(),
        Op::Ge => ord.is_ge(),
        Op::Ne => ord.is_ne(),
        Op::Contains | Op::ContainsKey | Op::In => false,
    }
}

/// The value of an `IN` filter: each value, its length first.
pub(super) fn in_list(values: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.iter().map(|v| v.len() + 4).sum());
    for v in values {
        // A value comes from a frame, far below 4 GiB.
        out.extend_from_slice(&u32::try_from(v.len()).unwrap_or(u32::MAX).to_be_bytes());
        out.extend_from_slice(v);
    }
    out
}

/// The values of an `IN` filter's value (`in_list`'s), stopping where one is cut short.
fn in_values(mut list: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        let (len, rest) = list.split_first_chunk::<4>()?;
        let len = usize::try_from(u32::from_be_bytes(*len)).ok()?;
        let value = rest.get(..len)?;
        list = &rest[len..];
        Some(value)
    })
}

/// Whether a map's serialized value holds `value` under `key` (`m[key] = value`; `null` holds
/// nothing).
pub(super) fn holds_entry(ty: &CqlType, map: Option<&[u8]>, key: &[u8], value: &[u8]) -> bool {
    let (Some(map), CqlType::Map(_, vt)) = (map, ty) else {
        return false;
    };
    match ty.element_at(map, key) {
        Ok(Some(found)) => match vt.comparator() {
            Some(c) => c.compare(&found, value).is_eq(),
            None => found == value,
        },
        _ => false,
    }
}

/// Whether a collection's serialized value holds `v`: an element of a list or set, a map's
/// value, or (`key`) a map's key.
fn contains(ty: &CqlType, value: &[u8], key: bool, v: &[u8]) -> bool {
    let ty = match ty {
        CqlType::Frozen(inner) => inner.as_ref(),
        t => t,
    };
    let Ok(items) = ty.elements(value) else {
        return false;
    };
    let (elem, is_map) = match ty {
        CqlType::List(e) | CqlType::Set(e) => (e.as_ref(), false),
        CqlType::Map(k, _) if key => (k.as_ref(), true),
        CqlType::Map(_, val) => (val.as_ref(), true),
        _ => return false,
    };
    let cmp = elem.comparator();
    let same = |a: &[u8]| match &cmp {
        Some(c) => c.compare(a, v).is_eq(),
        None => a == v,
    };
    items.iter().any(|(a, b)| match (is_map, key, b) {
        (true, false, Some(b)) => same(b),
        _ => same(a),
    })
}

#[cfg(test)]
mod tests;
