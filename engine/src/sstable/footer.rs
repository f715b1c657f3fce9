//! The SSTable file header and footer: magic numbers, the format version, where the index and
//! the bloom filter are, and summary counts. Layout in `engine/FORMAT.md`.

use crate::codec::{be32, be64, check_magic_version, checksum_ok};
use crate::error::{CorruptKind, FormatError, Place};
use crate::model::partitioner::Partitioner;

/// Magic at the start of every SSTable.
pub const HEADER_MAGIC: &[u8; 8] = b"SCSSTABL";
/// Magic at the end of every SSTable.
pub const FOOTER_MAGIC: &[u8; 8] = b"SCSSTEND";
/// The SSTable format version this build writes.
pub const VERSION: u32 = 3;
/// The oldest version this build reads.
pub const OLDEST_READABLE: u32 = 1;
/// Bytes of the file header.
pub const HEADER_LEN: u64 = 12;
/// Bytes of a format 3 footer (the longest).
pub const FOOTER_LEN: u64 = 82;
/// Bytes of a format 2 footer (no flags byte).
const FOOTER_LEN_V2: u64 = 81;
/// Bytes of a format 1 footer (no partitioner byte).
const FOOTER_LEN_V1: u64 = 80;
/// Bytes of the shortest footer of any readable version.
pub const MIN_FOOTER_LEN: u64 = FOOTER_LEN_V1;

/// The footer's code for a partitioner.
fn partitioner_code(p: Partitioner) -> u8 {
    match p {
        Partitioner::Random => 1,
        Partitioner::Murmur3 => 2,
        Partitioner::OrderPreserving => 3,
    }
}

/// The file header.
pub fn header() -> Vec<u8> {
    let mut h = HEADER_MAGIC.to_vec();
    h.extend_from_slice(&VERSION.to_be_bytes());
    h
}

/// The footer's contents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footer {
    /// Offset of the index block.
    pub index_offset: u64,
    /// Length of the index block.
    pub index_len: u64,
    /// Offset of the bloom block.
    pub bloom_offset: u64,
    /// Length of the bloom block.
    pub bloom_len: u64,
    /// Rows in the file.
    pub rows: u64,
    /// Entries in the file.
    pub entries: u64,
    /// Smallest timestamp of any entry or deletion.
    pub min_timestamp: i64,
    /// Largest timestamp of any entry or deletion.
    pub max_timestamp: i64,
    /// The format version.
    pub version: u32,
    /// The partitioner the rows are ordered by (format 2 records it; format 1 did not).
    pub partitioner: Option<Partitioner>,
    /// Whether the file holds a prefix deletion (format 3; earlier formats could not).
    pub prefix_deletions: bool,
    /// Whether the file holds a range deletion (flag bit 1: a reader that knows no such bit
    /// refuses the file rather than read rows without their range deletions).
    pub range_deletions: bool,
}

/// Flag bits of the format 3 footer.
const FLAG_PREFIX_DELETIONS: u8 = 0x01;
const FLAG_RANGE_DELETIONS: u8 = 0x02;

impl Footer {
    /// The footer's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut f = Vec::with_capacity(FOOTER_LEN as usize);
        for v in [
            self.index_offset,
            self.index_len,
            self.bloom_offset,
            self.bloom_len,
            self.rows,
            self.entries,
            self.min_timestamp as u64,
            self.max_timestamp as u64,
        ] {
            f.extend_from_slice(&v.to_be_bytes());
        }
        f.push(self.partitioner.map_or(0, partitioner_code));
        let mut flags = 0;
        if self.prefix_deletions {
            flags |= FLAG_PREFIX_DELETIONS;
        }
        if self.range_deletions {
            flags |= FLAG_RANGE_DELETIONS;
        }
        f.push(flags);
        f.extend_from_slice(&VERSION.to_be_bytes());
        f.extend_from_slice(FOOTER_MAGIC);
        let crc = crc32fast::hash(&f);
        f.extend_from_slice(&crc.to_be_bytes());
        f
    }

    /// Reads and checks the header (the file's first bytes) and footer (at least its last
    /// [`FOOTER_LEN`] bytes) of a file of `len` bytes.
    // Long because it checks the header's and the footer's fields in the order FORMAT.md lays them
    // out, each check naming what it found.
    pub fn decode(head: &[u8], tail: &[u8], len: u64) -> Result<Footer, FormatError> {
        let version =
            check_magic_version(head, HEADER_MAGIC, OLDEST_READABLE..=VERSION, "SSTable")?;
        let footer_len = match version {
            1 => FOOTER_LEN_V1,
            2 => FOOTER_LEN_V2,
            _ => FOOTER_LEN,
        };
        if len < HEADER_LEN + footer_len || (tail.len() as u64) < footer_len {
            return Err(FormatError::new(
                CorruptKind::Truncated,
                format!("{len} bytes is too short for an SSTable"),
            ));
        }
        let at = len - footer_len;
        let f = &tail[tail.len() - footer_len as usize..];
        let n = f.len();
        let fault = |kind, reason: &str| FormatError::new(kind, reason).at(Place::Offset(at));
        // 8 × u64 | [partitioner u8] | [flags u8] | version u32 | magic (8) | CRC32 of the bytes before it.
        if &f[n - 12..n - 4] != FOOTER_MAGIC {
            return Err(fault(
                CorruptKind::BadMagic,
                "footer magic missing (truncated file?)",
            ));
        }
        if !checksum_ok(crc32fast::hash(&f[..n - 4]), be32(&f[n - 4..])) {
            return Err(fault(CorruptKind::Checksum, "footer checksum mismatch"));
        }
        let footer_version = be32(&f[n - 16..]);
        if footer_version != version {
            return Err(fault(
                CorruptKind::UnknownVersion,
                &format!("footer says format version {footer_version}, the header {version}"),
            ));
        }
        let partitioner = if version == 1 {
            None
        } else {
            Some(match f[64] {
                1 => Partitioner::Random,
                2 => Partitioner::Murmur3,
                3 => Partitioner::OrderPreserving,
                p => {
                    return Err(fault(
                        CorruptKind::Malformed,
                        &format!("partitioner code {p}"),
                    ))
                }
            })
        };
        let flags = if version >= 3 { f[65] } else { 0 };
        if flags & !(FLAG_PREFIX_DELETIONS | FLAG_RANGE_DELETIONS) != 0 {
            return Err(fault(
                CorruptKind::Malformed,
                &format!("unknown footer flags {flags:#04x}"),
            ));
        }
        let v = |i: usize| be64(&f[i * 8..]);
        let footer = Footer {
            index_offset: v(0),
            index_len: v(1),
            bloom_offset: v(2),
            bloom_len: v(3),
            rows: v(4),
            entries: v(5),
            min_timestamp: v(6) as i64,
            max_timestamp: v(7) as i64,
            version,
            partitioner,
            prefix_deletions: flags & FLAG_PREFIX_DELETIONS != 0,
            range_deletions: flags & FLAG_RANGE_DELETIONS != 0,
        };
        let data_end = len - footer_len;
        let index_end = footer.index_offset.checked_add(footer.index_len);
        let bloom_end = footer.bloom_offset.checked_add(footer.bloom_len);
        if footer.index_offset < HEADER_LEN
            || index_end != Some(footer.bloom_offset)
            || bloom_end != Some(data_end)
        {
            return Err(fault(
                CorruptKind::Malformed,
                "footer offsets do not describe the file",
            ));
        }
        Ok(footer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn footer(flags: bool) -> Footer {
        Footer {
            index_offset: HEADER_LEN,
            index_len: 10,
            bloom_offset: HEADER_LEN + 10,
            bloom_len: 5,
            rows: 1,
            entries: 2,
            min_timestamp: -3,
            max_timestamp: 9,
            version: VERSION,
            partitioner: Some(Partitioner::Murmur3),
            prefix_deletions: flags,
            range_deletions: flags,
        }
    }

    fn file(head_version: u32, tail: &[u8]) -> (Vec<u8>, Vec<u8>, u64) {
        let mut head = HEADER_MAGIC.to_vec();
        head.extend_from_slice(&head_version.to_be_bytes());
        (head, tail.to_vec(), HEADER_LEN + 15 + tail.len() as u64)
    }

    #[test]
    fn the_flags_byte_round_trips_and_unknown_flags_are_refused() {
        for flag in [false, true] {
            let f = footer(flag);
            let (head, tail, len) = file(VERSION, &f.encode());
            assert_eq!(Footer::decode(&head, &tail, len).unwrap(), f);
        }
        let only_ranges = Footer {
            prefix_deletions: false,
            ..footer(true)
        };
        let (head, tail, len) = file(VERSION, &only_ranges.encode());
        assert_eq!(Footer::decode(&head, &tail, len).unwrap(), only_ranges);
        let mut bytes = footer(false).encode();
        bytes[65] = 0x04;
        let n = bytes.len();
        let crc = crc32fast::hash(&bytes[..n - 4]);
        bytes[n - 4..].copy_from_slice(&crc.to_be_bytes());
        let (head, tail, len) = file(VERSION, &bytes);
        let e = Footer::decode(&head, &tail, len).unwrap_err();
        assert!(e.to_string().contains("unknown footer flags"), "{e}");
    }

    #[test]
    fn a_version_2_footer_still_reads_and_holds_no_prefix_deletion() {
        // Version 2's layout: the version 3 footer without its flags byte.
        let mut bytes = footer(false).encode();
        bytes.remove(65);
        let n = bytes.len();
        bytes[n - 16..n - 12].copy_from_slice(&2u32.to_be_bytes());
        let crc = crc32fast::hash(&bytes[..n - 4]);
        bytes[n - 4..].copy_from_slice(&crc.to_be_bytes());
        let (head, tail, len) = file(2, &bytes);
        let got = Footer::decode(&head, &tail, len).unwrap();
        assert_eq!(got.version, 2);
        assert!(!got.prefix_deletions);
        assert_eq!(got.rows, 1);
    }
}
