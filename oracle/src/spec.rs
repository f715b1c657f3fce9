//! The model: SPEC §3's reconciliation, read from the SPEC clause by clause. One version per
//! column (the winner so far), and a deletion time per row, per CF and per super column; what a
//! read returns is what no deletion shadows and no TTL has expired. A major compaction purges as
//! SPEC §6 says. It knows nothing of memtables, SSTables or the commit log.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::ops::Col;
use crate::read::Seen;

/// One version of one column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum V {
    /// A live value, with the second it expires at when written with a TTL.
    Live {
        /// The one-byte value.
        val: u8,
        /// Local expiration time, in seconds.
        expires: Option<i64>,
        /// Local time of the write, in seconds (its expiry less its TTL).
        written: i64,
    },
    /// A tombstone, with its local deletion time in seconds.
    Tomb {
        /// Local deletion time.
        ldt: i64,
    },
}

/// A version with its write timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ver {
    /// The client's timestamp.
    pub ts: i64,
    /// What was written.
    pub v: V,
}

/// SPEC §3, clause 2: at equal timestamps a deletion beats a live cell, and a TTL cell beats one
/// without.
fn rank(v: &V) -> u8 {
    match v {
        V::Tomb { .. } => 2,
        V::Live {
            expires: Some(_), ..
        } => 1,
        V::Live { expires: None, .. } => 0,
    }
}

/// Whether `a` wins over `b` (SPEC §3): the higher timestamp; then by rank; of two deletions the
/// later deletion time; of two TTL cells the later expiry, then the later write time (Cassandra
/// 3.0+); then the greater value.
pub fn wins(a: &Ver, b: &Ver) -> bool {
    let ttl_order = |a: &V, b: &V| match (a, b) {
        (
            V::Live {
                expires: Some(ea),
                written: wa,
                ..
            },
            V::Live {
                expires: Some(eb),
                written: wb,
                ..
            },
        ) => ea.cmp(eb).then(wa.cmp(wb)),
        _ => Ordering::Equal,
    };
    let o =
        a.ts.cmp(&b.ts)
            .then(rank(&a.v).cmp(&rank(&b.v)))
            .then_with(|| match (a.v, b.v) {
                (V::Tomb { ldt: x }, V::Tomb { ldt: y }) => x.cmp(&y),
                (V::Live { val: va, .. }, V::Live { val: vb, .. }) => {
                    ttl_order(&a.v, &b.v).then(va.cmp(&vb))
                }
                _ => Ordering::Equal,
            });
    o == Ordering::Greater
}

/// A deletion time (timestamp, local deletion time), merged by taking the later.
type Del = (i64, i64);

fn merge_del(a: Option<Del>, b: Del) -> Del {
    a.map_or(b, |a| a.max(b))
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Row {
    std_del: Option<Del>,
    sup_del: Option<Del>,
    sc_del: BTreeMap<u8, Del>,
    cols: BTreeMap<Col, Ver>,
}

impl Row {
    /// The newest deletion above the column `at`: its row's in its CF, or its super column's.
    fn shadow(&self, at: Col) -> Option<Del> {
        let row_del = if at.sc.is_some() {
            self.sup_del
        } else {
            self.std_del
        };
        let sc_del = at.sc.and_then(|sc| self.sc_del.get(&sc).copied());
        match (row_del, sc_del) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}

/// What both column families hold, row by row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Model {
    rows: BTreeMap<u8, Row>,
}

impl Model {
    /// A column written (or deleted) with `ver`: it stays only if it wins over what is there.
    pub fn write(&mut self, row: u8, at: Col, ver: Ver) {
        let r = self.rows.entry(row).or_default();
        match r.cols.get(&at) {
            Some(old) if !wins(&ver, old) => {}
            _ => {
                r.cols.insert(at, ver);
            }
        }
    }

    /// A super column deleted at `ts`, at local time `now`.
    pub fn delete_super(&mut self, row: u8, sc: u8, ts: i64, now: i64) {
        let r = self.rows.entry(row).or_default();
        let merged = merge_del(r.sc_del.get(&sc).copied(), (ts, now));
        r.sc_del.insert(sc, merged);
    }

    /// A whole row deleted in Super1 (`sup`) or Standard1.
    pub fn delete_row(&mut self, row: u8, sup: bool, ts: i64, now: i64) {
        let r = self.rows.entry(row).or_default();
        let d = if sup { &mut r.sup_del } else { &mut r.std_del };
        *d = Some(merge_del(*d, (ts, now)));
    }

    /// What reads must return at local time `now`.
    pub fn visible(&self, now: i64) -> Seen {
        let mut out = BTreeMap::new();
        for (row, r) in &self.rows {
            for (at, ver) in &r.cols {
                if r.shadow(*at).is_some_and(|(ts, _)| ver.ts <= ts) {
                    continue;
                }
                if let V::Live { val, expires, .. } = ver.v {
                    if expires.is_none_or(|e| now < e) {
                        out.insert((*row, *at), (val, ver.ts, expires));
                    }
                }
            }
        }
        out
    }

    /// A major compaction at `now` with `grace` seconds of grace (SPEC §6): shadowed versions go,
    /// and tombstones, expired TTL cells and deletions whose grace has passed are purged.
    pub fn major(&mut self, now: i64, grace: i64) {
        self.major_of(now, grace, true, true);
    }

    /// A major compaction of Standard1 (`standard`), Super1 (`sup`) or both. Each column family
    /// compacts on its own, so a compaction of the keyspace that failed half way may have
    /// compacted one of them and not the other.
    pub fn major_of(&mut self, now: i64, grace: i64, standard: bool, sup: bool) {
        let gc_before = now - grace;
        let compacted = |at: &Col| if at.sc.is_some() { sup } else { standard };
        for r in self.rows.values_mut() {
            let snapshot = r.clone();
            r.cols.retain(|at, ver| {
                if !compacted(at) {
                    return true;
                }
                if snapshot.shadow(*at).is_some_and(|(ts, _)| ver.ts <= ts) {
                    return false;
                }
                // An expired TTL cell is a deletion from its expiry on (SPEC §3), purged alike.
                match ver.v {
                    V::Tomb { ldt }
                    | V::Live {
                        expires: Some(ldt), ..
                    } => ldt > gc_before,
                    V::Live { expires: None, .. } => true,
                }
            });
            if sup {
                let sup_del = r.sup_del;
                r.sc_del
                    .retain(|_, d| !(sup_del.is_some_and(|(ts, _)| d.0 <= ts) || d.1 <= gc_before));
            }
            for (d, this) in [(&mut r.std_del, standard), (&mut r.sup_del, sup)] {
                if this && d.is_some_and(|(_, ldt)| ldt <= gc_before) {
                    *d = None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(ts: i64, val: u8, expires: Option<i64>) -> Ver {
        Ver {
            ts,
            v: V::Live {
                val,
                expires,
                written: expires.map_or(0, |e| e - 5),
            },
        }
    }

    #[test]
    fn spec_3_order_of_versions() {
        // The higher timestamp wins whatever it carries.
        assert!(wins(
            &live(2, 0, None),
            &Ver {
                ts: 1,
                v: V::Tomb { ldt: 9 }
            }
        ));
        // At equal timestamps: deletion over live, TTL over none, later expiry, greater value.
        assert!(wins(
            &Ver {
                ts: 1,
                v: V::Tomb { ldt: 0 }
            },
            &live(1, 9, Some(5))
        ));
        assert!(wins(&live(1, 0, Some(5)), &live(1, 9, None)));
        assert!(wins(&live(1, 0, Some(6)), &live(1, 9, Some(5))));
        assert!(wins(&live(1, 2, None), &live(1, 1, None)));
        assert!(wins(
            &Ver {
                ts: 1,
                v: V::Tomb { ldt: 4 }
            },
            &Ver {
                ts: 1,
                v: V::Tomb { ldt: 3 }
            }
        ));
        // Same expiry: the later write (the shorter TTL) wins, whatever the values.
        let written = |val, written| Ver {
            ts: 1,
            v: V::Live {
                val,
                expires: Some(10),
                written,
            },
        };
        assert!(wins(&written(0, 8), &written(9, 7)));
        // Nothing wins over itself.
        assert!(!wins(&live(1, 1, None), &live(1, 1, None)));
    }

    #[test]
    fn a_deletion_shadows_only_what_is_not_newer() {
        let mut m = Model::default();
        let c = Col {
            sc: Some(0),
            col: 1,
        };
        m.write(0, c, live(5, 1, None));
        m.delete_super(0, 0, 4, 100);
        assert_eq!(m.visible(100).len(), 1);
        m.delete_row(0, true, 5, 100);
        assert!(m.visible(100).is_empty());
    }
}
