//! Partitioners (SPEC §4): the token of a row key, and the order of rows.
//!
//! Rows are stored under a *row sort key*: the token's bytes in memcmp order followed by the key
//! (for the hashing partitioners, whose tokens have a fixed width), or the key alone
//! (OrderPreservingPartitioner, whose token is the key). Byte order of row sort keys is then
//! token order, ties broken by key. This file owns tokens and that layout, nothing about storage.

use std::cell::OnceCell;
use std::fmt;

use md5::{Digest, Md5};
use smallvec::SmallVec;

use super::murmur3::hash3_x64_128;
use crate::error::{Error, Result};

/// Cassandra's package prefix for partitioner class names.
pub const CASSANDRA_DHT_PREFIX: &str = "org.apache.cassandra.dht.";

/// How row keys map to tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Partitioner {
    /// Token = |MD5(key) as a signed 128-bit big-endian integer|. The default.
    #[default]
    Random,
    /// Token = the key: rows in key order.
    OrderPreserving,
    /// Token = the first 64 bits of Cassandra's MurmurHash3 x64-128 (Cassandra 1.2+).
    Murmur3,
}

/// A position on the ring.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Token {
    /// A RandomPartitioner token, 0..=2^127.
    Random(u128),
    /// An OrderPreservingPartitioner token: the key bytes.
    Key(Vec<u8>),
    /// A Murmur3Partitioner token.
    Murmur3(i64),
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Random(t) => write!(f, "{t}"),
            Token::Murmur3(t) => write!(f, "{t}"),
            Token::Key(k) => f.write_str(&String::from_utf8_lossy(k)),
        }
    }
}

impl Partitioner {
    /// Resolves a class name, short (`RandomPartitioner`) or full
    /// (`org.apache.cassandra.dht.RandomPartitioner`).
    pub fn from_class_name(name: &str) -> Option<Partitioner> {
        let short = name.trim();
        let short = short.strip_prefix(CASSANDRA_DHT_PREFIX).unwrap_or(short);
        match short {
            "RandomPartitioner" => Some(Partitioner::Random),
            "OrderPreservingPartitioner" => Some(Partitioner::OrderPreserving),
            "Murmur3Partitioner" => Some(Partitioner::Murmur3),
            _ => None,
        }
    }

    /// The short class name.
    pub fn class_name(&self) -> &'static str {
        match self {
            Partitioner::Random => "RandomPartitioner",
            Partitioner::OrderPreserving => "OrderPreservingPartitioner",
            Partitioner::Murmur3 => "Murmur3Partitioner",
        }
    }

    /// The token of a row key.
    pub fn token(&self, key: &[u8]) -> Token {
        match self {
            Partitioner::Random => Token::Random(random_token(key)),
            Partitioner::OrderPreserving => Token::Key(key.to_vec()),
            Partitioner::Murmur3 => Token::Murmur3(murmur3_token(key)),
        }
    }

    /// Parses a token from its text form (decimal for the hashing partitioners, the key's text
    /// for OrderPreservingPartitioner).
    pub fn parse_token(&self, text: &str) -> Result<Token> {
        let bad = || Error::invalid(format!("'{text}' is not a {} token", self.class_name()));
        match self {
            Partitioner::Random => {
                let t: u128 = text.trim().parse().map_err(|_| bad())?;
                if t > 1u128 << 127 {
                    return Err(bad());
                }
                Ok(Token::Random(t))
            }
            Partitioner::Murmur3 => Ok(Token::Murmur3(text.trim().parse().map_err(|_| bad())?)),
            Partitioner::OrderPreserving => Ok(Token::Key(text.as_bytes().to_vec())),
        }
    }

    /// The memcmp-ordered bytes of a token.
    pub fn token_bytes(token: &Token) -> Vec<u8> {
        match token {
            Token::Random(t) => t.to_be_bytes().to_vec(),
            Token::Murmur3(t) => ((*t as u64) ^ (1 << 63)).to_be_bytes().to_vec(),
            Token::Key(k) => k.clone(),
        }
    }

    /// The row sort key of `key`: token bytes then key (or the key alone).
    pub fn row_sort_key(&self, key: &[u8]) -> Vec<u8> {
        let (token, width) = self.token_prefix(key);
        let mut out = Vec::with_capacity(width + key.len());
        out.extend_from_slice(&token[..width]);
        out.extend_from_slice(key);
        out
    }

    /// The row sort key of `key`, held inline (no allocation for a key of up to 48 bytes).
    pub fn sort_key(&self, key: &[u8]) -> SortKey {
        let (token, width) = self.token_prefix(key);
        let mut k = SortKey::with_capacity(width + key.len());
        k.extend_from_slice(&token[..width]);
        k.extend_from_slice(key);
        k
    }

    /// The bytes a row sort key starts with (the token's, in memcmp order), and how many.
    fn token_prefix(&self, key: &[u8]) -> ([u8; 16], usize) {
        let mut t = [0u8; 16];
        match self {
            Partitioner::OrderPreserving => (t, 0),
            Partitioner::Random => (random_token(key).to_be_bytes(), 16),
            Partitioner::Murmur3 => {
                t[..8].copy_from_slice(&((murmur3_token(key) as u64) ^ (1 << 63)).to_be_bytes());
                (t, 8)
            }
        }
    }

    /// The token part of a row sort key.
    pub fn token_part<'a>(&self, sort_key: &'a [u8]) -> &'a [u8] {
        let w = self
            .token_width()
            .unwrap_or(sort_key.len())
            .min(sort_key.len());
        &sort_key[..w]
    }

    /// The row key inside a row sort key.
    pub fn key_part<'a>(&self, sort_key: &'a [u8]) -> &'a [u8] {
        let w = self.token_width().unwrap_or(0).min(sort_key.len());
        &sort_key[w..]
    }

    fn token_width(&self) -> Option<usize> {
        match self {
            Partitioner::Random => Some(16),
            Partitioner::Murmur3 => Some(8),
            Partitioner::OrderPreserving => None,
        }
    }
}

/// A row key whose sort key is computed the first time it is needed. Hashing a key for its
/// token (RandomPartitioner's MD5) costs more than probing a bloom filter, so a point read of a
/// row that no memtable holds and every file's filter rules out never hashes it.
#[derive(Debug)]
pub struct RowKey<'a> {
    partitioner: Partitioner,
    key: &'a [u8],
    sort_key: OnceCell<SortKey>,
}

/// A row sort key held inline (a token and a key of up to 48 bytes need no allocation).
pub type SortKey = SmallVec<[u8; 64]>;

impl<'a> RowKey<'a> {
    /// The row `key` under `partitioner`.
    pub fn new(partitioner: Partitioner, key: &'a [u8]) -> Self {
        RowKey {
            partitioner,
            key,
            sort_key: OnceCell::new(),
        }
    }

    /// A row whose sort key is already known.
    pub fn with_sort_key(key: &'a [u8], sort_key: Vec<u8>) -> Self {
        RowKey {
            partitioner: Partitioner::OrderPreserving,
            key,
            sort_key: OnceCell::from(SortKey::from_vec(sort_key)),
        }
    }

    /// The key as the client gave it.
    pub fn key(&self) -> &'a [u8] {
        self.key
    }

    /// The row sort key (computed now if it was not yet).
    pub fn sort_key(&self) -> &[u8] {
        self.sort_key
            .get_or_init(|| self.partitioner.sort_key(self.key))
    }
}

/// RandomPartitioner's token: the absolute value of the MD5 digest read as a signed 128-bit
/// big-endian integer.
pub fn random_token(key: &[u8]) -> u128 {
    let digest: [u8; 16] = Md5::digest(key).into();
    i128::from_be_bytes(digest).unsigned_abs()
}

/// Murmur3Partitioner's token; `i64::MIN` is reserved, so a hash equal to it becomes `i64::MAX`,
/// and the empty key gets the minimum token.
pub fn murmur3_token(key: &[u8]) -> i64 {
    if key.is_empty() {
        return i64::MIN;
    }
    let t = hash3_x64_128(key, 0)[0] as i64;
    if t == i64::MIN {
        i64::MAX
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(from: u8, n: u8) -> Vec<u8> {
        (0..n).map(|i| from + i).collect()
    }

    /// The vectors of shared/reference/murmur3-vectors.md (from Cassandra drivers' test suites).
    #[test]
    fn murmur3_matches_cassandra_vectors() {
        let mut cases: Vec<(Vec<u8>, i64)> = vec![
            (b"123".to_vec(), -7468325962851647638),
            (
                [0x00, 0xff, 0x10, 0xfa, 0x99].repeat(10),
                5837342703291459765,
            ),
            (vec![0xfe; 8], -8927430733708461935),
            (vec![0x10; 8], 1446172840243228796),
            (b"9223372036854775807".to_vec(), 7162290910810015547),
            (vec![0x00; 16], 5457549051747178710),
            (vec![0xff; 16], -2824192546314762522),
            (vec![0xfe; 16], -833317529301936754),
            (
                [&[0, 1, 2, 3][..], &[0xff; 12]].concat(),
                6463632673159404390,
            ),
            (vec![0xfe; 17], -1672437813826982685),
            (vec![0xfe; 4], 4566408979886474012),
            (vec![0x00; 4], -3485513579396041028),
            (vec![0x00, 0x01, 0x7f, 0x7f], 6573459401642635627),
            (vec![0x00, 0xff, 0xff, 0xff], 123573637386978882),
            (vec![0xff, 0x01, 0x02, 0x03], -2839127690952877842),
            (vec![0xe2, 0xe7], -8582699461035929883),
            (
                vec![0xe2, 0xe7, 0xe2, 0xe7, 0xe2, 0xe7, 0x01],
                2222373981930033306,
            ),
        ];
        let runs = [
            -5563837382979743776,
            -1513403162740402161,
            -495360443712684655,
            1734091135765407943,
            -3199412112042527988,
            -6316563938475080831,
            8228893370679682632,
        ];
        for (i, t) in runs.into_iter().enumerate() {
            cases.push((seq(1 + i as u8, 16), t));
        }
        for (key, want) in cases {
            assert_eq!(murmur3_token(&key), want, "key {key:02x?}");
        }
        assert_eq!(murmur3_token(b""), i64::MIN);
    }

    /// Expected values computed independently with Python:
    /// `abs(int.from_bytes(hashlib.md5(k).digest(), 'big', signed=True))`.
    #[test]
    fn random_tokens_match_md5_abs() {
        // MD5("jsmith") has its top bit clear; MD5("key1") has it set, so abs() matters.
        assert_eq!(
            random_token(b"jsmith"),
            76838167865092648291202220064490649847
        );
        assert_eq!(
            random_token(b"key1"),
            81509516161424251288255223397843705139
        );
        assert_eq!(random_token(b"a"), 16955237001963240173058271559858726497);
    }

    #[test]
    fn class_names_resolve() {
        assert_eq!(
            Partitioner::from_class_name("org.apache.cassandra.dht.RandomPartitioner"),
            Some(Partitioner::Random)
        );
        assert_eq!(
            Partitioner::from_class_name("Murmur3Partitioner"),
            Some(Partitioner::Murmur3)
        );
        assert_eq!(Partitioner::from_class_name("Nope"), None);
    }

    #[test]
    fn row_sort_keys_order_by_token_then_key() {
        let p = Partitioner::Murmur3;
        let mut keys: Vec<&[u8]> = vec![b"a", b"b", b"c", b"d", b"e"];
        keys.sort_by_key(|k| p.row_sort_key(k));
        let tokens: Vec<i64> = keys.iter().map(|k| murmur3_token(k)).collect();
        assert!(tokens.windows(2).all(|w| w[0] <= w[1]), "{tokens:?}");
        let sk = p.row_sort_key(b"abc");
        assert_eq!(p.key_part(&sk), b"abc");
        assert_eq!(p.token_part(&sk).len(), 8);
        let opp = Partitioner::OrderPreserving;
        assert_eq!(opp.row_sort_key(b"abc"), b"abc");
        assert_eq!(opp.key_part(b"abc"), b"abc");
    }
}
