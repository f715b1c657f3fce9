//! Cassandra's MurmurHash3 x64-128 (`org.apache.cassandra.utils.MurmurHash.hash3_x64_128`).
//!
//! It differs from the reference algorithm in one place, which tokens must reproduce: the tail
//! bytes (the last `len % 16`) are widened as *signed* Java bytes, so a tail byte >= 0x80 sets
//! every bit above it. Hand-written because no crate reproduces that quirk.

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

/// A byte widened as Java's `(long) byte` does: sign-extended.
fn signed(b: u8) -> u64 {
    i64::from(b as i8) as u64
}

/// The two 64-bit halves of Cassandra's hash of `key` with `seed`.
pub fn hash3_x64_128(key: &[u8], seed: u64) -> [u64; 2] {
    let (mut h1, mut h2) = (seed, seed);
    let mut blocks = key.chunks_exact(16);
    for block in &mut blocks {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        lo.copy_from_slice(&block[..8]);
        hi.copy_from_slice(&block[8..]);
        h1 ^= mix_k1(u64::from_le_bytes(lo));
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= mix_k2(u64::from_le_bytes(hi));
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    let (mut k1, mut k2) = (0u64, 0u64);
    for (i, &b) in tail.iter().enumerate().skip(8) {
        k2 ^= signed(b) << ((i - 8) * 8);
    }
    if tail.len() > 8 {
        h2 ^= mix_k2(k2);
    }
    for (i, &b) in tail.iter().enumerate().take(8) {
        k1 ^= signed(b) << (i * 8);
    }
    if !tail.is_empty() {
        h1 ^= mix_k1(k1);
    }
    let len = key.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    [h1, h2]
}
