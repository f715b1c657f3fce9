//! supercolumn under `stress`: point rows in `Keyspace1.Standard1` (BytesType), wide rows in
//! `Keyspace1.Wide1` (LongType names), through the public API only; with `--scrape-ms`, its
//! Prometheus metrics rendered on a thread of their own meanwhile.

use std::path::Path;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use anyhow::Context;
use supercolumn::comparator::LongType;
use supercolumn::{
    BatchMutation, ColumnFamilyDef, ColumnParent, ColumnPath, ColumnPathRef, CommitLogSync,
    Database, KeyRange, Options, Partitioner, SlicePredicate, SliceRange, WriteOptions,
};

use super::{Durability, Engine, EngineConfig};

const KS: &str = "Keyspace1";
const POINT: &str = "Standard1";
const WIDE: &str = "Wide1";

pub struct Supercolumn {
    db: Database,
    point_parent: ColumnParent,
    wide_parent: ColumnParent,
    /// Renders the metrics until told to stop (`--scrape-ms`).
    scraper: Option<Scraper>,
}

/// A thread rendering the database's Prometheus metrics at an interval, as `serve --admin`
/// does for each scrape.
struct Scraper {
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Scraper {
    fn start(db: Database, every: Duration) -> Scraper {
        let (stop, stopped) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                let text = supercolumn_tools::admin::metrics::scrape(&db, 0, None);
                std::hint::black_box(text.map(|t| t.len()).unwrap_or(0));
            }
        });
        Scraper { stop, thread }
    }

    fn finish(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }
}

/// The options every supercolumn adapter opens with.
pub fn options(config: EngineConfig) -> Options {
    let mut o = Options::default();
    o.commit_log_sync = match config.durability {
        Durability::Periodic => CommitLogSync::Periodic { period_ms: 10_000 },
        Durability::Batch => CommitLogSync::Batch { window_ms: 1.0 },
    };
    o.block_cache_size_mb = u32::try_from(config.block_cache_bytes >> 20).unwrap_or(u32::MAX);
    if let Some(m) = config.memtable_bytes {
        o.memtable_total_space_mb = u32::try_from(m >> 20).unwrap_or(u32::MAX).max(1);
    }
    if config.order_preserving {
        o.partitioner = Some(Partitioner::OrderPreserving);
    }
    o
}

impl Supercolumn {
    pub fn open(dir: &Path, config: EngineConfig) -> anyhow::Result<Supercolumn> {
        let db = Database::open(dir, options(config))
            .with_context(|| format!("opening {}", dir.display()))?;
        if db.describe_column_family(KS, WIDE).is_err() {
            db.create_column_family(
                KS,
                ColumnFamilyDef::standard(WIDE).with_comparator(LongType),
            )?;
        }
        let scraper = config
            .scrape_ms
            .map(|ms| Scraper::start(db.clone(), Duration::from_millis(ms.max(1))));
        Ok(Supercolumn {
            db,
            point_parent: ColumnParent::new(POINT),
            wide_parent: ColumnParent::new(WIDE),
            scraper,
        })
    }
}

impl Engine for Supercolumn {
    fn put(&self, row: &[u8], column: &[u8], value: &[u8]) -> anyhow::Result<()> {
        let mut b = BatchMutation::new();
        b.insert(
            row,
            ColumnPathRef::new(POINT).column(column),
            value,
            WriteOptions::now(),
        );
        Ok(self.db.batch_mutate(KS, &b)?)
    }

    fn put_wide(&self, row: &[u8], cells: &[([u8; 8], Vec<u8>)]) -> anyhow::Result<()> {
        let mut b = BatchMutation::new();
        for (name, value) in cells {
            b.insert(
                row,
                ColumnPathRef::new(WIDE).column(name),
                value,
                WriteOptions::now(),
            );
        }
        Ok(self.db.batch_mutate(KS, &b)?)
    }

    fn get(&self, row: &[u8], column: &[u8]) -> anyhow::Result<bool> {
        Ok(self
            .db
            .get(KS, row, &ColumnPath::new(POINT).column(column))?
            .is_some())
    }

    fn slice(&self, row: &[u8], count: usize, reversed: bool) -> anyhow::Result<usize> {
        let mut range = SliceRange::all().count(count);
        if reversed {
            range = range.reversed();
        }
        Ok(self
            .db
            .get_slice(KS, row, &self.wide_parent, &range.into())?
            .len())
    }

    fn scan(&self, start: &[u8], rows: usize) -> anyhow::Result<usize> {
        let got = self.db.get_range_slices(
            KS,
            &self.point_parent,
            &SlicePredicate::everything(),
            &KeyRange::keys(start, b"").count(rows),
        )?;
        Ok(got.iter().map(|r| r.columns.len()).sum())
    }

    fn flush(&self) -> anyhow::Result<()> {
        Ok(self.db.flush_all()?)
    }

    fn compact(&self) -> anyhow::Result<()> {
        self.db.flush_all()?;
        self.db.compact(KS, Some(POINT))?;
        Ok(self.db.compact(KS, Some(WIDE))?)
    }

    fn tables(&self) -> usize {
        [POINT, WIDE]
            .iter()
            .filter_map(|cf| self.db.column_family_stats(KS, cf).ok())
            .map(|s| s.sstables)
            .sum()
    }

    fn close(self: Box<Self>) -> anyhow::Result<()> {
        let me = *self;
        if let Some(s) = me.scraper {
            s.finish();
        }
        Ok(me.db.close()?)
    }
}
