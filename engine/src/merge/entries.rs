//! The entries of one row merged across its sources, each key once, versions reconciled as they
//! go (LevelDB's merging iterator with the reconciliation the data model needs).

use std::borrow::Cow;
use std::ops::Bound;

use smallvec::SmallVec;

use super::source::{EntryItem, RowSource};
use crate::error::{Error, Result};
use crate::model::cell::Entry;
use crate::model::reconcile::reconcile_entries;

/// The entries of one row across sources, each key once, versions reconciled.
pub fn merged_entries<'s>(
    sources: &'s [&'s dyn RowSource],
    lo: Bound<&[u8]>,
    hi: Bound<&[u8]>,
    reversed: bool,
) -> impl Iterator<Item = Result<(Cow<'s, [u8]>, Entry)>> + 's {
    // One source (a row in one SSTable, the usual read after compaction) has nothing to merge:
    // its stream is passed through, without a head moved in and out per entry.
    if let [only] = sources {
        return Merged::Single(only.scan(lo, hi, reversed));
    }
    let mut streams: SmallVec<[_; 4]> = sources.iter().map(|s| s.scan(lo, hi, reversed)).collect();
    let heads = streams.iter_mut().map(Iterator::next).collect();
    Merged::Many(EntryMerge {
        streams,
        heads,
        reversed,
    })
}

/// A merge of several sources, or one source's stream as it is.
enum Merged<I: Iterator> {
    Single(I),
    Many(EntryMerge<I>),
}

impl<'s, I> Iterator for Merged<I>
where
    I: Iterator<Item = Result<EntryItem<'s>>>,
{
    type Item = Result<(Cow<'s, [u8]>, Entry)>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Merged::Single(stream) => stream.next().map(|r| r.map(|(k, e)| (k, e.into_owned()))),
            Merged::Many(merge) => merge.next(),
        }
    }
}

/// Merges sorted entry streams, reconciling the versions of each key as it goes: the
/// [`KMerge`] of entries without its per-key group, which a slice of a few columns would
/// otherwise allocate for every column it returns.
/// (Inline for up to four sources: a row read from a few sources allocates no vectors.)
struct EntryMerge<I: Iterator> {
    streams: SmallVec<[I; 4]>,
    heads: SmallVec<[Option<I::Item>; 4]>,
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
