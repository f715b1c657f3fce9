//! The data of the benchmarks, the same on every engine for a seed: 16-byte row keys, 100-byte
//! values half random (as db_bench makes them), and wide rows named by 8-byte big-endian
//! integers (which sort as LongType does for non-negative numbers).

use crate::KeyStream;

/// The row key of point row `i`.
pub fn key(i: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&i.to_be_bytes());
    k[8..].copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes());
    k
}

/// A key that no fill writes (for `readmissing`).
pub fn missing_key(i: u64) -> [u8; 16] {
    let mut k = key(i);
    k[15] ^= 0x5a;
    k[8] ^= 0xa5;
    k
}

/// The value written for point row `i` in round `round`: 50 random bytes, 50 repeated.
pub fn value(i: u64, round: u64) -> Vec<u8> {
    let mut v: Vec<u8> = KeyStream::new(i ^ (round << 40))
        .take(7)
        .flat_map(u64::to_le_bytes)
        .collect();
    v.resize(50, 0);
    v.extend(std::iter::repeat_n(b'x', 50));
    v
}

/// The row key of wide row `r`.
pub fn wide_key(r: u64) -> Vec<u8> {
    format!("wide-{r:08}").into_bytes()
}

/// The name of column `c` of a wide row.
pub fn wide_column(c: u64) -> [u8; 8] {
    c.to_be_bytes()
}
