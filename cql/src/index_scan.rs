//! Reading a `SELECT`'s rows through a secondary index (`Partitions::Index`): the index's
//! entries for the value, a page at a time and in token order, each the key and clustering of
//! a row that held the value when written. Each row is read from the table and goes through
//! the plan's filters like any scanned row; the filters hold the indexed equality itself, so an
//! entry left by an overwrite, a delete or an expiry finds its row no longer matching and is
//! dropped, as Cassandra drops it. Rows the query's clustering restrictions exclude are not
//! read.

use super::bounds::Bounds;
use super::collect::Collect;
use super::error::CqlError;
use super::index_plan::IndexRead;
use super::page::Position;
use super::pages::PAGE;
use super::session::Session;
use supercolumn::model::comparator::{Comparator, CompositeType};
use supercolumn::query::{ColumnOrSuperColumn, ColumnParent, SlicePredicate};
use supercolumn::schema::IndexDef;

impl Session<'_> {
    /// Reads the rows index read `ix` lists into `c`, from after where `resume` left off.
    pub(super) fn index_scan(
        &self,
        c: &mut Collect<'_>,
        ix: &IndexRead,
        resume: Option<&Position>,
    ) -> Result<(), CqlError> {
        let p = c.p;
        let t = &p.table;
        let cf = ColumnParent::new(&t.name);
        let want = c.cells_wanted();
        let n_ck = t.clustering.len();
        let comparator = t.comparator();
        let shape = IndexDef::new(ix.index.clone(), ix.column.as_bytes().to_vec(), n_ck as u16);
        let partitioner = self.db.partitioner();
        // Without collections a row's cells have known names: read by name, as a point read.
        let by_name = !t.columns.iter().any(|c| c.ty.is_collection());
        let regular: Vec<String> = t
            .regular_sorted()
            .into_iter()
            .filter(|&i| !t.columns[i].is_static)
            .map(|i| t.columns[i].name.clone())
            .collect();
        // A page resumes after its last row's entry.
        let mut after = resume
            .map(|r| resume_entry(&shape, partitioner, r))
            .transpose()?;
        let mut current: Option<Vec<u8>> = resume.map(|r| r.key.clone());
        let mut in_partition =
            resume.map_or(0, |r| usize::try_from(r.in_partition).unwrap_or(usize::MAX));
        if let Some(r) = resume {
            c.begin(self.statics_of(t, &cf, &r.key)?);
        }
        loop {
            let entries = self.db.index_entries(
                &t.keyspace,
                &t.name,
                &ix.index,
                &ix.value,
                after.as_deref(),
                PAGE,
            )?;
            for e in &entries {
                let parts: Vec<&[u8]> = e.clustering.iter().map(Vec::as_slice).collect();
                if !CompositeType::fits(&parts) {
                    continue;
                }
                let row = Bounds {
                    start: if n_ck == 0 {
                        Vec::new()
                    } else {
                        CompositeType::build(&parts, -1)
                    },
                    finish: if n_ck == 0 {
                        Vec::new()
                    } else {
                        CompositeType::build(&parts, 1)
                    },
                };
                if n_ck > 0 {
                    // Slices cut between rows, never inside one: the row's marker stands for
                    // all its cells.
                    let mut marker = parts.clone();
                    marker.push(b"");
                    let marker = CompositeType::build(&marker, 0);
                    if !p
                        .slices
                        .iter()
                        .any(|b| within(comparator.as_ref(), b, &marker))
                    {
                        continue;
                    }
                }
                if current.as_deref() != Some(e.key.as_slice()) {
                    c.begin(self.statics_of(t, &cf, &e.key)?);
                    current = Some(e.key.clone());
                    in_partition = 0;
                }
                let more = if by_name {
                    // The row's cells by name, as a point read finds them.
                    let names = std::iter::once("")
                        .chain(regular.iter().map(String::as_str))
                        .map(|n| t.cell_name(&parts, n))
                        .collect::<Result<Vec<_>, _>>()?;
                    let found = self.db.get_slice(
                        &t.keyspace,
                        &e.key,
                        &cf,
                        &SlicePredicate::Names(names),
                    )?;
                    let mut cells = found.into_iter().filter_map(|c| match c {
                        ColumnOrSuperColumn::Column(c) => Some(Ok(c)),
                        ColumnOrSuperColumn::SuperColumn(_) => None,
                    });
                    c.partition(&e.key, &mut cells, &mut in_partition)?
                } else {
                    let mut cells = self.cells(&t.keyspace, &cf, &e.key, &row, false, want, None);
                    c.partition(&e.key, &mut cells, &mut in_partition)?
                };
                if !more {
                    return Ok(());
                }
            }
            match entries.last() {
                Some(last) if entries.len() == PAGE => after = Some(last.position.clone()),
                _ => return Ok(()),
            }
        }
    }
}

/// The index entry of the row where a page ended: the index's next entry starts the next page.
fn resume_entry(
    shape: &IndexDef,
    partitioner: supercolumn::Partitioner,
    r: &Position,
) -> Result<Vec<u8>, CqlError> {
    let parts = match &r.clustering {
        Some(prefix) => CompositeType::split(prefix)
            .map_err(|e| CqlError::invalid(format!("invalid paging state: {e}")))?
            .into_iter()
            .map(|c| c.bytes)
            .collect(),
        None => Vec::new(),
    };
    Ok(shape.entry_name(&partitioner.row_sort_key(&r.key), &parts))
}

/// Whether cell name `name` lies inside slice `b`.
fn within(cmp: &dyn Comparator, b: &Bounds, name: &[u8]) -> bool {
    (b.start.is_empty() || cmp.compare(&b.start, name).is_le())
        && (b.finish.is_empty() || cmp.compare(name, &b.finish).is_le())
}
