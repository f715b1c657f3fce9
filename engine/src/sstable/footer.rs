//! The SSTable file header and footer: magic numbers, the format version, where the index and
//! the bloom filter are, and summary counts. Layout in `engine/FORMAT.md`.

use crate::codec::{be32, be64, check_magic_version};
use crate::error::{CorruptKind, FormatError, Place};

/// Magic at the start of every SSTable.
pub const HEADER_MAGIC: &[u8; 8] = b"SCSSTABL";
/// Magic at the end of every SSTable.
pub const FOOTER_MAGIC: &[u8; 8] = b"SCSSTEND";
/// The SSTable format version this build writes and reads.
pub const VERSION: u32 = 1;
/// Bytes of the file header.
pub const HEADER_LEN: u64 = 12;
/// Bytes of the footer.
pub const FOOTER_LEN: u64 = 80;

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
}

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
        f.extend_from_slice(&VERSION.to_be_bytes());
        f.extend_from_slice(FOOTER_MAGIC);
        let crc = crc32fast::hash(&f);
        f.extend_from_slice(&crc.to_be_bytes());
        f
    }

    /// Reads and checks the header (the file's first bytes) and footer (its last
    /// [`FOOTER_LEN`] bytes) of a file of `len` bytes.
    pub fn decode(head: &[u8], tail: &[u8], len: u64) -> Result<Footer, FormatError> {
        check_magic_version(head, HEADER_MAGIC, VERSION..=VERSION, "SSTable")?;
        if len < HEADER_LEN + FOOTER_LEN || tail.len() as u64 != FOOTER_LEN {
            return Err(FormatError::new(
                CorruptKind::Truncated,
                format!("{len} bytes is too short for an SSTable"),
            ));
        }
        let at = len - FOOTER_LEN;
        let f = tail;
        let fault = |kind, reason: &str| FormatError::new(kind, reason).at(Place::Offset(at));
        // 8 × u64 | version u32 | magic (8) | CRC32 of the 76 bytes before it.
        if &f[68..76] != FOOTER_MAGIC {
            return Err(fault(
                CorruptKind::BadMagic,
                "footer magic missing (truncated file?)",
            ));
        }
        if crc32fast::hash(&f[..76]) != be32(&f[76..]) {
            return Err(fault(CorruptKind::Checksum, "footer checksum mismatch"));
        }
        let footer_version = be32(&f[64..]);
        if footer_version != VERSION {
            return Err(fault(
                CorruptKind::UnknownVersion,
                &format!("footer says format version {footer_version}"),
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
        };
        let data_end = len - FOOTER_LEN;
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
