//! `ReversedType(T)`: the comparator of a `CLUSTERING ORDER BY … DESC` column. Its sort key is
//! T's, escaped and terminated (so no key is a prefix of another) and then complemented, which
//! reverses the order; the empty name stays empty and first, as Cassandra keeps it for bounds.

use std::cmp::Ordering;
use std::sync::Arc;

use super::{Comparator, MarshalError};
use crate::model::sort_key::{escape_into, split_escaped};

/// `ReversedType(T)`: T's order backwards (a `CLUSTERING ORDER BY … DESC` column). The empty
/// name still sorts first, as Cassandra's `ReversedType` keeps it for slice bounds.
#[derive(Debug, Clone)]
pub struct ReversedType(pub Arc<dyn Comparator>);

impl Comparator for ReversedType {
    fn name(&self) -> String {
        format!("ReversedType({})", self.0.name())
    }
    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        self.0.validate(name)
    }
    fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
        if name.is_empty() {
            return;
        }
        let mut inner = Vec::with_capacity(name.len() + 1);
        self.0.encode_sort_key(name, &mut inner);
        let start = out.len();
        escape_into(&inner, out);
        out.extend_from_slice(&[0, 1]);
        for b in &mut out[start..] {
            *b = !*b;
        }
    }
    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        if key.is_empty() {
            return Ok(());
        }
        let plain: Vec<u8> = key.iter().map(|b| !b).collect();
        match split_escaped(&plain) {
            Some((inner, 1, [])) => self.0.decode_sort_key(&inner, out),
            _ => Err(MarshalError::new("ReversedType sort key is malformed")),
        }
    }
    fn to_text(&self, name: &[u8]) -> String {
        self.0.to_text(name)
    }
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        self.0.parse_text(text)
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        match (a.is_empty(), b.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => self.0.compare(b, a),
        }
    }
}
