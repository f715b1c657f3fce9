//! One element of a composed value's sort key (a tuple's, a vector's, a frozen collection's):
//! the element's own sort key, escaped, then `00` and a terminator byte (see
//! `model::sort_key`); and the key of a value that does not parse. Only the bytes: what each
//! terminator means is the composed type's.

use super::Comparator;
use crate::model::sort_key::{escape_into, escaped_len, unescape_into};

/// Appends `element`'s sort key under `cmp`, escaped, then `00 term`; `scratch` is reused.
pub(super) fn push(
    cmp: &dyn Comparator,
    element: &[u8],
    term: u8,
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
) {
    scratch.clear();
    cmp.encode_sort_key(element, scratch);
    escape_into(scratch, out);
    out.extend_from_slice(&[0, term]);
}

/// Appends a deterministic key for a name that does not parse (only valid names reach an
/// encoder): the name escaped, then `00 end`.
pub(super) fn push_unparsed(name: &[u8], end: u8, out: &mut Vec<u8>) {
    escape_into(name, out);
    out.extend_from_slice(&[0, end]);
}

/// The element at the front of `key`, closed by `00 term`: its sort key unescaped into
/// `scratch`, and what follows it; `Err` naming what is wrong with bytes no encoder wrote.
pub(super) fn take<'k>(
    key: &'k [u8],
    term: u8,
    scratch: &mut Vec<u8>,
) -> Result<&'k [u8], &'static str> {
    let n = escaped_len(key).ok_or("element unterminated")?;
    if key[n - 1] != term {
        return Err("element closed wrongly");
    }
    scratch.clear();
    unescape_into(&key[..n - 2], scratch);
    Ok(&key[n..])
}
