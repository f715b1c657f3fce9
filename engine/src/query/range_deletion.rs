//! Gathers the range deletions of one row from its sources: each lies at the head of its row
//! (see `model::cell_key`), so one scan of that head per source that may hold one finds them
//! all, wherever the read begins; `model::range_deletions` cuts them into fragments. This file
//! only reads.

use std::ops::Bound;

use crate::error::{Error, Result};
use crate::merge::RowSource;
use crate::model::cell::Entry;
use crate::model::cell_key::{range_of_deletion, RANGE_DELETIONS, RANGE_DELETIONS_END};
use crate::model::range_deletions::{Range, RangeDeletions};

/// The range deletions `sources` hold for their row (`origin` names the column family in the
/// error a damaged one gives).
pub fn of_sources(sources: &[&dyn RowSource], origin: &str) -> Result<RangeDeletions> {
    let mut ranges = Vec::new();
    for s in sources {
        read_source(*s, origin, &mut ranges)?;
    }
    Ok(RangeDeletions::new(ranges))
}

/// Appends the range deletions one source holds for its row to `out`.
pub fn read_source(source: &dyn RowSource, origin: &str, out: &mut Vec<Range>) -> Result<()> {
    if !source.may_hold_range_deletions() {
        return Ok(());
    }
    let (lo, hi) = (
        Bound::Included(&RANGE_DELETIONS[..]),
        Bound::Excluded(&RANGE_DELETIONS_END[..]),
    );
    for item in source.scan(lo, hi, false) {
        let (key, entry) = item?;
        match (entry.as_ref(), range_of_deletion(&key)) {
            (Entry::GroupDeletion(d), Some((start, finish))) => out.push((start, finish, *d)),
            _ => {
                return Err(Error::CorruptName {
                    column_family: origin.into(),
                    reason: "an entry among the range deletions is not one".into(),
                })
            }
        }
    }
    Ok(())
}
