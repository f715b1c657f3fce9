//! Group commit: each writer frames its own records, then queues them; the first in line leads,
//! takes everything queued, appends it with one write per segment, and in `batch` mode fsyncs
//! once for the whole group outside the append lock; then it wakes the others and hands the lead
//! to whoever queued meanwhile, so no writer leads twice in a row.

use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::record::LogRecord;
use super::{segment, CommitLog, LogPosition};
use crate::codec::Writer;
use crate::error::{Error, Result};
use crate::options::CommitLogSync;

/// One writer's records, framed, with what the log must note of each.
#[derive(Debug, Default)]
pub(super) struct Batch {
    framed: Vec<u8>,
    /// Where each record ends in `framed`.
    ends: Vec<usize>,
    /// The column families of each record: `cfs[cf_ends[i - 1]..cf_ends[i]]`.
    cfs: Vec<u32>,
    cf_ends: Vec<usize>,
}

/// Where a queued writer stands.
#[derive(Debug)]
enum Turn {
    Waiting,
    /// The previous leader handed the lead to this writer.
    Lead,
    Done(Result<Vec<(LogPosition, u64)>>),
}

/// A queued writer's seat: the leader fills in its outcome and wakes it.
#[derive(Debug)]
struct Seat {
    turn: Mutex<Turn>,
    wake: Condvar,
}

#[derive(Debug, Default)]
pub(super) struct Queue {
    pending: Vec<(Batch, Arc<Seat>)>,
    leading: bool,
}

impl CommitLog {
    /// Appends several rows' mutations, one record each, in order; in batch mode returns once all
    /// are durable, with one fsync shared with every writer of the same group. A record too
    /// large for the format is refused before anything is written. Returns each record's
    /// position and length in bytes.
    pub fn append_all<M: LogRecord>(&self, mutations: &[M]) -> Result<Vec<(LogPosition, u64)>> {
        let sh = &self.shared;
        sh.check()?;
        let batch = Self::encode(mutations)?;
        if let CommitLogSync::Periodic { .. } = sh.sync {
            // Nothing to share but the write(2): queueing behind a leader only adds a sleep and
            // a wake-up per writer (two writers on two cores ran at half the speed of one).
            return self
                .write_group(&[&batch])
                .pop()
                .unwrap_or_else(|| Err(Error::invalid("a commit log write lost its records")));
        }
        let seat = Arc::new(Seat {
            turn: Mutex::new(Turn::Waiting),
            wake: Condvar::new(),
        });
        {
            let mut q = sh.queue.lock();
            q.pending.push((batch, seat.clone()));
            if q.leading {
                drop(q);
                let mut turn = seat.turn.lock();
                loop {
                    match std::mem::replace(&mut *turn, Turn::Waiting) {
                        Turn::Waiting => seat.wake.wait(&mut turn),
                        Turn::Done(result) => return result,
                        Turn::Lead => break,
                    }
                }
            } else {
                q.leading = true;
            }
        }
        // Leading: this writer's records are in the queue, and so is everyone's who came since.
        let group = std::mem::take(&mut sh.queue.lock().pending);
        let batches: Vec<&Batch> = group.iter().map(|(b, _)| b).collect();
        let results = self.write_group(&batches);
        let mut mine = None;
        for ((_, s), result) in group.iter().zip(results) {
            if Arc::ptr_eq(s, &seat) {
                mine = Some(result);
            } else {
                *s.turn.lock() = Turn::Done(result);
                s.wake.notify_one();
            }
        }
        {
            let mut q = sh.queue.lock();
            match q.pending.first() {
                None => q.leading = false,
                Some((_, next)) => {
                    *next.turn.lock() = Turn::Lead;
                    next.wake.notify_one();
                }
            }
        }
        mine.unwrap_or_else(|| Err(Error::invalid("a commit log leader lost its own records")))
    }

    /// Frames every record into one buffer, noting each record's column families.
    fn encode<M: LogRecord>(mutations: &[M]) -> Result<Batch> {
        let mut w = Writer {
            buf: Vec::with_capacity(
                mutations
                    .iter()
                    .map(|m| segment::FRAME_LEN as usize + m.size_hint())
                    .sum(),
            ),
        };
        let mut batch = Batch {
            ends: Vec::with_capacity(mutations.len()),
            cf_ends: Vec::with_capacity(mutations.len()),
            ..Batch::default()
        };
        for m in mutations {
            let start = w.buf.len();
            w.buf.extend_from_slice(&[0; segment::FRAME_LEN as usize]);
            m.encode(&mut w);
            let payload_len = (w.buf.len() - start) as u64 - segment::FRAME_LEN;
            if payload_len > segment::MAX_PAYLOAD {
                return Err(Error::invalid(format!(
                    "a row mutation of {payload_len} bytes exceeds the commit log's record limit of {} bytes",
                    segment::MAX_PAYLOAD
                )));
            }
            segment::frame_in_place(&mut w.buf[start..]);
            batch.ends.push(w.buf.len());
            m.each_column_family(&mut |cf| batch.cfs.push(cf));
            batch.cf_ends.push(batch.cfs.len());
        }
        batch.framed = w.buf;
        Ok(batch)
    }

    /// Appends a group's records (one write per segment they land in), then in batch mode
    /// fsyncs once for all of them, outside the append lock. Returns each writer's outcome.
    fn write_group(&self, group: &[&Batch]) -> Vec<Result<Vec<(LogPosition, u64)>>> {
        let sh = &self.shared;
        let fail = |e: &Error| -> Vec<Result<Vec<(LogPosition, u64)>>> {
            group
                .iter()
                .map(|_| Err(Error::ReadOnly(e.to_string())))
                .collect()
        };
        let mut buf = sh.group_buf.lock();
        let mut st = sh.state.lock();
        if let Err(e) = sh.check() {
            return fail(&e);
        }
        let group_start = LogPosition {
            segment: st.seq,
            offset: st.written,
        };
        let mut positions = Vec::with_capacity(group.len());
        buf.clear();
        // Records in `buf`: more than one are written in one system call (below).
        let mut in_buf = 0usize;
        for batch in group {
            let mut mine = Vec::with_capacity(batch.ends.len());
            let mut start = 0;
            for (i, &end) in batch.ends.iter().enumerate() {
                let len = (end - start) as u64;
                if st.written > segment::HEADER_LEN
                    && st.written + buf.len() as u64 + len > sh.segment_size
                {
                    if let Err(e) = self
                        .write_locked(&mut st, &buf, in_buf > 1)
                        .and_then(|()| self.roll(&mut st))
                    {
                        st.unapplied(group_start);
                        return fail(&e);
                    }
                    buf.clear();
                    in_buf = 0;
                }
                let at = LogPosition {
                    segment: st.seq,
                    offset: st.written + buf.len() as u64,
                };
                let cfs =
                    &batch.cfs[if i == 0 { 0 } else { batch.cf_ends[i - 1] }..batch.cf_ends[i]];
                if let Some(seg) = st.segments.get_mut(&at.segment) {
                    for cf in cfs {
                        seg.dirty.insert(*cf, at.offset);
                    }
                }
                buf.extend_from_slice(&batch.framed[start..end]);
                in_buf += 1;
                mine.push((at, len));
                start = end;
            }
            positions.push(mine);
        }
        if let Err(e) = self.write_locked(&mut st, &buf, in_buf > 1) {
            st.unapplied(group_start);
            return fail(&e);
        }
        let (seq, end, file) = (st.seq, st.written, st.file.clone());
        drop(st);
        drop(buf);
        if let CommitLogSync::Batch { .. } = sh.sync {
            // Never retry an fsync after a failure: the kernel may have dropped the dirty pages.
            if let Err(e) = file.sync() {
                sh.state.lock().unapplied(group_start);
                return fail(&sh.poison("fsync of", &sh.segment_path(seq), &e));
            }
            let mut st = sh.state.lock();
            if st.seq == seq {
                st.synced = st.synced.max(end);
            }
        }
        positions.into_iter().map(Ok).collect()
    }
}
