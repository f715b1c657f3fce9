//! The layout of entry keys inside a stored row.
//!
//! - Standard CF: a column's key is its name's sort key.
//! - Super CF: a super column's *group prefix* is `escape(sort key of its name) ++ 00 01`; the
//!   super column's deletion is stored under the prefix itself, and each sub-column under
//!   `prefix ++ sort key of the sub-column name`. The prefix sorts before everything in its group,
//!   and `escape(..) ++ 00 02` bounds the group from above (see [`crate::model::sort_key`]).
//!
//! - Standard CF with a composite comparator: the deletion of every name under a composite
//!   prefix (a CQL row, a collection) is stored under `prefix sort key ++ 00 00`. No valid
//!   composite sort key holds `00 00` where a component may begin (a component's `00` bytes are
//!   escaped and terminators are `00 01..03`), so the key never collides with a column, sorts just
//!   before the first name under the prefix, and covers every name that starts with the prefix
//!   and has more components than it.
//!
//! - Standard CF with a composite comparator: the deletion of every non-static name between two
//!   bounds (a CQL range deletion, `DELETE … WHERE k = ? AND c >= ? AND c < ?`) is stored under
//!   `00 00 00 00 ++ escape(start) ++ 00 01 ++ escape(finish) ++ 00 01`, where `start` and
//!   `finish` are the sort keys of the inclusive bounds (empty: open). No column, prefix
//!   deletion or static name begins so: those begin with an escaped component (whose `00` is
//!   followed by `FF` or a terminator `01..03`), or with a static name's `00 00` and then one.
//!   So every range deletion of a row lies together at its head, before its static cells, where
//!   a read finds them all with one scan, wherever the range it reads begins (as Cassandra 2's
//!   row-level range tombstone list, and RocksDB's range deletion block).
//!
//! Every part of the engine that builds or parses entry keys goes through here.

use super::comparator::Comparator;
use super::sort_key::{escape_into, escaped_len, split_escaped};

/// The terminator byte that closes a super column's group prefix.
const GROUP: u8 = 0x01;

/// The key of a column of a Standard CF, in `out` (cleared first).
pub fn column_into(cmp: &dyn Comparator, name: &[u8], out: &mut Vec<u8>) {
    out.clear();
    cmp.encode_sort_key(name, out);
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

/// The bytes that close a prefix deletion's key.
const PREFIX_DELETION: [u8; 2] = [0, 0];

/// The key of the deletion of every name under the composite prefix whose sort key is `prefix`
/// (whole components, each closed by its terminator).
pub fn prefix_deletion(prefix: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(prefix.len() + 2);
    k.extend_from_slice(prefix);
    k.extend_from_slice(&PREFIX_DELETION);
    k
}

/// The composite prefix a prefix deletion's key covers, if `key` is one: whole components
/// followed by `00 00`.
pub fn prefix_of_deletion(key: &[u8]) -> Option<&[u8]> {
    let prefix = key.strip_suffix(&PREFIX_DELETION)?;
    let mut rest = prefix;
    while !rest.is_empty() {
        rest = &rest[escaped_len(rest)?..];
    }
    (!prefix.is_empty()).then_some(prefix)
}

/// What every range deletion's key begins with (see the module's doc).
pub const RANGE_DELETIONS: [u8; 4] = [0, 0, 0, 0];

/// The smallest key after every range deletion's key.
pub const RANGE_DELETIONS_END: [u8; 4] = [0, 0, 0, 1];

/// What a static name's sort key begins with (and no other column's).
pub const STATIC_SORT_KEY: [u8; 2] = [0, 0];

/// The key of the deletion of every non-static name from the sort key `start` to the sort key
/// `finish`, both inclusive (empty: open on that side).
pub fn range_deletion(start: &[u8], finish: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(start.len() + finish.len() + 8);
    k.extend_from_slice(&RANGE_DELETIONS);
    escape_into(start, &mut k);
    k.extend_from_slice(&[0, 1]);
    escape_into(finish, &mut k);
    k.extend_from_slice(&[0, 1]);
    k
}

/// The bounds (start, finish: inclusive sort keys, empty when open) a range deletion's key
/// names, if `key` is one.
pub fn range_of_deletion(key: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let rest = key.strip_prefix(&RANGE_DELETIONS)?;
    let (start, 1, rest) = split_escaped(rest)? else {
        return None;
    };
    let (finish, 1, []) = split_escaped(rest)? else {
        return None;
    };
    Some((start, finish))
}

/// The lengths of the proper composite prefixes of a Standard CF column key (each whole
/// components; shortest first), the prefixes a prefix deletion covering the key can name.
pub fn proper_prefix_lens(key: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let n = escaped_len(&key[at..])?;
        at += n;
        (at < key.len()).then_some(at)
    })
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

    #[test]
    fn a_prefix_deletion_sorts_before_its_names_and_after_everything_before_them() {
        use crate::model::comparator::{Comparator, CompositeType};
        use std::sync::Arc;
        let cmp = CompositeType::new(vec![Arc::new(Utf8Type), Arc::new(Utf8Type)]);
        let key = |parts: &[&[u8]], eoc: i8| {
            let mut k = Vec::new();
            column_into(&cmp, &CompositeType::build(parts, eoc), &mut k);
            k
        };
        let prefix = key(&[b"row"], 0);
        let del = prefix_deletion(&prefix);
        assert_eq!(prefix_of_deletion(&del), Some(prefix.as_slice()));
        let covered = [
            key(&[b"row", b""], 0),
            key(&[b"row", b"\0"], 0),
            key(&[b"row", b"z"], 0),
        ];
        for k in &covered {
            assert!(del < *k && k.starts_with(&prefix), "{k:?}");
            let mut name = Vec::new();
            cmp.decode_sort_key(k, &mut name).unwrap();
            assert!(cmp.validate(&name).is_ok());
            assert_eq!(
                proper_prefix_lens(k).collect::<Vec<_>>(),
                vec![prefix.len()]
            );
        }
        assert!(key(&[b"row"], -1) < del && prefix < del && del < key(&[b"row"], 1));
        assert!(key(&[b"rov", b"zz"], 0) < del && del < key(&[b"rowa"], 0));
        assert_eq!(prefix_of_deletion(&prefix), None, "a column is no deletion");
        assert_eq!(prefix_of_deletion(&[0, 0]), None);
    }

    #[test]
    fn range_deletions_sort_before_static_and_clustered_names_and_carry_their_bounds() {
        use crate::model::comparator::CompositeType;
        use std::sync::Arc;
        let cmp = CompositeType::new(vec![Arc::new(Utf8Type), Arc::new(Utf8Type)]);
        let sort_key = |name: &[u8]| {
            let mut k = Vec::new();
            column_into(&cmp, name, &mut k);
            k
        };
        let start = sort_key(&CompositeType::build(&[b"a\0b"], -1));
        let finish = sort_key(&CompositeType::build(&[b"c"], 1));
        for (s, f) in [
            (&start, &finish),
            (&Vec::new(), &finish),
            (&start, &Vec::new()),
        ] {
            let key = range_deletion(s, f);
            assert_eq!(range_of_deletion(&key), Some((s.clone(), f.clone())));
            assert_eq!(prefix_of_deletion(&key), None, "never a prefix deletion");
            for name in [
                CompositeType::build(&[b"", b""], 0),
                CompositeType::build(&[b"\0", b"x"], 0),
                CompositeType::build_static(&[b"s"], 0),
                CompositeType::build_static(&[b"", b"s"], 0),
                CompositeType::build_static(&[b"\0", b"s"], -1),
                CompositeType::build_static(&[b"\x01", b"s"], 0),
            ] {
                assert!(key.as_slice() < sort_key(&name).as_slice(), "{name:?}");
            }
            assert!(
                key.as_slice() >= &RANGE_DELETIONS[..] && key.as_slice() < &RANGE_DELETIONS_END[..]
            );
        }
        assert_eq!(range_of_deletion(&start), None, "a column is no range");
        let mut trailing = range_deletion(&start, &finish);
        trailing.push(7);
        assert_eq!(range_of_deletion(&trailing), None);
    }
}
