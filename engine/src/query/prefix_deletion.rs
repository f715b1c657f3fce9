//! Finds the prefix deletions that cover a column of a Standard column family with a composite
//! comparator (a deleted CQL row or collection): each is stored under its prefix's key
//! (`model::cell_key`), so a read asks its sources for the deletion of each proper prefix of a
//! column it meets. A slice meets many columns under the same prefixes in a row, so what was
//! found for the last column's prefixes is kept and only a new prefix is looked up. Sources that
//! cannot hold one (their footer or memtable says so) are never asked, so tables without prefix
//! deletions pay nothing. The row's range deletions (`range_deletion.rs`) are gathered once,
//! when the finder is made, and answered beside the prefixes'. This file only reads.

use smallvec::SmallVec;

use crate::error::Result;
use crate::merge::RowSource;
use crate::model::cell::{DeletionTime, Entry};
use crate::model::cell_key::{prefix_deletion, proper_prefix_lens};
use crate::model::range_deletions::RangeDeletions;
use crate::query::range_deletion;
use crate::schema::ColumnType;

/// The covering deletions of the last key asked about, per proper prefix.
#[derive(Debug, Default)]
pub struct Covering {
    active: bool,
    key: Vec<u8>,
    /// Per proper prefix of `key`, shortest first: its length and its deletion.
    levels: SmallVec<[(usize, Option<DeletionTime>); 4]>,
    /// The row's range deletions.
    ranges: RangeDeletions,
}

impl Covering {
    /// A finder over `sources` of a column family of `column_type` (`origin` names it in
    /// errors), holding the row's range deletions: it looks for prefix deletions only if some
    /// source may hold one.
    pub fn new(
        sources: &[&dyn RowSource],
        column_type: ColumnType,
        origin: &str,
    ) -> Result<Covering> {
        let standard = column_type == ColumnType::Standard;
        Ok(Covering {
            active: standard && sources.iter().any(|s| s.may_hold_prefix_deletions()),
            ranges: if standard {
                range_deletion::of_sources(sources, origin)?
            } else {
                RangeDeletions::default()
            },
            ..Covering::default()
        })
    }

    /// The newest prefix deletion covering the column stored under `key`.
    // Inlined across codegen units: a slice asks it per cell.
    #[inline]
    pub fn of(&mut self, sources: &[&dyn RowSource], key: &[u8]) -> Result<Option<DeletionTime>> {
        let ranged = self.ranges.covering(key);
        if !self.active {
            return Ok(ranged);
        }
        let lens: SmallVec<[usize; 4]> = proper_prefix_lens(key).collect();
        // A prefix shared with the last key has the same deletion (so have its own prefixes).
        let keep = self
            .levels
            .iter()
            .zip(&lens)
            .take_while(|(&(l, _), &n)| l == n && self.key.get(..n) == Some(&key[..n]))
            .count();
        self.levels.truncate(keep);
        for &n in &lens[keep..] {
            let d = deletion_of_prefix(sources, &key[..n])?;
            self.levels.push((n, d));
        }
        self.key.clear();
        self.key.extend_from_slice(key);
        Ok(self
            .levels
            .iter()
            .fold(ranged, |acc, &(_, d)| DeletionTime::merge_opt(acc, d)))
    }
}

/// The deletion of the prefix `prefix` in one source, if it holds one.
pub fn in_source(source: &dyn RowSource, prefix: &[u8]) -> Result<Option<DeletionTime>> {
    if !source.may_hold_prefix_deletions() {
        return Ok(None);
    }
    Ok(match source.get(&prefix_deletion(prefix))? {
        Some((_, e)) => match e.as_ref() {
            Entry::GroupDeletion(d) => Some(*d),
            Entry::Cell(_) => None,
        },
        None => None,
    })
}

/// The deletion of the prefix `prefix` across sources.
fn deletion_of_prefix(sources: &[&dyn RowSource], prefix: &[u8]) -> Result<Option<DeletionTime>> {
    let mut acc = None;
    for s in sources {
        acc = DeletionTime::merge_opt(acc, in_source(*s, prefix)?);
    }
    Ok(acc)
}
