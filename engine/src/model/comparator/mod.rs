//! The comparator trait (`CompareWith`, `CompareSubcolumnsWith`, `DefaultValidationClass`) and
//! the registry that resolves class names to comparators.
//!
//! A comparator validates names, orders them, renders them as text, parses them from text, and
//! maps each name to a *sort key*: bytes whose plain `memcmp` order equals the comparator's order.
//! The engine stores and merges sort keys only, so the memtable, block indexes and merges run on
//! byte comparison (as RocksDB's bytewise comparator does) whatever the column family's type.
//! This module owns the contract; the types themselves live in [`builtin`] and [`composite`].

/// The sort-key methods of a type whose names order as their bytes do: the name is its own sort
/// key (stored without encoding), decoding checks the name, and two names compare as bytes.
/// Expanded inside a type's `impl Comparator` rather than given as default trait methods, so a
/// type that orders otherwise can never inherit them by forgetting an override.
macro_rules! sort_key_is_the_name {
    () => {
        fn sort_key_is_name(&self) -> bool {
            true
        }
        fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
            out.extend_from_slice(name);
        }
        fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
            // The empty key is the empty name's (a bound, or an empty component).
            if !key.is_empty() {
                self.validate(key)?;
            }
            out.extend_from_slice(key);
            Ok(())
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
            a.cmp(b)
        }
    };
}

pub mod builtin;
pub mod collection;
pub mod composite;
pub mod cql_types;
mod decimal;
mod element_key;
mod frozen;
mod reversed;
mod tuple;
mod varint;
mod vector;

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::model::sort_key::{unescape_into, unescape_small, SMALL};

pub use builtin::{
    built_in, AsciiType, BytesType, LexicalUuidType, LongType, TimeUuidType, Utf8Type,
};
pub use collection::{Collection, ColumnToCollectionType};
pub use composite::{CompositeType, STATIC_MARKER};
pub use cql_types::{
    BooleanType, ByteType, DoubleType, FloatType, InetAddressType, Int32Type, IntegerType,
    ReversedType, ShortType, SimpleDateType, TimeType, TimestampType, UuidType,
};
pub use decimal::{decimal_text, DecimalType};
pub use frozen::FrozenType;
pub use tuple::TupleType;
pub use vector::VectorType;

/// Why a name or a text literal does not fit a comparator.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MarshalError(pub String);

impl MarshalError {
    /// A new error with the given reason.
    pub fn new(reason: impl Into<String>) -> Self {
        MarshalError(reason.into())
    }
}

/// The prefix Cassandra gives its comparator class names; names without a `.` get it implicitly.
pub const CASSANDRA_MARSHAL_PREFIX: &str = "org.apache.cassandra.db.marshal.";

/// A column-name type: validation, order, text form and an order-preserving byte encoding.
///
/// # The sort-key contract
/// For every pair of *valid* names `a`, `b`:
/// `compare(a, b) == encode_sort_key(a).cmp(&encode_sort_key(b))`, and
/// `decode_sort_key(encode_sort_key(a)) == a`. The empty name (legal only as a slice bound, or as
/// an empty component of a composite) encodes to the empty key, which decodes back to the empty
/// name, and so sorts first; every non-empty name encodes to a non-empty key.
/// The engine relies on this contract for all ordering; `compare` exists for callers and for
/// tests that check an implementation keeps the contract.
///
/// # A user-defined comparator
/// ```
/// use std::cmp::Ordering;
/// use supercolumn::comparator::{Comparator, MarshalError};
///
/// /// Names are 8-byte big-endian unsigned integers, sorted newest (largest) first.
/// #[derive(Debug)]
/// struct DescendingU64;
///
/// impl Comparator for DescendingU64 {
///     fn name(&self) -> String { "com.example.DescendingU64".into() }
///     fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
///         if name.len() == 8 { Ok(()) } else { Err(MarshalError::new("expected 8 bytes")) }
///     }
///     fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
///         out.extend(name.iter().map(|b| !b));
///     }
///     fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
///         out.extend(key.iter().map(|b| !b));
///         Ok(())
///     }
///     fn to_text(&self, name: &[u8]) -> String {
///         <[u8; 8]>::try_from(name).map(|b| u64::from_be_bytes(b).to_string()).unwrap_or_default()
///     }
///     fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
///         text.parse::<u64>().map(|v| v.to_be_bytes().to_vec()).map_err(|e| MarshalError::new(e.to_string()))
///     }
/// }
///
/// let c = DescendingU64;
/// assert_eq!(c.compare(&9u64.to_be_bytes(), &3u64.to_be_bytes()), Ordering::Less);
/// ```
pub trait Comparator: Send + Sync + fmt::Debug {
    /// The class name this comparator is registered and stored under (`LongType`,
    /// `CompositeType(UTF8Type,LongType)`, `com.example.MyType`).
    fn name(&self) -> String;

    /// Checks that a non-empty `name` is valid for this type. (Emptiness is checked by the
    /// engine: an empty name is never stored, whatever the type.)
    fn validate(&self, name: &[u8]) -> Result<(), MarshalError>;

    /// Appends the sort key of `name` to `out`. Only called with valid or empty names.
    fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>);

    /// Checks that a non-empty `name` is valid (as [`validate`](Self::validate)) and that
    /// `sort_key` is what [`encode_sort_key`](Self::encode_sort_key) writes for it: what a
    /// write that comes with its sort key (`BatchMutation::insert_sorted`) is checked with.
    /// The default encodes into `scratch` and compares; a type may compare as it walks.
    fn validate_sorted(
        &self,
        name: &[u8],
        sort_key: &[u8],
        scratch: &mut Vec<u8>,
    ) -> Result<(), MarshalError> {
        self.validate(name)?;
        let matches = if self.sort_key_is_name() {
            name == sort_key
        } else {
            scratch.clear();
            self.encode_sort_key(name, scratch);
            scratch.as_slice() == sort_key
        };
        if matches {
            Ok(())
        } else {
            Err(MarshalError::new("the sort key given is not the name's"))
        }
    }

    /// Appends the name whose sort key is `key` to `out`. `key` may come from a damaged file,
    /// so this must return an error, never panic, on bytes it could not have produced.
    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError>;

    /// [`decode_sort_key`](Self::decode_sort_key) of a sort key as a composite name holds it,
    /// escaped (each `00` written `00 FF`, as `escaped_len` delimits it). The default unescapes
    /// first; a type may decode straight from the escaped bytes.
    fn decode_escaped_sort_key(&self, part: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        let mut small = [0; SMALL];
        if let Some(key) = unescape_small(part, &mut small) {
            return self.decode_sort_key(key, out);
        }
        let mut key = Vec::with_capacity(part.len());
        unescape_into(part, &mut key);
        self.decode_sort_key(&key, out)
    }

    /// The text form of a name, as the shell and `sstable-dump` print it.
    fn to_text(&self, name: &[u8]) -> String;

    /// Parses the text form of a name (as a person types it in the shell).
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError>;

    /// The bytes every value of this type takes, for a type whose values all take the same
    /// (Cassandra's `valueLengthIfFixed`): a vector stores such elements without lengths.
    fn value_length_if_fixed(&self) -> Option<usize> {
        None
    }

    /// This comparator as a [`CompositeType`], if it is one.
    fn as_composite(&self) -> Option<&CompositeType> {
        None
    }

    /// Whether a name's sort key is the name itself (the byte-ordered types), so the engine
    /// can store it without encoding it. The default, `false`, is always correct.
    fn sort_key_is_name(&self) -> bool {
        false
    }

    /// For a composite component whose type depends on the component before it (Cassandra's
    /// `ColumnToCollectionType`): the type of the component that follows one holding
    /// `previous`, or `None` to use this type itself.
    fn after(&self, _previous: &[u8]) -> Option<Arc<dyn Comparator>> {
        None
    }

    /// For a component like [`Comparator::after`]'s: the type of the values stored under names
    /// whose previous component is `previous` (a map's or a list's values), if it knows one.
    fn value_type_after(&self, _previous: &[u8]) -> Option<Arc<dyn Comparator>> {
        None
    }

    /// The text of a value stored under `name`, when the name's type says what the value is (a
    /// CQL collection's element, printed as a CQL literal: `'555-1579'`); `None` to print it by
    /// the column family's validator.
    fn value_text(&self, _name: &[u8], _value: &[u8]) -> Option<String> {
        None
    }

    /// Whether [`Comparator::after`] may answer (so composites without such a component skip
    /// asking).
    fn depends_on_previous(&self) -> bool {
        false
    }

    /// The number of components, for a `CompositeType` (whose names may be deleted by prefix);
    /// `None` for every other type.
    fn composite_len(&self) -> Option<usize> {
        None
    }

    /// Orders two names. The default compares sort keys; built-in types override it with a
    /// direct comparison, and tests check the two agree.
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let (mut ka, mut kb) = (Vec::new(), Vec::new());
        self.encode_sort_key(a, &mut ka);
        self.encode_sort_key(b, &mut kb);
        ka.cmp(&kb)
    }
}

/// Convenience: the sort key of `name` as a new vector.
pub fn sort_key(cmp: &dyn Comparator, name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 1);
    cmp.encode_sort_key(name, &mut out);
    out
}

/// Resolves comparator class names (short or fully qualified) to comparators.
///
/// Starts with the six built-in types and CQL's scalar types; `CompositeType(A,B,…)` and
/// `ReversedType(A)` names are built on demand from registered component types. Users add their own with [`ComparatorRegistry::register`].
#[derive(Clone)]
pub struct ComparatorRegistry {
    by_name: HashMap<String, Arc<dyn Comparator>>,
}

impl fmt::Debug for ComparatorRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.by_name.keys().collect();
        names.sort();
        f.debug_struct("ComparatorRegistry")
            .field("names", &names)
            .finish()
    }
}

impl Default for ComparatorRegistry {
    fn default() -> Self {
        ComparatorRegistry {
            by_name: built_in()
                .into_iter()
                .chain(cql_types::cql_types())
                .map(|c| (c.name(), c))
                .collect(),
        }
    }
}

impl ComparatorRegistry {
    /// Registers a comparator under its [`Comparator::name`], replacing any earlier user type of
    /// that name. A name such as `com.example.MyType` can then be given as `CompareWith`. The
    /// built-in names cannot be taken over: that would silently reorder stored data.
    pub fn register(&mut self, comparator: Arc<dyn Comparator>) -> Result<(), MarshalError> {
        let name = comparator.name();
        let reserved = built_in()
            .into_iter()
            .chain(cql_types::cql_types())
            .any(|c| c.name() == name);
        let built = [
            "CompositeType(",
            "ReversedType(",
            "ColumnToCollectionType(",
            "FrozenType(",
        ];
        if reserved || built.iter().any(|p| name.starts_with(p)) {
            return Err(MarshalError::new(format!(
                "'{name}' is a built-in comparator and cannot be replaced"
            )));
        }
        self.by_name.insert(name, comparator);
        Ok(())
    }

    /// Finds the comparator for a class name: exact, or Cassandra's `org.apache.cassandra.db.marshal.`
    /// prefix with the short name, or `CompositeType(…)` of resolvable components.
    pub fn resolve(&self, class_name: &str) -> Result<Arc<dyn Comparator>, MarshalError> {
        self.resolve_at(class_name, 0)
    }

    fn resolve_at(
        &self,
        class_name: &str,
        depth: usize,
    ) -> Result<Arc<dyn Comparator>, MarshalError> {
        /// Nesting and width limits keep a hostile name from exhausting the stack or time.
        const MAX_DEPTH: usize = 8;
        if depth > MAX_DEPTH {
            return Err(MarshalError::new(format!(
                "CompositeType nested more than {MAX_DEPTH} deep"
            )));
        }
        let name = class_name.trim();
        if let Some(c) = self.by_name.get(name) {
            return Ok(c.clone());
        }
        let short = name.strip_prefix(CASSANDRA_MARSHAL_PREFIX).unwrap_or(name);
        if let Some(c) = self.by_name.get(short) {
            return Ok(c.clone());
        }
        if let Some(inner) = short
            .strip_prefix("CompositeType(")
            .and_then(|s| s.strip_suffix(')'))
        {
            let parts = self.components("CompositeType", inner, depth)?;
            return Ok(Arc::new(CompositeType::new(parts)));
        }
        if let Some(inner) = short
            .strip_prefix("ColumnToCollectionType(")
            .and_then(|s| s.strip_suffix(')'))
        {
            let fields = split_top_level(inner);
            if fields.len() > MAX_COMPONENTS {
                return Err(MarshalError::new(format!(
                    "ColumnToCollectionType of {} columns; at most {MAX_COMPONENTS}",
                    fields.len()
                )));
            }
            return Ok(Arc::new(collection::parse_fields(&fields, |t| {
                self.resolve_at(t, depth + 1)
            })?));
        }
        if let Some(inner) = short
            .strip_prefix("FrozenType(")
            .and_then(|s| s.strip_suffix(')'))
        {
            let c = collection::parse_collection(inner.trim(), |t| self.resolve_at(t, depth + 1))?;
            return Ok(Arc::new(FrozenType(c)));
        }
        // A CQL tuple (or frozen user type) in a key: its elements' types, in order.
        if let Some(inner) = short
            .strip_prefix("TupleType(")
            .and_then(|s| s.strip_suffix(')'))
        {
            return Ok(Arc::new(TupleType(self.components(
                "TupleType",
                inner,
                depth,
            )?)));
        }
        // Cassandra 5's vector: `VectorType(Int32Type, 2)`.
        if let Some(inner) = short
            .strip_prefix("VectorType(")
            .and_then(|s| s.strip_suffix(')'))
        {
            return self.vector(class_name, inner, depth);
        }
        if let Some(inner) = short
            .strip_prefix("ReversedType(")
            .and_then(|s| s.strip_suffix(')'))
        {
            return Ok(Arc::new(ReversedType(self.resolve_at(inner, depth + 1)?)));
        }
        Err(MarshalError::new(format!(
            "unknown comparator '{class_name}' (known: {})",
            self.known_names().join(", ")
        )))
    }

    /// The `VectorType(…)` whose element type and dimension are `inner`.
    fn vector(
        &self,
        class_name: &str,
        inner: &str,
        depth: usize,
    ) -> Result<Arc<dyn Comparator>, MarshalError> {
        let parts = split_top_level(inner);
        let [element, dimension] = parts.as_slice() else {
            return Err(MarshalError::new(format!(
                "'{class_name}': a VectorType takes an element type and a dimension"
            )));
        };
        let dimension = dimension.trim().parse::<usize>().map_err(|_| {
            MarshalError::new(format!("'{class_name}': the dimension is not a number"))
        })?;
        let element = self.resolve_at(element, depth + 1)?;
        Ok(Arc::new(VectorType::new(element, dimension)?))
    }

    /// The comparators of a `CompositeType(…)`'s or `TupleType(…)`'s `inner` list: one to
    /// `MAX_COMPONENTS` of them.
    fn components(
        &self,
        what: &str,
        inner: &str,
        depth: usize,
    ) -> Result<Vec<Arc<dyn Comparator>>, MarshalError> {
        let fields = split_top_level(inner);
        if fields.is_empty() || fields.len() > MAX_COMPONENTS {
            return Err(MarshalError::new(format!(
                "{what} of {} components; it takes 1 to {MAX_COMPONENTS}",
                fields.len()
            )));
        }
        fields
            .into_iter()
            .map(|f| self.resolve_at(f, depth + 1))
            .collect()
    }

    /// The registered class names, sorted.
    pub fn known_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.by_name.keys().cloned().collect();
        v.sort();
        v
    }
}

/// The most components a composite, tuple or collection-column comparator may name.
const MAX_COMPONENTS: usize = 64;

/// Splits `A,B(C,D),E` at the commas that are not inside parentheses.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, ch) in s.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(s[start..].trim());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_short_and_full_names() {
        let r = ComparatorRegistry::default();
        assert_eq!(r.resolve("LongType").unwrap().name(), "LongType");
        assert_eq!(
            r.resolve("org.apache.cassandra.db.marshal.TimeUUIDType")
                .unwrap()
                .name(),
            "TimeUUIDType"
        );
        let err = r.resolve("NoSuchType").unwrap_err();
        assert!(err.0.contains("NoSuchType"), "{err}");
    }

    #[test]
    fn resolves_composites() {
        let r = ComparatorRegistry::default();
        let c = r
            .resolve("CompositeType(LongType,org.apache.cassandra.db.marshal.UTF8Type)")
            .unwrap();
        assert_eq!(c.name(), "CompositeType(LongType,UTF8Type)");
        assert!(r.resolve("CompositeType()").is_err());
        assert!(r.resolve("CompositeType(Nope)").is_err());
        let deep = "CompositeType(".repeat(100_000) + &")".repeat(100_000);
        assert!(
            r.resolve(&deep).is_err(),
            "deep nesting is refused, not a stack overflow"
        );
        let wide = format!("CompositeType({})", vec!["LongType"; 1000].join(","));
        assert!(r.resolve(&wide).is_err());
    }

    #[test]
    fn resolves_tuples_as_they_name_themselves() {
        let r = ComparatorRegistry::default();
        let name =
            "TupleType(UTF8Type,TupleType(Int32Type,FrozenType(SetType(UTF8Type))),LongType)";
        assert_eq!(r.resolve(name).unwrap().name(), name);
        let c = format!("CompositeType(ReversedType({name}),UTF8Type)");
        assert_eq!(r.resolve(&c).unwrap().name(), c);
        assert!(r.resolve("TupleType()").is_err());
        assert!(r.resolve("TupleType(Nope)").is_err());
        let deep = "TupleType(".repeat(100_000) + &")".repeat(100_000);
        assert!(r.resolve(&deep).is_err());
    }

    #[test]
    fn built_in_names_cannot_be_taken_over() {
        let mut r = ComparatorRegistry::default();
        assert!(r.register(Arc::new(BytesType)).is_err());
        assert_eq!(r.resolve("BytesType").unwrap().name(), "BytesType");
    }
}
