//! The operations as the model applies them, and the timestamp each stands for in both the
//! engine and the model. It touches only the model; the runner applies the same operations to
//! the engine.

use crate::ops::Op;
use crate::runner::{Config, GRACE};
use crate::spec::{Model, Ver, V};

/// The timestamp an operation's `ts` stands for. A minor compaction may purge a tombstone past
/// grace whenever its row is nowhere else (SPEC §6); the model cannot foresee which, and it
/// shows only when a write older than the purged tombstone arrives afterwards. In runs with
/// `minors_past_grace`, a timestamp is offset by the seconds since the start, so a write can be
/// older than a tombstone only within a second of it, long before its grace ends: the model,
/// which purges only at major compactions, then reads as the engine must. (Runs that purge
/// with minor compactions off keep raw timestamps: there late older writes reappear after a
/// major compaction, in both.)
pub(crate) fn stamp(ts: u8, now: i64, start: i64, config: Config) -> i64 {
    if config.purge_with_majors && config.minors_past_grace {
        (now - start) * 256 + i64::from(ts)
    } else {
        i64::from(ts)
    }
}

/// The operation on the model, at local time `now`.
pub(crate) fn model_apply(m: &mut Model, op: &Op, now: i64, start: i64, config: Config) {
    let at_ts = |ts: &u8| stamp(*ts, now, start, config);
    match op {
        Op::Put {
            row,
            at,
            ts,
            val,
            ttl,
        } => {
            let expires = ttl.map(|t| now + i64::from(t));
            let v = V::Live {
                val: *val,
                expires,
                written: now,
            };
            m.write(*row, *at, Ver { ts: at_ts(ts), v });
        }
        Op::DelCol { row, at, ts } => {
            let v = V::Tomb { ldt: now };
            m.write(*row, *at, Ver { ts: at_ts(ts), v });
        }
        Op::DelSc { row, sc, ts } => m.delete_super(*row, *sc, at_ts(ts), now),
        Op::DelRow { row, sup, ts } => m.delete_row(*row, *sup, at_ts(ts), now),
        Op::Batch { row, puts, ts } => {
            for (at, val) in puts {
                let v = V::Live {
                    val: *val,
                    expires: None,
                    written: now,
                };
                m.write(*row, *at, Ver { ts: at_ts(ts), v });
            }
        }
        Op::Major if config.purge_with_majors => m.major(now, GRACE),
        _ => {}
    }
}
