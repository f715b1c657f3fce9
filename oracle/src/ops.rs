//! The operations a run is made of. Fields are raw bytes so that any input a fuzzer makes is a
//! valid sequence; [`Op::normalized`] folds each into the few rows, columns and timestamps of
//! [`crate::bounds`], where operations collide.

use arbitrary::Arbitrary;

use crate::bounds::{BATCH, COLS, MAX_TTL, ROWS, SUPERS, TIMESTAMPS};

/// Where a write lands: Standard1 (`sc` None) or a super column of Super1.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Col {
    /// The super column, in Super1.
    pub sc: Option<u8>,
    /// The column.
    pub col: u8,
}

impl Col {
    fn normalized(self) -> Col {
        Col {
            sc: self.sc.map(|s| s % SUPERS),
            col: self.col % COLS,
        }
    }
}

/// One step of a run.
#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// A column written, with a TTL in seconds or none.
    Put {
        /// Row.
        row: u8,
        /// Column.
        at: Col,
        /// Timestamp.
        ts: u8,
        /// Value.
        val: u8,
        /// TTL.
        ttl: Option<u8>,
    },
    /// A column deleted.
    DelCol {
        /// Row.
        row: u8,
        /// Column.
        at: Col,
        /// Timestamp.
        ts: u8,
    },
    /// A super column of Super1 deleted.
    DelSc {
        /// Row.
        row: u8,
        /// Super column.
        sc: u8,
        /// Timestamp.
        ts: u8,
    },
    /// A whole row deleted, in Super1 (`sup`) or Standard1.
    DelRow {
        /// Row.
        row: u8,
        /// Which column family.
        sup: bool,
        /// Timestamp.
        ts: u8,
    },
    /// Columns of one row written in one batch, at one timestamp.
    Batch {
        /// Row.
        row: u8,
        /// Columns and values.
        puts: Vec<(Col, u8)>,
        /// Timestamp.
        ts: u8,
    },
    /// Every memtable flushed.
    Flush,
    /// A major compaction of the keyspace.
    Major,
    /// The database closed (without a flush) and opened again: the commit log replays.
    Reopen,
    /// The power cut (everything not fsynced is lost), then the database opened again. In
    /// periodic mode a cut may lose acknowledged writes by design, so there it is a reopen.
    PowerCut,
    /// The clock moved on.
    Tick {
        /// Seconds, folded into the run's tick bound.
        secs: u8,
    },
    /// The `nth` file-system call from now fails once (ENOSPC or EIO). If an operation then
    /// fails, the database is reopened with faults off, after a power cut if `cut`.
    Fault {
        /// Which call, counting from the next.
        nth: u8,
        /// ENOSPC rather than EIO.
        enospc: bool,
        /// Cut the power before the reopen that follows a failure.
        cut: bool,
    },
}

impl Op {
    /// The operation with every field folded into its bounds; `max_tick` bounds a `Tick`.
    pub fn normalized(&self, max_tick: u8) -> Op {
        let row = |r: &u8| r % ROWS;
        let ts = |t: &u8| t % TIMESTAMPS;
        match self {
            Op::Put {
                row: r,
                at,
                ts: t,
                val,
                ttl,
            } => Op::Put {
                row: row(r),
                at: at.normalized(),
                ts: ts(t),
                val: *val,
                ttl: ttl.map(|s| 1 + s % MAX_TTL),
            },
            Op::DelCol { row: r, at, ts: t } => Op::DelCol {
                row: row(r),
                at: at.normalized(),
                ts: ts(t),
            },
            Op::DelSc { row: r, sc, ts: t } => Op::DelSc {
                row: row(r),
                sc: sc % SUPERS,
                ts: ts(t),
            },
            Op::DelRow { row: r, sup, ts: t } => Op::DelRow {
                row: row(r),
                sup: *sup,
                ts: ts(t),
            },
            Op::Batch {
                row: r,
                puts,
                ts: t,
            } => Op::Batch {
                row: row(r),
                puts: puts
                    .iter()
                    .take(BATCH)
                    .map(|(at, v)| (at.normalized(), *v))
                    .collect(),
                ts: ts(t),
            },
            Op::Tick { secs } => Op::Tick {
                secs: 1 + secs % max_tick.max(1),
            },
            other => other.clone(),
        }
    }
}
