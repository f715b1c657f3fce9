//! A bloom filter over the row keys of one memtable, so a read of a row the memtable lacks
//! skips the skiplist search (a walk of cache misses through a large list). It is blocked: a
//! key's bits all lie in one 64-byte line, one bit per word, so a check costs one cache miss.
//! Writers set bits with atomic ORs, so it needs no lock; bits are never cleared, as memtables
//! never forget a row.

use std::sync::atomic::{AtomicU64, Ordering};

/// Words in a block: one 64-byte cache line.
const BLOCK_WORDS: usize = 8;
/// Bits per expected key.
const BITS_PER_KEY: usize = 10;
/// The largest filter, in blocks (2 MiB): past it the false-positive rate rises, nothing else.
const MAX_BLOCKS: usize = 1 << 15;

/// The filter.
#[derive(Debug)]
pub struct KeyFilter {
    words: Box<[AtomicU64]>,
    /// Blocks minus one (the count is a power of two).
    mask: usize,
}

impl KeyFilter {
    /// A filter sized for about `expected_keys` keys.
    pub fn new(expected_keys: usize) -> KeyFilter {
        let blocks = (expected_keys.saturating_mul(BITS_PER_KEY) / (64 * BLOCK_WORDS))
            .clamp(1, MAX_BLOCKS)
            .next_power_of_two();
        KeyFilter {
            words: (0..blocks * BLOCK_WORDS)
                .map(|_| AtomicU64::new(0))
                .collect(),
            mask: blocks - 1,
        }
    }

    /// The block and, per word, the bit of a key hashed to `h`.
    fn probe(&self, h: u64) -> (usize, u64) {
        let block = (h as usize) & self.mask;
        // Eight 6-bit bit numbers from the upper half and a remix of the hash.
        let bits = (h >> 16) ^ h.rotate_left(29).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (block * BLOCK_WORDS, bits)
    }

    /// Adds a key.
    #[cfg(test)]
    pub fn insert(&self, key: &[u8]) {
        self.insert_hashed(hash(key));
    }

    /// Adds a key, given its [`hash`].
    pub fn insert_hashed(&self, h: u64) {
        let (base, bits) = self.probe(h);
        for i in 0..BLOCK_WORDS {
            let bit = 1u64 << ((bits >> (6 * i)) & 63);
            let word = &self.words[base + i];
            // Skipping the write when the bit is already set keeps hot lines shared.
            if word.load(Ordering::Relaxed) & bit == 0 {
                word.fetch_or(bit, Ordering::Relaxed);
            }
        }
    }

    /// Whether the key may have been added (false: it certainly was not).
    #[cfg(test)]
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.may_contain_hashed(hash(key))
    }

    /// [`KeyFilter::may_contain`], given the key's [`hash`].
    pub fn may_contain_hashed(&self, h: u64) -> bool {
        let (base, bits) = self.probe(h);
        (0..BLOCK_WORDS).all(|i| {
            let bit = 1u64 << ((bits >> (6 * i)) & 63);
            self.words[base + i].load(Ordering::Relaxed) & bit != 0
        })
    }
}

/// FNV-1a over the key, finished with SplitMix64's mixer so every bit depends on every byte.
pub fn hash(key: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in key {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_keys_are_always_found_and_others_mostly_not() {
        let f = KeyFilter::new(10_000);
        for i in 0u32..10_000 {
            f.insert(format!("row-{i}").as_bytes());
        }
        for i in 0u32..10_000 {
            assert!(f.may_contain(format!("row-{i}").as_bytes()));
        }
        let false_positives = (0u32..10_000)
            .filter(|i| f.may_contain(format!("other-{i}").as_bytes()))
            .count();
        assert!(
            false_positives < 400,
            "{false_positives} false positives in 10,000"
        );
    }

    #[test]
    fn an_overfull_filter_still_finds_every_key() {
        let f = KeyFilter::new(10);
        for i in 0u32..5_000 {
            f.insert(&i.to_be_bytes());
        }
        assert!((0u32..5_000).all(|i| f.may_contain(&i.to_be_bytes())));
    }
}
