//! K-way merges: of the entries of one row across its sources (memtables now, SSTables later),
//! reconciling versions that share a key; and of row keys across sources.
//!
//! Sources are few (one per memtable and SSTable that holds the row), so picking the next key by
//! a linear scan over their heads beats a heap. Both merges run forward or backward, so reversed
//! slices stream as forward ones do.

use std::borrow::Cow;
use std::ops::Bound;

use crate::error::{Error, Result};
use crate::model::cell::{DeletionTime, Entry};
use crate::model::reconcile::reconcile_entries;

/// One entry of a row as a source yields it: its key and the entry, borrowed or owned.
pub type EntryItem<'s> = (Cow<'s, [u8]>, Cow<'s, Entry>);

/// A source's view of one row. Sources that read files report damage as errors in the stream
/// (an SSTable block that fails its checksum); the merge surfaces an error as soon as it appears.
pub trait RowSource {
    /// The row's deletion in this source, if any.
    fn deletion(&self) -> Result<Option<DeletionTime>>;

    /// The entries with keys in `lo..hi`, ascending, or descending when `reversed`.
    fn scan<'s>(
        &'s self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        reversed: bool,
    ) -> Box<dyn Iterator<Item = Result<EntryItem<'s>>> + 's>;
}

/// Merges sorted streams, yielding for each distinct key every item that has it.
///
/// Each stream's next item is held in `heads`, so choosing the smallest (or largest) key only
/// borrows: no key is copied on the way. An item whose key is `None` (an error) is yielded at
/// once, alone, whatever the order.
pub struct KMerge<I: Iterator, F> {
    streams: Vec<I>,
    heads: Vec<Option<I::Item>>,
    key: F,
    reversed: bool,
}

impl<I, F> KMerge<I, F>
where
    I: Iterator,
    F: Fn(&I::Item) -> Option<&[u8]>,
{
    /// Merges `streams`, each sorted by `key` (descending when `reversed`).
    pub fn new(mut streams: Vec<I>, key: F, reversed: bool) -> Self {
        let heads = streams.iter_mut().map(Iterator::next).collect();
        KMerge {
            streams,
            heads,
            key,
            reversed,
        }
    }

    fn ahead(&self, a: &[u8], b: &[u8]) -> bool {
        if self.reversed {
            a > b
        } else {
            a < b
        }
    }
}

impl<I, F> Iterator for KMerge<I, F>
where
    I: Iterator,
    F: Fn(&I::Item) -> Option<&[u8]>,
{
    type Item = Vec<I::Item>;

    fn next(&mut self) -> Option<Vec<I::Item>> {
        let mut best: Option<usize> = None;
        for (i, head) in self.heads.iter().enumerate() {
            let Some(item) = head else { continue };
            let Some(k) = (self.key)(item) else {
                let urgent = self.heads[i].take();
                return urgent.map(|e| vec![e]);
            };
            let better = match best
                .and_then(|b| self.heads[b].as_ref())
                .and_then(|b| (self.key)(b))
            {
                None => true,
                Some(b) => self.ahead(k, b),
            };
            if better {
                best = Some(i);
            }
        }
        let best = best?;
        let mut group = Vec::with_capacity(1);
        for i in 0..self.heads.len() {
            let same = i == best
                || match (&self.heads[i], &self.heads[best]) {
                    (Some(x), Some(b)) => (self.key)(x) == (self.key)(b),
                    _ => false,
                };
            if same && i != best {
                if let Some(item) = std::mem::replace(&mut self.heads[i], self.streams[i].next()) {
                    group.push(item);
                }
            }
        }
        if let Some(item) = std::mem::replace(&mut self.heads[best], self.streams[best].next()) {
            group.insert(0, item);
        }
        Some(group)
    }
}

/// The entries of one row across sources, each key once, versions reconciled.
pub fn merged_entries<'s>(
    sources: &'s [&'s dyn RowSource],
    lo: Bound<&[u8]>,
    hi: Bound<&[u8]>,
    reversed: bool,
) -> impl Iterator<Item = Result<(Cow<'s, [u8]>, Entry)>> + 's {
    let mut streams: Vec<_> = sources.iter().map(|s| s.scan(lo, hi, reversed)).collect();
    let heads = streams.iter_mut().map(Iterator::next).collect();
    EntryMerge {
        streams,
        heads,
        reversed,
    }
}

/// Merges sorted entry streams, reconciling the versions of each key as it goes: the
/// [`KMerge`] of entries without its per-key group, which a slice of a few columns would
/// otherwise allocate for every column it returns.
struct EntryMerge<I: Iterator> {
    streams: Vec<I>,
    heads: Vec<Option<I::Item>>,
    reversed: bool,
}

impl<'s, I> Iterator for EntryMerge<I>
where
    I: Iterator<Item = Result<EntryItem<'s>>>,
{
    type Item = Result<(Cow<'s, [u8]>, Entry)>;

    fn next(&mut self) -> Option<Self::Item> {
        // The head that comes first; an error comes out at once, alone.
        let mut best: Option<usize> = None;
        for i in 0..self.heads.len() {
            match &self.heads[i] {
                None => {}
                Some(Err(_)) => {
                    let failed = std::mem::replace(&mut self.heads[i], self.streams[i].next());
                    return failed.map(|r| r.map(|(k, e)| (k, e.into_owned())));
                }
                Some(Ok((k, _))) => {
                    let ahead = match best.and_then(|b| self.heads[b].as_ref()) {
                        Some(Ok((b, _))) => {
                            if self.reversed {
                                k.as_ref() > b.as_ref()
                            } else {
                                k.as_ref() < b.as_ref()
                            }
                        }
                        _ => true,
                    };
                    if ahead {
                        best = Some(i);
                    }
                }
            }
        }
        let best = best?;
        let Some(Ok((key, first))) =
            std::mem::replace(&mut self.heads[best], self.streams[best].next())
        else {
            return Some(Err(Error::invalid("entry merge lost its head")));
        };
        let mut entry = first.into_owned();
        for i in 0..self.heads.len() {
            let same = matches!(&self.heads[i], Some(Ok((k, _))) if *k == key);
            if same {
                if let Some(Ok((_, e))) =
                    std::mem::replace(&mut self.heads[i], self.streams[i].next())
                {
                    entry = reconcile_entries(entry, e.into_owned());
                }
            }
        }
        Some(Ok((key, entry)))
    }
}

/// The key of a row-key stream item; `None` for an error, which the merge then yields at once.
pub fn row_key(item: &Result<Vec<u8>>) -> Option<&[u8]> {
    item.as_ref().ok().map(Vec::as_slice)
}

/// The row deletion across sources.
pub fn merged_deletion(sources: &[&dyn RowSource]) -> Result<Option<DeletionTime>> {
    let mut acc = None;
    for s in sources {
        acc = DeletionTime::merge_opt(acc, s.deletion()?);
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn kmerge_equals_a_sorted_union(
            mut streams in prop::collection::vec(prop::collection::btree_set(prop::collection::vec(0u8..4, 0..3), 0..6), 0..4),
            reversed: bool,
        ) {
            let lists: Vec<Vec<Vec<u8>>> = streams
                .iter_mut()
                .map(|s| {
                    let mut v: Vec<Vec<u8>> = std::mem::take(s).into_iter().collect();
                    if reversed { v.reverse(); }
                    v
                })
                .collect();
            let mut want: std::collections::BTreeMap<Vec<u8>, usize> = Default::default();
            for l in &lists {
                for k in l {
                    *want.entry(k.clone()).or_default() += 1;
                }
            }
            let mut want: Vec<(Vec<u8>, usize)> = want.into_iter().collect();
            if reversed { want.reverse(); }
            let got: Vec<(Vec<u8>, usize)> =
                KMerge::new(lists.iter().map(|l| l.iter()).collect(), |k: &&Vec<u8>| Some(k.as_slice()), reversed)
                    .map(|g| (g[0].clone(), g.len()))
                    .collect();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn kmerge_groups_equal_keys_both_ways() {
        let a = [b"a".to_vec(), b"c".to_vec(), b"e".to_vec()];
        let b = [b"b".to_vec(), b"c".to_vec()];
        let fwd: Vec<usize> = KMerge::new(
            vec![a.iter(), b.iter()],
            |k: &&Vec<u8>| Some(k.as_slice()),
            false,
        )
        .map(|g| g.len())
        .collect();
        assert_eq!(fwd, [1, 1, 2, 1]);
        let keys: Vec<Vec<u8>> = KMerge::new(
            vec![a.iter().rev(), b.iter().rev()],
            |k: &&Vec<u8>| Some(k.as_slice()),
            true,
        )
        .map(|g| g[0].clone())
        .collect();
        assert_eq!(
            keys,
            [b"e".to_vec(), b"c".to_vec(), b"b".to_vec(), b"a".to_vec()]
        );
    }
}
