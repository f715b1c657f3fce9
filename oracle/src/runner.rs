//! Runs operations against the engine and the model side by side and compares every read after
//! every step. An injected fault makes the operation it hits fail: that write was never
//! acknowledged, so it may or may not have taken effect. The runner then keeps both outcomes as
//! candidates and lets the reads decide: the failed database must read as one of them, and so
//! must the database reopened with faults off (after a power cut, if the fault asked for one).
//! Candidates that a read contradicts are dropped; the run fails when none is left.

use std::fmt;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::sync::Arc;

use arbitrary::{Arbitrary, Unstructured};
use supercolumn::io::{Fault, FaultFs};
use supercolumn::schema::IndexDef;
use supercolumn::{
    BatchMutation, Clock, ColumnPath, CommitLogSync, Database, ManualClock, Options, WriteOptions,
};

use crate::model_ops::{model_apply, stamp};
use crate::ops::{Col, Op};
use crate::read::{self, Seen, INDEXED, KS};
use crate::spec::Model;

/// The column families' grace period, in seconds.
pub const GRACE: i64 = 100;

/// Operations in one fuzz input at most (longer inputs are cut).
const MAX_OPS: usize = 60;

/// Candidate models kept at most: each unacknowledged write doubles them until a read decides.
const MAX_CANDIDATES: usize = 256;

/// How a run is set up.
#[derive(Arbitrary, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// Ticks up to the grace period, and the model purging at each major compaction as the
    /// engine does, with minor compactions off unless `minors_past_grace`. Otherwise the clock
    /// stays within grace (nothing can be purged) and minor compactions run in the background.
    pub purge_with_majors: bool,
    /// With `purge_with_majors`: minor compactions run too, and timestamps grow with the clock
    /// (see `stamp`), so a minor compaction that purges a tombstone while an older version
    /// of its row sits elsewhere (another SSTable, a memtable) is caught.
    pub minors_past_grace: bool,
    /// Periodic commit-log sync (a power cut is then a reopen); batch mode otherwise.
    pub periodic: bool,
}

/// A fuzz input: a configuration and the operations.
#[derive(Arbitrary, Clone, Debug)]
pub struct Input {
    /// How the run is set up.
    pub config: Config,
    /// What it does.
    pub ops: Vec<Op>,
}

/// Where the engine and the model parted.
#[derive(Debug)]
pub struct Failure {
    /// The step after which they disagreed (`None`: setting up).
    pub step: Option<usize>,
    /// The operation of that step.
    pub op: Option<Op>,
    /// What disagreed.
    pub what: String,
    /// The operations run, normalized, up to and including the failing one.
    pub history: Vec<Op>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.step, &self.op) {
            (Some(s), Some(op)) => write!(f, "after step {s} ({op:?}): {}", self.what)?,
            _ => write!(f, "{}", self.what)?,
        }
        write!(f, "\noperations run: {:?}", self.history)
    }
}

impl std::error::Error for Failure {}

impl Input {
    /// Decodes fuzzer bytes: the configuration, then operations until the bytes run out (at
    /// most [`MAX_OPS`]). Every byte string is an input.
    pub fn from_bytes(data: &[u8]) -> Input {
        let mut u = Unstructured::new(data);
        let config = Config::arbitrary(&mut u).unwrap_or_default();
        let mut ops = Vec::new();
        while !u.is_empty() && ops.len() < MAX_OPS {
            match Op::arbitrary(&mut u) {
                Ok(op) => ops.push(op),
                Err(_) => break,
            }
        }
        Input { config, ops }
    }
}

/// Runs a fuzz input: its operations folded into bounds and cut at [`MAX_OPS`].
pub fn run_input(input: &Input) -> Result<(), Failure> {
    let ops: Vec<Op> = input.ops.iter().take(MAX_OPS).cloned().collect();
    run(&ops, input.config)
}

/// Runs `ops` (normalized first) against a fresh database and the model, comparing every read
/// after every step.
pub fn run(ops: &[Op], config: Config) -> Result<(), Failure> {
    let setup = |what: String| Failure {
        step: None,
        op: None,
        what,
        history: Vec::new(),
    };
    let mut r = Runner::new(config).map_err(setup)?;
    let max_tick = if config.purge_with_majors {
        GRACE as u8
    } else {
        3
    };
    let mut history = Vec::with_capacity(ops.len());
    for (step, op) in ops.iter().enumerate() {
        let op = op.normalized(max_tick);
        history.push(op.clone());
        if let Err(what) = r.step(&op) {
            return Err(Failure {
                step: Some(step),
                op: Some(op),
                what,
                history,
            });
        }
    }
    Ok(())
}

struct Runner {
    // Kept for its lifetime: the directory goes when the run ends.
    _root: tempfile::TempDir,
    data: PathBuf,
    ffs: FaultFs,
    clock: Arc<ManualClock>,
    start: i64,
    config: Config,
    db: Option<Database>,
    models: Vec<Model>,
    /// A fault is set and has not hit yet; whether to cut the power after it.
    armed: Option<bool>,
    /// A fault has hit since the last reopen; whether to cut the power after it.
    tainted: Option<bool>,
    /// Times the database was opened.
    opens: u32,
    /// Every value written to Standard1's indexed `c0`, in order: each is asked of the index
    /// after every step (a value no row holds any more must find none).
    indexed_values: Vec<u8>,
}

impl Runner {
    fn new(config: Config) -> Result<Runner, String> {
        let root = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
        let ffs = FaultFs::new(root.path().join("parked")).map_err(|e| e.to_string())?;
        // On a whole second, moved in whole seconds: a TTL expires exactly TTL seconds later.
        let t0 = 1_374_546_754_000_000;
        let clock = Arc::new(ManualClock::new(t0));
        let mut r = Runner {
            data: root.path().join("data"),
            _root: root,
            ffs,
            start: clock.now_seconds(),
            clock,
            config,
            db: None,
            models: vec![Model::default()],
            armed: None,
            tainted: None,
            opens: 0,
            indexed_values: Vec::new(),
        };
        let db = r.open()?;
        let (column, name) = INDEXED;
        db.create_index(
            KS,
            "Standard1",
            IndexDef::new(name, column.as_bytes().to_vec(), 0),
        )
        .map_err(|e| format!("creating the index on {column}: {e}"))?;
        // Over an empty column family: built at once.
        match db.wait_for_index(KS, name, std::time::Duration::from_secs(60)) {
            Ok(true) => {}
            Ok(false) => return Err(format!("the index on {column} was not built in 60 s")),
            Err(e) => return Err(format!("building the index on {column}: {e}")),
        }
        r.db = Some(db);
        Ok(r)
    }

    fn open(&mut self) -> Result<Database, String> {
        self.opens += 1;
        let mut o = Options::default().with_clock(self.clock.clone());
        o.commit_log_sync = if self.config.periodic {
            CommitLogSync::Periodic { period_ms: 60_000 }
        } else {
            CommitLogSync::Batch { window_ms: 0.0 }
        };
        o.gc_grace_seconds = GRACE as u32;
        // Small memtables and low thresholds: flushes and minor compactions happen often. A
        // minor compaction may purge a tombstone past grace whenever its row is nowhere else;
        // what follows from that the model cannot foresee (see [`stamp`]), so runs that purge
        // with raw timestamps leave purging to major compactions.
        o.memtable_operations_millions = 0.000_02;
        let c = self.config;
        o.min_compaction_threshold = match (c.purge_with_majors, c.minors_past_grace) {
            (true, false) => 0,
            // Minor compactions off and on by turns, one open each: SSTables pile up while they
            // are off, then the next open merges them while the replayed log's writes (older
            // versions among them) sit in the memtables: the window a compaction that ignored
            // the memtables would purge a tombstone in.
            (true, true) if self.opens % 2 == 1 => 0,
            _ => 2,
        };
        o.max_compaction_threshold = 3;
        o.file_system = Arc::new(self.ffs.clone());
        Database::open(&self.data, o).map_err(|e| format!("open: {e}"))
    }

    fn db(&self) -> Result<&Database, String> {
        self.db
            .as_ref()
            .ok_or_else(|| "no open database".to_string())
    }

    fn now(&self) -> i64 {
        self.clock.now_seconds()
    }

    fn step(&mut self, op: &Op) -> Result<(), String> {
        let now = self.now();
        let c0 = Col { sc: None, col: 0 };
        let written = match op {
            Op::Put { at, val, .. } if *at == c0 => vec![*val],
            Op::Batch { puts, .. } => puts
                .iter()
                .filter(|(at, _)| *at == c0)
                .map(|p| p.1)
                .collect(),
            _ => Vec::new(),
        };
        for v in written {
            if let Err(i) = self.indexed_values.binary_search(&v) {
                self.indexed_values.insert(i, v);
            }
        }
        let result = self.apply(op);
        let before = self.models.clone();
        for m in &mut self.models {
            model_apply(m, op, now, self.start, self.config);
        }
        if let (Some(cut), Some(_)) = (self.armed, self.ffs.hit()) {
            self.armed = None;
            self.tainted = Some(cut);
        }
        match result {
            Ok(()) => self.check("read", true),
            Err(e) => {
                let Some(cut) = self.tainted else {
                    return Err(format!("failed with no fault injected: {e}"));
                };
                // Not acknowledged: it may or may not have taken effect.
                let after = std::mem::replace(&mut self.models, before.clone());
                self.add_candidates(after);
                if matches!(op, Op::Major) && self.config.purge_with_majors {
                    // Or taken effect for one column family and not the other.
                    for m in before {
                        for (standard, sup) in [(true, false), (false, true)] {
                            let mut part = m.clone();
                            part.major_of(now, GRACE, standard, sup);
                            self.add_candidates(vec![part]);
                        }
                    }
                }
                // A failed open leaves no database to read.
                // It may read as either and still differ after the reopen (a record that reached
                // the log but not the memtable): only the reopened database decides.
                if self.db.is_some() {
                    self.check("read of the failed database", false)?;
                }
                self.reopen(cut)?;
                self.check("read after reopening with faults off", true)
            }
        }
    }

    /// The operation on the engine. Opening (in a reopen or power cut) may fail too.
    fn apply(&mut self, op: &Op) -> Result<(), String> {
        let key = |row: u8| format!("r{row}");
        let e = |e: supercolumn::Error| e.to_string();
        let (now, start, config) = (self.now(), self.start, self.config);
        let at_ts = |ts: &u8| stamp(*ts, now, start, config);
        match op {
            Op::Put {
                row,
                at,
                ts,
                val,
                ttl,
            } => {
                let w = WriteOptions::at(at_ts(ts));
                let w = ttl.map_or(w, |t| w.with_ttl(u32::from(t)));
                let db = self.db()?;
                db.insert(KS, key(*row), &col_path(*at), [*val], w)
                    .map_err(e)
            }
            Op::DelCol { row, at, ts } => self
                .db()?
                .remove(KS, key(*row), &col_path(*at), Some(at_ts(ts)))
                .map_err(e),
            Op::DelSc { row, sc, ts } => {
                let p = ColumnPath::new("Super1").super_column(format!("s{sc}"));
                let db = self.db()?;
                db.remove(KS, key(*row), &p, Some(at_ts(ts))).map_err(e)
            }
            Op::DelRow { row, sup, ts } => {
                let cf = if *sup { "Super1" } else { "Standard1" };
                let db = self.db()?;
                db.remove(KS, key(*row), &ColumnPath::new(cf), Some(at_ts(ts)))
                    .map_err(e)
            }
            Op::Batch { row, puts, ts } => {
                if puts.is_empty() {
                    return Ok(());
                }
                let mut b = BatchMutation::new();
                for (at, val) in puts {
                    let w = WriteOptions::at(at_ts(ts));
                    b.insert(key(*row), col_path(*at), [*val], w);
                }
                self.db()?.batch_mutate(KS, &b).map_err(e)
            }
            Op::Flush => self.db()?.flush_all().map_err(e),
            Op::Major => self.db()?.compact(KS, None).map_err(e),
            Op::Reopen => self.restart(false),
            Op::PowerCut => self.restart(!self.config.periodic),
            Op::Tick { secs } => {
                // Runs that must not purge stay within the grace period.
                let past = self.now() + i64::from(*secs) - self.start;
                if self.config.purge_with_majors || past < GRACE - 5 {
                    self.clock.advance_seconds(i64::from(*secs));
                }
                Ok(())
            }
            Op::Fault { nth, enospc, cut } => {
                let f = Fault::eio(u64::from(*nth));
                let kind = if *enospc {
                    ErrorKind::StorageFull
                } else {
                    f.kind
                };
                self.ffs.fail_one(Fault { kind, ..f });
                self.armed = Some(*cut);
                Ok(())
            }
        }
    }

    /// Closes the database (cutting the power first if `cut`) and opens it again.
    fn restart(&mut self, cut: bool) -> Result<(), String> {
        if cut {
            self.ffs
                .lose_power()
                .map_err(|e| format!("power cut: {e}"))?;
        }
        drop(self.db.take());
        if cut {
            self.ffs.power_on();
        }
        self.db = Some(self.open()?);
        Ok(())
    }

    /// After a failure: faults off, then closed (after a power cut if `cut` and the log is
    /// synced per write) and opened again.
    fn reopen(&mut self, cut: bool) -> Result<(), String> {
        self.ffs.heal();
        self.armed = None;
        self.tainted = None;
        self.restart(cut && !self.config.periodic)
    }

    fn add_candidates(&mut self, more: Vec<Model>) {
        for m in more {
            if self.models.len() < MAX_CANDIDATES && !self.models.contains(&m) {
                self.models.push(m);
            }
        }
    }

    /// Fails unless every read agrees with one of the candidate models; if `prune`, keeps only
    /// those.
    fn check(&mut self, what: &str, prune: bool) -> Result<(), String> {
        let db = self.db()?;
        let got = read::all(db).map_err(|e| format!("{what}: {e}"))?;
        let rev = read::reversed(db).map_err(|e| format!("{what}: {e}"))?;
        let named = read::named(db).map_err(|e| format!("{what}: {e}"))?;
        let values = &self.indexed_values;
        let indexed = read::indexed(db, values).map_err(|e| format!("{what}: {e}"))?;
        let now = self.now();
        let first = self.models.first().map(|m| m.visible(now));
        let candidates = self.models.len();
        let agrees = |m: &Model| {
            let want = m.visible(now);
            let standard: Seen = want
                .iter()
                .filter(|((_, c), _)| c.sc.is_none())
                .map(|(k, v)| (*k, *v))
                .collect();
            got == want
                && rev == standard
                && named == standard
                && indexed == read::indexed_in(&standard, values)
        };
        if prune {
            self.models.retain(agrees);
            if !self.models.is_empty() {
                return Ok(());
            }
        } else if self.models.iter().any(agrees) {
            return Ok(());
        }
        let want = first.unwrap_or_default();
        let got_std: Seen = got
            .iter()
            .filter(|((_, c), _)| c.sc.is_none())
            .map(|(k, v)| (*k, *v))
            .collect();
        let which = if got != want {
            diff("range scan", &got, &want)
        } else if rev != got_std {
            diff("reversed slice", &rev, &got_std)
        } else if named != got_std {
            diff("read by name", &named, &got_std)
        } else {
            let want = read::indexed_in(&got_std, values);
            format!("the index on c0 answered {indexed:?} where the rows hold {want:?}")
        };
        Err(format!(
            "{what}: the engine and the model disagree ({candidates} candidate(s), the first \
             shown): {which}\nthe engine's range scan: {got:?}"
        ))
    }
}

/// The columns on which `got` and `want` differ, at most eight.
fn diff(read: &str, got: &Seen, want: &Seen) -> String {
    let mut keys: Vec<&(u8, Col)> = got.keys().chain(want.keys()).collect();
    keys.sort();
    keys.dedup();
    let lines: Vec<String> = keys
        .into_iter()
        .filter(|k| got.get(k) != want.get(k))
        .take(8)
        .map(|(row, c)| {
            let at = c.sc.map_or(String::new(), |s| format!("s{s}/"));
            format!(
                "r{row} {at}c{}: engine {:?}, model {:?}",
                c.col,
                got.get(&(*row, *c)),
                want.get(&(*row, *c))
            )
        })
        .collect();
    format!("{read}: {}", lines.join("; "))
}

fn col_path(at: Col) -> ColumnPath {
    match at.sc {
        None => ColumnPath::new("Standard1").column(format!("c{}", at.col)),
        Some(sc) => ColumnPath::new("Super1")
            .super_column(format!("s{sc}"))
            .column(format!("c{}", at.col)),
    }
}
