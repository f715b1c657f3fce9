//! Prefix deletions (the range tombstones CQL rows and collections are deleted with) and range
//! deletions (CQL's `DELETE … WHERE c >= ? AND c < ?`): random writes, column deletions,
//! deletions of one- and two-component prefixes and of ranges between one- to three-component
//! bounds, strict or not, open or not, of a `CompositeType(UTF8Type,UTF8Type,UTF8Type)` column
//! family, with flushes, compactions and
//! power cuts (so the commit log replays them), read back every way a read can go — forward,
//! reversed, from the middle of a deleted prefix, by name, one column, a range scan — against a
//! model that states SPEC §3's rule on its own: a deletion hides every column under its prefix
//! written at a timestamp no newer than it.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{Rng, T0};
use supercolumn::comparator::{Comparator, CompositeType, Utf8Type};
use supercolumn::io::FaultFs;
use supercolumn::{
    BatchMutation, ColumnFamilyDef, ColumnParent, ColumnPath, CommitLogSync, Database, Error,
    KeyRange, KeyspaceDef, ManualClock, Options, SlicePredicate, SliceRange, WriteOptions,
};

const KS: &str = "K";
const CF: &str = "C";

fn comparator() -> CompositeType {
    CompositeType::new(vec![
        Arc::new(Utf8Type),
        Arc::new(Utf8Type),
        Arc::new(Utf8Type),
    ])
}

fn options(ffs: &FaultFs) -> Options {
    let mut o = Options::default().with_clock(Arc::new(ManualClock::new(T0)));
    o.commit_log_sync = CommitLogSync::Batch { window_ms: 0.0 };
    o.file_system = Arc::new(ffs.clone());
    o.keyspaces = Some(vec![KeyspaceDef::new(KS).with_column_family(
        ColumnFamilyDef::standard(CF).with_comparator(comparator()),
    )]);
    // Compaction runs when the test says so.
    o.min_compaction_threshold = 0;
    o
}

fn name(parts: &[&str]) -> Vec<u8> {
    let bytes: Vec<&[u8]> = parts.iter().map(|p| p.as_bytes()).collect();
    CompositeType::build(&bytes, 0)
}

/// One side of a range deletion: leading components and whether a name starting with them
/// is inside (`None`: open).
type Bound = Option<(Vec<String>, bool)>;

/// What the rows must read as: per row, each column's newest write (timestamp, value or
/// `None` for a deletion), the newest deletion of each prefix, and the range deletions.
#[derive(Default)]
struct Model {
    cells: BTreeMap<(String, Vec<String>), (i64, Option<String>)>,
    prefixes: BTreeMap<(String, Vec<String>), i64>,
    ranges: Vec<(String, Bound, Bound, i64)>,
}

/// Whether `col` lies on the inner side of `bound` (`lower`: above it).
fn inside(col: &[String], bound: &Bound, lower: bool) -> bool {
    let Some((p, inclusive)) = bound else {
        return true;
    };
    match col[..p.len()].cmp(p.as_slice()) {
        std::cmp::Ordering::Equal => *inclusive,
        o => (o == std::cmp::Ordering::Greater) == lower,
    }
}

impl Model {
    fn write(&mut self, row: &str, col: &[String], ts: i64, value: Option<String>) {
        let e = self
            .cells
            .entry((row.to_string(), col.to_vec()))
            .or_insert((ts, value.clone()));
        // SPEC §3: the higher timestamp wins; at a tie a deletion wins, then the greater value.
        let newer = match (ts.cmp(&e.0), &value, &e.1) {
            (std::cmp::Ordering::Greater, _, _) => true,
            (std::cmp::Ordering::Less, _, _) => false,
            (_, None, _) => true,
            (_, Some(_), None) => false,
            (_, Some(a), Some(b)) => a > b,
        };
        if newer {
            *e = (ts, value);
        }
    }

    fn delete_prefix(&mut self, row: &str, prefix: &[String], ts: i64) {
        let e = self
            .prefixes
            .entry((row.to_string(), prefix.to_vec()))
            .or_insert(ts);
        *e = (*e).max(ts);
    }

    /// The live columns of a row, in name order (component by component, as UTF8Type orders).
    fn live(&self, row: &str) -> Vec<(Vec<String>, String)> {
        self.cells
            .range((row.to_string(), Vec::new())..)
            .take_while(|((r, _), _)| r == row)
            .filter_map(|((_, col), (ts, v))| {
                let hidden = (1..col.len()).any(|n| {
                    self.prefixes
                        .get(&(row.to_string(), col[..n].to_vec()))
                        .is_some_and(|d| *ts <= *d)
                }) || self.ranges.iter().any(|(r, lo, hi, d)| {
                    r == row && *ts <= *d && inside(col, lo, true) && inside(col, hi, false)
                });
                match v {
                    Some(v) if !hidden => Some((col.clone(), v.clone())),
                    _ => None,
                }
            })
            .collect()
    }
}

fn read(db: &Database, row: &str, range: SliceRange) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.get_slice(
        KS,
        row,
        &ColumnParent::new(CF),
        &SlicePredicate::Range(range),
    )
    .unwrap()
    .into_iter()
    .map(|c| {
        let c = c.as_column().unwrap();
        (c.name.clone(), c.value.clone())
    })
    .collect()
}

fn expected(model: &Model, row: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .live(row)
        .into_iter()
        .map(|(col, v)| {
            let parts: Vec<&str> = col.iter().map(String::as_str).collect();
            (name(&parts), v.into_bytes())
        })
        .collect()
}

fn check(db: &Database, model: &Model, rng: &mut Rng, step: usize) {
    let rows = ["r0", "r1", "r2"];
    for row in rows {
        let want = expected(model, row);
        let ctx = format!("step {step}, row {row}");
        assert_eq!(read(db, row, SliceRange::all()), want, "forward, {ctx}");
        let mut rev = want.clone();
        rev.reverse();
        assert_eq!(
            read(db, row, SliceRange::all().reversed()),
            rev,
            "reversed, {ctx}"
        );
        // From inside a prefix: the deletions that cover the start lie before it.
        let a = letter(rng);
        let b = letter(rng);
        let start = name(&[&a, &b]);
        let from: Vec<_> = want
            .iter()
            .filter(|(n, _)| comparator_key(n) >= comparator_key(&start))
            .cloned()
            .collect();
        let mut r = SliceRange::all();
        r.start = start.clone();
        assert_eq!(read(db, row, r), from, "from {a}:{b}, {ctx}");
        let mut r = SliceRange::all().reversed();
        r.start = start.clone();
        let mut upto: Vec<_> = want
            .iter()
            .filter(|(n, _)| comparator_key(n) <= comparator_key(&start))
            .cloned()
            .collect();
        upto.reverse();
        assert_eq!(read(db, row, r), upto, "reversed from {a}:{b}, {ctx}");
        // By name, and one column as `get` reads it.
        let names: Vec<Vec<u8>> = (0..3)
            .map(|_| name(&[&letter(rng), &letter(rng), &letter(rng)]))
            .collect();
        let got: Vec<_> = db
            .get_slice(
                KS,
                row,
                &ColumnParent::new(CF),
                &SlicePredicate::Names(names.clone()),
            )
            .unwrap()
            .into_iter()
            .map(|c| c.name().to_vec())
            .collect();
        let mut want_names: Vec<Vec<u8>> = want
            .iter()
            .filter(|(n, _)| names.contains(n))
            .map(|(n, _)| n.clone())
            .collect();
        want_names.dedup();
        assert_eq!(got, want_names, "by name, {ctx}");
        let one = &names[0];
        let got = db
            .get(KS, row, &ColumnPath::new(CF).column(one.clone()))
            .unwrap()
            .map(|c| c.as_column().unwrap().value.clone());
        let want_one = want.iter().find(|(n, _)| n == one).map(|(_, v)| v.clone());
        assert_eq!(got, want_one, "get, {ctx}");
    }
    // A range scan sees the same rows (an empty one is no row).
    let scanned: BTreeMap<Vec<u8>, usize> = db
        .get_range_slices(
            KS,
            &ColumnParent::new(CF),
            &SlicePredicate::everything(),
            &KeyRange::all().count(usize::MAX),
        )
        .unwrap()
        .into_iter()
        .map(|ks| (ks.key, ks.columns.len()))
        .collect();
    let want: BTreeMap<Vec<u8>, usize> = rows
        .iter()
        .map(|r| (r.as_bytes().to_vec(), model.live(r).len()))
        .filter(|(_, n)| *n > 0)
        .collect();
    assert_eq!(scanned, want, "range scan, step {step}");
}

/// The sort order of composite names of UTF8Type components: component by component.
fn comparator_key(n: &[u8]) -> Vec<Vec<u8>> {
    CompositeType::split(n)
        .unwrap()
        .iter()
        .map(|c| c.bytes.to_vec())
        .collect()
}

/// A random side of a range: open, or one to three leading components, strict or not.
fn bound(rng: &mut Rng) -> Bound {
    if rng.pick(5) == 0 {
        return None;
    }
    let n = 1 + rng.pick(3);
    Some(((0..n).map(|_| letter(rng)).collect(), rng.pick(2) == 0))
}

/// A range side as the engine takes it: a composite bound whose last end-of-component byte
/// says which names beginning with it are inside (empty: open).
fn encoded(b: &Bound, lower: bool) -> Vec<u8> {
    let Some((parts, inclusive)) = b else {
        return Vec::new();
    };
    let parts: Vec<&[u8]> = parts.iter().map(|p| p.as_bytes()).collect();
    // Below every name starting with the parts, or above them all.
    let eoc = if *inclusive == lower { -1 } else { 1 };
    CompositeType::build(&parts, eoc)
}

fn letter(rng: &mut Rng) -> String {
    ["a", "b", "c"][rng.pick(3)].to_string()
}

fn run(seed: u64, steps: usize) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let ffs = FaultFs::new(root.path().join("park")).unwrap();
    let mut db = Database::open(&dir, options(&ffs)).unwrap();
    let mut model = Model::default();
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    for step in 0..steps {
        let row = ["r0", "r1", "r2"][rng.pick(3)];
        // Timestamps collide on purpose: ties between a deletion and a write must go to the
        // deletion.
        let ts = rng.below(40) as i64;
        let col: Vec<String> = (0..3).map(|_| letter(&mut rng)).collect();
        let parts: Vec<&str> = col.iter().map(String::as_str).collect();
        match rng.below(100) {
            0..=49 => {
                let v = format!("v{step}");
                let mut b = BatchMutation::new();
                b.insert(
                    row,
                    ColumnPath::new(CF).column(name(&parts)),
                    &v,
                    WriteOptions::at(ts),
                );
                db.batch_mutate(KS, &b).unwrap();
                model.write(row, &col, ts, Some(v));
            }
            50..=59 => {
                let mut b = BatchMutation::new();
                b.remove(row, ColumnPath::new(CF).column(name(&parts)), Some(ts));
                db.batch_mutate(KS, &b).unwrap();
                model.write(row, &col, ts, None);
            }
            72..=79 => {
                let lo = bound(&mut rng);
                let hi = bound(&mut rng);
                let (start, finish) = (encoded(&lo, true), encoded(&hi, false));
                let mut b = BatchMutation::new();
                b.remove_range(row, CF, &start, &finish, Some(ts));
                let crossed = !start.is_empty()
                    && !finish.is_empty()
                    && comparator().compare(&start, &finish).is_gt();
                match db.batch_mutate(KS, &b) {
                    Err(Error::InvalidRequest(_)) if crossed => {}
                    Ok(()) if !crossed => model.ranges.push((row.into(), lo, hi, ts)),
                    other => panic!("a range {lo:?}..{hi:?}: {other:?}"),
                }
            }
            60..=71 => {
                let n = 1 + rng.pick(2);
                let mut b = BatchMutation::new();
                b.remove_prefix(row, ColumnPath::new(CF).column(name(&parts[..n])), Some(ts));
                db.batch_mutate(KS, &b).unwrap();
                model.delete_prefix(row, &col[..n], ts);
            }
            80..=87 => db.flush(KS, None).unwrap(),
            88..=91 => db.compact(KS, None).unwrap(),
            _ => {
                // The power goes: only the commit log has what was not flushed.
                ffs.lose_power().unwrap();
                drop(db);
                ffs.power_on();
                db = Database::open(&dir, options(&ffs)).unwrap();
            }
        }
        check(&db, &model, &mut rng, step);
    }
}

#[test]
fn prefix_deletions_read_as_the_model_says_through_flushes_compactions_and_power_cuts() {
    for seed in 1..=40 {
        run(seed, 120);
    }
}

#[test]
fn a_prefix_deletion_needs_a_shorter_composite_prefix_in_a_standard_composite_family() {
    let root = tempfile::tempdir().unwrap();
    let ffs = FaultFs::new(root.path().join("park")).unwrap();
    let mut o = options(&ffs);
    if let Some(ks) = o.keyspaces.as_mut() {
        ks[0] = ks[0]
            .clone()
            .with_column_family(ColumnFamilyDef::standard("Plain"));
    }
    let db = Database::open(root.path().join("db"), o).unwrap();
    let refused = |cf: &str, col: Vec<u8>| {
        let mut b = BatchMutation::new();
        b.remove_prefix("r", ColumnPath::new(cf).column(col), None);
        match db.batch_mutate(KS, &b) {
            Err(e @ (Error::InvalidRequest(_) | Error::InvalidName { .. })) => e.to_string(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    };
    let whole = refused(CF, name(&["a", "b", "c"]));
    assert!(whole.contains("must name fewer"), "{whole}");
    let plain = refused("Plain", b"a".to_vec());
    assert!(plain.contains("CompositeType"), "{plain}");
}
