//! A model-based randomized test: random sequences of inserts, TTL writes, batches, removes at
//! all three levels, flushes, minor and major compactions, reopenings, power cuts and injected
//! I/O faults run against the engine and against the independent model of SPEC §3 in
//! `supercolumn-oracle` (the `model_ops` fuzz target runs the same); after every step every row
//! of both column families is read back three ways and compared. Time comes from the test
//! clock. A second test drives time past the grace period and purges with major compactions,
//! the model purging alike; a third keeps minor compactions on past grace too.

use proptest::prelude::*;
use supercolumn_oracle::{run, Col, Config, Op, GRACE};

fn col() -> impl Strategy<Value = Col> {
    (prop::option::of(0u8..3), 0u8..4).prop_map(|(sc, col)| Col { sc, col })
}

/// Operations whose clock moves by at most `max_tick` seconds at a time.
fn op(max_tick: u8) -> impl Strategy<Value = Op> {
    let ts = 0u8..12;
    prop_oneof![
        8 => (0u8..5, col(), ts.clone(), any::<u8>(), prop::option::of(1u8..6))
            .prop_map(|(row, at, ts, val, ttl)| Op::Put { row, at, ts, val, ttl }),
        3 => (0u8..5, col(), ts.clone()).prop_map(|(row, at, ts)| Op::DelCol { row, at, ts }),
        2 => (0u8..5, 0u8..3, ts.clone()).prop_map(|(row, sc, ts)| Op::DelSc { row, sc, ts }),
        1 => (0u8..5, any::<bool>(), ts.clone()).prop_map(|(row, sup, ts)| Op::DelRow { row, sup, ts }),
        2 => (0u8..5, prop::collection::vec((col(), any::<u8>()), 1..4), ts)
            .prop_map(|(row, puts, ts)| Op::Batch { row, puts, ts }),
        2 => Just(Op::Flush),
        1 => Just(Op::Major),
        1 => Just(Op::Reopen),
        1 => Just(Op::PowerCut),
        2 => (0..max_tick).prop_map(|secs| Op::Tick { secs }),
        1 => (0u8..40, any::<bool>(), any::<bool>())
            .prop_map(|(nth, enospc, cut)| Op::Fault { nth, enospc, cut }),
    ]
}

fn check(ops: &[Op], config: Config) -> Result<(), TestCaseError> {
    run(ops, config).map_err(|f| TestCaseError::fail(f.to_string()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, max_shrink_iters: 2000, ..ProptestConfig::default() })]

    /// Within the grace period: the engine always answers as the model does.
    #[test]
    fn the_engine_matches_the_model(ops in prop::collection::vec(op(3), 1..40), periodic: bool) {
        check(&ops, Config { purge_with_majors: false, minors_past_grace: false, periodic })?;
    }

    /// Past the grace period: major compactions purge, and the model purges alike, so late
    /// writes older than a purged tombstone reappear in both.
    #[test]
    fn purges_past_grace_match_the_model(
        ops in prop::collection::vec(op(GRACE as u8), 1..40), periodic: bool,
    ) {
        check(&ops, Config { purge_with_majors: true, minors_past_grace: false, periodic })?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, max_shrink_iters: 2000, ..ProptestConfig::default() })]

    /// Past the grace period with minor compactions on: a minor compaction purges a tombstone
    /// only when its row is nowhere else, so no older version (in another SSTable or a
    /// memtable) comes back. Timestamps grow with the clock here (the oracle's `stamp`).
    #[test]
    fn minor_compactions_past_grace_match_the_model(
        ops in prop::collection::vec(op(GRACE as u8), 1..40), periodic: bool,
    ) {
        check(&ops, Config { purge_with_majors: true, minors_past_grace: true, periodic })?;
    }
}

/// The case the third test is for, spelled out: a tombstone flushed, an older version of its
/// column written after it in the same second and left in the memtable, the clock past grace,
/// and a reopen whose minor compaction merges every SSTable while the replayed older version
/// is in the memtable. The reads that follow (a major compaction's among them) must not show it.
#[test]
fn a_minor_compaction_at_open_keeps_a_tombstone_an_unflushed_older_version_needs() {
    let std0 = Col { sc: None, col: 0 };
    let mut ops = vec![
        Op::Put {
            row: 0,
            at: std0,
            ts: 1,
            val: 1,
            ttl: None,
        },
        Op::Flush,
        Op::DelCol {
            row: 1,
            at: std0,
            ts: 5,
        },
        Op::Flush,
        Op::Put {
            row: 1,
            at: std0,
            ts: 3,
            val: 7,
            ttl: None,
        },
        Op::Tick { secs: 99 },
        Op::Tick { secs: 10 },
        Op::Reopen,
    ];
    // Reads while the compactor works, then a major compaction.
    ops.extend(std::iter::repeat_n(Op::Tick { secs: 1 }, 20));
    ops.push(Op::Major);
    for periodic in [false, true] {
        run(
            &ops,
            Config {
                purge_with_majors: true,
                minors_past_grace: true,
                periodic,
            },
        )
        .unwrap_or_else(|f| panic!("{f}"));
    }
}
