//! The key of a memtable row: the row sort key, with its first 16 bytes also held inline as a
//! big-endian integer. A skiplist search compares keys at every level; with the head inline,
//! rows whose heads differ (nearly all, as a partitioner's token leads the sort key) compare
//! without leaving the node, instead of following a pointer to the key's bytes. It also holds
//! the row key as the client gave it — usually the tail of the sort key, so without a copy.

use std::cmp::Ordering;

use crate::model::key_head::key_head;

/// A row sort key as the memtable orders it: exactly the byte order of the sort key.
#[derive(Clone, Debug)]
pub struct RowKey {
    /// The sort key's [`key_head`].
    head: u128,
    /// The sort key (`..sort_len`), and the client key (`key_start..`): the sort key's own tail
    /// when it ends with the client key, as every partitioner's does, else appended.
    bytes: Vec<u8>,
    sort_len: u32,
    key_start: u32,
}

impl RowKey {
    /// The key of the row with this sort key, for lookups (its client key is left empty).
    pub fn new(sort_key: &[u8]) -> RowKey {
        Self::with_client_key(sort_key, &[])
    }

    /// The key of the row with this sort key and client key.
    pub fn with_client_key(sort_key: &[u8], key: &[u8]) -> RowKey {
        let mut bytes = sort_key.to_vec();
        let key_start = if sort_key.ends_with(key) {
            sort_key.len() - key.len()
        } else {
            bytes.extend_from_slice(key);
            sort_key.len()
        };
        RowKey {
            head: key_head(sort_key),
            bytes,
            // Row keys are bounded far below 4 GiB (see `validate_key`).
            sort_len: sort_key.len() as u32,
            key_start: key_start as u32,
        }
    }

    /// The sort key.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.sort_len as usize]
    }

    /// The row key as the client gave it.
    pub fn client_key(&self) -> &[u8] {
        &self.bytes[self.key_start as usize..]
    }
}

impl Ord for RowKey {
    fn cmp(&self, other: &Self) -> Ordering {
        // Heads that differ order as the keys do; equal heads leave it to the bytes.
        self.head
            .cmp(&other.head)
            .then_with(|| self.bytes().cmp(other.bytes()))
    }
}

impl PartialOrd for RowKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for RowKey {
    fn eq(&self, other: &Self) -> bool {
        self.head == other.head && self.bytes() == other.bytes()
    }
}

impl Eq for RowKey {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn orders_exactly_as_the_bytes(
            a in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), any::<u8>()], 0..40),
            b in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), any::<u8>()], 0..40),
        ) {
            prop_assert_eq!(RowKey::new(&a).cmp(&RowKey::new(&b)), a.cmp(&b));
            prop_assert_eq!(RowKey::new(&a) == RowKey::new(&b), a == b);
        }
    }

    #[test]
    fn the_client_key_is_kept_and_does_not_take_part_in_the_order() {
        let tail = RowKey::with_client_key(b"tokenkey", b"key");
        assert_eq!(
            (tail.bytes(), tail.client_key()),
            (&b"tokenkey"[..], &b"key"[..])
        );
        let apart = RowKey::with_client_key(b"token", b"other");
        assert_eq!(
            (apart.bytes(), apart.client_key()),
            (&b"token"[..], &b"other"[..])
        );
        assert_eq!(apart, RowKey::new(b"token"));
        assert!(RowKey::new(b"token") < tail);
    }

    #[test]
    fn padding_and_prefixes() {
        let keys: [&[u8]; 5] = [b"", b"\0", b"a", b"a\0", b"a\0\x01"];
        for w in keys.windows(2) {
            assert!(
                RowKey::new(w[0]) < RowKey::new(w[1]),
                "{:?} < {:?}",
                w[0],
                w[1]
            );
        }
        let long_a = [7u8; 20];
        let mut long_b = long_a;
        long_b[19] = 8;
        assert!(RowKey::new(&long_a) < RowKey::new(&long_b));
    }
}
