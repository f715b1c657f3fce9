//! supercolumn's benchmarks: the criterion suites (`benches/`), the `stress` harness
//! (`src/bin/stress.rs`), and what they share — a deterministic key stream, the workload data,
//! the engines `stress` drives, and how results are measured and reported.

pub mod engine;
pub mod graph;
pub mod process;
pub mod report;
pub mod soak;
pub mod timing;
pub mod workload;

/// A deterministic stream of pseudo-random 64-bit values (SplitMix64): the same seed gives the
/// same keys and values on every engine a benchmark compares.
#[derive(Debug, Clone)]
pub struct KeyStream {
    state: u64,
}

impl KeyStream {
    /// A stream starting from `seed`.
    pub fn new(seed: u64) -> Self {
        KeyStream { state: seed }
    }
}

impl Iterator for KeyStream {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Some(z ^ (z >> 31))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream() {
        let a: Vec<u64> = KeyStream::new(7).take(5).collect();
        let b: Vec<u64> = KeyStream::new(7).take(5).collect();
        let c: Vec<u64> = KeyStream::new(8).take(5).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
