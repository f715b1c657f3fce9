//! The live cells of one slice of a CQL partition, read page by page through the engine's
//! slices (each page starts at the last cell of the one before, which it skips), forward or
//! reversed. `select` groups them back into rows; this file only pages.

use super::bounds::Bounds;
use super::error::CqlError;
use super::session::Session;
use supercolumn::query::{Column, ColumnOrSuperColumn, ColumnParent, SlicePredicate, SliceRange};

/// Cells read per engine call.
pub(super) const PAGE: usize = 1000;

impl Session<'_> {
    /// The live cells of one slice of a partition, page by page, in read order.
    ///
    /// The first page asks for `first_page` cells (enough for the query's limit, so a `LIMIT 10`
    /// does not read a thousand), or is `prefetched` (read by a range query with these bounds).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn cells<'s>(
        &'s self,
        ks: &'s str,
        cf: &'s ColumnParent,
        key: &'s [u8],
        b: &Bounds,
        reversed: bool,
        first_page: usize,
        prefetched: Option<Vec<ColumnOrSuperColumn>>,
    ) -> impl Iterator<Item = Result<Column, CqlError>> + 's {
        // A reversed slice starts at its high end.
        let (mut from, to) = if reversed {
            (b.finish.clone(), b.start.clone())
        } else {
            (b.start.clone(), b.finish.clone())
        };
        let mut buf = Vec::new().into_iter();
        let mut seen_last: Option<Vec<u8>> = None;
        let mut done = false;
        let mut size = first_page;
        let mut prefetched = prefetched;
        std::iter::from_fn(move || loop {
            if let Some(c) = buf.next() {
                return Some(Ok(c));
            }
            if done {
                return None;
            }
            let page = match prefetched.take() {
                Some(p) => p,
                None => {
                    let range = SliceRange {
                        start: from.clone(),
                        finish: to.clone(),
                        reversed,
                        count: size,
                    };
                    match self
                        .db
                        .get_slice(ks, key, cf, &SlicePredicate::Range(range))
                    {
                        Ok(p) => p,
                        Err(e) => {
                            done = true;
                            return Some(Err(e.into()));
                        }
                    }
                }
            };
            done = page.len() < size;
            size = PAGE;
            let mut cols: Vec<Column> = page
                .into_iter()
                .filter_map(|c| match c {
                    ColumnOrSuperColumn::Column(c) => Some(c),
                    ColumnOrSuperColumn::SuperColumn(_) => None,
                })
                .collect();
            // A page starts at the previous page's last cell (bounds are inclusive).
            if let Some(prev) = seen_last.take() {
                if cols.first().is_some_and(|c| c.name == prev) {
                    cols.remove(0);
                }
            }
            match cols.last() {
                Some(l) => {
                    from = l.name.clone();
                    seen_last = Some(l.name.clone());
                }
                None => done = true,
            }
            buf = cols.into_iter();
        })
    }
}
