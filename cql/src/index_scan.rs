//! Reading a `SELECT`'s rows through a secondary index (`Partitions::Index`): the index's
//! entries for the value, a page at a time and in token order, each the key and clustering of
//! a row that held the value when written. Each row is read from the table and goes through
//! the plan's filters like any scanned row; the filters hold the indexed equality itself, so an
//! entry left by an overwrite, a delete or an expiry finds its row no longer matching and is
//! dropped, as Cassandra drops it. Rows the query's clustering restrictions exclude, and
//! partitions outside its `token(k)` range, are not read.

use super::bounds::Bounds;
use super::collect::Collect;
use super::error::CqlError;
use super::index_plan::IndexRead;
use super::page::{resume_slices, Position};
use super::pages::PAGE;
use super::session::Session;
use std::sync::Arc;

use smallvec::SmallVec;
use supercolumn::model::comparator::{Comparator, CompositeType};
use supercolumn::model::CellValue;
use supercolumn::query::{Column, ColumnParent};
use supercolumn::schema::{IndexDef, IndexOf};
use supercolumn::{ColumnFamilyHandle, IndexEntry};

/// How the rows an index lists are read: by name when the table has no collections (a row's
/// cells then have known names, and a read by name is what a point read does: the engine
/// visits the names' sort keys through the table's store), else as a one-row slice.
struct RowRead {
    /// The table's store, when its rows are read by name.
    by_name: Option<ColumnFamilyHandle>,
    cmp: Arc<dyn Comparator>,
    /// The regular (not static) columns, in cell name order.
    regular: Vec<String>,
    /// Cells a slice asks for per page.
    want: usize,
    cf: ColumnParent,
}

impl Session<'_> {
    /// Reads the rows index read `ix` lists into `c`, from after where `resume` left off.
    pub(super) fn index_scan(
        &self,
        c: &mut Collect<'_>,
        ix: &IndexRead,
        resume: Option<&Position>,
    ) -> Result<(), CqlError> {
        if ix.partitions {
            return self.index_partitions(c, ix, resume);
        }
        let t = &c.p.table;
        let n_ck = t.clustering.len();
        let by_name = !t.columns.iter().any(|c| c.ty.is_multi_cell());
        let read = RowRead {
            by_name: if by_name {
                Some(self.db.column_family_handle(&t.keyspace, &t.name)?)
            } else {
                None
            },
            cmp: t.comparator(),
            regular: t
                .regular_sorted()
                .into_iter()
                .filter(|&i| !t.columns[i].is_static)
                .map(|i| t.columns[i].name.clone())
                .collect(),
            want: c.cells_wanted(),
            cf: ColumnParent::new(&t.name),
        };
        let shape = IndexDef::new(ix.index.clone(), ix.column.as_bytes().to_vec(), n_ck as u16);
        // A page resumes after its last row's entry.
        let after = resume
            .map(|r| resume_entry(&shape, self.db.partitioner(), r))
            .transpose()?;
        let mut current: Option<Vec<u8>> = resume.map(|r| r.key.clone());
        let mut in_partition =
            resume.map_or(0, |r| usize::try_from(r.in_partition).unwrap_or(usize::MAX));
        if let Some(r) = resume {
            c.begin(self.statics_of(t, &read.cf, &r.key, &c.p.timed)?);
        }
        self.each_entry(ix, &t.keyspace, &t.name, after, |e| {
            let parts: Vec<&[u8]> = e.clustering.iter().map(Vec::as_slice).collect();
            if !CompositeType::fits(&parts) || !in_slices(c, &parts) {
                return Ok(true);
            }
            if current.as_deref() != Some(e.key.as_slice()) {
                c.begin(self.statics_of(t, &read.cf, &e.key, &c.p.timed)?);
                current = Some(e.key.clone());
                in_partition = 0;
            }
            self.index_row(c, &read, &e.key, &parts, &mut in_partition)
        })
    }

    /// Reads the partitions an index of a static column lists into `c`, each as a scan reads
    /// it (its slices, then its statics alone when it has no row), from where `resume` left
    /// off: inside a partition, its rest first.
    fn index_partitions(
        &self,
        c: &mut Collect<'_>,
        ix: &IndexRead,
        resume: Option<&Position>,
    ) -> Result<(), CqlError> {
        let p = c.p;
        let t = &p.table;
        let cf = ColumnParent::new(&t.name);
        let want = c.cells_wanted();
        let shape = IndexDef::new(ix.index.clone(), ix.column.as_bytes().to_vec(), 1)
            .of(IndexOf::StaticValue);
        let partitioner = self.db.partitioner();
        let after = resume.map(|r| shape.entry_name(&partitioner.row_sort_key(&r.key), &[]));
        if let Some((r, prefix)) = resume.and_then(|r| r.clustering.as_ref().map(|c| (r, c))) {
            c.begin(self.statics_of(t, &cf, &r.key, &p.timed)?);
            let mut in_partition = usize::try_from(r.in_partition).unwrap_or(usize::MAX);
            for b in resume_slices(t, &p.slices, prefix, p.reversed) {
                let mut cells = self.cells(&t.keyspace, &cf, &r.key, &b, p.reversed, want, None);
                if !c.partition(&r.key, &mut cells, &mut in_partition)? {
                    return Ok(());
                }
            }
        }
        self.each_entry(ix, &t.keyspace, &t.name, after, |e| {
            c.begin(self.statics_of(t, &cf, &e.key, &p.timed)?);
            let mut in_partition = 0;
            for b in &p.slices {
                let mut cells = self.cells(&t.keyspace, &cf, &e.key, b, p.reversed, want, None);
                if !c.partition(&e.key, &mut cells, &mut in_partition)? {
                    return Ok(false);
                }
            }
            Ok(c.statics_alone(&e.key, &mut in_partition))
        })
    }

    /// Calls `f` with each entry index read `ix` finds, a page of them at a time, from after
    /// entry `after`, until `f` answers `false`.
    fn each_entry(
        &self,
        ix: &IndexRead,
        keyspace: &str,
        table: &str,
        mut after: Option<Vec<u8>>,
        mut f: impl FnMut(&IndexEntry) -> Result<bool, CqlError>,
    ) -> Result<(), CqlError> {
        loop {
            let entries = self.db.index_entries(
                keyspace,
                table,
                &ix.index,
                &ix.value,
                after.as_deref(),
                PAGE,
            )?;
            let partitioner = self.db.partitioner();
            // A `token(k)` range keeps the rows of the partitions inside it.
            for e in entries
                .iter()
                .filter(|e| ix.span.contains(partitioner, &e.key))
            {
                if !f(e)? {
                    return Ok(());
                }
            }
            match entries.last() {
                Some(last) if entries.len() == PAGE => after = Some(last.position.clone()),
                _ => return Ok(()),
            }
        }
    }

    /// Reads the row of partition `key` with clustering `parts` into `c`; `Ok(false)` once no
    /// more rows are wanted.
    fn index_row(
        &self,
        c: &mut Collect<'_>,
        read: &RowRead,
        key: &[u8],
        parts: &[&[u8]],
        in_partition: &mut usize,
    ) -> Result<bool, CqlError> {
        let t = &c.p.table;
        if let Some(store) = &read.by_name {
            let names = std::iter::once("")
                .chain(read.regular.iter().map(String::as_str))
                .map(|n| t.cell_name(parts, n))
                .collect::<Result<Vec<_>, _>>()?;
            let mut buf = Vec::new();
            let mut ends = SmallVec::<[usize; 8]>::new();
            for n in &names {
                read.cmp.encode_sort_key(n, &mut buf);
                ends.push(buf.len());
            }
            let keys: SmallVec<[&[u8]; 8]> = ends
                .iter()
                .scan(0, |start, &end| {
                    let k = &buf[*start..end];
                    *start = end;
                    Some(k)
                })
                .collect();
            // Cells come in sort key order, each named by its place in the request.
            let mut found = Vec::with_capacity(names.len());
            self.db.visit_columns(store, key, &keys, |k, cell| {
                let at = keys.iter().position(|s| *s == k);
                if let (Some(at), CellValue::Live { value, ttl }) = (at, cell.value) {
                    found.push(Column {
                        name: names[at].clone(),
                        value,
                        timestamp: cell.timestamp,
                        ttl: ttl.map(|t| t.ttl),
                        expires_at: ttl.map(|t| t.local_expiration_time),
                    });
                }
            })?;
            return c.partition(key, &mut found.into_iter().map(Ok), in_partition);
        }
        let row = if parts.is_empty() {
            Bounds {
                start: Vec::new(),
                finish: Vec::new(),
            }
        } else {
            Bounds {
                start: CompositeType::build(parts, -1),
                finish: CompositeType::build(parts, 1),
            }
        };
        let mut cells = self.cells(&t.keyspace, &read.cf, key, &row, false, read.want, None);
        c.partition(key, &mut cells, in_partition)
    }
}

/// Whether the row with clustering `parts` lies in the query's clustering slices. Slices cut
/// between rows, never inside one: the row's marker stands for all its cells.
fn in_slices(c: &Collect<'_>, parts: &[&[u8]]) -> bool {
    if parts.is_empty() {
        return true;
    }
    let mut marker = parts.to_vec();
    marker.push(b"");
    let marker = CompositeType::build(&marker, 0);
    let cmp = c.p.table.comparator();
    c.p.slices.iter().any(|b| within(cmp.as_ref(), b, &marker))
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
