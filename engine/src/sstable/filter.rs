//! The row-key filter of an SSTable: for format 2 a blocked bloom filter (every probe of a key in
//! one 64-byte line, the key hashed once with xxh3), for format 1 the `bloomfilter` crate's
//! filter it was written with ([`super::bloom`]). Layout in `engine/FORMAT.md`.
//!
//! Why blocked: a bloom miss is the commonest read of a settled store, and the crate's filter
//! hashes each key with SipHash and then touches 7 scattered cache lines; here one hash and one
//! line answer it (`cargo bench -p supercolumn-bench --bench bloom` measures both).

use xxhash_rust::xxh3::xxh3_64;

use super::bloom::RowBloom;
use crate::codec::{Reader, Writer};
use crate::error::{CorruptKind, FormatError};

/// Bytes of one line: every probe of a key lands in the same one.
const LINE_BYTES: usize = 64;
const LINE_BITS: u32 = 512;
/// The only hash this build knows: xxh3-64 of the key, seed 0.
const KIND_XXH3: u8 = 1;
const MAX_PROBES: u8 = 16;
/// Bytes before the lines: kind, probes, line count.
const HEADER_LEN: usize = 1 + 1 + 4;
/// The multiplier that moves on from one probe to the next (2^32 / φ).
const GOLDEN: u32 = 0x9E37_79B9;

/// A blocked bloom filter over row keys.
#[derive(Clone)]
pub struct BlockedBloom {
    probes: u8,
    lines: u32,
    bits: Vec<u8>,
}

impl std::fmt::Debug for BlockedBloom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockedBloom")
            .field("lines", &self.lines)
            .field("probes", &self.probes)
            .finish()
    }
}

/// Bits per key and probes for false-positive rate `fp`.
fn shape_for(fp: f64) -> (f64, u8) {
    let fp = if fp > 0.0 && fp < 1.0 { fp } else { 0.01 };
    let ln2 = std::f64::consts::LN_2;
    let bits = ((1.0 / fp).ln() / (ln2 * ln2)).ceil().max(1.0);
    let probes = (bits * ln2).round().clamp(1.0, f64::from(MAX_PROBES)) as u8;
    (bits, probes)
}

impl BlockedBloom {
    /// An empty filter sized for up to `keys` keys at false-positive rate `fp`.
    pub fn with_capacity(keys: u64, fp: f64) -> BlockedBloom {
        let (bits_per_key, probes) = shape_for(fp);
        let bits = (keys.max(1) as f64 * bits_per_key).ceil();
        let lines = (bits / f64::from(LINE_BITS))
            .ceil()
            .clamp(1.0, f64::from(u32::MAX)) as u32;
        BlockedBloom {
            probes,
            lines,
            bits: vec![0; lines as usize * LINE_BYTES],
        }
    }

    /// The key's line (its byte offset) and the first probe's seed.
    fn locate(&self, key: &[u8]) -> (usize, u32) {
        let h = xxh3_64(key);
        let line = ((h >> 32) * u64::from(self.lines)) >> 32;
        (line as usize * LINE_BYTES, h as u32)
    }

    /// Adds a key.
    pub fn insert(&mut self, key: &[u8]) {
        let (at, mut x) = self.locate(key);
        let line = &mut self.bits[at..at + LINE_BYTES];
        for _ in 0..self.probes {
            let bit = (x >> 23) as usize;
            line[bit / 8] |= 1 << (bit % 8);
            x = x.wrapping_mul(GOLDEN);
        }
    }

    /// Whether the key may have been added (false means it certainly was not).
    pub fn may_contain(&self, key: &[u8]) -> bool {
        let (at, mut x) = self.locate(key);
        let Some(line) = self.bits.get(at..at + LINE_BYTES) else {
            return true;
        };
        for _ in 0..self.probes {
            let bit = (x >> 23) as usize;
            if line[bit / 8] & (1 << (bit % 8)) == 0 {
                return false;
            }
            x = x.wrapping_mul(GOLDEN);
        }
        true
    }

    /// The filter block's raw bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u8(KIND_XXH3);
        w.u8(self.probes);
        w.u32(self.lines);
        w.buf.extend_from_slice(&self.bits);
        w.buf
    }

    /// Reads a filter block, refusing a hash it does not know, a probe count that would make
    /// checks slow, and bits that do not match the line count.
    pub fn decode(raw: &[u8]) -> Result<BlockedBloom, FormatError> {
        let mut r = Reader::new(raw);
        let kind = r.u8()?;
        if kind != KIND_XXH3 {
            return Err(FormatError::new(
                CorruptKind::UnknownVersion,
                format!("filter hash kind {kind}"),
            ));
        }
        let probes = r.u8()?;
        if probes == 0 || probes > MAX_PROBES {
            return Err(r.error(format!("a filter with {probes} probes")));
        }
        let lines = r.u32()?;
        if lines == 0 || r.remaining() as u64 != u64::from(lines) * LINE_BYTES as u64 {
            return Err(r.error(format!(
                "{lines} filter lines in {} bytes",
                raw.len() - HEADER_LEN.min(raw.len())
            )));
        }
        Ok(BlockedBloom {
            probes,
            lines,
            bits: raw[HEADER_LEN..].to_vec(),
        })
    }

    /// (bits, probes).
    pub fn shape(&self) -> (u64, u32) {
        (
            u64::from(self.lines) * u64::from(LINE_BITS),
            u32::from(self.probes),
        )
    }

    /// Bytes held in memory.
    #[cfg(test)]
    pub fn memory(&self) -> usize {
        self.bits.len()
    }
}

/// The filter an SSTable was written with.
#[derive(Debug)]
pub enum RowFilter {
    /// Format 1: the `bloomfilter` crate's.
    V1(RowBloom),
    /// Format 2: blocked.
    V2(BlockedBloom),
}

impl RowFilter {
    /// Whether the row key may be in the file (false means it is not).
    pub fn may_contain(&self, key: &[u8]) -> bool {
        match self {
            RowFilter::V1(b) => b.may_contain(key),
            RowFilter::V2(b) => b.may_contain(key),
        }
    }

    /// (bits, hash functions or probes).
    pub fn shape(&self) -> (u64, u32) {
        match self {
            RowFilter::V1(b) => b.shape(),
            RowFilter::V2(b) => b.shape(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_keys_always_answer_and_others_rarely_do() {
        for fp in [0.01, 0.001, 0.1] {
            let mut b = BlockedBloom::with_capacity(20_000, fp);
            for i in 0..20_000u32 {
                b.insert(format!("key{i}").as_bytes());
            }
            let b = BlockedBloom::decode(&b.encode()).unwrap();
            assert!((0..20_000u32).all(|i| b.may_contain(format!("key{i}").as_bytes())));
            let n = 100_000u32;
            let fps = (0..n)
                .filter(|i| b.may_contain(format!("absent{i}").as_bytes()))
                .count();
            let rate = fps as f64 / f64::from(n);
            assert!(rate < fp * 1.6, "fp {fp}: measured {rate}");
        }
    }

    /// The stored bytes for fixed keys never change: a filter written on one platform must
    /// answer the same on every other.
    #[test]
    fn serialized_bytes_are_pinned() {
        let mut b = BlockedBloom::with_capacity(3, 0.01);
        for k in [&b"jsmith"[..], b"phatduckk", b"ericflo"] {
            b.insert(k);
        }
        let bytes = b.encode();
        assert_eq!(&bytes[..6], &[1, 7, 0, 0, 0, 1], "xxh3, 7 probes, one line");
        let set: Vec<usize> = (0..512)
            .filter(|i| bytes[6 + i / 8] & (1 << (i % 8)) != 0)
            .collect();
        assert_eq!(
            set,
            [
                31, 32, 53, 78, 148, 161, 199, 245, 252, 262, 270, 288, 320, 326, 338, 341, 413,
                418, 437, 502
            ]
        );
    }

    #[test]
    fn a_filter_holds_its_bits_and_little_else() {
        let b = BlockedBloom::with_capacity(100_000, 0.01);
        // ln(100) / ln(2)^2 = 9.6, so 10 bits a key, rounded up to whole 64-byte lines.
        let bits = b.memory() * 8;
        assert!((1_000_000..1_000_000 + 512).contains(&bits), "{bits} bits");
        assert_eq!(b.shape(), (bits as u64, 7));
    }

    #[test]
    fn damaged_headers_are_refused() {
        let b = BlockedBloom::with_capacity(100, 0.01).encode();
        let mut kind = b.clone();
        kind[0] = 9;
        assert!(BlockedBloom::decode(&kind).is_err());
        for probes in [0u8, 17, 255] {
            let mut p = b.clone();
            p[1] = probes;
            assert!(BlockedBloom::decode(&p).is_err());
        }
        let mut lines = b.clone();
        lines[5] = lines[5].wrapping_add(1);
        assert!(BlockedBloom::decode(&lines).is_err());
        assert!(BlockedBloom::decode(&b[..b.len() - 1]).is_err());
        assert!(BlockedBloom::decode(&b[..3]).is_err());
        let mut zero = b[..6].to_vec();
        zero[2..6].copy_from_slice(&0u32.to_be_bytes());
        assert!(BlockedBloom::decode(&zero).is_err());
    }
}
