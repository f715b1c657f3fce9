//! The engine's notion of "now": default timestamps, TTL expiry and tombstone deletion times.
//!
//! Everything time-dependent reads one [`Clock`] given to the database, so tests set time
//! ([`ManualClock`]) instead of sleeping. Nothing else in the engine may read the system time
//! for data decisions.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of the current time, in microseconds since the Unix epoch.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Microseconds since the Unix epoch.
    fn now_micros(&self) -> i64;

    /// Whole seconds since the Unix epoch (the unit of deletion and expiration times).
    fn now_seconds(&self) -> i64 {
        self.now_micros().div_euclid(1_000_000)
    }
}

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_micros(&self) -> i64 {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
            // A clock set before 1970: report negative time rather than panic.
            Err(e) => -i64::try_from(e.duration().as_micros()).unwrap_or(i64::MAX),
        }
    }
}

/// A clock that only moves when told to: for tests of TTL and grace periods.
///
/// ```
/// use supercolumn::{Clock, ManualClock};
/// let clock = ManualClock::new(1_000_000);
/// clock.advance_seconds(5);
/// assert_eq!(clock.now_seconds(), 6);
/// ```
#[derive(Debug)]
pub struct ManualClock {
    micros: AtomicI64,
}

impl ManualClock {
    /// A clock standing at `micros` microseconds since the epoch.
    pub fn new(micros: i64) -> Self {
        ManualClock {
            micros: AtomicI64::new(micros),
        }
    }

    /// Sets the time.
    pub fn set_micros(&self, micros: i64) {
        self.micros.store(micros, Ordering::SeqCst);
    }

    /// Moves the time forward by `seconds`.
    pub fn advance_seconds(&self, seconds: i64) {
        self.micros
            .fetch_add(seconds.saturating_mul(1_000_000), Ordering::SeqCst);
    }

    /// Moves the time forward by `micros`.
    pub fn advance_micros(&self, micros: i64) {
        self.micros.fetch_add(micros, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_micros(&self) -> i64 {
        self.micros.load(Ordering::SeqCst)
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now_micros(&self) -> i64 {
        (**self).now_micros()
    }
}
