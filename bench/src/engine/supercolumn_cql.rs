//! supercolumn through CQL (`--engine cql`): the same cells as CQL rows, every operation a
//! prepared statement. Point rows are `point (k blob, c blob, v blob, PRIMARY KEY (k, c))`, wide
//! rows `wide (k blob, c bigint, v blob, PRIMARY KEY (k, c))`; an INSERT also writes its row
//! marker, as Cassandra 2.0+ does. Set beside `--engine supercolumn` it prices the CQL layer.
//! With `--cql-index`, `point`'s value column has a secondary index (what a write to an
//! indexed column costs).

use std::path::Path;

use anyhow::Context;
use supercolumn::Database;
use supercolumn_cql::{CqlResult, Prepared, Session};

use super::supercolumn::options;
use super::{Engine, EngineConfig};

pub(super) const KS: &str = "stress";

pub struct SupercolumnCql {
    db: Database,
    insert_point: Prepared,
    insert_wide: Prepared,
    get: Prepared,
    slice: Prepared,
    slice_reversed: Prepared,
    scan: Prepared,
}

impl SupercolumnCql {
    pub fn open(dir: &Path, config: EngineConfig) -> anyhow::Result<SupercolumnCql> {
        let db = open_with_tables(dir, config)?;
        let mut s = Session::new(&db);
        s.execute(&format!("USE {KS}"))?;
        let insert_point = s.prepare("INSERT INTO point (k, c, v) VALUES (?, ?, ?)")?;
        let insert_wide = s.prepare("INSERT INTO wide (k, c, v) VALUES (?, ?, ?)")?;
        let get = s.prepare("SELECT v FROM point WHERE k = ? AND c = ?")?;
        let slice = s.prepare("SELECT c, v FROM wide WHERE k = ? LIMIT ?")?;
        let slice_reversed =
            s.prepare("SELECT c, v FROM wide WHERE k = ? ORDER BY c DESC LIMIT ?")?;
        let scan = s.prepare("SELECT c, v FROM point WHERE token(k) >= token(?) LIMIT ?")?;
        drop(s);
        Ok(SupercolumnCql {
            db,
            insert_point,
            insert_wide,
            get,
            slice,
            slice_reversed,
            scan,
        })
    }

    fn rows(&self, p: &Prepared, values: &[Option<&[u8]>]) -> anyhow::Result<usize> {
        match Session::new(&self.db).execute_prepared(p, values)? {
            CqlResult::Rows(r) => Ok(r.len()),
            other => anyhow::bail!("a SELECT returned {other:?}"),
        }
    }
}

/// Opens the database with the two CQL tables (created on first use).
pub(super) fn open_with_tables(dir: &Path, config: EngineConfig) -> anyhow::Result<Database> {
    let db = Database::open(dir, options(config))
        .with_context(|| format!("opening {}", dir.display()))?;
    Session::new(&db).execute(&format!(
        "CREATE KEYSPACE IF NOT EXISTS {KS} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}};
         USE {KS};
         CREATE TABLE IF NOT EXISTS point (k blob, c blob, v blob, PRIMARY KEY (k, c));
         CREATE TABLE IF NOT EXISTS wide (k blob, c bigint, v blob, PRIMARY KEY (k, c));"
    ))?;
    if config.index_values {
        Session::new(&db).execute(&format!("CREATE INDEX IF NOT EXISTS ON {KS}.point (v)"))?;
    }
    Ok(db)
}

/// Compacts the two tables (what `--engine cql` and `--engine server` both keep).
pub(super) fn compact_tables(db: &Database) -> anyhow::Result<()> {
    db.flush_all()?;
    db.compact(KS, Some("point"))?;
    Ok(db.compact(KS, Some("wide"))?)
}

/// SSTables of the two tables.
pub(super) fn table_count(db: &Database) -> usize {
    ["point", "wide"]
        .iter()
        .filter_map(|cf| db.column_family_stats(KS, cf).ok())
        .map(|s| s.sstables)
        .sum()
}

fn limit(n: usize) -> [u8; 4] {
    i32::try_from(n).unwrap_or(i32::MAX).to_be_bytes()
}

impl Engine for SupercolumnCql {
    fn put(&self, row: &[u8], column: &[u8], value: &[u8]) -> anyhow::Result<()> {
        Session::new(&self.db)
            .execute_prepared(&self.insert_point, &[Some(row), Some(column), Some(value)])?;
        Ok(())
    }

    fn put_wide(&self, row: &[u8], cells: &[([u8; 8], Vec<u8>)]) -> anyhow::Result<()> {
        let rows: Vec<[Option<&[u8]>; 3]> = cells
            .iter()
            .map(|(name, value)| [Some(row), Some(&name[..]), Some(value.as_slice())])
            .collect();
        let refs: Vec<&[Option<&[u8]>]> = rows.iter().map(|r| &r[..]).collect();
        Session::new(&self.db).execute_batch(&self.insert_wide, &refs)?;
        Ok(())
    }

    fn get(&self, row: &[u8], column: &[u8]) -> anyhow::Result<bool> {
        Ok(self.rows(&self.get, &[Some(row), Some(column)])? > 0)
    }

    fn slice(&self, row: &[u8], count: usize, reversed: bool) -> anyhow::Result<usize> {
        let p = if reversed {
            &self.slice_reversed
        } else {
            &self.slice
        };
        self.rows(p, &[Some(row), Some(&limit(count))])
    }

    fn scan(&self, start: &[u8], rows: usize) -> anyhow::Result<usize> {
        self.rows(&self.scan, &[Some(start), Some(&limit(rows))])
    }

    cql_tables_maintenance!();

    fn close(self: Box<Self>) -> anyhow::Result<()> {
        Ok(self.db.close()?)
    }
}
