//! CQL's `tuple<…>` values (always frozen: one cell): their serialized form (each element an
//! `int` length and bytes, `-1` for a null; a value may stop early, the rest null, as Cassandra
//! reads it), their literals (`(1, 'a', null)`, and Cassandra's string form `'1:a'`), their
//! check and their text. Which types a
//! tuple may hold, and where a tuple may go, is `table/`'s.

use super::literal_refusal::mismatch;
use super::{CqlType, Literal, Within};
use crate::error::CqlError;

/// One element of a tuple value (`None`: null).
pub type TupleElement = Option<Vec<u8>>;

impl CqlType {
    /// The elements of a tuple value of this type, each checked against its type; fewer than
    /// the type has are the rest null.
    pub fn tuple_elements(&self, bytes: &[u8]) -> Result<Vec<TupleElement>, String> {
        let CqlType::Tuple(types) = self else {
            return Err(format!("{self} is not a tuple"));
        };
        let mut r = bytes;
        let mut out = Vec::with_capacity(types.len());
        while !r.is_empty() {
            let ty = types
                .get(out.len())
                .ok_or("more elements than the tuple's type has")?;
            let (head, rest) = r
                .split_first_chunk::<4>()
                .ok_or("a tuple element cut short")?;
            r = rest;
            let len = i32::from_be_bytes(*head);
            if len < 0 {
                out.push(None);
                continue;
            }
            let len = usize::try_from(len).map_err(|_| "a tuple element's length")?;
            if len > r.len() {
                return Err("a tuple element cut short".into());
            }
            let (b, rest) = r.split_at(len);
            r = rest;
            ty.check(b)?;
            out.push(Some(b.to_vec()));
        }
        out.resize(types.len(), None);
        Ok(out)
    }

    /// Its text as cqlsh shows it: `(1, 'a', null)`.
    pub(super) fn tuple_text(&self, bytes: &[u8]) -> Option<String> {
        let CqlType::Tuple(types) = self else {
            return None;
        };
        let items = self.tuple_elements(bytes).ok()?;
        let body: Vec<String> = items
            .iter()
            .zip(types)
            .map(|(v, t)| match (v, t) {
                (None, _) => "null".into(),
                (Some(b), CqlType::Ascii | CqlType::Text) => {
                    format!("'{}'", t.display(b).replace('\'', "''"))
                }
                (Some(b), t) => t.display(b),
            })
            .collect();
        Some(format!("({})", body.join(", ")))
    }
}

/// The bytes of a tuple literal `items` for a tuple of `types` (in `column`), itself standing
/// `within` another literal if it does.
pub(super) fn encode(
    types: &[CqlType],
    items: &[Literal],
    column: &str,
    within: Option<Within<'_>>,
) -> Result<Vec<u8>, CqlError> {
    let ty = || CqlType::Tuple(types.to_vec());
    if items.len() > types.len() {
        // A tuple inside another literal is refused by the literal holding it.
        if within.is_some() {
            let lit = Literal::Tuple(items.to_vec());
            return Err(CqlError::invalid(mismatch(&ty(), &lit, column, within)));
        }
        return Err(CqlError::invalid(format!(
            "Invalid tuple literal for {column}: too many elements. Type {} expects {} but got {}",
            ty(),
            types.len(),
            items.len()
        )));
    }
    let mut fields = Vec::with_capacity(items.len());
    for (i, (item, ty)) in items.iter().zip(types).enumerate() {
        fields.push(ty.encode_in(item, column, Some(Within::Component(i)))?);
    }
    serialize(&fields, column)
}

/// The serialized form of a tuple's `fields` (`None`: null).
pub(super) fn serialize(fields: &[Option<Vec<u8>>], column: &str) -> Result<Vec<u8>, CqlError> {
    let mut out = Vec::new();
    for field in fields {
        match field {
            Some(b) => {
                let len = i32::try_from(b.len()).map_err(|_| {
                    CqlError::invalid(format!("a tuple element of {column} is too long"))
                })?;
                out.extend_from_slice(&len.to_be_bytes());
                out.extend_from_slice(b);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    Ok(out)
}

/// A tuple of `types` from Cassandra's string form of one (`TupleType.fromString`): fields
/// split on each `:` not escaped as `\:`, `@` a null, each field its type's string form.
pub(super) fn from_string(types: &[CqlType], text: &str) -> Result<Vec<u8>, CqlError> {
    let mut parts = vec![String::new()];
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ (':' | '@')) => parts.last_mut().into_iter().for_each(|p| p.push(e)),
                Some(e) => parts
                    .last_mut()
                    .into_iter()
                    .for_each(|p| p.extend(['\\', e])),
                None => parts.last_mut().into_iter().for_each(|p| p.push('\\')),
            },
            ':' => parts.push(String::new()),
            c => parts.last_mut().into_iter().for_each(|p| p.push(c)),
        }
    }
    let ty = CqlType::Tuple(types.to_vec());
    if parts.len() > types.len() {
        return Err(CqlError::invalid(format!(
            "Invalid tuple literal: too many elements. Type {ty} expects {} but got {}",
            types.len(),
            parts.len()
        )));
    }
    let mut fields = Vec::with_capacity(parts.len());
    for (part, t) in parts.iter().zip(types) {
        fields.push(match part.as_str() {
            "@" => None,
            _ => Some(field_from_string(t, part)?),
        });
    }
    serialize(&fields, "a tuple")
}

/// One field of a tuple's string form, as its type's string form reads it.
fn field_from_string(t: &CqlType, text: &str) -> Result<Vec<u8>, CqlError> {
    let bad = |e: String| CqlError::invalid(format!("Unable to make {t} from '{text}': {e}"));
    match t {
        CqlType::Text => Ok(text.as_bytes().to_vec()),
        CqlType::Frozen(inner) => field_from_string(inner, text),
        CqlType::Tuple(types) => from_string(types, text),
        _ => {
            let cmp = t.comparator().ok_or_else(|| bad("no string form".into()))?;
            cmp.parse_text(text).map_err(|e| bad(e.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_serialize_read_and_print_as_cassandra_does() {
        let t = CqlType::Tuple(vec![CqlType::Int, CqlType::Text, CqlType::Boolean]);
        let lit = [
            Literal::Number("1".into()),
            Literal::Str("it's".into()),
            Literal::Null,
        ];
        let b = encode(
            match &t {
                CqlType::Tuple(ts) => ts,
                _ => unreachable!(),
            },
            &lit,
            "c",
            None,
        )
        .unwrap();
        assert_eq!(
            b,
            [0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, b'i', b't', b'\'', b's', 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(t.tuple_text(&b).unwrap(), "(1, 'it''s', null)");
        // A value that stops early: the rest null.
        assert_eq!(t.tuple_elements(&b[..8]).unwrap().len(), 3);
        assert!(t.tuple_elements(&[0, 0, 0, 9, 1]).is_err());
        assert!(
            t.tuple_elements(&[0, 0, 0, 1, 7]).is_err(),
            "an int of one byte"
        );
        assert_eq!(t.to_string(), "frozen<tuple<int, text, boolean>>");
        // Cassandra's string form: `:` between fields, `\:` a colon, `@` a null.
        let CqlType::Tuple(ts) = &t else {
            unreachable!()
        };
        let b = from_string(ts, "1:a\\:b:true").unwrap();
        assert_eq!(t.tuple_text(&b).unwrap(), "(1, 'a:b', True)");
        let b = from_string(ts, "@:x").unwrap();
        assert_eq!(t.tuple_text(&b).unwrap(), "(null, 'x', null)");
        assert!(from_string(ts, "1:a:true:4").is_err());
    }
}
