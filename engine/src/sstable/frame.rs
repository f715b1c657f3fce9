//! The framing every SSTable block shares, in both formats: lengths, compression, checksum.
//!
//! Layout in `engine/FORMAT.md`. Reading checks the checksum and bounds every length (against
//! the file, and the raw length against what the stored bytes can decompress to) before
//! allocating. What a data block holds is `block.rs`.

use crate::codec::{be32, checksum_ok};
use crate::error::{CorruptKind, FormatError};

/// Bytes of a block's framing before its stored bytes.
pub const FRAME_LEN: usize = 4 + 4 + 1 + 4;
/// LZ4 expands its input at most 255-fold: a raw length beyond that is impossible, so it can be
/// refused before allocating, whatever size values the writer was given.
const LZ4_MAX_RATIO: usize = 255;

const NONE: u8 = 0;
const LZ4: u8 = 1;

/// Frames `raw` as a block, compressed with LZ4 when `compress` and that saves space.
pub fn frame(raw: &[u8], compress: bool, out: &mut Vec<u8>) {
    let compressed = if compress {
        lz4_flex::block::compress(raw)
    } else {
        Vec::new()
    };
    let (kind, stored): (u8, &[u8]) = if compress && compressed.len() < raw.len() {
        (LZ4, &compressed)
    } else {
        (NONE, raw)
    };
    out.extend_from_slice(&(stored.len() as u32).to_be_bytes());
    out.extend_from_slice(&(raw.len() as u32).to_be_bytes());
    out.push(kind);
    let mut h = crc32fast::Hasher::new();
    h.update(&[kind]);
    h.update(stored);
    out.extend_from_slice(&h.finalize().to_be_bytes());
    out.extend_from_slice(stored);
}

/// The framed length of the block at the start of `bytes`.
pub fn framed_len(bytes: &[u8]) -> Result<usize, FormatError> {
    let truncated = || {
        FormatError::new(
            CorruptKind::Truncated,
            "block runs past the end of the file",
        )
    };
    if bytes.len() < FRAME_LEN {
        return Err(truncated());
    }
    let stored = be32(&bytes[0..4]) as usize;
    let total = FRAME_LEN.checked_add(stored).ok_or_else(truncated)?;
    if total > bytes.len() {
        return Err(truncated());
    }
    Ok(total)
}

/// Checks and decompresses the block at the start of `bytes`; returns its raw bytes.
pub fn unframe(bytes: &[u8]) -> Result<Vec<u8>, FormatError> {
    let total = framed_len(bytes)?;
    let raw_len = be32(&bytes[4..8]) as usize;
    let kind = bytes[8];
    let crc = be32(&bytes[9..13]);
    let stored = &bytes[FRAME_LEN..total];
    let mut h = crc32fast::Hasher::new();
    h.update(&[kind]);
    h.update(stored);
    if !checksum_ok(h.finalize(), crc) {
        return Err(FormatError::new(
            CorruptKind::Checksum,
            "block checksum mismatch",
        ));
    }
    if raw_len
        > stored
            .len()
            .saturating_mul(LZ4_MAX_RATIO)
            .saturating_add(16)
    {
        return Err(FormatError::malformed(format!(
            "raw length {raw_len} from {} stored bytes",
            stored.len()
        )));
    }
    match kind {
        NONE if stored.len() == raw_len => Ok(stored.to_vec()),
        NONE => Err(FormatError::malformed("uncompressed lengths differ")),
        LZ4 => {
            let raw = lz4_flex::block::decompress(stored, raw_len)
                .map_err(|e| FormatError::malformed(format!("lz4: {e}")))?;
            if raw.len() != raw_len {
                return Err(FormatError::malformed("decompressed length differs"));
            }
            Ok(raw)
        }
        k => Err(FormatError::malformed(format!("compression {k}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_roundtrip_and_every_flipped_byte_is_caught() {
        let raw: Vec<u8> = b"abcabcabcabcabcabcabcabcabcabcabcabc".to_vec();
        let mut f = Vec::new();
        frame(&raw, true, &mut f);
        assert!(
            f.len() < raw.len() + FRAME_LEN,
            "compressible data is compressed"
        );
        assert_eq!(unframe(&f).unwrap(), raw);
        for i in 0..f.len() {
            let mut d = f.clone();
            d[i] ^= 0x10;
            assert!(unframe(&d).is_err(), "byte {i}");
        }
        for n in 0..f.len() {
            assert!(unframe(&f[..n]).is_err());
        }
    }

    #[test]
    fn compression_off_stores_the_raw_bytes() {
        let raw: Vec<u8> = b"abcabcabcabcabcabcabcabcabcabcabcabc".to_vec();
        let mut f = Vec::new();
        frame(&raw, false, &mut f);
        assert_eq!(f.len(), raw.len() + FRAME_LEN);
        assert_eq!(f[8], NONE);
        assert_eq!(&f[FRAME_LEN..], &raw[..]);
        assert_eq!(unframe(&f).unwrap(), raw);
    }
}
