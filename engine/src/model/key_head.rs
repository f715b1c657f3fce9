//! The head of a key: its first 16 bytes, zero-padded, as a big-endian integer. Structures that
//! search many keys (the memtable's skiplist, an SSTable's block index) keep heads inline and
//! compare them first, touching a key's bytes only when heads tie. This file owns only that
//! rule; where heads are kept is the caller's business.

/// Bytes of a key in its head.
pub const HEAD_LEN: usize = 16;

/// The head of `key`. Keys whose heads differ order as their heads do: heads differ at a byte
/// both keys have, or where the shorter key has run out (padding 0 against a byte above 0),
/// and the shorter key sorts first there too. Equal heads say nothing; compare the bytes.
pub fn key_head(key: &[u8]) -> u128 {
    let mut h = [0u8; HEAD_LEN];
    let n = key.len().min(HEAD_LEN);
    h[..n].copy_from_slice(&key[..n]);
    u128::from_be_bytes(h)
}
