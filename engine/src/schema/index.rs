//! Secondary indexes as the schema holds them: what an index covers ([`IndexDef`]), and the
//! hidden column family that stores it, derived from the base column family's definition.
//!
//! An index maps a value of one column to the rows holding it, as Cassandra 0.7's KEYS index
//! does: its column family is keyed by the indexed value, and each entry's name is the base
//! row's sort key (token, then key) followed by the row's clustering components, so one value's
//! entries sort as a scan of the base table would return their rows. Entries carry no value.
//! How entries are written and read lives in `db/index.rs`; this file only describes them.

use std::borrow::Cow;
use std::sync::Arc;

use crate::model::comparator::{BytesType, Comparator, CompositeType};
use crate::schema::{ColumnFamilyDef, ColumnType};

/// The longest value an index can hold: it becomes a row key of the index (a row key's
/// longest, 65,535 bytes).
pub const MAX_INDEXED_VALUE: usize = 65_535;

/// What an index holds of a cell: the row's clustering components and the indexed value.
pub type Indexed<'n> = (Vec<&'n [u8]>, Cow<'n, [u8]>);

/// The value an entries index holds for a map's entry: its key and value as the two
/// components of a composite (what a query for `m[key] = value` looks up).
pub fn entry_value(key: &[u8], value: &[u8]) -> Vec<u8> {
    CompositeType::build(&[key, value], 0)
}

/// What of a column's cells an index holds (a CQL collection's cells carry one more name
/// component, the element: a list's position, a set's value, a map's key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexOf {
    /// The column's one cell, its value (a plain column, a frozen collection whole, a
    /// Thrift-era column).
    Value,
    /// The values of the column's element cells (a list's or a map's values).
    ElementValues,
    /// The element components of the column's cell names (a set's values, a map's keys).
    ElementNames,
    /// A map's entries: each element cell's key and value together, as [`entry_value`]
    /// makes them.
    ElementEntries,
    /// A CQL static column's value: its entries name partitions, not rows.
    StaticValue,
    /// The row's clustering component at this position (a CQL clustering column): every
    /// live cell of a row names it.
    Clustering(u16),
    /// The partition key's component at this position (a column of a CQL composite partition
    /// key): every live cell of a row names it.
    KeyComponent(u16),
}

impl IndexOf {
    /// Its code in the catalog.
    pub fn code(self) -> u8 {
        match self {
            IndexOf::Value => 0,
            IndexOf::ElementValues => 1,
            IndexOf::ElementNames => 2,
            IndexOf::StaticValue => 3,
            IndexOf::Clustering(_) => 4,
            IndexOf::KeyComponent(_) => 5,
            IndexOf::ElementEntries => 6,
        }
    }

    /// The component position a key column's index holds (the catalog stores it after the
    /// code).
    pub fn position(self) -> Option<u16> {
        match self {
            IndexOf::Clustering(p) | IndexOf::KeyComponent(p) => Some(p),
            _ => None,
        }
    }

    /// The target with catalog code `code`, and `position` for a key column's.
    pub fn from_code(code: u8, position: u16) -> Option<IndexOf> {
        Some(match code {
            0 => IndexOf::Value,
            1 => IndexOf::ElementValues,
            2 => IndexOf::ElementNames,
            3 => IndexOf::StaticValue,
            4 => IndexOf::Clustering(position),
            5 => IndexOf::KeyComponent(position),
            6 => IndexOf::ElementEntries,
            _ => return None,
        })
    }

    /// Whether its entries come from every live cell of a row (a key column's index).
    pub fn of_rows(self) -> bool {
        matches!(self, IndexOf::Clustering(_) | IndexOf::KeyComponent(_))
    }
}

/// One secondary index of a column family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexDef {
    /// The index's name, an identifier unique in its keyspace.
    pub name: String,
    /// The indexed column's name: a Standard column family's column name, or (with a composite
    /// comparator) the last component of a CQL row's cell names.
    pub column: Vec<u8>,
    /// How many leading components of a composite name are the row's clustering (0 for a
    /// column family without a composite comparator).
    pub clustering: u16,
    /// What of the column's cells it holds.
    pub of: IndexOf,
    /// The class of a custom index (`CREATE CUSTOM INDEX … USING`), kept as given.
    pub class: Option<String>,
    /// Whether the index holds every row written before it was created. Until it does, it is
    /// rebuilt at open and refuses queries.
    pub built: bool,
}

impl IndexDef {
    /// A KEYS index named `name` over column `column`, not yet built.
    pub fn new(name: impl Into<String>, column: impl Into<Vec<u8>>, clustering: u16) -> Self {
        IndexDef {
            name: name.into(),
            column: column.into(),
            clustering,
            of: IndexOf::Value,
            class: None,
            built: false,
        }
    }

    /// This index, holding `of` of its column's cells.
    pub fn of(mut self, of: IndexOf) -> Self {
        self.of = of;
        self
    }

    /// The hidden column family's name: `<base>.<index>`, which no user column family can
    /// take (a `.` is not allowed in names).
    pub fn column_family_name(&self, base: &str) -> String {
        format!("{base}.{}", self.name)
    }

    /// The definition of the column family storing this index of `base`.
    pub fn column_family(&self, base: &ColumnFamilyDef) -> ColumnFamilyDef {
        let comparator: Arc<dyn Comparator> = match base.comparator.as_composite() {
            Some(c) if self.clustering > 0 => {
                let mut parts: Vec<Arc<dyn Comparator>> = vec![Arc::new(BytesType)];
                parts.extend(
                    c.components()
                        .iter()
                        .take(usize::from(self.clustering))
                        .cloned(),
                );
                Arc::new(CompositeType::new(parts))
            }
            _ => Arc::new(BytesType),
        };
        ColumnFamilyDef {
            column_type: ColumnType::Standard,
            comparator,
            gc_grace_seconds: base.gc_grace_seconds,
            comment: Some(format!("secondary index {} of {}", self.name, base.name)),
            ..ColumnFamilyDef::standard(self.column_family_name(&base.name))
        }
    }

    /// What this index holds of a cell of its base column family named `name` with value
    /// `value`: the row's clustering components (none for a static's partition) and the
    /// indexed value, when the cell is one of the indexed column's (a static one when the index
    /// is of a static, an element cell when it is of elements).
    pub fn matches<'n>(
        &self,
        composite: bool,
        key: &'n [u8],
        name: &'n [u8],
        value: &'n [u8],
    ) -> Option<Indexed<'n>> {
        if !composite {
            return (self.of == IndexOf::Value && name == self.column.as_slice())
                .then(|| (Vec::new(), Cow::Borrowed(value)));
        }
        let stat = self.of == IndexOf::StaticValue;
        if CompositeType::is_static(name) != stat {
            return None;
        }
        let n = usize::from(self.clustering);
        let wanted = match self.of {
            IndexOf::Value | IndexOf::StaticValue => n + 1..=n + 1,
            IndexOf::ElementValues | IndexOf::ElementNames | IndexOf::ElementEntries => {
                n + 2..=n + 2
            }
            // A row's marker and cells, and its collections' element cells.
            IndexOf::Clustering(_) | IndexOf::KeyComponent(_) => n + 1..=n + 2,
        };
        let mut parts = Vec::with_capacity(n + 2);
        for c in CompositeType::components_of(name) {
            let c = c.ok()?;
            if parts.len() == *wanted.end() {
                return None; // a longer name than the index's cells have
            }
            parts.push(c.bytes);
        }
        if !wanted.contains(&parts.len()) {
            return None;
        }
        if !self.of.of_rows() && parts[n] != self.column.as_slice() {
            return None;
        }
        let indexed = match self.of {
            IndexOf::Value | IndexOf::ElementValues | IndexOf::StaticValue => Cow::Borrowed(value),
            IndexOf::ElementNames => Cow::Borrowed(parts[n + 1]),
            IndexOf::ElementEntries => Cow::Owned(entry_value(parts[n + 1], value)),
            IndexOf::Clustering(p) => Cow::Borrowed(parts.get(usize::from(p)).copied()?),
            IndexOf::KeyComponent(p) => Cow::Borrowed(
                CompositeType::components_of(key)
                    .nth(usize::from(p))?
                    .ok()?
                    .bytes,
            ),
        };
        // A static's entry names its partition: no clustering.
        parts.truncate(if stat { 0 } else { n });
        Some((parts, indexed))
    }

    /// The name of the entry for a row: its sort key, then its clustering components (none
    /// for a partition's entry).
    pub fn entry_name(&self, row_sort_key: &[u8], clustering: &[&[u8]]) -> Vec<u8> {
        if self.clustering == 0 {
            return row_sort_key.to_vec();
        }
        let mut parts: Vec<&[u8]> = Vec::with_capacity(clustering.len() + 1);
        parts.push(row_sort_key);
        parts.extend_from_slice(clustering);
        CompositeType::build(&parts, 0)
    }

    /// An entry's name taken apart: the row's sort key and its clustering components (none
    /// for a partition's entry); `None` for a name this index could not have written.
    pub fn split_entry<'n>(&self, entry: &'n [u8]) -> Option<(&'n [u8], Vec<&'n [u8]>)> {
        if self.clustering == 0 {
            return Some((entry, Vec::new()));
        }
        let mut parts = Vec::with_capacity(usize::from(self.clustering) + 1);
        for c in CompositeType::components_of(entry) {
            parts.push(c.ok()?.bytes);
        }
        let rows = usize::from(self.clustering) + 1;
        if parts.len()
            != if self.of == IndexOf::StaticValue {
                1
            } else {
                rows
            }
        {
            return None;
        }
        let sort_key = parts.remove(0);
        Some((sort_key, parts))
    }
}

/// Whether a column family's cell names are composites (so a CQL table's).
pub fn is_composite(def: &ColumnFamilyDef) -> bool {
    def.comparator.as_composite().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::comparator::Utf8Type as UTF8Type;

    #[test]
    fn matches_only_the_indexed_regular_cell() {
        let idx = IndexDef::new("v_idx", b"v".to_vec(), 1);
        let cell = CompositeType::build(&[b"c1", b"v"], 0);
        assert_eq!(
            idx.matches(true, b"k", &cell, b"x"),
            Some((vec![&b"c1"[..]], Cow::Borrowed(&b"x"[..])))
        );
        let other = CompositeType::build(&[b"c1", b"w"], 0);
        assert_eq!(idx.matches(true, b"k", &other, b"x"), None);
        let element = CompositeType::build(&[b"c1", b"v", b"e"], 0);
        assert_eq!(idx.matches(true, b"k", &element, b"x"), None);
        let marker = CompositeType::build(&[b"c1", b""], 0);
        assert_eq!(idx.matches(true, b"k", &marker, b""), None);
        let stat = CompositeType::build_static(&[b"", b"v"], 0);
        assert_eq!(idx.matches(true, b"k", &stat, b"x"), None);
        let thrift = IndexDef::new("i", b"name".to_vec(), 0);
        assert_eq!(
            thrift.matches(false, b"k", b"name", b"x"),
            Some((vec![], Cow::Borrowed(&b"x"[..])))
        );
        assert_eq!(thrift.matches(false, b"k", b"names", b"x"), None);
        // A collection's elements: the cell's value, or the element in its name.
        let values = IndexDef::new("l_idx", b"v".to_vec(), 1).of(IndexOf::ElementValues);
        assert_eq!(
            values.matches(true, b"k", &element, b"x"),
            Some((vec![&b"c1"[..]], Cow::Borrowed(&b"x"[..])))
        );
        assert_eq!(values.matches(true, b"k", &cell, b"x"), None);
        let names = IndexDef::new("s_idx", b"v".to_vec(), 1).of(IndexOf::ElementNames);
        assert_eq!(
            names.matches(true, b"k", &element, b""),
            Some((vec![&b"c1"[..]], Cow::Borrowed(&b"e"[..])))
        );
        // A map's entries: the element's key and the cell's value together.
        let entries = IndexDef::new("m_idx", b"v".to_vec(), 1).of(IndexOf::ElementEntries);
        assert_eq!(
            entries.matches(true, b"k", &element, b"x"),
            Some((vec![&b"c1"[..]], Cow::Owned(entry_value(b"e", b"x"))))
        );
        assert_eq!(entries.matches(true, b"k", &cell, b"x"), None);
    }

    #[test]
    fn entry_names_round_trip() {
        let idx = IndexDef::new("v_idx", b"v".to_vec(), 2);
        let e = idx.entry_name(b"\x01key", &[b"a", b"bb"]);
        assert_eq!(
            idx.split_entry(&e),
            Some((&b"\x01key"[..], vec![&b"a"[..], &b"bb"[..]]))
        );
        let base = ColumnFamilyDef::standard("t").with_comparator(CompositeType::new(vec![
            Arc::new(UTF8Type),
            Arc::new(UTF8Type),
            Arc::new(UTF8Type),
        ]));
        let cf = idx.column_family(&base);
        assert_eq!(cf.name, "t.v_idx");
        assert_eq!(cf.comparator.as_composite().unwrap().components().len(), 3);
    }
}
