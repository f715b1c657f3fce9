//! The layout of entry keys inside a stored row.
//!
//! - Standard CF: a column's key is its name's sort key.
//! - Super CF: a super column's *group prefix* is `escape(sort key of its name) ++ 00 01`; the
//!   super column's deletion is stored under the prefix itself, and each sub-column under
//!   `prefix ++ sort key of the sub-column name`. The prefix sorts before everything in its group,
//!   and `escape(..) ++ 00 02` bounds the group from above (see [`crate::model::sort_key`]).
//!
//! Every part of the engine that builds or parses entry keys goes through here.

use super::comparator::Comparator;
use super::sort_key::{escape_into, escaped_len, split_escaped};

/// The terminator byte that closes a super column's group prefix.
const GROUP: u8 = 0x01;

/// The key of a column of a Standard CF.
pub fn column(cmp: &dyn Comparator, name: &[u8]) -> Vec<u8> {
    super::comparator::sort_key(cmp, name)
}

/// The group prefix of a super column (also the key of its deletion).
pub fn super_column(cmp: &dyn Comparator, name: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(name.len() + 3);
    group_prefix_of_sort_key(&super::comparator::sort_key(cmp, name), &mut k);
    k
}

/// Appends the group prefix for a super column whose name's sort key is `sc_key`.
pub fn group_prefix_of_sort_key(sc_key: &[u8], out: &mut Vec<u8>) {
    escape_into(sc_key, out);
    out.extend_from_slice(&[0, GROUP]);
}

/// The key of a sub-column.
pub fn sub_column(prefix: &[u8], subcmp: &dyn Comparator, name: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(prefix.len() + name.len() + 1);
    k.extend_from_slice(prefix);
    subcmp.encode_sort_key(name, &mut k);
    k
}

/// The smallest key above every key of the group with this prefix.
pub fn group_end(prefix: &[u8]) -> Vec<u8> {
    let mut k = prefix.to_vec();
    if let Some(last) = k.last_mut() {
        *last = GROUP + 1;
    }
    k
}

/// The length of the group prefix at the front of a Super CF entry key, if well formed.
pub fn group_prefix_len(key: &[u8]) -> Option<usize> {
    let n = escaped_len(key)?;
    (key[n - 1] == GROUP).then_some(n)
}

/// The sort key of the super column name inside a group prefix.
pub fn super_column_sort_key(prefix: &[u8]) -> Option<Vec<u8>> {
    match split_escaped(prefix)? {
        (sk, GROUP, []) => Some(sk),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::comparator::{LongType, Utf8Type};

    #[test]
    fn groups_nest_and_bound_their_members() {
        let p = super_column(&Utf8Type, b"home");
        let longer = super_column(&Utf8Type, b"homeAddress");
        let city = sub_column(&p, &LongType, &5i64.to_be_bytes());
        assert!(p < city && city < group_end(&p));
        assert!(
            group_end(&p) <= longer,
            "a longer name's group sorts after the whole group"
        );
        assert_eq!(group_prefix_len(&city), Some(p.len()));
        assert_eq!(super_column_sort_key(&p).unwrap(), b"home");
    }
}
