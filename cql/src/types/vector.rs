//! Cassandra 5's `vector<T, n>`: exactly `n` elements, stored in one cell as Cassandra
//! serializes them: a fixed-size type's bytes one after another, a variable-size type's each
//! after its length as an unsigned variable-length integer (a collection, tuple or user type
//! frozen, a vector of fixed-size elements fixed-size itself). Here: its literal (`[0.1, 0.2,
//! 0.3]`, the count checked), its check, its text and the marshal class name drivers see.

use super::{CqlType, Literal};
use crate::error::CqlError;
use supercolumn::model::vint::{get_vint, put_vint};

impl CqlType {
    /// The bytes every value of this type takes, for the fixed-size types a vector may hold.
    pub fn fixed_size(&self) -> Option<usize> {
        Some(match self {
            CqlType::Boolean | CqlType::Tinyint => 1,
            CqlType::Smallint => 2,
            CqlType::Int | CqlType::Float | CqlType::Date => 4,
            CqlType::Bigint | CqlType::Double | CqlType::Timestamp | CqlType::Time => 8,
            CqlType::Uuid | CqlType::Timeuuid => 16,
            // A vector of fixed-size elements is fixed-size itself (Cassandra's
            // `valueLengthIfFixed`), so in a vector it takes no length.
            CqlType::Vector(e, n) => e.fixed_size()?.checked_mul(*n)?,
            _ => return None,
        })
    }

    /// The class Cassandra names this type by in the native protocol (for a vector's elements
    /// and the vector itself).
    pub fn marshal_class(&self) -> Option<String> {
        let short = match self {
            CqlType::Boolean => "BooleanType",
            CqlType::Tinyint => "ByteType",
            CqlType::Smallint => "ShortType",
            CqlType::Int => "Int32Type",
            CqlType::Float => "FloatType",
            CqlType::Date => "SimpleDateType",
            CqlType::Bigint => "LongType",
            CqlType::Double => "DoubleType",
            CqlType::Timestamp => "TimestampType",
            CqlType::Time => "TimeType",
            CqlType::Uuid => "UUIDType",
            CqlType::Timeuuid => "TimeUUIDType",
            CqlType::Ascii => "AsciiType",
            CqlType::Text => "UTF8Type",
            CqlType::Blob => "BytesType",
            CqlType::Varint => "IntegerType",
            CqlType::Decimal => "DecimalType",
            CqlType::Inet => "InetAddressType",
            CqlType::Duration => "DurationType",
            CqlType::Vector(e, n) => {
                let e = e.marshal_class()?;
                return Some(format!(
                    "org.apache.cassandra.db.marshal.VectorType({e}, {n})"
                ));
            }
            _ => return self.composed_marshal_class(),
        };
        Some(format!("org.apache.cassandra.db.marshal.{short}"))
    }

    /// The class name of a collection, tuple, user type or frozen one, as Cassandra's type
    /// parser writes it (a user type's name and field names in hex).
    fn composed_marshal_class(&self) -> Option<String> {
        let class = |name: &str, parts: &[&CqlType]| -> Option<String> {
            let inner: Option<Vec<String>> = parts.iter().map(|t| t.marshal_class()).collect();
            Some(format!(
                "org.apache.cassandra.db.marshal.{name}({})",
                inner?.join(",")
            ))
        };
        match self {
            CqlType::List(e) => class("ListType", &[e]),
            CqlType::Set(e) => class("SetType", &[e]),
            CqlType::Map(k, v) => class("MapType", &[k, v]),
            CqlType::Frozen(e) => class("FrozenType", &[e]),
            CqlType::Tuple(ts) => class("TupleType", &ts.iter().collect::<Vec<_>>()),
            CqlType::Udt(u) => {
                let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
                let mut parts = vec![u.keyspace.clone(), hex(&u.name)];
                for (name, t) in &u.fields {
                    parts.push(format!("{}:{}", hex(name), t.marshal_class()?));
                }
                Some(format!(
                    "org.apache.cassandra.db.marshal.UserType({})",
                    parts.join(",")
                ))
            }
            _ => None,
        }
    }

    /// A vector value's elements, each checked against the element type.
    pub fn vector_elements<'b>(&self, bytes: &'b [u8]) -> Result<Vec<&'b [u8]>, String> {
        let CqlType::Vector(e, n) = self else {
            return Err(format!("{self} is not a vector"));
        };
        // Cassandra's words for a value of the wrong size.
        let short = || format!("Not enough bytes to read a {self}");
        let extra = |n: usize| format!("Unexpected {n} extraneous bytes after {self} value");
        if bytes.is_empty() {
            return Err("Invalid empty vector value".into());
        }
        let items: Vec<&[u8]> = match e.fixed_size() {
            Some(size) => {
                let want = size.checked_mul(*n).ok_or_else(short)?;
                if bytes.len() < want {
                    return Err(short());
                }
                if bytes.len() > want {
                    return Err(extra(bytes.len() - want));
                }
                bytes.chunks(size.max(1)).collect()
            }
            None => {
                // Each element after its length; at least a byte each, checked before
                // anything is allocated for `n` of them.
                if bytes.len() < *n {
                    return Err(short());
                }
                let mut rest = bytes;
                let mut items = Vec::with_capacity(*n);
                for _ in 0..*n {
                    let len = get_vint(&mut rest)
                        .and_then(|l| usize::try_from(l).ok())
                        .filter(|&l| l <= rest.len())
                        .ok_or_else(short)?;
                    let (item, tail) = rest.split_at(len);
                    items.push(item);
                    rest = tail;
                }
                if !rest.is_empty() {
                    return Err(extra(rest.len()));
                }
                items
            }
        };
        for item in &items {
            e.check(item)?;
        }
        Ok(items)
    }

    /// Its text as cqlsh shows it: `[0.1, 0.2, 0.3]`.
    pub(super) fn vector_text(&self, bytes: &[u8]) -> Option<String> {
        let CqlType::Vector(e, _) = self else {
            return None;
        };
        let items = self.vector_elements(bytes).ok()?;
        let body: Vec<String> = items
            .iter()
            .map(|b| match **e {
                CqlType::Ascii | CqlType::Text => {
                    format!("'{}'", e.display(b).replace('\'', "''"))
                }
                _ => e.display(b),
            })
            .collect();
        Some(format!("[{}]", body.join(", ")))
    }
}

/// The bytes of a vector literal `items` for a `vector<e, n>` (in `column`).
pub(super) fn encode(ty: &CqlType, items: &[Literal], column: &str) -> Result<Vec<u8>, CqlError> {
    let CqlType::Vector(e, n) = ty else {
        return Err(CqlError::invalid(format!("{ty} is not a vector")));
    };
    if items.len() != *n {
        return Err(CqlError::invalid(format!(
            "Invalid vector literal for {column} of type {ty}; expected {n} elements, but given {}",
            items.len()
        )));
    }
    let mut out = Vec::new();
    for item in items {
        let within = Some(super::Within::new("vector", "value"));
        let b = e
            .encode_in(item, column, within)?
            .ok_or_else(|| CqlError::invalid("null is not supported inside vectors"))?;
        match e.fixed_size() {
            Some(size) if size != b.len() => {
                return Err(CqlError::invalid(format!(
                    "invalid {e} element for {column} of type {ty}"
                )))
            }
            Some(_) => {}
            None => put_vint(b.len() as u64, &mut out),
        }
        out.extend_from_slice(&b);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_serialize_check_and_print_as_cassandra_does() {
        let v = CqlType::Vector(Box::new(CqlType::Float), 3);
        let lit: Vec<Literal> = ["1.5", "-2", "0.25"]
            .iter()
            .map(|n| Literal::Number((*n).into()))
            .collect();
        let b = encode(&v, &lit, "v").unwrap();
        let mut want = Vec::new();
        for f in [1.5f32, -2.0, 0.25] {
            want.extend_from_slice(&f.to_be_bytes());
        }
        assert_eq!(b, want);
        assert_eq!(v.vector_text(&b).unwrap(), "[1.5, -2, 0.25]");
        assert!(v.vector_elements(&b[..8]).is_err());
        assert!(encode(&v, &lit[..2], "v").is_err());
        assert_eq!(v.to_string(), "vector<float, 3>");
        assert_eq!(
            v.marshal_class().unwrap(),
            "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 3)"
        );
    }

    #[test]
    fn variable_size_elements_follow_their_lengths() {
        let v = CqlType::Vector(Box::new(CqlType::Text), 2);
        let lit = [Literal::Str("ab".into()), Literal::Str(String::new())];
        let b = encode(&v, &lit, "v").unwrap();
        assert_eq!(b, [2, b'a', b'b', 0]);
        assert_eq!(v.vector_text(&b).unwrap(), "['ab', '']");
        for bad in [&[2, b'a'][..], &[1, b'a', 0, 9][..], &[0][..]] {
            assert!(v.vector_elements(bad).is_err(), "{bad:?}");
        }
    }
}
