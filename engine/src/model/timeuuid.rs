//! Version-1 (time-based) UUIDs for TimeUUIDType names: the shell's `timeuuid()` and examples.
//!
//! A generator's values are strictly increasing in TimeUUIDType order, even within one clock tick
//! and if the clock steps back: each timestamp is at least one 100 ns tick past the last.

use parking_lot::Mutex;
use uuid::{Timestamp, Uuid};

use crate::clock::Clock;

/// 100 ns intervals from the Gregorian epoch (1582-10-15) to the Unix epoch.
const GREGORIAN_TO_UNIX_TICKS: u64 = 0x01B2_1DD2_1381_4000;

/// Generates strictly increasing version-1 UUIDs.
#[derive(Debug)]
pub struct TimeUuidGenerator {
    last_ticks: Mutex<u64>,
    node: [u8; 6],
    clock_seq: u16,
}

impl TimeUuidGenerator {
    /// A generator with a node id and clock sequence drawn from `seed` (the multicast bit is set,
    /// as RFC 4122 asks of node ids that are not MAC addresses).
    pub fn new(seed: u64) -> Self {
        let mut x = seed ^ 0x9e37_79b9_7f4a_7c15;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
        let b = x.to_be_bytes();
        TimeUuidGenerator {
            last_ticks: Mutex::new(0),
            node: [b[0] | 0x01, b[1], b[2], b[3], b[4], b[5]],
            clock_seq: u16::from_be_bytes([b[6], b[7]]) & 0x3fff,
        }
    }

    /// A generator seeded from the process id and the system time.
    pub fn for_process() -> Self {
        let t = crate::clock::SystemClock.now_micros() as u64;
        Self::new(t ^ (u64::from(std::process::id()) << 32))
    }

    /// The next UUID, stamped from `unix_micros` (microseconds since the Unix epoch).
    pub fn next(&self, unix_micros: i64) -> Uuid {
        let wanted =
            GREGORIAN_TO_UNIX_TICKS.wrapping_add((unix_micros.max(0) as u64).saturating_mul(10));
        let ticks = {
            let mut last = self.last_ticks.lock();
            let t = wanted.max(*last + 1) & ((1 << 60) - 1);
            *last = t;
            t
        };
        Uuid::new_v1(
            Timestamp::from_gregorian_time(ticks, self.clock_seq),
            &self.node,
        )
    }

    /// The UUID for a moment, with this generator's node: for slice bounds "from time T".
    pub fn at(&self, unix_micros: i64) -> Uuid {
        let ticks =
            GREGORIAN_TO_UNIX_TICKS.wrapping_add((unix_micros.max(0) as u64).saturating_mul(10));
        Uuid::new_v1(
            Timestamp::from_gregorian_time(ticks & ((1 << 60) - 1), self.clock_seq),
            &self.node,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::comparator::{Comparator, TimeUuidType};

    #[test]
    fn strictly_increasing_within_a_tick_and_when_the_clock_steps_back() {
        let g = TimeUuidGenerator::new(1);
        let mut prev = g.next(1_000_000);
        for now in [1_000_000, 1_000_000, 999_000, 2_000_000, 2_000_000] {
            let u = g.next(now);
            TimeUuidType.validate(u.as_bytes()).unwrap();
            assert!(TimeUuidType.compare(prev.as_bytes(), u.as_bytes()).is_lt());
            prev = u;
        }
    }

    #[test]
    fn embeds_the_unix_time() {
        let g = TimeUuidGenerator::new(2);
        let u = g.next(1_374_546_754_299_000);
        let (secs, nanos) = u.get_timestamp().unwrap().to_unix();
        assert_eq!((secs, nanos), (1_374_546_754, 299_000_000));
    }
}
