//! CQL's `tuple<…>` values (always frozen: one cell): their serialized form (each element an
//! `int` length and bytes, `-1` for a null; a value may stop early, the rest null, as Cassandra
//! reads it), their literals (`(1, 'a', null)`), their check and their text. Which types a
//! tuple may hold, and where a tuple may go, is `table/`'s.

use super::{CqlType, Literal};
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

/// The bytes of a tuple literal `items` for a tuple of `types` (in `column`).
pub(super) fn encode(
    types: &[CqlType],
    items: &[Literal],
    column: &str,
) -> Result<Vec<u8>, CqlError> {
    if items.len() > types.len() {
        return Err(CqlError::invalid(format!(
            "Invalid tuple literal for {column}: too many elements. Type {} expects {} but got {}",
            CqlType::Tuple(types.to_vec()),
            types.len(),
            items.len()
        )));
    }
    let mut out = Vec::new();
    for (item, ty) in items.iter().zip(types) {
        match ty.encode(item, column)? {
            Some(b) => {
                let len = i32::try_from(b.len()).map_err(|_| {
                    CqlError::invalid(format!("a tuple element of {column} is too long"))
                })?;
                out.extend_from_slice(&len.to_be_bytes());
                out.extend_from_slice(&b);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    Ok(out)
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
    }
}
