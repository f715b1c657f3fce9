//! The entries of one memtable row, by key. Most rows hold a handful of columns, and a sorted
//! vector of them costs one small allocation where a B-tree costs a node of several hundred
//! bytes; a row that grows past [`SMALL`] entries moves to a B-tree, so wide rows keep
//! logarithmic inserts. Only the row (`row.rs`) touches this.

use std::collections::BTreeMap;
use std::ops::Bound;

use crate::model::cell::Entry;

/// Entries a row holds in a sorted vector before it moves to a B-tree.
const SMALL: usize = 16;

/// A row's entries, ascending by key.
#[derive(Debug)]
pub enum Entries {
    /// Few entries, sorted by key.
    Small(Vec<(Vec<u8>, Entry)>),
    /// Many entries.
    Large(BTreeMap<Vec<u8>, Entry>),
}

impl Default for Entries {
    fn default() -> Self {
        Entries::Small(Vec::new())
    }
}

impl Entries {
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        match self {
            Entries::Small(v) => v.is_empty(),
            Entries::Large(m) => m.is_empty(),
        }
    }

    /// The entry with this key.
    pub fn get(&self, key: &[u8]) -> Option<&Entry> {
        match self {
            Entries::Small(v) => v
                .binary_search_by(|(k, _)| k.as_slice().cmp(key))
                .ok()
                .map(|i| &v[i].1),
            Entries::Large(m) => m.get(key),
        }
    }

    /// The entry with this key, to change in place.
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Entry> {
        match self {
            Entries::Small(v) => v
                .binary_search_by(|(k, _)| k.as_slice().cmp(key))
                .ok()
                .map(|i| &mut v[i].1),
            Entries::Large(m) => m.get_mut(key),
        }
    }

    /// Sets the entry of `key`; returns the one it replaced.
    pub fn insert(&mut self, key: Vec<u8>, entry: Entry) -> Option<Entry> {
        match self {
            Entries::Small(v) => match v.binary_search_by(|(k, _)| k.cmp(&key)) {
                Ok(i) => Some(std::mem::replace(&mut v[i].1, entry)),
                Err(i) if v.len() < SMALL => {
                    v.insert(i, (key, entry));
                    None
                }
                Err(_) => {
                    let mut m: BTreeMap<Vec<u8>, Entry> = std::mem::take(v).into_iter().collect();
                    m.insert(key, entry);
                    *self = Entries::Large(m);
                    None
                }
            },
            Entries::Large(m) => m.insert(key, entry),
        }
    }

    /// Removes the entry of `key`.
    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        match self {
            Entries::Small(v) => v
                .binary_search_by(|(k, _)| k.as_slice().cmp(key))
                .ok()
                .map(|i| v.remove(i).1),
            Entries::Large(m) => m.remove(key),
        }
    }

    /// Keeps only the entries `keep` says yes to.
    pub fn retain(&mut self, mut keep: impl FnMut(&[u8], &Entry) -> bool) {
        match self {
            Entries::Small(v) => v.retain(|(k, e)| keep(k, e)),
            Entries::Large(m) => m.retain(|k, e| keep(k, e)),
        }
    }

    /// The entries with keys within `lo..hi`, ascending (reverse the iterator for descending);
    /// empty when the bounds cross.
    pub fn range<'a>(
        &'a self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
    ) -> Box<dyn DoubleEndedIterator<Item = (&'a [u8], &'a Entry)> + 'a> {
        if !nonempty(lo, hi) {
            return Box::new(std::iter::empty());
        }
        match self {
            Entries::Small(v) => {
                let from = match lo {
                    Bound::Unbounded => 0,
                    Bound::Included(l) => v.partition_point(|(k, _)| k.as_slice() < l),
                    Bound::Excluded(l) => v.partition_point(|(k, _)| k.as_slice() <= l),
                };
                let to = match hi {
                    Bound::Unbounded => v.len(),
                    Bound::Included(h) => v.partition_point(|(k, _)| k.as_slice() <= h),
                    Bound::Excluded(h) => v.partition_point(|(k, _)| k.as_slice() < h),
                };
                Box::new(v[from..to.max(from)].iter().map(|(k, e)| (k.as_slice(), e)))
            }
            Entries::Large(m) => {
                Box::new(m.range::<[u8], _>((lo, hi)).map(|(k, e)| (k.as_slice(), e)))
            }
        }
    }

    /// Every entry, ascending.
    pub fn iter(&self) -> Box<dyn DoubleEndedIterator<Item = (&[u8], &Entry)> + '_> {
        self.range(Bound::Unbounded, Bound::Unbounded)
    }
}

/// Whether `lo..hi` can hold any key (`BTreeMap::range` panics on an inverted range).
fn nonempty(lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> bool {
    match (lo, hi) {
        (Bound::Included(a), Bound::Included(b)) => a <= b,
        (Bound::Included(a), Bound::Excluded(b))
        | (Bound::Excluded(a), Bound::Included(b))
        | (Bound::Excluded(a), Bound::Excluded(b)) => a < b,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cell::Cell;
    use proptest::prelude::*;

    fn cell(ts: i64) -> Entry {
        Entry::Cell(Cell::tombstone(ts, 0))
    }

    fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
        match b {
            Bound::Unbounded => Bound::Unbounded,
            Bound::Included(k) => Bound::Included(k.as_slice()),
            Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        }
    }

    fn bound(b: u8, k: u8) -> Bound<Vec<u8>> {
        match b % 3 {
            0 => Bound::Unbounded,
            1 => Bound::Included(vec![k]),
            _ => Bound::Excluded(vec![k]),
        }
    }

    proptest! {
        /// Whatever the operations, the entries answer as a B-tree does, across the move from
        /// vector to tree.
        #[test]
        fn behaves_as_a_btree(
            ops in proptest::collection::vec((0u8..4, 0u8..40, 0i64..5), 0..80),
            (lb, lk, hb, hk) in (0u8..3, 0u8..40, 0u8..3, 0u8..40),
        ) {
            let mut e = Entries::default();
            let mut m: BTreeMap<Vec<u8>, Entry> = BTreeMap::new();
            for (op, k, ts) in ops {
                let key = vec![k];
                match op {
                    0 | 1 => prop_assert_eq!(e.insert(key.clone(), cell(ts)), m.insert(key, cell(ts))),
                    2 => prop_assert_eq!(e.remove(&key), m.remove(&key)),
                    _ => {
                        e.retain(|_, x| !matches!(x, Entry::Cell(c) if c.timestamp == ts));
                        m.retain(|_, x| !matches!(x, Entry::Cell(c) if c.timestamp == ts));
                    }
                }
                prop_assert_eq!(e.get(&[k]), m.get(&vec![k]));
                prop_assert_eq!(e.is_empty(), m.is_empty());
            }
            let (lo, hi) = (bound(lb, lk), bound(hb, hk));
            let got: Vec<(Vec<u8>, Entry)> = e
                .range(as_ref(&lo), as_ref(&hi))
                .rev()
                .map(|(k, v)| (k.to_vec(), v.clone()))
                .collect();
            let want: Vec<(Vec<u8>, Entry)> = if nonempty(as_ref(&lo), as_ref(&hi)) {
                m.range::<[u8], _>((as_ref(&lo), as_ref(&hi)))
                    .rev()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            } else {
                Vec::new()
            };
            prop_assert_eq!(got, want);
        }
    }
}
