//! Cassandra's unsigned variable-length integers (`VIntCoding`): what a duration's three parts
//! and a vector's variable-size elements' lengths are written in. Only the bytes; what they
//! count is the caller's.

/// Cassandra's unsigned variable-length integer: the first byte's leading 1 bits count the
/// bytes that follow, the value is big-endian in what is left.
pub fn put_vint(v: u64, out: &mut Vec<u8>) {
    let magnitude = (v | 1).leading_zeros() as i64;
    let size = ((639 - magnitude * 9) >> 6) as usize;
    let extra = size - 1;
    let start = out.len();
    out.extend((0..size).rev().map(|i| (v >> (8 * i)) as u8));
    if extra > 0 {
        out[start] |= !(0xffu8 >> extra);
    }
}

/// The unsigned variable-length integer at the front of `bytes`, which it steps past; `None`
/// when it is cut short.
pub fn get_vint(bytes: &mut &[u8]) -> Option<u64> {
    let (&first, rest) = bytes.split_first()?;
    let extra = (!first).leading_zeros() as usize;
    if rest.len() < extra {
        return None;
    }
    let mut v = u64::from(first & (0xffu8.checked_shr(extra as u32).unwrap_or(0)));
    for &b in &rest[..extra] {
        v = (v << 8) | u64::from(b);
    }
    *bytes = &rest[extra..];
    Some(v)
}
