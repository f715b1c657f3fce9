//! The row-key bloom filter of a format 1 SSTable (read only; format 2 has its own in
//! `filter.rs`), built with the `bloomfilter` crate.
//!
//! A persisted filter must answer the same on every platform and compiler: keys are fed to the
//! hasher as their raw bytes only (std's `Hash` for slices adds a platform-sized length prefix),
//! and the crate keeps its SipHash seed in the serialized header. A test pins the bytes of a
//! filter built from known keys. Deserializing checks the header first, so a damaged filter can
//! neither divide by zero nor loop for billions of hash functions.

use std::hash::{Hash, Hasher};

use bloomfilter::Bloom;

use crate::error::{CorruptKind, FormatError};

/// A row key as the filter hashes it: its bytes, with no length prefix.
pub struct RawKey<'a>(pub &'a [u8]);

impl Hash for RawKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write(self.0);
    }
}

/// The seed every filter was built with; stored in the filter, so tests that build one use it.
#[cfg(test)]
const SEED: [u8; 32] = *b"supercolumn row key bloom seed 1";
/// Most hash functions a sane filter uses (1% needs 7).
const MAX_HASHES: u32 = 64;
/// Bytes of the crate's serialized header (version, bit length, hash count, seed).
const HEADER_LEN: usize = 1 + 8 + 4 + 32;

/// A row-key bloom filter.
pub struct RowBloom {
    bloom: Bloom<RawKey<'static>>,
}

impl std::fmt::Debug for RowBloom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowBloom")
            .field("bits", &self.bloom.len())
            .field("hashes", &self.bloom.number_of_hash_functions())
            .finish()
    }
}

impl RowBloom {
    /// A filter of `keys` at false-positive rate `fp`, as format 1 wrote them.
    #[cfg(test)]
    pub fn build<'a>(keys: &[&'a [u8]], fp: f64) -> RowBloom {
        let fp = if fp > 0.0 && fp < 1.0 { fp } else { 0.01 };
        let bytes =
            match Bloom::<RawKey<'a>>::new_for_fp_rate_with_seed(keys.len().max(1), fp, &SEED) {
                Ok(mut b) => {
                    for k in keys {
                        b.set(&RawKey(k));
                    }
                    b.to_bytes()
                }
                Err(_) => Vec::new(),
            };
        // A filter this engine just serialized always reads back; should that ever fail, a
        // filter that answers "maybe" for everything is still correct.
        Self::from_bytes(bytes).unwrap_or_else(|_| RowBloom::everything())
    }

    /// A one-byte filter with every bit set: answers "maybe" for every key.
    #[cfg(test)]
    fn everything() -> RowBloom {
        let mut header = vec![1u8];
        header.extend_from_slice(&1u64.to_le_bytes());
        header.extend_from_slice(&1u32.to_le_bytes());
        header.extend_from_slice(&SEED);
        header.push(0xff);
        RowBloom {
            bloom: Bloom::from_bytes(header).unwrap_or_else(|_| unreachable!("a valid header")),
        }
    }

    /// Whether the row key may be present (false means certainly absent).
    pub fn may_contain(&self, key: &[u8]) -> bool {
        // `Bloom` is covariant in its item type, so the stored filter checks borrowed keys.
        let b: &Bloom<RawKey<'_>> = &self.bloom;
        b.check(&RawKey(key))
    }

    /// (bits, hash functions).
    pub fn shape(&self) -> (u64, u32) {
        (self.bloom.len(), self.bloom.number_of_hash_functions())
    }

    /// The serialized filter.
    #[cfg(test)]
    pub fn to_bytes(&self) -> Vec<u8> {
        self.bloom.to_bytes()
    }

    /// Reads a serialized filter, refusing headers that would make checks divide by zero or
    /// take unbounded time.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<RowBloom, FormatError> {
        if bytes.len() <= HEADER_LEN {
            return Err(FormatError::new(
                CorruptKind::Truncated,
                "bloom filter too short",
            ));
        }
        let hashes = u32::from_le_bytes([bytes[9], bytes[10], bytes[11], bytes[12]]);
        if hashes == 0 || hashes > MAX_HASHES {
            return Err(FormatError::malformed(format!(
                "bloom filter with {hashes} hash functions"
            )));
        }
        let bloom = Bloom::from_bytes(bytes)
            .map_err(|e| FormatError::malformed(format!("bloom filter: {e}")))?;
        // (The crate's `is_empty` means "no bit set", not "no bits".)
        if matches!(bloom.len(), 0) {
            return Err(FormatError::malformed("bloom filter with no bits"));
        }
        Ok(RowBloom { bloom })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_for_inserted_keys_and_mostly_not_for_others() {
        let keys: Vec<[u8; 4]> = (0..1000u32).map(u32::to_be_bytes).collect();
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let b = RowBloom::build(&refs, 0.01);
        assert!((0..1000u32).all(|i| b.may_contain(&i.to_be_bytes())));
        let fp = (1000..11_000u32)
            .filter(|i| b.may_contain(&i.to_be_bytes()))
            .count();
        assert!(fp < 300, "{fp} false positives of 10000 at 1%");
    }

    /// The stored bytes for fixed keys never change: a filter written on one platform must
    /// answer the same on every other.
    #[test]
    fn serialized_bytes_are_pinned() {
        let b = RowBloom::build(&[b"jsmith", b"phatduckk", b"ericflo"], 0.01);
        let bytes = b.to_bytes();
        let mut want = vec![1u8, 4, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0];
        want.extend_from_slice(&SEED);
        want.extend_from_slice(&[0x63, 0x1d, 0x73, 0x8e]);
        assert_eq!(bytes, want);
        let back = RowBloom::from_bytes(bytes).unwrap();
        assert!(back.may_contain(b"jsmith") && back.may_contain(b"ericflo"));
    }

    #[test]
    fn the_fallback_filter_answers_maybe() {
        let b = RowBloom::everything();
        assert!(b.may_contain(b"anything") && b.may_contain(b""));
    }

    #[test]
    fn damaged_headers_are_refused() {
        let b = RowBloom::build(&[b"k"], 0.01).to_bytes();
        let mut zero_hashes = b.clone();
        zero_hashes[9..13].copy_from_slice(&0u32.to_le_bytes());
        assert!(RowBloom::from_bytes(zero_hashes).is_err());
        let mut many = b.clone();
        many[9..13].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(RowBloom::from_bytes(many).is_err());
        assert!(RowBloom::from_bytes(b[..HEADER_LEN].to_vec()).is_err());
        let mut wrong_len = b.clone();
        wrong_len[1] ^= 1;
        assert!(RowBloom::from_bytes(wrong_len).is_err());
    }
}
