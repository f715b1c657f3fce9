//! SPEC §3 through the public API: timestamp wins, tie-breaks, the three deletion levels (and
//! writes after them), TTL expiry by the test clock, and that the result is what the
//! independent model of SPEC §3 says, in whatever order the writes arrive.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use proptest::prelude::*;
use supercolumn::{ColumnParent, ColumnPath, SlicePredicate, WriteOptions};
use supercolumn_oracle::{Col, Model, Ver, V};

const KS: &str = "Keyspace1";

fn std1(col: &str) -> ColumnPath {
    ColumnPath::new("Standard1").column(col)
}

fn sup(sc: &str, col: &str) -> ColumnPath {
    ColumnPath::new("Super1").super_column(sc).column(col)
}

/// Writes `v` at timestamp `ts` under `path` of row `key`.
fn put(t: &TestDb, key: &str, path: &ColumnPath, v: impl AsRef<[u8]>, ts: i64) {
    t.db.insert(KS, key, path, v, WriteOptions::at(ts)).unwrap();
}

fn value(t: &TestDb, key: &str, path: &ColumnPath) -> Option<Vec<u8>> {
    t.db.get(KS, key, path)
        .unwrap()
        .map(|c| c.as_column().expect("column").value.clone())
}

#[test]
fn higher_timestamp_wins_whatever_the_arrival_order() {
    let t = open_default();
    put(&t, "k", &std1("c"), "new", 20);
    put(&t, "k", &std1("c"), "old", 10);
    assert_eq!(value(&t, "k", &std1("c")).unwrap(), b"new");
    put(&t, "k", &std1("c"), "newer", 30);
    assert_eq!(value(&t, "k", &std1("c")).unwrap(), b"newer");
}

#[test]
fn equal_timestamps_go_to_the_greater_value_unsigned() {
    let t = open_default();
    put(&t, "k", &std1("c"), [0x80u8], 5);
    put(&t, "k", &std1("c"), [0x7fu8], 5);
    assert_eq!(value(&t, "k", &std1("c")).unwrap(), [0x80]);
    put(&t, "k2", &std1("c"), "a", 5);
    put(&t, "k2", &std1("c"), "b", 5);
    assert_eq!(value(&t, "k2", &std1("c")).unwrap(), b"b");
}

#[test]
fn a_delete_beats_a_write_with_the_same_timestamp() {
    let t = open_default();
    put(&t, "k", &std1("c"), "v", 5);
    t.db.remove(KS, "k", &std1("c"), Some(5)).unwrap();
    assert_eq!(value(&t, "k", &std1("c")), None);
    // Order reversed: the tombstone arrives first, the equal-timestamp write still loses.
    t.db.remove(KS, "k2", &std1("c"), Some(5)).unwrap();
    put(&t, "k2", &std1("c"), "v", 5);
    assert_eq!(value(&t, "k2", &std1("c")), None);
}

#[test]
fn column_delete_then_later_write_is_visible() {
    let t = open_default();
    put(&t, "k", &std1("c"), "v1", 1);
    t.db.remove(KS, "k", &std1("c"), Some(2)).unwrap();
    assert_eq!(value(&t, "k", &std1("c")), None);
    put(&t, "k", &std1("c"), "v2", 3);
    assert_eq!(value(&t, "k", &std1("c")).unwrap(), b"v2");
    // An older write than the tombstone stays hidden.
    t.db.remove(KS, "k", &std1("d"), Some(10)).unwrap();
    put(&t, "k", &std1("d"), "old", 9);
    assert_eq!(value(&t, "k", &std1("d")), None);
}

#[test]
fn row_delete_hides_older_columns_only() {
    let t = open_default();
    for (c, ts) in [("a", 1), ("b", 5), ("c", 6)] {
        put(&t, "k", &std1(c), c, ts);
    }
    t.db.remove(KS, "k", &ColumnPath::new("Standard1"), Some(5))
        .unwrap();
    let all = whole_row(&t.db, KS, "k", "Standard1");
    assert_eq!(strings(names(&all)), ["c"]);
    put(&t, "k", &std1("a"), "again", 7);
    put(&t, "k", &std1("b"), "stale", 4);
    let all = whole_row(&t.db, KS, "k", "Standard1");
    assert_eq!(strings(names(&all)), ["a", "c"]);
    assert_eq!(
        t.db.get_count(
            KS,
            "k",
            &ColumnParent::new("Standard1"),
            &SlicePredicate::everything()
        )
        .unwrap(),
        2
    );
}

#[test]
fn row_tombstones_merge_by_taking_the_later_one() {
    let t = open_default();
    put(&t, "k", &std1("a"), "a", 7);
    t.db.remove(KS, "k", &ColumnPath::new("Standard1"), Some(8))
        .unwrap();
    t.db.remove(KS, "k", &ColumnPath::new("Standard1"), Some(3))
        .unwrap();
    assert_eq!(
        value(&t, "k", &std1("a")),
        None,
        "the earlier delete must not undo the later"
    );
}

#[test]
fn super_column_delete_hides_its_older_sub_columns() {
    let t = open_default();
    put(&t, "u", &sup("home", "city"), "sf", 1);
    put(&t, "u", &sup("home", "zip"), "94107", 3);
    t.db.insert(
        KS,
        "u",
        &sup("work", "city"),
        "oakland",
        WriteOptions::at(1),
    )
    .unwrap();
    t.db.remove(
        KS,
        "u",
        &ColumnPath::new("Super1").super_column("home"),
        Some(2),
    )
    .unwrap();
    let home =
        t.db.get(KS, "u", &ColumnPath::new("Super1").super_column("home"))
            .unwrap()
            .unwrap();
    assert_eq!(strings(sub_names(&home)), ["zip"]);
    // The other super column is untouched; a later sub-column write is visible again.
    assert_eq!(value(&t, "u", &sup("work", "city")).unwrap(), b"oakland");
    put(&t, "u", &sup("home", "city"), "la", 4);
    assert_eq!(value(&t, "u", &sup("home", "city")).unwrap(), b"la");
    // A super column whose sub-columns are all hidden is not found.
    t.db.remove(
        KS,
        "u",
        &ColumnPath::new("Super1").super_column("work"),
        Some(9),
    )
    .unwrap();
    assert!(t
        .db
        .get(KS, "u", &ColumnPath::new("Super1").super_column("work"))
        .unwrap()
        .is_none());
    let scs = whole_row(&t.db, KS, "u", "Super1");
    assert_eq!(strings(names(&scs)), ["home"]);
}

#[test]
fn sub_column_delete_and_row_delete_in_a_super_cf() {
    let t = open_default();
    put(&t, "u", &sup("home", "city"), "sf", 1);
    put(&t, "u", &sup("home", "zip"), "94107", 1);
    t.db.remove(KS, "u", &sup("home", "city"), Some(1)).unwrap();
    assert_eq!(value(&t, "u", &sup("home", "city")), None);
    assert_eq!(value(&t, "u", &sup("home", "zip")).unwrap(), b"94107");
    t.db.remove(KS, "u", &ColumnPath::new("Super1"), Some(1))
        .unwrap();
    assert_eq!(value(&t, "u", &sup("home", "zip")), None);
    put(&t, "u", &sup("home", "zip"), "10001", 2);
    assert_eq!(value(&t, "u", &sup("home", "zip")).unwrap(), b"10001");
}

#[test]
fn ttl_columns_expire_by_the_clock() {
    let t = open_default();
    // Written on a whole second: gone exactly TTL seconds later.
    t.clock.set_micros(1_700_000_000_000_000);
    t.db.insert(
        KS,
        "k",
        &std1("c"),
        "short",
        WriteOptions::now().with_ttl(10),
    )
    .unwrap();
    let got = t.db.get(KS, "k", &std1("c")).unwrap().unwrap();
    assert_eq!(got.as_column().unwrap().ttl, Some(10));
    t.clock.advance_micros(9_999_999);
    assert!(
        value(&t, "k", &std1("c")).is_some(),
        "alive a microsecond before expiry"
    );
    t.clock.advance_micros(1);
    assert_eq!(value(&t, "k", &std1("c")), None, "gone at write time + TTL");
    assert_eq!(
        t.db.get_count(
            KS,
            "k",
            &ColumnParent::new("Standard1"),
            &SlicePredicate::everything()
        )
        .unwrap(),
        0
    );
    // Written mid-second: counted from that whole second, as Cassandra counts it (so it lives
    // between TTL - 1 and TTL seconds).
    t.clock.advance_micros(400_000);
    t.db.insert(KS, "k2", &std1("c"), "mid", WriteOptions::now().with_ttl(5))
        .unwrap();
    t.clock.advance_micros(4_599_999);
    assert!(
        value(&t, "k2", &std1("c")).is_some(),
        "alive until the whole second of its expiry"
    );
    t.clock.advance_micros(1);
    assert_eq!(value(&t, "k2", &std1("c")), None, "gone from it");
    // A later write without a TTL lives on.
    t.db.insert(KS, "k", &std1("c"), "forever", WriteOptions::now())
        .unwrap();
    t.clock.advance_seconds(1_000_000);
    assert_eq!(value(&t, "k", &std1("c")).unwrap(), b"forever");
}

/// SPEC §3 (Cassandra 3.0+, CASSANDRA-14592): of two TTL cells with one timestamp the later
/// expiry wins, and it still does after the other expired and was compacted on its own (the
/// engine used to let the earlier expiry win, and compaction rewrote an expired cell as a
/// tombstone, which beats every cell of its timestamp).
#[test]
fn of_two_ttl_cells_at_one_timestamp_the_later_expiry_wins_even_after_compaction() {
    let t = open_default();
    let ttl = |secs| WriteOptions::at(3).with_ttl(secs);
    t.db.insert(KS, "k", &std1("c"), "z-later", ttl(100))
        .unwrap();
    t.db.insert(KS, "k", &std1("c"), "a-sooner", ttl(50))
        .unwrap();
    assert_eq!(value(&t, "k", &std1("c")).unwrap(), b"z-later");

    t.db.insert(KS, "e", &std1("c"), "expires", ttl(2)).unwrap();
    t.db.flush(KS, Some("Standard1")).unwrap();
    t.clock.advance_seconds(10);
    // The expired cell is compacted alone, then a same-timestamp cell expiring later arrives.
    t.db.compact(KS, Some("Standard1")).unwrap();
    t.db.insert(KS, "e", &std1("c"), "lives", ttl(60)).unwrap();
    assert_eq!(value(&t, "e", &std1("c")).unwrap(), b"lives");
    t.db.flush(KS, Some("Standard1")).unwrap();
    t.db.compact(KS, Some("Standard1")).unwrap();
    assert_eq!(value(&t, "e", &std1("c")).unwrap(), b"lives");
    // Written mid-second: it expires within a second after its TTL.
    t.clock.advance_seconds(61);
    assert_eq!(value(&t, "e", &std1("c")), None, "and it expires in turn");
}

#[test]
fn default_timestamps_come_from_the_clock_in_microseconds() {
    let t = open_default();
    t.db.insert(KS, "k", &std1("c"), "v", WriteOptions::now())
        .unwrap();
    let c = t.db.get(KS, "k", &std1("c")).unwrap().unwrap();
    assert_eq!(c.as_column().unwrap().timestamp, T0);
    // A default-timestamped delete one microsecond later hides it.
    t.clock.advance_micros(1);
    t.db.remove(KS, "k", &std1("c"), None).unwrap();
    assert_eq!(value(&t, "k", &std1("c")), None);
}

#[derive(Clone, Debug)]
enum Op {
    Put { col: u8, ts: i64, val: u8 },
    PutTtl { col: u8, ts: i64, val: u8, ttl: u32 },
    DelCol { col: u8, ts: i64 },
    DelRow { ts: i64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..3, 0i64..6, any::<u8>()).prop_map(|(col, ts, val)| Op::Put { col, ts, val }),
        2 => (0u8..3, 0i64..6, any::<u8>(), 1u32..16).prop_map(|(col, ts, val, ttl)| Op::PutTtl { col, ts, val, ttl }),
        2 => (0u8..3, 0i64..6).prop_map(|(col, ts)| Op::DelCol { col, ts }),
        1 => (0i64..6).prop_map(|ts| Op::DelRow { ts }),
    ]
}

/// Whole seconds from here on: each arrival's moment, and so each TTL's expiry, is exact.
const BASE: i64 = T0 - T0 % 1_000_000;

/// What SPEC §3 says the row holds after `ops` (in any order), read at `read_after`: the
/// independent model of `supercolumn-oracle`, row `r` as its row 0.
fn model(ops: &[(u8, Op)], read_after: i64) -> Vec<(Vec<u8>, Vec<u8>, i64)> {
    let mut m = Model::default();
    let base = BASE / 1_000_000;
    for (at, o) in ops {
        let now = base + i64::from(*at);
        let at_col = |col: u8| Col { sc: None, col };
        match *o {
            Op::Put { col, ts, val } => {
                let v = V::Live {
                    val,
                    expires: None,
                    written: now,
                };
                m.write(0, at_col(col), Ver { ts, v });
            }
            Op::PutTtl { col, ts, val, ttl } => {
                let expires = Some(now + i64::from(ttl));
                m.write(
                    0,
                    at_col(col),
                    Ver {
                        ts,
                        v: V::Live {
                            val,
                            expires,
                            written: now,
                        },
                    },
                );
            }
            Op::DelCol { col, ts } => m.write(
                0,
                at_col(col),
                Ver {
                    ts,
                    v: V::Tomb { ldt: now },
                },
            ),
            Op::DelRow { ts } => m.delete_row(0, false, ts, now),
        }
    }
    m.visible(base + read_after)
        .into_iter()
        .map(|((_, c), (val, ts, _))| (c.col.to_string().into_bytes(), vec![val], ts))
        .collect()
}

/// Applies `ops`, each at its own moment (seconds after BASE), flushing after the `i`th when bit
/// `i` of `flushes` is set (so versions meet in the memtable, across SSTables and in their
/// merge), then reads at `read_after`.
fn apply(
    t: &TestDb,
    ops: &[(u8, Op)],
    read_after: i64,
    flushes: u32,
) -> Vec<(Vec<u8>, Vec<u8>, i64)> {
    for (i, (at, o)) in ops.iter().enumerate() {
        // Each write carries its moment, so its cell (and expiry) is the same in any order,
        // while arrivals still fall before and after other cells have expired.
        t.clock.set_micros(BASE + i64::from(*at) * 1_000_000);
        match *o {
            Op::PutTtl { col, ts, val, ttl } => {
                t.db.insert(
                    KS,
                    "r",
                    &std1(&col.to_string()),
                    [val],
                    WriteOptions::at(ts).with_ttl(ttl),
                )
                .unwrap()
            }
            Op::Put { col, ts, val } => {
                t.db.insert(
                    KS,
                    "r",
                    &std1(&col.to_string()),
                    [val],
                    WriteOptions::at(ts),
                )
                .unwrap()
            }
            Op::DelCol { col, ts } => {
                t.db.remove(KS, "r", &std1(&col.to_string()), Some(ts))
                    .unwrap()
            }
            Op::DelRow { ts } => {
                t.db.remove(KS, "r", &ColumnPath::new("Standard1"), Some(ts))
                    .unwrap()
            }
        }
        if flushes & (1 << (i % 32)) != 0 {
            t.db.flush(KS, Some("Standard1")).unwrap();
        }
    }
    t.clock.set_micros(BASE + read_after * 1_000_000);
    whole_row(&t.db, KS, "r", "Standard1")
        .into_iter()
        .map(|c| {
            let c = c.as_column().unwrap().clone();
            (c.name, c.value, c.timestamp)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// Small timestamp and value ranges make ties common, so every tie-break is exercised.
    #[test]
    fn result_does_not_depend_on_arrival_order_and_is_what_spec_3_says(
        ops in prop::collection::vec((0u8..8, op()), 1..20), seed: u64, read_after in 8i64..20,
        flushes: (u32, u32),
    ) {
        // Arrivals set the clock to their own moments, so between them it runs backwards, which
        // no real clock does. A flush or compaction at a late moment may turn a TTL cell that has
        // expired by then into a tombstone; the read comes after every moment, where that
        // expiry holds too.
        // The two runs split the same writes differently between memtables and SSTables.
        let forward = apply(&open_default(), &ops, read_after, flushes.0);
        // Not only the same in both orders: the answer SPEC §3 gives.
        prop_assert_eq!(&forward, &model(&ops, read_after));
        let mut shuffled = ops.clone();
        // A deterministic shuffle from the seed.
        let mut s = seed | 1;
        for i in (1..shuffled.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            shuffled.swap(i, (s % (i as u64 + 1)) as usize);
        }
        prop_assert_eq!(forward, apply(&open_default(), &shuffled, read_after, flushes.1));
    }
}
