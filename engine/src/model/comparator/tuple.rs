//! `TupleType(T1, T2, …)`: a CQL tuple held as one value in its serialized form (each element
//! an `int` length and bytes, `-1` for a null; a value may stop before the type's last
//! element), ordered as Cassandra orders it: element by element, each by its own type, a null
//! before any value, and a tuple that runs out first before a longer one. That order is what
//! lets a tuple be a key, a clustering column, a set's element or a map's key.
//!
//! Its sort key writes each element as `02`, its own sort key escaped, then `00 01`; a null as
//! `01`; and closes the tuple with `00 00` (see `model::sort_key`). So the end sorts before a
//! null, a null before a value, and an element that is a prefix of another first. This file
//! must not know about CQL statements.

use std::sync::Arc;

use super::builtin::{from_checked_hex, to_hex};
use super::collection::CqlLiteral;
use super::element_key;
use super::{Comparator, MarshalError};

/// Opens a null element.
const NULL: u8 = 1;
/// Opens an element's escaped sort key (closed by `00 01`).
const VALUE: u8 = 2;
/// Closes an element's escaped sort key.
const CLOSE: u8 = 1;

/// An element of a serialized tuple, with its type (`None`: null).
type Element<'a> = (&'a dyn Comparator, Option<&'a [u8]>);

/// A tuple of the given element types.
#[derive(Debug, Clone)]
pub struct TupleType(pub Vec<Arc<dyn Comparator>>);

impl TupleType {
    /// The elements of a serialized value, in order (`None`: null), with their types. Lengths
    /// are checked against the bytes before anything is allocated for them.
    fn elements<'a>(&'a self, bytes: &'a [u8]) -> Result<Vec<Element<'a>>, MarshalError> {
        let mut rest = bytes;
        let mut out = Vec::new();
        while !rest.is_empty() {
            let i = out.len();
            let t = self.0.get(i).ok_or_else(|| {
                MarshalError::new(format!("a tuple of {} elements has more", self.0.len()))
            })?;
            let (head, tail) = rest
                .split_first_chunk::<4>()
                .ok_or_else(|| MarshalError::new(format!("tuple element {i} cut short")))?;
            rest = tail;
            let Ok(len) = usize::try_from(i32::from_be_bytes(*head)) else {
                out.push((t.as_ref(), None));
                continue;
            };
            let element = rest.get(..len).ok_or_else(|| {
                MarshalError::new(format!(
                    "tuple element {i} of {len} bytes, {} left",
                    rest.len()
                ))
            })?;
            rest = &rest[len..];
            out.push((t.as_ref(), Some(element)));
        }
        Ok(out)
    }
}

impl Comparator for TupleType {
    fn name(&self) -> String {
        let names: Vec<String> = self.0.iter().map(|t| t.name()).collect();
        format!("TupleType({})", names.join(","))
    }

    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        for (i, (t, e)) in self.elements(name)?.into_iter().enumerate() {
            if let Some(e) = e.filter(|e| !e.is_empty()) {
                t.validate(e)
                    .map_err(|err| MarshalError::new(format!("tuple element {i}: {}", err.0)))?;
            }
        }
        Ok(())
    }

    fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
        if name.is_empty() {
            // As for every comparator (the empty name is a bound).
            return;
        }
        let Ok(elements) = self.elements(name) else {
            return element_key::push_unparsed(name, 0, out);
        };
        let mut scratch = Vec::new();
        for (t, e) in elements {
            let Some(e) = e else {
                out.push(NULL);
                continue;
            };
            out.push(VALUE);
            element_key::push(t, e, CLOSE, &mut scratch, out);
        }
        out.extend_from_slice(&[0, 0]);
    }

    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        if key.is_empty() {
            return Ok(());
        }
        let (mut rest, mut i, mut scratch) = (key, 0usize, Vec::new());
        loop {
            let bad = |what: &str| MarshalError::new(format!("tuple sort key: {what}"));
            match rest {
                [0, 0] => return Ok(()),
                [NULL, tail @ ..] => {
                    out.extend_from_slice(&(-1i32).to_be_bytes());
                    rest = tail;
                }
                [VALUE, tail @ ..] => {
                    let t = self
                        .0
                        .get(i)
                        .ok_or_else(|| bad("more elements than its type"))?;
                    let after = element_key::take(tail, CLOSE, &mut scratch).map_err(bad)?;
                    let at = out.len();
                    out.extend_from_slice(&[0; 4]);
                    t.decode_sort_key(&scratch, out)?;
                    let len =
                        i32::try_from(out.len() - at - 4).map_err(|_| bad("element too long"))?;
                    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
                    rest = after;
                }
                _ => return Err(bad("not an element, a null or the end")),
            }
            i += 1;
        }
    }

    fn to_text(&self, name: &[u8]) -> String {
        let Ok(elements) = self.elements(name) else {
            return to_hex(name);
        };
        let texts: Vec<String> = elements
            .iter()
            .map(|(t, e)| e.map_or_else(|| "null".into(), |e| CqlLiteral::text(*t, e)))
            .collect();
        format!("({})", texts.join(", "))
    }

    /// The serialized form in hex (a literal's form is the CQL layer's to parse).
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        from_checked_hex(self, text)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{sort_key, Int32Type, ReversedType, Utf8Type};
    use super::*;
    use proptest::prelude::*;

    fn ty() -> TupleType {
        TupleType(vec![
            Arc::new(Int32Type),
            Arc::new(ReversedType(Arc::new(Utf8Type))),
        ])
    }

    /// A tuple value of up to two elements (`None`: null).
    fn value(items: &[Option<Vec<u8>>]) -> Vec<u8> {
        let mut out = Vec::new();
        for i in items {
            match i {
                Some(b) => {
                    out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    out.extend_from_slice(b);
                }
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        out
    }

    #[test]
    fn nulls_and_shorter_tuples_sort_first() {
        let t = ty();
        let one = |i: i32| Some(i.to_be_bytes().to_vec());
        let ordered = [
            value(&[None]),
            value(&[one(-1)]),
            value(&[one(1)]),
            value(&[one(1), None]),
            value(&[one(1), Some(b"b".to_vec())]),
            value(&[one(1), Some(b"a".to_vec())]),
            value(&[one(2)]),
        ];
        for w in ordered.windows(2) {
            assert!(sort_key(&t, &w[0]) < sort_key(&t, &w[1]), "{w:?}");
        }
        assert_eq!(t.to_text(&ordered[3]), "(1, null)");
        assert!(t.validate(&value(&[one(1), Some(vec![]), one(3)])).is_err());
    }

    proptest! {
        #[test]
        fn sort_keys_decode_back(
            a in proptest::option::of(any::<i32>()),
            s in proptest::option::of("[a-c\\x00]{0,3}"),
            short: bool,
        ) {
            let t = ty();
            let mut items = vec![a.map(|a| a.to_be_bytes().to_vec())];
            if !short {
                items.push(s.map(String::into_bytes));
            }
            let v = value(&items);
            t.validate(&v).unwrap();
            let mut back = Vec::new();
            t.decode_sort_key(&sort_key(&t, &v), &mut back).unwrap();
            prop_assert_eq!(back, v);
        }
    }
}
