//! Failed logins slowed down: each failure is answered after a delay that grows with the
//! failures on its connection and with the recent failures for its user name (over all
//! connections), and is logged. Guessing passwords then costs seconds a guess, on one connection
//! or on many; a user who mistypes once waits a quarter of a second. The users tracked are
//! bounded (`MAX_TRACKED`, least recently failed forgotten first). It decides delays only;
//! the check itself is `auth.rs`'s.

use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// User names whose recent failures are remembered.
const MAX_TRACKED: usize = 10_000;
/// Failures older than this are forgotten.
const WINDOW: Duration = Duration::from_secs(60);
/// The first failure's delay; each further one doubles it.
const BASE: Duration = Duration::from_millis(250);
/// The longest delay.
const MAX_DELAY: Duration = Duration::from_secs(4);

/// Password checks (bcrypt, milliseconds of CPU each) running at once, over all connections.
const MAX_CHECKS: usize = 4;

/// Recent failures by user name, and the password checks running.
pub struct Throttle {
    users: Mutex<lru::LruCache<String, (u32, Instant)>>,
    /// A permit per password check running: logins wait their turn (within their handshake's
    /// deadline) instead of taking every core.
    pub checks: tokio::sync::Semaphore,
}

impl Default for Throttle {
    fn default() -> Self {
        Throttle {
            users: Mutex::new(lru::LruCache::new(
                NonZeroUsize::new(MAX_TRACKED).unwrap_or(NonZeroUsize::MIN),
            )),
            checks: tokio::sync::Semaphore::new(MAX_CHECKS),
        }
    }
}

/// `BASE` doubled for each failure after the first, up to `MAX_DELAY`.
fn backoff(failures: u32) -> Duration {
    if failures == 0 {
        return Duration::ZERO;
    }
    BASE.saturating_mul(1u32 << (failures - 1).min(8))
        .min(MAX_DELAY)
}

impl Throttle {
    /// Records a failed login for `user` (the `connection_failures`-th on its connection) and
    /// returns how long to wait before answering it.
    pub fn failed(&self, user: &str, connection_failures: u32) -> Duration {
        let now = Instant::now();
        let mut users = self.users.lock();
        let recent = match users.get_mut(user) {
            Some((n, at)) if now.duration_since(*at) < WINDOW => {
                *n = n.saturating_add(1);
                *at = now;
                *n
            }
            _ => {
                users.put(user.to_string(), (1, now));
                1
            }
        };
        backoff(recent.max(connection_failures))
    }

    /// A login succeeded: its user's failures are forgotten.
    pub fn succeeded(&self, user: &str) {
        self.users.lock().pop(user);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_per_user_and_per_connection_and_reset_on_success() {
        let t = Throttle::default();
        assert_eq!(t.failed("alice", 1), BASE);
        assert_eq!(t.failed("alice", 1), BASE * 2, "a second connection");
        assert_eq!(t.failed("alice", 1), BASE * 4);
        assert_eq!(t.failed("bob", 5), BASE * 16, "the connection's own count");
        for _ in 0..20 {
            t.failed("alice", 1);
        }
        assert_eq!(t.failed("alice", 1), MAX_DELAY);
        t.succeeded("alice");
        assert_eq!(t.failed("alice", 1), BASE);
    }
}
