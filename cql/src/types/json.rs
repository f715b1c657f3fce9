//! Values as JSON, in Cassandra's encoding (`SELECT JSON`, `toJson()`): numbers as numbers in
//! Java's text (`1.0E10`, a NaN or an infinity as `null`), strings, UUIDs, times, dates,
//! addresses, blobs (`"0x…"`) and durations as JSON strings, a timestamp as
//! `"yyyy-mm-dd hh:mm:ss.fffZ"`, lists, sets, tuples and vectors as arrays and maps as objects
//! (a key that is not a string quoted), each separator followed by a space as Cassandra writes
//! them.

use num_bigint::BigInt;

use super::{CqlType, Literal};
use crate::error::CqlError;
use supercolumn::model::comparator::TimestampType;

/// A string as a JSON string literal.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Java's `Double.toString` (and `Float.toString` of a float's shortest digits): plain between
/// 10⁻³ and 10⁷, else `d.dddE±n`, always with a fraction digit.
fn java_float(shortest: String, v: f64) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let a = v.abs();
    if (1e-3..1e7).contains(&a) {
        let s = if shortest.contains('e') {
            format!("{v}")
        } else {
            shortest
        };
        return if s.contains('.') { s } else { format!("{s}.0") };
    }
    let e = format!("{:e}", shortest.parse::<f64>().unwrap_or(v));
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exp}")
}

/// Java's `BigDecimal.toString`: plain unless the scale is negative or the value small,
/// then `d.dddE±n`.
fn java_decimal(bytes: &[u8]) -> Option<String> {
    let (scale, unscaled) = bytes.split_first_chunk::<4>()?;
    if unscaled.is_empty() {
        return None;
    }
    let scale = i64::from(i32::from_be_bytes(*scale));
    let v = BigInt::from_signed_bytes_be(unscaled).to_string();
    let (sign, digits) = match v.strip_prefix('-') {
        Some(d) => ("-", d.to_string()),
        None => ("", v),
    };
    let adjusted = -scale + (digits.len() as i64 - 1);
    if scale >= 0 && adjusted >= -6 {
        return super::decode_decimal(bytes);
    }
    let (first, rest) = digits.split_at(1);
    let fraction = if rest.is_empty() {
        String::new()
    } else {
        format!(".{rest}")
    };
    let exp = if adjusted >= 0 {
        format!("+{adjusted}")
    } else {
        adjusted.to_string()
    };
    Some(format!("{sign}{first}{fraction}E{exp}"))
}

impl CqlType {
    /// A value's JSON text, as Cassandra's `toJson()` gives it.
    pub fn to_json(&self, bytes: &[u8]) -> String {
        self.json_of(bytes)
            .unwrap_or_else(|| quoted(&self.display(bytes)))
    }

    // Long because it is one match with an arm per CQL type.
    fn json_of(&self, b: &[u8]) -> Option<String> {
        Some(match self {
            CqlType::Ascii | CqlType::Text => quoted(std::str::from_utf8(b).ok()?),
            CqlType::Int
            | CqlType::Bigint
            | CqlType::Counter
            | CqlType::Smallint
            | CqlType::Tinyint
            | CqlType::Varint => self.display(b),
            CqlType::Boolean => (b.first()? != &0).to_string(),
            CqlType::Float => {
                let v = f32::from_be_bytes(b.try_into().ok()?);
                if !v.is_finite() {
                    return Some("null".into());
                }
                java_float(format!("{v}"), f64::from(v))
            }
            CqlType::Double => {
                let v = f64::from_be_bytes(b.try_into().ok()?);
                if !v.is_finite() {
                    return Some("null".into());
                }
                java_float(format!("{v}"), v)
            }
            CqlType::Decimal => java_decimal(b)?,
            CqlType::Timestamp => {
                let ms = i64::from_be_bytes(b.try_into().ok()?);
                let text = TimestampType::format_ms(ms);
                quoted(&format!("{}Z", text.get(..23)?))
            }
            CqlType::Frozen(inner) => inner.json_of(b)?,
            CqlType::List(e) => {
                // A list a result may hold with a null element (`collection_value.rs`).
                let items = self.list_items(b)?;
                let parts: Vec<String> = items
                    .iter()
                    .map(|x| x.as_deref().map_or_else(|| "null".into(), |x| e.to_json(x)))
                    .collect();
                format!("[{}]", parts.join(", "))
            }
            CqlType::Set(e) => {
                let items = self.elements(b).ok()?;
                let parts: Vec<String> = items.iter().map(|(x, _)| e.to_json(x)).collect();
                format!("[{}]", parts.join(", "))
            }
            CqlType::Map(k, v) => {
                let items = self.elements(b).ok()?;
                let parts: Vec<String> = items
                    .iter()
                    .map(|(x, y)| {
                        let key = k.to_json(x);
                        let key = if key.starts_with('"') {
                            key
                        } else {
                            quoted(&key)
                        };
                        format!(
                            "{key}: {}",
                            y.as_deref().map_or("null".into(), |y| v.to_json(y))
                        )
                    })
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            CqlType::Tuple(types) => {
                let items = self.tuple_elements(b).ok()?;
                let parts: Vec<String> = items
                    .iter()
                    .zip(types)
                    .map(|(x, t)| x.as_deref().map_or("null".into(), |x| t.to_json(x)))
                    .collect();
                format!("[{}]", parts.join(", "))
            }
            CqlType::Udt(u) => {
                let items = CqlType::udt_fields(u, b).ok()?;
                let parts: Vec<String> = items
                    .iter()
                    .zip(&u.fields)
                    .map(|(x, (name, t))| {
                        let v = x.as_deref().map_or("null".into(), |x| t.to_json(x));
                        format!("{}: {v}", quoted(name))
                    })
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            CqlType::Vector(e, _) => {
                let items = self.vector_elements(b).ok()?;
                let parts: Vec<String> = items.iter().map(|x| e.to_json(x)).collect();
                format!("[{}]", parts.join(", "))
            }
            _ => quoted(&self.display(b)),
        })
    }
}

impl CqlType {
    /// The bytes of a JSON value for this type, as Cassandra's `fromJson()` and `INSERT JSON`
    /// read it (`None`: null): a number may also come as a string, every other scalar comes as
    /// its CQL text in a string, collections and tuples as arrays, maps as objects whose keys
    /// are strings.
    // Long because it is one match with an arm per CQL type.
    pub fn from_json(
        &self,
        v: &serde_json::Value,
        column: &str,
    ) -> Result<Option<Vec<u8>>, CqlError> {
        use serde_json::Value;
        let bad = || {
            CqlError::invalid(format!(
                "Error decoding JSON value for {column}: {v} is not a {self}"
            ))
        };
        let typed = |t: &CqlType, v: &Value| -> Result<Literal, CqlError> {
            Ok(Literal::Typed(t.clone(), t.from_json(v, column)?))
        };
        let lit = match (self, v) {
            (_, Value::Null) => return Ok(None),
            (CqlType::Frozen(inner), v) => return inner.from_json(v, column),
            (CqlType::Ascii | CqlType::Text, Value::String(s)) => Literal::Str(s.clone()),
            (CqlType::Boolean, Value::Bool(b)) => Literal::Bool(*b),
            (CqlType::Boolean, Value::String(s)) => match s.to_ascii_lowercase().as_str() {
                "true" => Literal::Bool(true),
                "false" => Literal::Bool(false),
                _ => return Err(bad()),
            },
            (
                CqlType::Int
                | CqlType::Bigint
                | CqlType::Counter
                | CqlType::Smallint
                | CqlType::Tinyint
                | CqlType::Varint
                | CqlType::Float
                | CqlType::Double
                | CqlType::Decimal
                | CqlType::Timestamp,
                Value::Number(n),
            ) => Literal::Number(n.to_string()),
            (
                CqlType::Int
                | CqlType::Bigint
                | CqlType::Counter
                | CqlType::Smallint
                | CqlType::Tinyint
                | CqlType::Varint
                | CqlType::Float
                | CqlType::Double
                | CqlType::Decimal,
                Value::String(s),
            ) => Literal::Number(s.trim().to_string()),
            (CqlType::Uuid | CqlType::Timeuuid, Value::String(s)) => Literal::Uuid(s.clone()),
            (CqlType::Blob, Value::String(s)) => {
                Literal::Hex(s.strip_prefix("0x").ok_or_else(bad)?.to_string())
            }
            (CqlType::Duration, Value::String(s)) => Literal::Duration(s.clone()),
            (
                CqlType::Timestamp | CqlType::Date | CqlType::Time | CqlType::Inet,
                Value::String(s),
            ) => Literal::Str(s.clone()),
            (CqlType::List(e) | CqlType::Vector(e, _), Value::Array(items)) => Literal::List(
                items
                    .iter()
                    .map(|i| typed(e, i))
                    .collect::<Result<_, _>>()?,
            ),
            (CqlType::Set(e), Value::Array(items)) => Literal::Set(
                items
                    .iter()
                    .map(|i| typed(e, i))
                    .collect::<Result<_, _>>()?,
            ),
            (CqlType::Tuple(ts), Value::Array(items)) if items.len() <= ts.len() => Literal::Tuple(
                items
                    .iter()
                    .zip(ts)
                    .map(|(i, t)| typed(t, i))
                    .collect::<Result<_, _>>()?,
            ),
            (CqlType::Udt(u), Value::Object(entries)) => {
                let mut fields = Vec::with_capacity(entries.len());
                for (name, value) in entries {
                    // A field's name is read as a CQL identifier would be (Cassandra's rule).
                    let name = match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
                        Some(quoted) => quoted.to_string(),
                        None => name.to_lowercase(),
                    };
                    let t = u.field(&name).map(|(_, t)| t).ok_or_else(|| {
                        CqlError::invalid(format!(
                            "Unknown field '{name}' in value of user defined type {}",
                            u.name
                        ))
                    })?;
                    fields.push((name, typed(t, value)?));
                }
                Literal::Udt(fields)
            }
            (CqlType::Map(k, val), Value::Object(entries)) => {
                let mut pairs = Vec::with_capacity(entries.len());
                for (key, value) in entries {
                    // A key that is not text is written as its JSON, or its text, in a string.
                    let key = match **k {
                        CqlType::Ascii | CqlType::Text => Value::String(key.clone()),
                        _ => {
                            serde_json::from_str(key).unwrap_or_else(|_| Value::String(key.clone()))
                        }
                    };
                    pairs.push((typed(k, &key)?, typed(val, value)?));
                }
                Literal::Map(pairs)
            }
            _ => return Err(bad()),
        };
        self.encode(&lit, column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_java_prints_them() {
        let d = |v: f64| CqlType::Double.to_json(&v.to_be_bytes());
        assert_eq!(d(2.5), "2.5");
        assert_eq!(d(100.0), "100.0");
        assert_eq!(d(1e10), "1.0E10");
        assert_eq!(d(1.5e-5), "1.5E-5");
        assert_eq!(d(-0.0), "-0.0");
        assert_eq!(d(f64::NAN), "null");
        assert_eq!(CqlType::Float.to_json(&0.1f32.to_be_bytes()), "0.1");
        let dec = |scale: i32, unscaled: i64| {
            let mut b = scale.to_be_bytes().to_vec();
            b.extend(BigInt::from(unscaled).to_signed_bytes_be());
            CqlType::Decimal.to_json(&b)
        };
        assert_eq!(dec(2, 12345), "123.45");
        assert_eq!(dec(-30, 1), "1E+30");
        assert_eq!(dec(10, 15), "1.5E-9");
        assert_eq!(quoted("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\u0001é\"");
    }
}
