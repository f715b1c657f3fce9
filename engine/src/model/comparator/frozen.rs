//! `FrozenType(ListType(E))`, `FrozenType(SetType(E))`, `FrozenType(MapType(K,V))`: a frozen
//! collection held as one value in its serialized form (an `int` count, then each element, a
//! map's key then its value, as an `int` length and bytes), ordered as Cassandra orders it:
//! element by element, each by its own type, and a collection that runs out first sorts first.
//! That order is what lets a frozen collection be a clustering column, a set's element or a
//! map's key.
//!
//! Its sort key is each element's own sort key, escaped and closed by `00 01`, then `00 00`
//! (see `model::sort_key`): an element that is a prefix of another sorts first, and so does the
//! collection that ends first. This file must not know about CQL statements.

use super::builtin::{from_checked_hex, to_hex};
use super::collection::{Collection, CqlLiteral};
use super::element_key;
use super::{Comparator, MarshalError};
use crate::model::sort_key::{escaped_len, unescape_into};

/// Closes an element's escaped sort key.
const ELEMENT: u8 = 1;
/// Closes the collection.
const END: u8 = 0;

/// An element of a serialized collection, with its type.
type Typed<'a> = (&'a dyn Comparator, &'a [u8]);

/// A frozen collection.
#[derive(Debug, Clone)]
pub struct FrozenType(pub Collection);

impl FrozenType {
    /// The type of element `i` (a map's elements alternate key and value).
    fn element_type(&self, i: usize) -> &dyn Comparator {
        match &self.0 {
            Collection::List(e) | Collection::Set(e) => e.as_ref(),
            Collection::Map(k, _) if i.is_multiple_of(2) => k.as_ref(),
            Collection::Map(_, v) => v.as_ref(),
        }
    }

    /// Items per entry: a map's entry is a key and a value.
    fn width(&self) -> usize {
        match self.0 {
            Collection::Map(..) => 2,
            _ => 1,
        }
    }

    /// The elements of a serialized value, in order (a map's key then value), with their types.
    /// Lengths are checked against the bytes before anything is allocated for them.
    fn elements<'a>(&'a self, bytes: &'a [u8]) -> Result<Vec<Typed<'a>>, MarshalError> {
        fn int(rest: &mut &[u8], what: &str) -> Result<usize, MarshalError> {
            let (head, tail) = rest.split_first_chunk::<4>().ok_or_else(|| {
                MarshalError::new(format!("frozen collection cut short in its {what}"))
            })?;
            *rest = tail;
            usize::try_from(i32::from_be_bytes(*head))
                .map_err(|_| MarshalError::new(format!("frozen collection with a negative {what}")))
        }
        let mut rest = bytes;
        let entries = int(&mut rest, "count")?;
        let items = entries
            .checked_mul(self.width())
            .filter(|&n| n <= bytes.len() / 4)
            .ok_or_else(|| {
                MarshalError::new(format!(
                    "frozen collection of {entries} entries in {} bytes",
                    bytes.len()
                ))
            })?;
        let mut out = Vec::with_capacity(items);
        for i in 0..items {
            let len = int(&mut rest, "element length")?;
            let element = rest.get(..len).ok_or_else(|| {
                MarshalError::new(format!(
                    "frozen collection element {i} of {len} bytes, {} left",
                    rest.len()
                ))
            })?;
            rest = &rest[len..];
            out.push((self.element_type(i), element));
        }
        if !rest.is_empty() {
            return Err(MarshalError::new(format!(
                "{} bytes after the frozen collection's last element",
                rest.len()
            )));
        }
        Ok(out)
    }
}

impl Comparator for FrozenType {
    fn name(&self) -> String {
        format!("FrozenType({})", self.0.name())
    }

    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        for (i, (t, e)) in self.elements(name)?.into_iter().enumerate() {
            t.validate(e).map_err(|err| {
                MarshalError::new(format!("frozen collection element {i}: {}", err.0))
            })?;
        }
        Ok(())
    }

    fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
        if name.is_empty() {
            // As for every comparator (a valid value is never empty: it has a count).
            return;
        }
        let Ok(elements) = self.elements(name) else {
            return element_key::push_unparsed(name, END, out);
        };
        let mut scratch = Vec::new();
        for (t, e) in elements {
            element_key::push(t, e, ELEMENT, &mut scratch, out);
        }
        out.extend_from_slice(&[0, END]);
    }

    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        if key.is_empty() {
            return Ok(());
        }
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        let (mut rest, mut items, mut scratch) = (key, 0usize, Vec::new());
        loop {
            let n = escaped_len(rest)
                .ok_or_else(|| MarshalError::new("frozen collection sort key unterminated"))?;
            let (part, term) = (&rest[..n - 2], rest[n - 1]);
            rest = &rest[n..];
            match term {
                END if part.is_empty() => break,
                ELEMENT => {
                    scratch.clear();
                    unescape_into(part, &mut scratch);
                    let at = out.len();
                    out.extend_from_slice(&[0; 4]);
                    let t = self.element_type(items);
                    t.decode_sort_key(&scratch, out)?;
                    // A sort key only a damaged file holds (an empty `int`) must not come back
                    // as a name its own comparator refuses.
                    t.validate(&out[at + 4..]).map_err(|err| {
                        MarshalError::new(format!("frozen collection element {items}: {}", err.0))
                    })?;
                    let len = i32::try_from(out.len() - at - 4)
                        .map_err(|_| MarshalError::new("frozen collection element too long"))?;
                    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
                    items += 1;
                }
                _ => {
                    return Err(MarshalError::new(format!(
                        "frozen collection sort key has terminator {term}"
                    )))
                }
            }
        }
        if !rest.is_empty() || !items.is_multiple_of(self.width()) {
            return Err(MarshalError::new(
                "frozen collection sort key does not end where its last entry does",
            ));
        }
        let count = i32::try_from(items / self.width())
            .map_err(|_| MarshalError::new("frozen collection of too many elements"))?;
        out[start..start + 4].copy_from_slice(&count.to_be_bytes());
        Ok(())
    }

    fn to_text(&self, name: &[u8]) -> String {
        let Ok(elements) = self.elements(name) else {
            return to_hex(name);
        };
        let texts: Vec<String> = elements
            .iter()
            .map(|(t, e)| CqlLiteral::text(*t, e))
            .collect();
        match self.0 {
            Collection::List(_) => format!("[{}]", texts.join(", ")),
            Collection::Set(_) => format!("{{{}}}", texts.join(", ")),
            Collection::Map(..) => {
                let entries: Vec<String> = texts.chunks(2).map(|kv| kv.join(": ")).collect();
                format!("{{{}}}", entries.join(", "))
            }
        }
    }

    /// The serialized form in hex (a literal's form is the CQL layer's to parse).
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        from_checked_hex(self, text)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::super::{sort_key, BytesType, ComparatorRegistry, Int32Type, Utf8Type};
    use super::*;

    fn serialize(items: &[&[u8]], entries: usize) -> Vec<u8> {
        let mut v = i32::try_from(entries).unwrap().to_be_bytes().to_vec();
        for i in items {
            v.extend_from_slice(&i32::try_from(i.len()).unwrap().to_be_bytes());
            v.extend_from_slice(i);
        }
        v
    }

    fn ints(xs: &[i32]) -> Vec<u8> {
        let b: Vec<[u8; 4]> = xs.iter().map(|x| x.to_be_bytes()).collect();
        let r: Vec<&[u8]> = b.iter().map(|x| &x[..]).collect();
        serialize(&r, xs.len())
    }

    fn list_of_int() -> FrozenType {
        FrozenType(Collection::List(Arc::new(Int32Type)))
    }

    #[test]
    fn orders_element_by_element_and_shorter_first() {
        let t = list_of_int();
        let order = [
            ints(&[]),
            ints(&[-5]),
            ints(&[-5, 0]),
            ints(&[-5, 0, 1]),
            ints(&[-5, 1]),
            ints(&[0]),
            ints(&[3, -100]),
        ];
        for w in order.windows(2) {
            assert!(t.compare(&w[0], &w[1]).is_lt(), "{:?} {:?}", w[0], w[1]);
        }
        let text = FrozenType(Collection::Set(Arc::new(Utf8Type)));
        let (a, ab, b) = (
            serialize(&[b"a"], 1),
            serialize(&[b"a", b"b"], 2),
            serialize(&[b"a\0"], 1),
        );
        assert!(text.compare(&a, &ab).is_lt() && text.compare(&ab, &b).is_lt());
        assert_eq!(
            text.to_text(&serialize(&[b"it's", b"x"], 2)),
            "{'it''s', 'x'}"
        );
        let map = FrozenType(Collection::Map(Arc::new(Utf8Type), Arc::new(Int32Type)));
        let m = serialize(&[b"k", &7i32.to_be_bytes()], 1);
        assert!(map.validate(&m).is_ok());
        assert_eq!(map.to_text(&m), "{'k': 7}");
        assert_eq!(t.to_text(&ints(&[1, -2])), "[1, -2]");
    }

    #[test]
    fn refuses_what_is_not_a_frozen_collection() {
        let t = list_of_int();
        for bad in [
            vec![],
            vec![0, 0, 0],
            (-1i32).to_be_bytes().to_vec(),
            i32::MAX.to_be_bytes().to_vec(),
            serialize(&[b"abc"], 1),
            serialize(&[b"\0\0\0\x01"], 2),
            [ints(&[1]), vec![9]].concat(),
        ] {
            assert!(t.validate(&bad).is_err(), "{bad:?}");
        }
        let map = FrozenType(Collection::Map(Arc::new(Int32Type), Arc::new(Int32Type)));
        assert!(
            map.validate(&ints(&[1])).is_err(),
            "a key without its value"
        );
        let mut out = Vec::new();
        // `[0, 1, 0, 0]`: an element with an empty sort key, which no `int` has.
        for key in [&[0][..], &[0, 1], &[0, 0, 5], &[1, 0, 0], &[0, 1, 0, 0]] {
            assert!(t.decode_sort_key(key, &mut out).is_err(), "{key:?}");
        }
    }

    #[test]
    fn the_registry_resolves_cassandras_name() {
        let t = FrozenType(Collection::Map(
            Arc::new(Utf8Type),
            Arc::new(FrozenType(Collection::List(Arc::new(Int32Type)))),
        ));
        let name = t.name();
        assert_eq!(
            name,
            "FrozenType(MapType(UTF8Type,FrozenType(ListType(Int32Type))))"
        );
        let back = ComparatorRegistry::default().resolve(&name).unwrap();
        assert_eq!(back.name(), name);
        let p = "org.apache.cassandra.db.marshal.";
        let long = format!("{p}FrozenType({p}ListType({p}Int32Type))");
        let back = ComparatorRegistry::default().resolve(&long).unwrap();
        assert_eq!(back.name(), "FrozenType(ListType(Int32Type))");
    }

    proptest! {
        #[test]
        fn sort_keys_follow_cassandras_order_and_decode_back(
            a in prop::collection::vec(any::<i32>(), 0..5),
            b in prop::collection::vec(any::<i32>(), 0..5),
        ) {
            let t = list_of_int();
            let (sa, sb) = (ints(&a), ints(&b));
            prop_assert_eq!(sort_key(&t, &sa).cmp(&sort_key(&t, &sb)), a.cmp(&b));
            let mut back = Vec::new();
            t.decode_sort_key(&sort_key(&t, &sa), &mut back).unwrap();
            prop_assert_eq!(back, sa.clone());
            prop_assert_eq!(t.parse_text(&to_hex(&sa)).unwrap(), sa);
        }

        #[test]
        fn blobs_with_zero_bytes_order_and_decode_back(
            a in prop::collection::vec(prop::collection::vec(prop::sample::select(vec![0u8, 1, 0xff]), 0..4), 0..4),
            b in prop::collection::vec(prop::collection::vec(prop::sample::select(vec![0u8, 1, 0xff]), 0..4), 0..4),
        ) {
            let t = FrozenType(Collection::Set(Arc::new(BytesType)));
            let enc = |v: &Vec<Vec<u8>>| {
                let r: Vec<&[u8]> = v.iter().map(Vec::as_slice).collect();
                serialize(&r, v.len())
            };
            let (sa, sb) = (enc(&a), enc(&b));
            prop_assert_eq!(sort_key(&t, &sa).cmp(&sort_key(&t, &sb)), a.cmp(&b));
            let mut back = Vec::new();
            t.decode_sort_key(&sort_key(&t, &sa), &mut back).unwrap();
            prop_assert_eq!(back, sa);
        }
    }
}
