//! `ColumnToCollectionType(…)`: the last component of a CQL table's cell names when the table
//! has collections, as Cassandra names it. A collection's elements are cells named
//! `clustering…:column:element`; how `element` orders depends on the column before it (a map's
//! key type, a list's TimeUUIDType, a set's element type), so [`CompositeType`] asks this type
//! for the component's real type given the previous component ([`Comparator::after`]). Alone, or
//! after a column that is not a collection (a regular column's cell has no element), it is
//! BytesType.
//!
//! [`CompositeType`]: super::CompositeType

use std::sync::Arc;

use super::builtin::{from_hex, to_hex};
use super::{BytesType, Comparator, MarshalError, TimeUuidType};

/// The kind of a collection column and the types of its parts.
#[derive(Debug, Clone)]
pub enum Collection {
    /// `MapType(K,V)`: elements named by key.
    Map(Arc<dyn Comparator>, Arc<dyn Comparator>),
    /// `ListType(E)`: elements named by a TimeUUID in list order.
    List(Arc<dyn Comparator>),
    /// `SetType(E)`: elements named by the element, with empty values.
    Set(Arc<dyn Comparator>),
}

impl Collection {
    /// Cassandra's class name (`MapType(UTF8Type,Int32Type)`).
    pub fn name(&self) -> String {
        match self {
            Collection::Map(k, v) => format!("MapType({},{})", k.name(), v.name()),
            Collection::List(e) => format!("ListType({})", e.name()),
            Collection::Set(e) => format!("SetType({})", e.name()),
        }
    }

    /// The type of the element component of the collection's cell names.
    pub fn element_names(&self) -> Arc<dyn Comparator> {
        match self {
            Collection::Map(k, _) => k.clone(),
            Collection::List(_) => Arc::new(TimeUuidType),
            Collection::Set(e) => e.clone(),
        }
    }
}

/// The collection columns of a table, by column name.
#[derive(Debug, Clone)]
pub struct ColumnToCollectionType {
    columns: Vec<(Vec<u8>, Collection)>,
}

impl ColumnToCollectionType {
    /// The type for these collection columns (names as stored: UTF-8 column names).
    pub fn new(mut columns: Vec<(Vec<u8>, Collection)>) -> Self {
        columns.sort_by(|a, b| a.0.cmp(&b.0));
        ColumnToCollectionType { columns }
    }

    /// The collection column named `column`, if it is one.
    pub fn collection(&self, column: &[u8]) -> Option<&Collection> {
        self.columns
            .binary_search_by(|(n, _)| n.as_slice().cmp(column))
            .ok()
            .map(|i| &self.columns[i].1)
    }
}

impl Comparator for ColumnToCollectionType {
    fn name(&self) -> String {
        let cols: Vec<String> = self
            .columns
            .iter()
            .map(|(n, c)| format!("{}:{}", to_hex(n), c.name()))
            .collect();
        format!("ColumnToCollectionType({})", cols.join(","))
    }

    /// Reached only after a column that is not a collection (a collection's elements are
    /// validated by their own type, see `after`): such a column has no elements, so nothing but
    /// an empty component may follow it. (Accepting bytes here would let a name be ordered as
    /// bytes now and by a collection's type once the column is added as one.)
    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        if name.is_empty() {
            Ok(())
        } else {
            Err(MarshalError::new(
                "an element component after a column that is not a collection",
            ))
        }
    }

    fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
        BytesType.encode_sort_key(name, out)
    }

    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        BytesType.decode_sort_key(key, out)
    }

    fn to_text(&self, name: &[u8]) -> String {
        to_hex(name)
    }

    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        from_hex(text)
    }

    fn after(&self, previous: &[u8]) -> Option<Arc<dyn Comparator>> {
        self.collection(previous).map(|c| match c {
            // A set's elements print as CQL literals in names (`set1:'patricia'`, as seed 002
            // shows them); a map's keys and a list's TimeUUIDs print bare.
            Collection::Set(e) => Arc::new(CqlLiteral(e.clone())) as Arc<dyn Comparator>,
            other => other.element_names(),
        })
    }

    fn value_type_after(&self, previous: &[u8]) -> Option<Arc<dyn Comparator>> {
        match self.collection(previous)? {
            Collection::Map(_, v) | Collection::List(v) => Some(v.clone()),
            Collection::Set(_) => None,
        }
    }

    fn depends_on_previous(&self) -> bool {
        true
    }
}

/// A type whose text form is a CQL literal: text quoted (`'it''s'`), anything else as its type
/// prints it. Orders, validates and encodes as the type it wraps.
#[derive(Debug, Clone)]
pub struct CqlLiteral(pub Arc<dyn Comparator>);

impl CqlLiteral {
    fn quotes(&self) -> bool {
        matches!(self.0.name().as_str(), "UTF8Type" | "AsciiType")
    }

    /// `value` as a CQL literal of type `t`.
    pub fn text(t: &dyn Comparator, value: &[u8]) -> String {
        if matches!(t.name().as_str(), "UTF8Type" | "AsciiType") && t.validate(value).is_ok() {
            format!("'{}'", String::from_utf8_lossy(value).replace('\'', "''"))
        } else {
            t.to_text(value)
        }
    }
}

impl Comparator for CqlLiteral {
    fn name(&self) -> String {
        self.0.name()
    }
    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        self.0.validate(name)
    }
    fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
        self.0.encode_sort_key(name, out)
    }
    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        self.0.decode_sort_key(key, out)
    }
    fn to_text(&self, name: &[u8]) -> String {
        Self::text(self.0.as_ref(), name)
    }
    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        match text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
            Some(inner) if self.quotes() => self.0.parse_text(&inner.replace("''", "'")),
            _ => self.0.parse_text(text),
        }
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        self.0.compare(a, b)
    }
}

/// Whether `new` is `old` with collection columns added: a CQL table's cell-name comparator
/// (`CompositeType(…,UTF8Type)`) given a `ColumnToCollectionType` last component, or one whose
/// `ColumnToCollectionType` gained columns and kept every column it had. Such a comparator orders
/// every name `old` accepts as `old` does: what `ALTER TABLE … ADD` of a collection may change.
pub fn adds_collections(old: &dyn Comparator, new: &dyn Comparator) -> bool {
    const C2C: &str = "ColumnToCollectionType(";
    let (old, new) = (old.name(), new.name());
    let parts = |name: &str| -> Option<Vec<String>> {
        let inner = name.strip_prefix("CompositeType(")?.strip_suffix(')')?;
        Some(
            super::split_top_level(inner)
                .into_iter()
                .map(String::from)
                .collect(),
        )
    };
    let columns = |part: &str| -> Option<Vec<String>> {
        let inner = part.strip_prefix(C2C)?.strip_suffix(')')?;
        Some(
            super::split_top_level(inner)
                .into_iter()
                .map(String::from)
                .collect(),
        )
    };
    let (Some(o), Some(n)) = (parts(&old), parts(&new)) else {
        return false;
    };
    let (Some(o_last), Some(n_last)) = (o.last(), n.last()) else {
        return false;
    };
    let Some(added) = columns(n_last) else {
        return false;
    };
    // One entry per column: its hex name, before the `:`.
    let mut names: Vec<&str> = added
        .iter()
        .map(|c| c.split(':').next().unwrap_or(""))
        .collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return false;
    }
    match columns(o_last) {
        // The component is new: everything before it is unchanged.
        None => n.len() == o.len() + 1 && n[..o.len()] == o[..] && !added.is_empty(),
        // Columns were added to it: the rest is unchanged and no column changed or went.
        Some(had) => {
            n.len() == o.len()
                && n[..o.len() - 1] == o[..o.len() - 1]
                && had.iter().all(|c| added.contains(c))
                && added.len() > had.len()
        }
    }
}

/// Parses `MapType(K,V)`, `ListType(E)` or `SetType(E)`, each inner type resolved by `resolve`.
pub fn parse_collection(
    ty: &str,
    mut resolve: impl FnMut(&str) -> Result<Arc<dyn Comparator>, MarshalError>,
) -> Result<Collection, MarshalError> {
    let ty = ty
        .strip_prefix(super::CASSANDRA_MARSHAL_PREFIX)
        .unwrap_or(ty);
    let inner = |prefix: &str| {
        ty.strip_prefix(prefix)
            .and_then(|s| s.strip_suffix(')'))
            .map(super::split_top_level)
    };
    Ok(if let Some(kv) = inner("MapType(") {
        match kv.as_slice() {
            [k, v] => Collection::Map(resolve(k)?, resolve(v)?),
            _ => return Err(MarshalError::new(format!("'{ty}' needs two types"))),
        }
    } else if let Some(e) = inner("ListType(") {
        match e.as_slice() {
            [e] => Collection::List(resolve(e)?),
            _ => return Err(MarshalError::new(format!("'{ty}' needs one type"))),
        }
    } else if let Some(e) = inner("SetType(") {
        match e.as_slice() {
            [e] => Collection::Set(resolve(e)?),
            _ => return Err(MarshalError::new(format!("'{ty}' needs one type"))),
        }
    } else {
        return Err(MarshalError::new(format!(
            "'{ty}' is not a MapType, ListType or SetType"
        )));
    })
}

/// Parses the inside of `ColumnToCollectionType(…)`: `hexname:Type` fields, each type resolved
/// by `resolve` (`MapType(K,V)`, `ListType(E)`, `SetType(E)` of resolvable types).
pub fn parse_fields(
    fields: &[&str],
    mut resolve: impl FnMut(&str) -> Result<Arc<dyn Comparator>, MarshalError>,
) -> Result<ColumnToCollectionType, MarshalError> {
    let mut columns = Vec::with_capacity(fields.len());
    for f in fields {
        let (hex, ty) = f
            .split_once(':')
            .ok_or_else(|| MarshalError::new(format!("'{f}' is not hexname:CollectionType")))?;
        let name = from_hex(hex.trim())?;
        let c = parse_collection(ty.trim(), &mut resolve)?;
        columns.push((name, c));
    }
    Ok(ColumnToCollectionType::new(columns))
}

#[cfg(test)]
mod tests {
    use super::super::{sort_key, ComparatorRegistry, CompositeType, Int32Type, Utf8Type};
    use super::*;

    fn table_comparator() -> CompositeType {
        let collections = ColumnToCollectionType::new(vec![
            (
                b"m".to_vec(),
                Collection::Map(Arc::new(Int32Type), Arc::new(Utf8Type)),
            ),
            (b"s".to_vec(), Collection::Set(Arc::new(Utf8Type))),
            (b"l".to_vec(), Collection::List(Arc::new(Utf8Type))),
        ]);
        CompositeType::new(vec![Arc::new(Utf8Type), Arc::new(collections)])
    }

    #[test]
    fn elements_order_by_their_collections_type_and_names_round_trip() {
        let t = table_comparator();
        let name = |col: &[u8], e: &[u8]| CompositeType::build(&[col, e], 0);
        let minus = name(b"m", &(-5i32).to_be_bytes());
        let plus = name(b"m", &7i32.to_be_bytes());
        assert!(
            t.compare(&minus, &plus).is_lt(),
            "a map<int,…> orders by int"
        );
        assert!(sort_key(&t, &minus) < sort_key(&t, &plus));
        assert_eq!(t.to_text(&minus), "m:-5");
        assert_eq!(t.parse_text("m:-5").unwrap(), minus);
        assert!(
            t.validate(&name(b"m", b"abc")).is_err(),
            "3 bytes is no int"
        );
        // A list orders by TimeUUID time, not bytes: time_low first would put these backwards.
        let early = uuid::Uuid::parse_str("ffffffff-0000-1000-8000-000000000000").unwrap();
        let late = uuid::Uuid::parse_str("00000000-0001-1000-8000-000000000000").unwrap();
        let (e, l) = (name(b"l", early.as_bytes()), name(b"l", late.as_bytes()));
        assert!(t.compare(&e, &l).is_lt() && sort_key(&t, &e) < sort_key(&t, &l));
        assert!(
            t.validate(&name(b"v", b"x")).is_err(),
            "v is no collection: it has no elements"
        );
        assert!(t.validate(&name(b"v", b"")).is_ok());
        for n in [minus, e, name(b"s", b"x"), name(b"v", b"")] {
            let mut back = Vec::new();
            t.decode_sort_key(&sort_key(&t, &n), &mut back).unwrap();
            assert_eq!(back, n);
        }
    }

    #[test]
    fn collections_may_be_added_and_nothing_else_changed() {
        let plain = CompositeType::new(vec![Arc::new(Int32Type), Arc::new(Utf8Type)]);
        let with = |cols: Vec<(&[u8], Collection)>| {
            let cols = cols.into_iter().map(|(n, c)| (n.to_vec(), c)).collect();
            CompositeType::new(vec![
                Arc::new(Int32Type),
                Arc::new(Utf8Type),
                Arc::new(ColumnToCollectionType::new(cols)),
            ])
        };
        let set = || Collection::Set(Arc::new(Utf8Type));
        let list = || Collection::List(Arc::new(Int32Type));
        let one = with(vec![(b"s", set())]);
        let two = with(vec![(b"l", list()), (b"s", set())]);
        assert!(adds_collections(&plain, &one));
        assert!(adds_collections(&one, &two));
        assert!(adds_collections(&plain, &two));
        for (old, new) in [
            (&one as &dyn Comparator, &plain as &dyn Comparator),
            (&two, &one),
            (&one, &one),
            (&plain, &plain),
            (
                &one,
                &with(vec![(b"s", Collection::Set(Arc::new(Int32Type)))]),
            ),
            (&one, &with(vec![(b"t", set())])),
            (
                &one,
                &with(vec![
                    (b"s", set()),
                    (b"s", Collection::Set(Arc::new(Int32Type))),
                ]),
            ),
        ] {
            assert!(
                !adds_collections(old, new),
                "{} -> {}",
                old.name(),
                new.name()
            );
        }
        let other = CompositeType::new(vec![
            Arc::new(Utf8Type),
            Arc::new(Utf8Type),
            Arc::new(ColumnToCollectionType::new(vec![(b"s".to_vec(), set())])),
        ]);
        assert!(
            !adds_collections(&plain, &other),
            "a clustering type changed"
        );
        assert!(!adds_collections(&Utf8Type, &one));
    }

    #[test]
    fn the_registry_resolves_cassandras_name() {
        let t = table_comparator();
        let name = t.name();
        assert!(
            name.ends_with("ColumnToCollectionType(6c:ListType(UTF8Type),6d:MapType(Int32Type,UTF8Type),73:SetType(UTF8Type)))"),
            "{name}"
        );
        let back = ComparatorRegistry::default().resolve(&name).unwrap();
        assert_eq!(back.name(), name);
        let n = CompositeType::build(&[b"m", &3i32.to_be_bytes()], 0);
        assert_eq!(back.to_text(&n), "m:3");
    }

    #[test]
    fn set_elements_and_collection_values_print_as_seed_002_shows_them() {
        let t = table_comparator();
        let set = CompositeType::build(&[b"s", b"it's"], 0);
        assert_eq!(t.to_text(&set), "s:'it''s'");
        assert_eq!(t.parse_text("s:'it''s'").unwrap(), set);
        let entry = CompositeType::build(&[b"m", &3i32.to_be_bytes()], 0);
        assert_eq!(
            t.value_text(&entry, b"555-1579").as_deref(),
            Some("'555-1579'")
        );
        assert_eq!(
            t.value_text(&set, b""),
            None,
            "a set's value is empty: the validator prints it"
        );
        let plain = CompositeType::build(&[b"v", b""], 0);
        assert_eq!(t.value_text(&plain, b"x"), None);
    }
}
