//! What a merge reads: one row as a source holds it (a memtable row, an SSTable row), as a
//! sorted stream of entries, forward or reversed, and the row's deletion.

use std::borrow::Cow;
use std::ops::Bound;

use crate::error::Result;
use crate::model::cell::{DeletionTime, Entry, EntryIn};

/// One entry of a row as a source yields it: its key and the entry, borrowed or owned.
pub type EntryItem<'s> = (Cow<'s, [u8]>, Cow<'s, Entry>);

/// What [`RowSource::visit`] calls with each entry, lent from where the source holds it when
/// it can be: answers whether to go on.
pub type Visitor<'f> = dyn FnMut(&[u8], EntryIn<'_>) -> Result<bool> + 'f;

/// A source's view of one row. Sources that read files report damage as errors in the stream
/// (an SSTable block that fails its checksum); the merge surfaces an error as soon as it appears.
pub trait RowSource {
    /// The row's deletion in this source, if any.
    fn deletion(&self) -> Result<Option<DeletionTime>>;

    /// Whether this source may hold prefix deletions (Standard CFs with a composite comparator),
    /// so a read must look for those covering the names it finds. `true` is always correct.
    fn may_hold_prefix_deletions(&self) -> bool {
        true
    }

    /// Whether this source may hold range deletions (Standard CFs with a composite comparator),
    /// so a read must gather them from the head of the row. `true` is always correct.
    fn may_hold_range_deletions(&self) -> bool {
        true
    }

    /// The entries with keys in `lo..hi`, ascending, or descending when `reversed`.
    fn scan<'s>(
        &'s self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        reversed: bool,
    ) -> Box<dyn Iterator<Item = Result<EntryItem<'s>>> + 's>;

    /// Visits the entries [`scan`](Self::scan) yields, in its order, each lent to `f` where
    /// the source can lend it (nothing copied or built per entry) and handed over where it
    /// had to be built, until `f` answers `false` or an entry fails to read (its error is
    /// returned).
    fn visit(
        &self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        reversed: bool,
        f: &mut Visitor<'_>,
    ) -> Result<()> {
        for item in self.scan(lo, hi, reversed) {
            let (key, entry) = item?;
            let entry = match entry {
                Cow::Borrowed(e) => EntryIn::Lent(e.as_ref()),
                Cow::Owned(e) => EntryIn::Owned(e),
            };
            if !f(&key, entry)? {
                break;
            }
        }
        Ok(())
    }

    /// The entry with key `key`, if this source holds one. Sources that can find one entry
    /// without building an iterator say so by providing this.
    fn get<'s>(&'s self, key: &[u8]) -> Result<Option<EntryItem<'s>>> {
        self.scan(Bound::Included(key), Bound::Included(key), false)
            .next()
            .transpose()
    }
}

/// The row deletion across sources.
pub fn merged_deletion(sources: &[&dyn RowSource]) -> Result<Option<DeletionTime>> {
    let mut acc = None;
    for s in sources {
        acc = DeletionTime::merge_opt(acc, s.deletion()?);
    }
    Ok(acc)
}
