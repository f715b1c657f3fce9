//! A k-way merge of sorted streams, yielding for each distinct key every item that has it (row
//! keys across memtables and SSTables, or any sorted keys).
//!
//! Sources are few (one per memtable and SSTable), so picking the next key by a linear scan over
//! their heads beats a heap. It runs forward or backward.

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
        let mut group = Vec::with_capacity(1);
        self.next_into(&mut group).then_some(group)
    }
}

impl<I, F> KMerge<I, F>
where
    I: Iterator,
    F: Fn(&I::Item) -> Option<&[u8]>,
{
    /// Puts the next key's items into `group` (emptied first, its room kept, so a long walk
    /// allocates no vector per key); false once every stream is done.
    pub fn next_into(&mut self, group: &mut Vec<I::Item>) -> bool {
        group.clear();
        let mut best: Option<usize> = None;
        for (i, head) in self.heads.iter().enumerate() {
            let Some(item) = head else { continue };
            let Some(k) = (self.key)(item) else {
                group.extend(self.heads[i].take());
                return true;
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
        let Some(best) = best else {
            return false;
        };
        if let Some(item) = std::mem::replace(&mut self.heads[best], self.streams[best].next()) {
            group.push(item);
        }
        for i in 0..self.heads.len() {
            let same = i != best
                && match (&self.heads[i], group.first()) {
                    (Some(x), Some(b)) => (self.key)(x) == (self.key)(b),
                    _ => false,
                };
            if same {
                if let Some(item) = std::mem::replace(&mut self.heads[i], self.streams[i].next()) {
                    group.push(item);
                }
            }
        }
        true
    }
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
