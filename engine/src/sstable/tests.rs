//! Tests of SSTable writing and reading together.

use std::ops::Bound;
use std::path::Path;

use super::reader::ReadContext;
use super::{Sstable, SstableWriter, TableOptions};
use crate::cache::KeyCache;
use crate::io::RealFs;
use crate::merge::RowSource;
use crate::model::cell::{Cell, DeletionTime, Entry};
use crate::model::partitioner::{Partitioner, RowKey};
use crate::sstable::BlockCache;
use crate::stats::Counters;

struct Env {
    blocks: BlockCache,
    keys: KeyCache,
    counters: Counters,
}

impl Env {
    fn new(cache_bytes: usize) -> Env {
        let keys = KeyCache::default();
        keys.set_capacity(1000);
        Env {
            blocks: BlockCache::new(cache_bytes),
            keys,
            counters: Counters::default(),
        }
    }
    fn ctx(&self) -> ReadContext<'_> {
        ReadContext {
            blocks: &self.blocks,
            keys: &self.keys,
            counters: &self.counters,
        }
    }
}

/// Rows here are keyed by themselves, as the order-preserving partitioner keys them.
const OPP: Partitioner = Partitioner::OrderPreserving;

fn options() -> TableOptions {
    TableOptions {
        block_size: 512,
        bloom_fp: 0.01,
        partitioner: OPP,
        compress: true,
    }
}

fn col(i: u32) -> Vec<u8> {
    i.to_be_bytes().to_vec()
}

fn cell(i: u32) -> Entry {
    Entry::Cell(Cell::live(i64::from(i), vec![b'v'; 20], None))
}

/// Rows "a" (3 columns), "m" (wide: `wide` columns, row-deleted at 1), "z" (1 column).
fn write(path: &Path, wide: u32) {
    let mut w = SstableWriter::create(&RealFs, path, options(), 3).unwrap();
    let small: Vec<(Vec<u8>, Entry)> = (0..3).map(|i| (col(i), cell(i))).collect();
    w.add_row(
        b"a",
        b"a",
        None,
        small.iter().map(|(k, e)| (k.as_slice(), e.as_ref())),
    )
    .unwrap();
    let many: Vec<(Vec<u8>, Entry)> = (0..wide).map(|i| (col(i), cell(i))).collect();
    let d = DeletionTime {
        marked_for_delete_at: 1,
        local_deletion_time: 2,
    };
    w.add_row(
        b"m",
        b"m",
        Some(d),
        many.iter().map(|(k, e)| (k.as_slice(), e.as_ref())),
    )
    .unwrap();
    let one = [(col(7), cell(7))];
    w.add_row(
        b"z",
        b"z",
        None,
        one.iter().map(|(k, e)| (k.as_slice(), e.as_ref())),
    )
    .unwrap();
    w.finish().unwrap();
}

fn names(src: &dyn RowSource, lo: Bound<&[u8]>, hi: Bound<&[u8]>, rev: bool) -> Vec<u32> {
    src.scan(lo, hi, rev)
        .map(|r| {
            let (k, _) = r.unwrap();
            u32::from_be_bytes(k.as_ref().try_into().unwrap())
        })
        .collect()
}

#[test]
fn rows_read_back_forward_and_reversed_within_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("T-1-Data.db");
    write(&path, 1000);
    let t = Sstable::open(&crate::io::RealFs, &path, 1, OPP).unwrap();
    assert!(t.block_count() > 20, "the wide row spans many blocks");
    assert_eq!(t.footer().rows, 3);
    let env = Env::new(1 << 20);
    let ctx = env.ctx();
    let pos = t.locate(&RowKey::new(OPP, b"m"), &ctx).unwrap().unwrap();
    assert_eq!(pos.deletion.unwrap().marked_for_delete_at, 1);
    let m = t.row(b"m", pos, ctx);
    let all = names(&m, Bound::Unbounded, Bound::Unbounded, false);
    assert_eq!(all, (0..1000).collect::<Vec<_>>());
    let rev = names(&m, Bound::Unbounded, Bound::Unbounded, true);
    assert_eq!(rev, (0..1000).rev().collect::<Vec<_>>());
    let (lo, hi) = (col(100), col(250));
    let mid = names(&m, Bound::Included(&lo), Bound::Excluded(&hi), false);
    assert_eq!(mid, (100..250).collect::<Vec<_>>());
    let midr = names(&m, Bound::Excluded(&lo), Bound::Included(&hi), true);
    assert_eq!(midr, (101..=250).rev().collect::<Vec<_>>());
    for (row, want) in [(&b"a"[..], vec![0, 1, 2]), (b"z", vec![7])] {
        let p = t.locate(&RowKey::new(OPP, row), &ctx).unwrap().unwrap();
        let r = t.row(row, p, ctx);
        assert_eq!(names(&r, Bound::Unbounded, Bound::Unbounded, false), want);
        let rev: Vec<u32> = want.iter().rev().copied().collect();
        assert_eq!(names(&r, Bound::Unbounded, Bound::Unbounded, true), rev);
    }
    assert!(t.locate(&RowKey::new(OPP, b"b"), &ctx).unwrap().is_none());
    let rows: Vec<Vec<u8>> = t
        .rows_from(Bound::Included(b"b"), ctx)
        .map(|r| r.unwrap().sort_key().to_vec())
        .collect();
    assert_eq!(rows, [b"m".to_vec(), b"z".to_vec()]);
}

#[test]
fn the_last_ten_of_a_wide_row_read_at_most_two_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("T-1-Data.db");
    write(&path, 5000);
    let t = Sstable::open(&crate::io::RealFs, &path, 1, OPP).unwrap();
    let env = Env::new(0);
    let ctx = env.ctx();
    let pos = t.locate(&RowKey::new(OPP, b"m"), &ctx).unwrap().unwrap();
    let before = env.counters.snapshot().blocks_read;
    let m = t.row(b"m", pos, ctx);
    let last: Vec<u32> = names(&m, Bound::Unbounded, Bound::Unbounded, true)
        .into_iter()
        .take(10)
        .collect();
    assert_eq!(last, (4990..5000).rev().collect::<Vec<_>>());
    // `names` drains the whole row; take ten from a fresh scan to count honestly.
    let start = env.counters.snapshot().blocks_read;
    let ten: Vec<_> = m
        .scan(Bound::Unbounded, Bound::Unbounded, true)
        .take(10)
        .collect();
    assert_eq!(ten.len(), 10);
    let read = env.counters.snapshot().blocks_read - start;
    assert!(read <= 2, "{read} blocks read for the last ten columns");
    assert_eq!(before, 0, "locating a row that spans blocks reads none");
}

#[test]
fn every_damaged_byte_or_truncation_is_an_error_not_a_panic_or_wrong_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("T-1-Data.db");
    write(&path, 40);
    let good = std::fs::read(&path).unwrap();
    let bad = dir.path().join("T-2-Data.db");
    type Rows = Vec<(Vec<u8>, Vec<u32>)>;
    let check = |bytes: &[u8]| -> Result<Rows, crate::error::Error> {
        std::fs::write(&bad, bytes).unwrap();
        let t = Sstable::open(&crate::io::RealFs, &bad, 2, OPP)?;
        let env = Env::new(0);
        let ctx = env.ctx();
        let mut out = Vec::new();
        for row in [&b"a"[..], b"m", b"z"] {
            if let Some(p) = t.locate(&RowKey::new(OPP, row), &ctx)? {
                let src = t.row(row, p, ctx);
                let mut cols = Vec::new();
                for item in src.scan(Bound::Unbounded, Bound::Unbounded, false) {
                    let (k, _) = item?;
                    cols.push(u32::from_be_bytes(k.as_ref().try_into().unwrap_or([0; 4])));
                }
                out.push((row.to_vec(), cols));
            }
        }
        Ok(out)
    };
    let want = check(&good).unwrap();
    for i in 0..good.len() {
        let mut d = good.clone();
        d[i] ^= 0x01;
        match check(&d) {
            Err(crate::error::Error::Corrupt { path, .. }) => assert_eq!(path, bad),
            Err(e) => panic!("byte {i}: unexpected error {e}"),
            // A flip can land in a bloom bit and only change a "maybe": reads must still match.
            Ok(got) => assert_eq!(got, want, "byte {i} changed what was read"),
        }
    }
    for n in 0..good.len() {
        assert!(check(&good[..n]).is_err(), "truncated to {n}");
    }
}
