//! Escaping that makes a sort key safe to concatenate with what follows it.
//!
//! A super column's sub-cells are stored under `escape(sc key) ++ 00 01 ++ sub-column key`, and a
//! composite name's components as `escape(component key) ++ 00 <eoc>`. Escaping turns each `00`
//! into `00 FF`, so a terminator `00 0x` (x < FF) ends the escaped part unambiguously, and
//! because `00 0x` sorts below both `00 FF` and any non-zero byte, a shorter part sorts before
//! every longer part it is a prefix of: concatenation keeps the order (as the FoundationDB tuple
//! layer does). This module owns only the byte mechanics; what the parts mean is the caller's.

/// Appends `src` to `out`, each `00` byte written as `00 FF`.
#[inline]
pub fn escape_into(src: &[u8], out: &mut Vec<u8>) {
    // Runs without a `00` are copied whole (a byte at a time was a tenth of a CQL write).
    out.reserve(src.len());
    let mut runs = src.split(|&b| b == 0);
    if let Some(first) = runs.next() {
        out.extend_from_slice(first);
    }
    for run in runs {
        out.extend_from_slice(&[0, 0xff]);
        out.extend_from_slice(run);
    }
}

/// Splits an escaped part off the front of `key`: returns the unescaped bytes, the terminator
/// byte that followed `00`, and the rest of the key. `None` if `key` holds no terminator or a
/// `00` followed by nothing.
pub fn split_escaped(key: &[u8]) -> Option<(Vec<u8>, u8, &[u8])> {
    let mut out = Vec::with_capacity(key.len());
    let mut i = 0;
    while i < key.len() {
        let b = key[i];
        if b != 0 {
            out.push(b);
            i += 1;
            continue;
        }
        let next = *key.get(i + 1)?;
        if next == 0xff {
            out.push(0);
            i += 2;
        } else {
            return Some((out, next, &key[i + 2..]));
        }
    }
    None
}

/// Appends an escaped part (its terminator already cut off) to `out` with each `00 FF` written
/// back as `00`. The part must come from [`escaped_len`], so every `00` in it is escaped.
#[inline]
pub fn unescape_into(part: &[u8], out: &mut Vec<u8>) {
    if let Some(small) = unescape_small(part, &mut [0; SMALL]) {
        out.extend_from_slice(small);
        return;
    }
    out.reserve(part.len());
    let mut rest = part;
    while let Some(z) = rest.iter().position(|&b| b == 0) {
        out.extend_from_slice(&rest[..=z]);
        rest = rest.get(z + 2..).unwrap_or(&[]);
    }
    out.extend_from_slice(rest);
}

/// The longest escaped part [`unescape_small`] takes.
pub const SMALL: usize = 16;

/// An escaped part of at most [`SMALL`] bytes (as for [`unescape_into`]) unescaped into `buf`;
/// `None` for a longer one.
#[inline]
pub fn unescape_small<'b>(part: &[u8], buf: &'b mut [u8; SMALL]) -> Option<&'b [u8]> {
    if part.len() > SMALL {
        return None;
    }
    // A number's few bytes, often most of them escaped zeros: a copy per run would cost a call
    // per byte, and a push per byte a capacity check each; a stack copy costs neither.
    let (mut i, mut n) = (0, 0);
    while let Some(&b) = part.get(i) {
        buf[n] = b;
        n += 1;
        i += if b == 0 { 2 } else { 1 };
    }
    Some(&buf[..n])
}

/// The length of the escaped part at the front of `key` including its two-byte terminator,
/// without copying; `None` as for [`split_escaped`].
#[inline]
pub fn escaped_len(key: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < key.len() {
        if key[i] != 0 {
            i += 1;
            continue;
        }
        let next = *key.get(i + 1)?;
        if next == 0xff {
            i += 2;
        } else {
            return Some(i + 2);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn part(src: &[u8], term: u8) -> Vec<u8> {
        let mut v = Vec::new();
        escape_into(src, &mut v);
        v.extend_from_slice(&[0, term]);
        v
    }

    proptest! {
        #[test]
        fn escaping_preserves_order_under_concatenation(
            a: Vec<u8>, b: Vec<u8>, ta: Vec<u8>, tb: Vec<u8>,
        ) {
            let mut ka = part(&a, 1);
            ka.extend_from_slice(&ta);
            let mut kb = part(&b, 1);
            kb.extend_from_slice(&tb);
            if a != b {
                prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
            }
            let (back, term, rest) = split_escaped(&ka).unwrap();
            prop_assert_eq!(&back, &a);
            prop_assert_eq!(term, 1);
            prop_assert_eq!(rest, &ta[..]);
            prop_assert_eq!(escaped_len(&ka), Some(ka.len() - ta.len()));
            let n = escaped_len(&ka).unwrap();
            let mut unescaped = vec![7];
            unescape_into(&ka[..n - 2], &mut unescaped);
            prop_assert_eq!(&unescaped[1..], &a[..], "appended after what was there");
        }
    }

    #[test]
    fn zero_heavy_parts_unescape_on_both_paths() {
        // Short (a number's bytes) and long parts take different loops.
        for src in [
            vec![0x80, 0, 0, 0, 0, 0, 0, 7],
            vec![0; 40],
            [vec![0; 9], vec![1; 9]].concat(),
        ] {
            let mut escaped = Vec::new();
            escape_into(&src, &mut escaped);
            let mut back = Vec::new();
            unescape_into(&escaped, &mut back);
            assert_eq!(back, src);
        }
    }

    #[test]
    fn unterminated_parts_are_rejected() {
        assert!(split_escaped(b"abc").is_none());
        assert!(split_escaped(&[1, 0]).is_none());
        assert!(escaped_len(&[0]).is_none());
    }
}
