//! A model-based randomized test: random sequences of inserts, TTL writes, batches, removes at
//! all three levels, flushes, minor and major compactions and reopenings run against the engine
//! and against a plain in-memory model of SPEC §3; after every step every row of both column
//! families is read back and compared. Time comes from the test clock. A second test drives time
//! past the grace period and purges with major compactions, the model purging alike.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use common::T0;
use proptest::prelude::*;
use supercolumn::{
    BatchMutation, ColumnParent, ColumnPath, CommitLogSync, Database, KeyRange, ManualClock,
    Options, SlicePredicate, SliceRange, WriteOptions,
};

const KS: &str = "Keyspace1";
const GRACE: i64 = 100;

/// Where a write lands: Standard1 (`sc` None) or Super1 (`sc` Some).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Col {
    sc: Option<u8>,
    col: u8,
}

#[derive(Clone, Debug)]
enum Op {
    Put {
        row: u8,
        at: Col,
        ts: i64,
        val: u8,
        ttl: Option<u32>,
    },
    DelCol {
        row: u8,
        at: Col,
        ts: i64,
    },
    DelSc {
        row: u8,
        sc: u8,
        ts: i64,
    },
    DelRow {
        row: u8,
        sup: bool,
        ts: i64,
    },
    Batch {
        row: u8,
        puts: Vec<(Col, u8)>,
        ts: i64,
    },
    Flush,
    Major,
    Reopen,
    Tick {
        secs: i64,
    },
}

/// One version of one column in the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum V {
    Live { val: u8, expires: Option<i64> },
    Tomb { ldt: i64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ver {
    ts: i64,
    v: V,
}

fn rank(v: &V) -> u8 {
    match v {
        V::Tomb { .. } => 2,
        V::Live {
            expires: Some(_), ..
        } => 1,
        V::Live { expires: None, .. } => 0,
    }
}

/// SPEC §3's order of two versions (with supercolumn's time-independent TTL rank).
fn wins(a: &Ver, b: &Ver) -> bool {
    let o =
        a.ts.cmp(&b.ts)
            .then(rank(&a.v).cmp(&rank(&b.v)))
            .then_with(|| match (a.v, b.v) {
                (V::Tomb { ldt: x }, V::Tomb { ldt: y }) => x.cmp(&y),
                (
                    V::Live {
                        val: va,
                        expires: ea,
                    },
                    V::Live {
                        val: vb,
                        expires: eb,
                    },
                ) => eb
                    .unwrap_or(i64::MAX)
                    .cmp(&ea.unwrap_or(i64::MAX))
                    .then(va.cmp(&vb)),
                _ => std::cmp::Ordering::Equal,
            });
    o == std::cmp::Ordering::Greater
}

/// A deletion time (timestamp, local deletion time), merged by taking the later.
type Del = (i64, i64);

fn merge_del(a: Option<Del>, b: Del) -> Option<Del> {
    Some(a.map_or(b, |a| a.max(b)))
}

#[derive(Clone, Debug, Default)]
struct Row {
    std_del: Option<Del>,
    sup_del: Option<Del>,
    sc_del: BTreeMap<u8, Del>,
    cols: BTreeMap<Col, Ver>,
}

#[derive(Debug, Default)]
struct Model {
    rows: BTreeMap<u8, Row>,
}

impl Model {
    fn write(&mut self, row: u8, at: Col, ver: Ver) {
        let r = self.rows.entry(row).or_default();
        match r.cols.get(&at) {
            Some(old) if !wins(&ver, old) => {}
            _ => {
                r.cols.insert(at, ver);
            }
        }
    }

    fn shadow(r: &Row, at: Col) -> Option<Del> {
        let row_del = if at.sc.is_some() {
            r.sup_del
        } else {
            r.std_del
        };
        let sc_del = at.sc.and_then(|sc| r.sc_del.get(&sc).copied());
        match (row_del, sc_del) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// What reads must return: row → column → (value, timestamp).
    fn visible(&self, now: i64) -> Seen {
        let mut out = BTreeMap::new();
        for (row, r) in &self.rows {
            for (at, ver) in &r.cols {
                if Self::shadow(r, *at).is_some_and(|(ts, _)| ver.ts <= ts) {
                    continue;
                }
                if let V::Live { val, expires } = ver.v {
                    if expires.is_none_or(|e| now < e) {
                        out.insert((*row, *at), (val, ver.ts, expires));
                    }
                }
            }
        }
        out
    }

    /// A major compaction at `now`: shadowed versions go, expired TTL cells become tombstones,
    /// and tombstones and deletions whose grace has passed are purged.
    fn major(&mut self, now: i64) {
        let gc_before = now - GRACE;
        for r in self.rows.values_mut() {
            let snapshot = r.clone();
            r.cols.retain(|at, ver| {
                if Self::shadow(&snapshot, *at).is_some_and(|(ts, _)| ver.ts <= ts) {
                    return false;
                }
                if let V::Live {
                    expires: Some(e), ..
                } = ver.v
                {
                    if now >= e {
                        ver.v = V::Tomb { ldt: e };
                    }
                }
                !matches!(ver.v, V::Tomb { ldt } if ldt <= gc_before)
            });
            let sup_del = r.sup_del;
            r.sc_del
                .retain(|_, d| !(sup_del.is_some_and(|(ts, _)| d.0 <= ts) || d.1 <= gc_before));
            for d in [&mut r.std_del, &mut r.sup_del] {
                if d.is_some_and(|(_, ldt)| ldt <= gc_before) {
                    *d = None;
                }
            }
        }
    }
}

fn col_path(at: Col) -> ColumnPath {
    match at.sc {
        None => ColumnPath::new("Standard1").column(format!("c{}", at.col)),
        Some(sc) => ColumnPath::new("Super1")
            .super_column(format!("s{sc}"))
            .column(format!("c{}", at.col)),
    }
}

/// Opens the database; `minors` turns background minor compactions on (they may purge a
/// tombstone past grace whenever its row is nowhere else, which the model cannot foresee, so the
/// purge test leaves purging to major compactions).
fn open(dir: &Path, clock: &Arc<ManualClock>, minors: bool) -> Database {
    let mut o = Options::default().with_clock(clock.clone());
    o.commit_log_sync = CommitLogSync::Periodic { period_ms: 60_000 };
    o.gc_grace_seconds = GRACE as u32;
    // Small memtables and low thresholds: flushes and background minor compactions happen often.
    o.memtable_operations_millions = 0.000_02;
    o.min_compaction_threshold = if minors { 2 } else { 0 };
    o.max_compaction_threshold = 3;
    Database::open(dir, o).expect("open")
}

/// Per column: value, timestamp, and when it expires (a TTL cell's local expiration time).
type Seen = BTreeMap<(u8, Col), (u8, i64, Option<i64>)>;

/// Every Standard1 row read as a reversed slice, its order turned back: a reversed walk must
/// find exactly what a forward one does.
fn read_reversed(db: &Database) -> Seen {
    let mut out = BTreeMap::new();
    for row in 0u8..5 {
        let cols = db
            .get_slice(
                KS,
                format!("r{row}"),
                &ColumnParent::new("Standard1"),
                &SlicePredicate::Range(SliceRange::all().reversed()),
            )
            .expect("reversed read");
        let names: Vec<Vec<u8>> = cols.iter().map(|c| c.name().to_vec()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.reverse();
        assert_eq!(names, sorted, "a reversed slice of r{row} is out of order");
        for c in cols {
            let col = c.as_column().expect("a Standard1 column");
            let n: u8 = String::from_utf8(col.name.clone()).unwrap()[1..]
                .parse()
                .unwrap();
            out.insert(
                (row, Col { sc: None, col: n }),
                (col.value[0], col.timestamp, col.expires_at),
            );
        }
    }
    out
}

/// Everything the engine returns for both CFs, in the model's shape.
fn read_all(db: &Database) -> Seen {
    let mut out = BTreeMap::new();
    let all = SlicePredicate::everything();
    for cf in ["Standard1", "Super1"] {
        let rows = db
            .get_range_slices(
                KS,
                &ColumnParent::new(cf),
                &all,
                &KeyRange::all().count(1000),
            )
            .expect("range read");
        for r in rows {
            let row: u8 = String::from_utf8(r.key).unwrap()[1..].parse().unwrap();
            for c in r.columns {
                let mut push = |sc: Option<u8>, col: &supercolumn::Column| {
                    let n: u8 = String::from_utf8(col.name.clone()).unwrap()[1..]
                        .parse()
                        .unwrap();
                    out.insert(
                        (row, Col { sc, col: n }),
                        (col.value[0], col.timestamp, col.expires_at),
                    );
                };
                match &c {
                    supercolumn::ColumnOrSuperColumn::Column(col) => push(None, col),
                    supercolumn::ColumnOrSuperColumn::SuperColumn(s) => {
                        let sc: u8 = String::from_utf8(s.name.clone()).unwrap()[1..]
                            .parse()
                            .unwrap();
                        for col in &s.columns {
                            push(Some(sc), col);
                        }
                    }
                }
            }
        }
    }
    out
}

/// Every Standard1 column read by name (`multiget_slice` of every row and name the operations
/// can touch): the read that skips SSTables older than what it has found.
fn read_named(db: &Database) -> Seen {
    let keys: Vec<String> = (0u8..5).map(|r| format!("r{r}")).collect();
    let names = SlicePredicate::Names((0u8..4).map(|c| format!("c{c}").into_bytes()).collect());
    let rows = db
        .multiget_slice(KS, &keys, &ColumnParent::new("Standard1"), &names)
        .expect("named read");
    let mut out = BTreeMap::new();
    for r in rows {
        let row: u8 = String::from_utf8(r.key).unwrap()[1..].parse().unwrap();
        for c in r.columns {
            let col = c.as_column().expect("a Standard1 column");
            let n: u8 = String::from_utf8(col.name.clone()).unwrap()[1..]
                .parse()
                .unwrap();
            out.insert(
                (row, Col { sc: None, col: n }),
                (col.value[0], col.timestamp, col.expires_at),
            );
        }
    }
    out
}

/// Runs `ops` against the engine and the model, comparing after every step.
fn run(ops: &[Op], purge_with_majors: bool) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    // On a whole second, and moved in whole seconds: TTLs expire exactly TTL seconds later.
    let clock = Arc::new(ManualClock::new(T0 - T0 % 1_000_000));
    let minors = !purge_with_majors;
    let mut db = open(dir.path(), &clock, minors);
    let mut model = Model::default();
    let key = |row: u8| format!("r{row}");
    for (step, op) in ops.iter().enumerate() {
        let now = clock.now_seconds_pub();
        match op.clone() {
            Op::Put {
                row,
                at,
                ts,
                val,
                ttl,
            } => {
                let w = ttl.map_or(WriteOptions::at(ts), |t| WriteOptions::at(ts).with_ttl(t));
                db.insert(KS, key(row), &col_path(at), [val], w).unwrap();
                // The engine counts a TTL from the next whole second; the test clock sits on one.
                let expires = ttl.map(|t| now + i64::from(t));
                model.write(
                    row,
                    at,
                    Ver {
                        ts,
                        v: V::Live { val, expires },
                    },
                );
            }
            Op::DelCol { row, at, ts } => {
                db.remove(KS, key(row), &col_path(at), Some(ts)).unwrap();
                model.write(
                    row,
                    at,
                    Ver {
                        ts,
                        v: V::Tomb { ldt: now },
                    },
                );
            }
            Op::DelSc { row, sc, ts } => {
                let p = ColumnPath::new("Super1").super_column(format!("s{sc}"));
                db.remove(KS, key(row), &p, Some(ts)).unwrap();
                let r = model.rows.entry(row).or_default();
                let merged = merge_del(r.sc_del.get(&sc).copied(), (ts, now));
                r.sc_del.insert(sc, merged.unwrap());
            }
            Op::DelRow { row, sup, ts } => {
                let cf = if sup { "Super1" } else { "Standard1" };
                db.remove(KS, key(row), &ColumnPath::new(cf), Some(ts))
                    .unwrap();
                let r = model.rows.entry(row).or_default();
                let d = if sup { &mut r.sup_del } else { &mut r.std_del };
                *d = merge_del(*d, (ts, now));
            }
            Op::Batch { row, puts, ts } => {
                let mut b = BatchMutation::new();
                for (at, val) in &puts {
                    b.insert(key(row), col_path(*at), [*val], WriteOptions::at(ts));
                }
                db.batch_mutate(KS, &b).unwrap();
                for (at, val) in puts {
                    model.write(
                        row,
                        at,
                        Ver {
                            ts,
                            v: V::Live { val, expires: None },
                        },
                    );
                }
            }
            Op::Flush => db.flush_all().unwrap(),
            Op::Major => {
                db.compact(KS, None).unwrap();
                if purge_with_majors {
                    model.major(now);
                }
            }
            Op::Reopen => {
                drop(db);
                db = open(dir.path(), &clock, minors);
            }
            Op::Tick { secs } => clock.advance_seconds(secs),
        }
        let now = clock.now_seconds_pub();
        let want = model.visible(now);
        let got = read_all(&db);
        prop_assert_eq!(&got, &want, "after step {} ({:?})", step, op);
        let standard: BTreeMap<_, _> = want
            .iter()
            .filter(|((_, c), _)| c.sc.is_none())
            .map(|(k, v)| (*k, *v))
            .collect();
        prop_assert_eq!(
            &read_reversed(&db),
            &standard,
            "reversed read after step {} ({:?})",
            step,
            op
        );
        prop_assert_eq!(
            read_named(&db),
            standard,
            "named read after step {} ({:?})",
            step,
            op
        );
    }
    Ok(())
}

trait NowSeconds {
    fn now_seconds_pub(&self) -> i64;
}

impl NowSeconds for ManualClock {
    fn now_seconds_pub(&self) -> i64 {
        supercolumn::Clock::now_seconds(self)
    }
}

fn col() -> impl Strategy<Value = Col> {
    (prop::option::of(0u8..3), 0u8..4).prop_map(|(sc, col)| Col { sc, col })
}

/// Operations whose clock moves stay well within the grace period: no purge can happen, so
/// every tie-break and deletion level is checked without one.
fn op(max_tick: i64) -> impl Strategy<Value = Op> {
    let ts = 0i64..12;
    prop_oneof![
        8 => (0u8..5, col(), ts.clone(), any::<u8>(), prop::option::of(1u32..6))
            .prop_map(|(row, at, ts, val, ttl)| Op::Put { row, at, ts, val, ttl }),
        3 => (0u8..5, col(), ts.clone()).prop_map(|(row, at, ts)| Op::DelCol { row, at, ts }),
        2 => (0u8..5, 0u8..3, ts.clone()).prop_map(|(row, sc, ts)| Op::DelSc { row, sc, ts }),
        1 => (0u8..5, any::<bool>(), ts.clone()).prop_map(|(row, sup, ts)| Op::DelRow { row, sup, ts }),
        2 => (0u8..5, prop::collection::vec((col(), any::<u8>()), 1..4), ts)
            .prop_map(|(row, puts, ts)| Op::Batch { row, puts, ts }),
        2 => Just(Op::Flush),
        1 => Just(Op::Major),
        1 => Just(Op::Reopen),
        2 => (1i64..=max_tick).prop_map(|secs| Op::Tick { secs }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, max_shrink_iters: 2000, ..ProptestConfig::default() })]

    /// Within the grace period: the engine always answers as the model does.
    #[test]
    fn the_engine_matches_the_model(ops in prop::collection::vec(op(3), 1..40)) {
        run(&ops, false)?;
    }

    /// Past the grace period: major compactions purge, and the model purges alike, so late
    /// writes older than a purged tombstone reappear in both.
    #[test]
    fn purges_past_grace_match_the_model(ops in prop::collection::vec(op(GRACE), 1..40)) {
        run(&ops, true)?;
    }
}
