//! Request tracing (CQL's `TRACING ON`): while a thread runs a traced request, the read path
//! notes what it did (memtables merged, SSTables a bloom filter skipped, key cache hits,
//! index searches, blocks read or found cached) with the time since the request began; the
//! request's session, with its events, is then kept in the database's [`TraceStore`], which
//! the CQL layer shows as `system_traces.sessions` and `system_traces.events`. A thread that
//! traces nothing pays one thread-local flag read per event site. Nothing here reads or
//! writes data.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

/// The sessions a store keeps: the newest, as Cassandra keeps a day's (a bounded memory).
const KEPT_SESSIONS: usize = 1000;
/// The events one session keeps; later ones are counted, not kept.
const KEPT_EVENTS: usize = 500;

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static EVENTS: RefCell<Option<Collecting>> = const { RefCell::new(None) };
}

struct Collecting {
    started: Instant,
    events: Vec<TraceEvent>,
    dropped: usize,
}

/// One thing a traced request did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    /// Microseconds since the request began.
    pub elapsed_micros: i64,
    /// What was done, in words.
    pub activity: String,
}

/// A traced request: what it was, when, how long it took, and what it did.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSession {
    /// Its id (a time-based UUID, as the client is told).
    pub id: [u8; 16],
    /// The client's address.
    pub client: String,
    /// `QUERY`, `EXECUTE`, `BATCH` or `PREPARE`.
    pub command: String,
    /// The request in words (`Execute CQL3 query`).
    pub request: String,
    /// Its parameters (`query`, `page_size`, `consistency_level`, …).
    pub parameters: Vec<(String, String)>,
    /// When it began, in milliseconds since the epoch.
    pub started_at_ms: i64,
    /// How long it took, in microseconds.
    pub duration_micros: i64,
    /// What it did, in order.
    pub events: Vec<TraceEvent>,
}

/// Starts collecting this thread's events for a request.
pub fn begin() {
    EVENTS.with(|e| {
        *e.borrow_mut() = Some(Collecting {
            started: Instant::now(),
            events: Vec::new(),
            dropped: 0,
        })
    });
    ON.with(|on| on.set(true));
}

/// Stops collecting, answering the events collected since [`begin`] and the microseconds
/// since then.
pub fn end() -> (Vec<TraceEvent>, i64) {
    ON.with(|on| on.set(false));
    let Some(c) = EVENTS.with(|e| e.borrow_mut().take()) else {
        return (Vec::new(), 0);
    };
    let mut events = c.events;
    if c.dropped > 0 {
        events.push(TraceEvent {
            elapsed_micros: micros(c.started),
            activity: format!("{} more events not kept", c.dropped),
        });
    }
    (events, micros(c.started))
}

/// Whether this thread is tracing a request.
#[inline]
pub fn active() -> bool {
    ON.with(Cell::get)
}

/// Notes `activity` (built only when this thread traces a request).
#[inline]
pub fn event(activity: impl FnOnce() -> String) {
    if active() {
        record(activity());
    }
}

#[cold]
fn record(activity: String) {
    EVENTS.with(|e| {
        if let Some(c) = e.borrow_mut().as_mut() {
            if c.events.len() < KEPT_EVENTS {
                let elapsed_micros = micros(c.started);
                c.events.push(TraceEvent {
                    elapsed_micros,
                    activity,
                });
            } else {
                c.dropped += 1;
            }
        }
    });
}

fn micros(since: Instant) -> i64 {
    i64::try_from(since.elapsed().as_micros()).unwrap_or(i64::MAX)
}

/// The traced sessions a database keeps, newest last, and the probability with which a server
/// traces a request its client did not ask to trace (`nodetool settraceprobability`).
#[derive(Debug, Default)]
pub struct TraceStore {
    sessions: Mutex<VecDeque<TraceSession>>,
    /// The probability's `f64` bits (0: trace only what clients ask).
    probability: AtomicU64,
    /// A xorshift state drawing the samples.
    draws: AtomicU64,
}

impl TraceStore {
    /// Sets the probability (0 to 1) of tracing a request no client asked to trace.
    pub fn set_probability(&self, p: f64) -> Result<(), String> {
        if !(0.0..=1.0).contains(&p) {
            return Err(format!(
                "Trace probability must be between 0 and 1, not {p}"
            ));
        }
        self.probability.store(p.to_bits(), Ordering::Relaxed);
        Ok(())
    }

    /// The probability [`set_probability`](Self::set_probability) set.
    pub fn probability(&self) -> f64 {
        f64::from_bits(self.probability.load(Ordering::Relaxed))
    }

    /// Whether to trace the next request no client asked to trace: one draw at the probability
    /// (none while it is 0, the default, so that an untraced server does no work here).
    pub fn sample(&self) -> bool {
        let p = self.probability();
        if p <= 0.0 {
            return false;
        }
        // xorshift64*, seeded from the clock the first time: statistics, not secrets.
        let mut x = self.draws.load(Ordering::Relaxed);
        if x == 0 {
            x = u64::try_from(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos()),
            )
            .unwrap_or(1)
                | 1;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.draws.store(x, Ordering::Relaxed);
        let u = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
        u < p
    }
    /// Keeps `s`, dropping the oldest session when the store is full.
    pub fn keep(&self, s: TraceSession) {
        let mut q = self.sessions.lock();
        if q.len() >= KEPT_SESSIONS {
            q.pop_front();
        }
        q.push_back(s);
    }

    /// Every session kept, oldest first.
    pub fn sessions(&self) -> Vec<TraceSession> {
        self.sessions.lock().iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_follows_the_probability() {
        let store = TraceStore::default();
        assert!(!(0..1000).any(|_| store.sample()), "0: never");
        store.set_probability(1.0).unwrap();
        assert!((0..1000).all(|_| store.sample()), "1: always");
        store.set_probability(0.25).unwrap();
        let n = (0..10_000).filter(|_| store.sample()).count();
        assert!((2_000..3_000).contains(&n), "{n} of 10,000 at 0.25");
        assert!(store.set_probability(1.5).is_err());
        assert!(store.set_probability(f64::NAN).is_err());
    }

    #[test]
    fn events_are_collected_only_while_tracing_and_bounded() {
        event(|| unreachable!("not built while no request is traced"));
        begin();
        event(|| "one".into());
        for _ in 0..KEPT_EVENTS + 3 {
            event(|| "many".into());
        }
        let (events, _) = end();
        assert_eq!(events[0].activity, "one");
        assert_eq!(events.len(), KEPT_EVENTS + 1);
        assert_eq!(events[KEPT_EVENTS].activity, "4 more events not kept");
        event(|| unreachable!("not after the end either"));
        assert_eq!(end().0, Vec::new());
    }
}
