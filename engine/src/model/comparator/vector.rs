//! `VectorType(T, n)`: Cassandra 5's `vector<T, n>` held as one value in its serialized form
//! (exactly `n` elements, none null: a fixed-size type's bytes one after another, a
//! variable-size type's each after its length as an unsigned variable-length integer), ordered
//! as Cassandra orders it: element by element, each by its own type. That order is what lets a
//! vector be a key or a clustering column.
//!
//! Its sort key writes each element's own sort key escaped, then `00 01` (see
//! `model::sort_key`), so an element that is a prefix of another sorts first and the vectors
//! compare element by element. This file must not know about CQL statements.

use std::sync::Arc;

use super::builtin::{from_checked_hex, to_hex};
use super::collection::CqlLiteral;
use super::element_key;
use super::{Comparator, MarshalError};
use crate::model::vint::{get_vint, put_vint};

/// Closes each element's escaped sort key.
const CLOSE: u8 = 1;

/// The most elements a vector type may name (Cassandra's limit is far lower; this one only
/// keeps a hostile type name from sizing an allocation).
pub const MAX_DIMENSION: usize = 1 << 20;

/// A vector of `dimension` elements of one type.
#[derive(Debug, Clone)]
pub struct VectorType {
    element: Arc<dyn Comparator>,
    dimension: usize,
    /// The element's fixed size, if it has one (then it is stored without a length).
    fixed: Option<usize>,
}

impl VectorType {
    /// A vector of `dimension` elements of `element`, 1 to `MAX_DIMENSION` (2^20).
    pub fn new(element: Arc<dyn Comparator>, dimension: usize) -> Result<Self, MarshalError> {
        if dimension == 0 || dimension > MAX_DIMENSION {
            return Err(MarshalError::new(format!(
                "vectors may only have positive dimensions up to {MAX_DIMENSION}; given {dimension}"
            )));
        }
        let fixed = element.value_length_if_fixed();
        Ok(VectorType {
            element,
            dimension,
            fixed,
        })
    }

    /// The elements of a serialized value, in order. Lengths are checked against the bytes
    /// before anything is allocated for them.
    fn elements<'a>(&self, bytes: &'a [u8]) -> Result<Vec<&'a [u8]>, MarshalError> {
        let n = self.dimension;
        if let Some(size) = self.fixed {
            if Some(bytes.len()) != size.checked_mul(n) {
                return Err(MarshalError::new(format!(
                    "a vector of {n} elements of {size} bytes, not {} bytes",
                    bytes.len()
                )));
            }
            return Ok(bytes.chunks(size.max(1)).collect());
        }
        // Each element takes at least its length's byte.
        if bytes.len() < n {
            return Err(MarshalError::new(format!(
                "a vector of {n} elements in {} bytes",
                bytes.len()
            )));
        }
        let mut rest = bytes;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let element = get_vint(&mut rest)
                .and_then(|len| usize::try_from(len).ok())
                .and_then(|len| rest.get(..len))
                .ok_or_else(|| MarshalError::new(format!("vector element {i} cut short")))?;
            rest = &rest[element.len()..];
            out.push(element);
        }
        if !rest.is_empty() {
            return Err(MarshalError::new(format!(
                "{} bytes after a vector's last element",
                rest.len()
            )));
        }
        Ok(out)
    }
}

impl Comparator for VectorType {
    fn name(&self) -> String {
        format!("VectorType({}, {})", self.element.name(), self.dimension)
    }

    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        for (i, e) in self.elements(name)?.into_iter().enumerate() {
            self.element
                .validate(e)
                .map_err(|err| MarshalError::new(format!("vector element {i}: {}", err.0)))?;
        }
        Ok(())
    }

    fn value_length_if_fixed(&self) -> Option<usize> {
        self.fixed?.checked_mul(self.dimension)
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
        for e in elements {
            element_key::push(self.element.as_ref(), e, CLOSE, &mut scratch, out);
        }
    }

    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        let bad = |what: &str| MarshalError::new(format!("vector sort key: {what}"));
        let (mut rest, mut scratch, mut element) = (key, Vec::new(), Vec::new());
        for _ in 0..self.dimension {
            rest = element_key::take(rest, CLOSE, &mut scratch).map_err(bad)?;
            element.clear();
            self.element.decode_sort_key(&scratch, &mut element)?;
            match self.fixed {
                Some(size) if size != element.len() => return Err(bad("element of another size")),
                Some(_) => {}
                None => put_vint(element.len() as u64, out),
            }
            out.extend_from_slice(&element);
        }
        if rest.is_empty() {
            Ok(())
        } else {
            Err(bad("more elements than its type"))
        }
    }

    fn to_text(&self, name: &[u8]) -> String {
        let Ok(elements) = self.elements(name) else {
            return to_hex(name);
        };
        let texts: Vec<String> = elements
            .iter()
            .map(|e| CqlLiteral::text(self.element.as_ref(), e))
            .collect();
        format!("[{}]", texts.join(", "))
    }

    /// The serialized form in hex (a literal's form is the CQL layer's to parse).
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        from_checked_hex(self, text)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{sort_key, FloatType, Int32Type, Utf8Type};
    use super::*;
    use proptest::prelude::*;

    fn ints(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|i| i.to_be_bytes()).collect()
    }

    fn texts(v: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        for s in v {
            put_vint(s.len() as u64, &mut out);
            out.extend_from_slice(s.as_bytes());
        }
        out
    }

    #[test]
    fn vectors_order_element_by_element() {
        let t = VectorType::new(Arc::new(Int32Type), 2).unwrap();
        let ordered = [
            ints(&[-5, 9]),
            ints(&[0, -1]),
            ints(&[0, 0]),
            ints(&[1, -9]),
        ];
        for w in ordered.windows(2) {
            assert!(sort_key(&t, &w[0]) < sort_key(&t, &w[1]), "{w:?}");
        }
        assert_eq!(t.value_length_if_fixed(), Some(8));
        assert_eq!(t.to_text(&ordered[0]), "[-5, 9]");
        assert!(t.validate(&ints(&[1])).is_err());
        let s = VectorType::new(Arc::new(Utf8Type), 2).unwrap();
        let ordered = [texts(&["a", "zz"]), texts(&["ab", ""]), texts(&["b", "a"])];
        for w in ordered.windows(2) {
            assert!(sort_key(&s, &w[0]) < sort_key(&s, &w[1]), "{w:?}");
        }
        assert_eq!(s.to_text(&ordered[0]), "['a', 'zz']");
        assert!(s.validate(&texts(&["a"])).is_err());
        assert!(s.validate(&texts(&["a", "b", "c"])).is_err());
        assert!(VectorType::new(Arc::new(FloatType), 0).is_err());
    }

    #[test]
    fn a_vector_type_name_resolves_back_to_its_type() {
        let registry = super::super::ComparatorRegistry::default();
        for name in [
            "VectorType(Int32Type, 2)",
            "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.UTF8Type, 3)",
            "VectorType(VectorType(FloatType, 2), 2)",
        ] {
            let t = registry.resolve(name).unwrap();
            assert!(t.name().starts_with("VectorType("), "{name}");
        }
        let nested = registry
            .resolve("VectorType(VectorType(FloatType, 2), 2)")
            .unwrap();
        assert_eq!(nested.value_length_if_fixed(), Some(16));
        for bad in [
            "VectorType(Int32Type)",
            "VectorType(Int32Type, 0)",
            "VectorType(Int32Type, x)",
        ] {
            assert!(registry.resolve(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn sort_keys_decode_back(a: i32, b: i32, x in "[a-c\\x00]{0,3}", y in "[a-c\\x00]{0,3}") {
            let t = VectorType::new(Arc::new(Int32Type), 2).unwrap();
            let v = ints(&[a, b]);
            let mut back = Vec::new();
            t.decode_sort_key(&sort_key(&t, &v), &mut back).unwrap();
            prop_assert_eq!(back, v);
            let s = VectorType::new(Arc::new(Utf8Type), 2).unwrap();
            let v = texts(&[&x, &y]);
            s.validate(&v).unwrap();
            let mut back = Vec::new();
            s.decode_sort_key(&sort_key(&s, &v), &mut back).unwrap();
            prop_assert_eq!(back, v);
        }
    }
}
