//! The cells `--engine cql` writes, written and read through the Thrift-era API (`--engine
//! cells`): the same tables, the same row markers and values under the same composite names,
//! the same slices, only without the language. Set beside `--engine cql` it prices the CQL layer
//! alone, operation for operation; `--engine supercolumn` prices the data model as well (one
//! cell per value, no marker).

use std::path::Path;

use supercolumn::comparator::CompositeType;
use supercolumn::{
    BatchMutation, ColumnParent, ColumnPathRef, Database, KeyRange, SlicePredicate, SliceRange,
    WriteOptions,
};

use super::supercolumn_cql::{open_with_tables, KS};
use super::{Engine, EngineConfig};

const POINT: &str = "point";
const WIDE: &str = "wide";

pub struct SupercolumnCells {
    db: Database,
    point: ColumnParent,
    wide: ColumnParent,
}

impl SupercolumnCells {
    pub fn open(dir: &Path, config: EngineConfig) -> anyhow::Result<SupercolumnCells> {
        Ok(SupercolumnCells {
            db: open_with_tables(dir, config)?,
            point: ColumnParent::new(POINT),
            wide: ColumnParent::new(WIDE),
        })
    }
}

/// A CQL row's two cells, as an INSERT writes them: its marker (`c:`) and its value (`c:v`).
fn row_cells(clustering: &[u8]) -> [Vec<u8>; 2] {
    [
        CompositeType::build(&[clustering, b""], 0),
        CompositeType::build(&[clustering, b"v"], 0),
    ]
}

/// Adds one CQL row's cells to `b`, under one timestamp (as one INSERT is).
fn insert_row(b: &mut BatchMutation, cf: &str, row: &[u8], clustering: &[u8], value: &[u8]) {
    let [marker, v] = row_cells(clustering);
    let write = WriteOptions::now();
    b.insert(row, ColumnPathRef::new(cf).column(&marker), b"", write);
    b.insert(row, ColumnPathRef::new(cf).column(&v), value, write);
}

impl Engine for SupercolumnCells {
    fn put(&self, row: &[u8], column: &[u8], value: &[u8]) -> anyhow::Result<()> {
        let mut b = BatchMutation::new();
        insert_row(&mut b, POINT, row, column, value);
        Ok(self.db.batch_mutate(KS, &b)?)
    }

    fn put_wide(&self, row: &[u8], cells: &[([u8; 8], Vec<u8>)]) -> anyhow::Result<()> {
        let mut b = BatchMutation::new();
        for (name, value) in cells {
            insert_row(&mut b, WIDE, row, name, value);
        }
        Ok(self.db.batch_mutate(KS, &b)?)
    }

    fn get(&self, row: &[u8], column: &[u8]) -> anyhow::Result<bool> {
        // Both cells, as the CQL read does: the marker says the row exists when `v` is null.
        let names = SlicePredicate::names(row_cells(column));
        Ok(!self.db.get_slice(KS, row, &self.point, &names)?.is_empty())
    }

    fn slice(&self, row: &[u8], count: usize, reversed: bool) -> anyhow::Result<usize> {
        // `count` CQL rows are twice as many cells.
        let mut range = SliceRange::all().count(count.saturating_mul(2));
        if reversed {
            range = range.reversed();
        }
        let got = self.db.get_slice(KS, row, &self.wide, &range.into())?;
        Ok(got.len() / 2)
    }

    fn scan(&self, start: &[u8], rows: usize) -> anyhow::Result<usize> {
        let got = self.db.get_range_slices(
            KS,
            &self.point,
            &SlicePredicate::everything(),
            &KeyRange::keys(start, b"").count(rows),
        )?;
        Ok(got.iter().map(|r| r.columns.len() / 2).sum())
    }

    cql_tables_maintenance!();

    fn close(self: Box<Self>) -> anyhow::Result<()> {
        Ok(self.db.close()?)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use supercolumn::{ColumnOrSuperColumn, Database, Options};

    use super::*;
    use crate::engine::{open, Durability};

    fn config() -> EngineConfig {
        EngineConfig {
            durability: Durability::Periodic,
            block_cache_bytes: 1 << 20,
            memtable_bytes: None,
            order_preserving: false,
            index_values: false,
            scrape_ms: None,
        }
    }

    /// Names and values of a row's cells (timestamps differ between writes).
    fn cells(db: &Database, cf: &str, row: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let all = SlicePredicate::everything();
        db.get_slice(KS, row, &ColumnParent::new(cf), &all)
            .unwrap()
            .into_iter()
            .map(|c| match c {
                ColumnOrSuperColumn::Column(c) => (c.name, c.value),
                other => panic!("a super column in a CQL table: {other:?}"),
            })
            .collect()
    }

    /// What `cells` writes is what `cql` writes, cell for cell, and each reads the other's rows:
    /// the comparison between the two is one of the same operation.
    #[test]
    fn cells_and_cql_write_the_same_cells_and_read_each_others_rows() {
        let dir = tempfile::tempdir().unwrap();
        let wide: Vec<([u8; 8], Vec<u8>)> = (0..5i64)
            .map(|c| (c.to_be_bytes(), vec![b'w'; 3]))
            .collect();
        for (name, row) in [("cells", b"by-cells"), ("cql", b"by-cql--")] {
            let e = open(name, dir.path(), config()).unwrap();
            e.put(row, b"col", b"value").unwrap();
            e.put_wide(row, &wide).unwrap();
            e.close().unwrap();
        }
        let db = Database::open(dir.path(), Options::default()).unwrap();
        for cf in [POINT, WIDE] {
            let (a, b) = (cells(&db, cf, b"by-cells"), cells(&db, cf, b"by-cql--"));
            assert!(!a.is_empty(), "{cf}: nothing written");
            assert_eq!(a, b, "{cf}");
        }
        db.close().unwrap();
        for name in ["cells", "cql"] {
            let e = open(name, dir.path(), config()).unwrap();
            let mut scanned = Vec::new();
            for row in [b"by-cells", b"by-cql--"] {
                assert!(e.get(row, b"col").unwrap(), "{name}");
                assert!(!e.get(row, b"other").unwrap(), "{name}");
                assert_eq!(e.slice(row, 3, false).unwrap(), 3, "{name}");
                assert_eq!(e.slice(row, 10, true).unwrap(), 5, "{name}");
                scanned.push(e.scan(row, 10).unwrap());
            }
            // In token order one row comes first: from it both are scanned, from the other one.
            scanned.sort_unstable();
            assert_eq!(scanned, [1, 2], "{name}");
            e.close().unwrap();
        }
    }
}
