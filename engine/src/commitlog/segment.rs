//! Commit log segment files: naming, the header, record framing, and reading a segment back with
//! the distinction replay depends on — a torn tail (a record cut short by a crash) ends a segment
//! quietly, damage before the tail is an error naming the file and offset.
//!
//! Layout in `engine/FORMAT.md`. This file reads and frames bytes; it knows nothing of rows.

use std::path::{Path, PathBuf};

/// Segment file magic.
pub const MAGIC: &[u8; 8] = b"SCCOMLOG";
/// Segment format version.
pub const VERSION: u32 = 1;
/// Bytes of the segment header: magic, version, sequence number, checksum.
pub const HEADER_LEN: u64 = 8 + 4 + 8 + 4;
/// Bytes of a record's frame before its payload: length, length checksum, payload checksum.
pub const FRAME_LEN: u64 = 12;
/// The largest payload a record may have (a row mutation is bounded by the value limit).
pub const MAX_PAYLOAD: u64 = 1 << 31;

/// The file name of segment `seq`.
pub fn file_name(seq: u64) -> String {
    format!("CommitLog-{seq:020}.log")
}

/// The sequence number of a segment file name, if it is one.
pub fn parse_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("CommitLog-")?.strip_suffix(".log")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The segment header.
pub fn header(seq: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER_LEN as usize);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&VERSION.to_be_bytes());
    h.extend_from_slice(&seq.to_be_bytes());
    let crc = crc32fast::hash(&h);
    h.extend_from_slice(&crc.to_be_bytes());
    h
}

/// Frames a payload as one record.
#[cfg(test)]
pub fn frame(payload: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; FRAME_LEN as usize]);
    out.extend_from_slice(payload);
    frame_in_place(&mut out[start..]);
}

/// Fills in the frame of `record`: `FRAME_LEN` bytes of room, then the payload (at most
/// [`MAX_PAYLOAD`] bytes, which the caller checks).
pub fn frame_in_place(record: &mut [u8]) {
    let (head, payload) = record.split_at_mut(FRAME_LEN as usize);
    let len = (payload.len() as u32).to_be_bytes();
    head[0..4].copy_from_slice(&len);
    head[4..8].copy_from_slice(&crc32fast::hash(&len).to_be_bytes());
    head[8..12].copy_from_slice(&crc32fast::hash(payload).to_be_bytes());
}

/// One record found in a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordSpan {
    /// Offset of the record's frame.
    pub start: u64,
    /// Offset of its payload.
    pub payload: u64,
    /// Length of its payload.
    pub len: u64,
}

/// What reading a segment found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentContents {
    /// The segment's sequence number (from its header; `None` if the header itself was torn).
    pub seq: Option<u64>,
    /// The intact records, in order.
    pub records: Vec<RecordSpan>,
    /// Where a torn tail began, if the segment ends in one.
    pub torn_at: Option<u64>,
}

/// Damage before a segment's tail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} at offset {offset}: {reason}", .path.display())]
pub struct SegmentError {
    /// The segment file.
    pub path: PathBuf,
    /// Where the damage is.
    pub offset: u64,
    /// What is wrong.
    pub reason: String,
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Reads the records of a segment's bytes. Never panics and never allocates from a length read
/// from the file.
pub fn read(bytes: &[u8], path: &Path) -> Result<SegmentContents, SegmentError> {
    let err = |offset: u64, reason: String| SegmentError {
        path: path.to_path_buf(),
        offset,
        reason,
    };
    let total = bytes.len() as u64;
    if total < HEADER_LEN {
        // A crash right after the file was created: nothing was ever acknowledged from it.
        return Ok(SegmentContents {
            seq: None,
            records: Vec::new(),
            torn_at: Some(0),
        });
    }
    let h = &bytes[..HEADER_LEN as usize];
    if &h[..8] != MAGIC {
        return Err(err(
            0,
            "not a supercolumn commit log segment (bad magic)".into(),
        ));
    }
    if crc32fast::hash(&h[..20]) != be32(&h[20..24]) {
        return Err(err(0, "header checksum mismatch".into()));
    }
    let version = be32(&h[8..12]);
    if version != VERSION {
        return Err(err(
            8,
            format!("commit log format version {version}; this build reads version {VERSION}"),
        ));
    }
    let mut seq_bytes = [0u8; 8];
    seq_bytes.copy_from_slice(&h[12..20]);
    let seq = u64::from_be_bytes(seq_bytes);

    let mut records = Vec::new();
    let mut pos = HEADER_LEN;
    let torn = |at: u64, records: Vec<RecordSpan>| SegmentContents {
        seq: Some(seq),
        records,
        torn_at: Some(at),
    };
    loop {
        let rest = total - pos;
        if rest == 0 {
            return Ok(SegmentContents {
                seq: Some(seq),
                records,
                torn_at: None,
            });
        }
        let tail = &bytes[pos as usize..];
        if rest < FRAME_LEN {
            return Ok(torn(pos, records));
        }
        let len = u64::from(be32(&tail[0..4]));
        if crc32fast::hash(&tail[0..4]) != be32(&tail[4..8]) {
            if tail.iter().all(|b| *b == 0) {
                // Zeros where a frame would start: space the file system extended but a crash
                // left unwritten.
                return Ok(torn(pos, records));
            }
            return Err(err(pos, "record length checksum mismatch".into()));
        }
        if len == 0 || len > MAX_PAYLOAD {
            return Err(err(pos, format!("impossible record length {len}")));
        }
        if len > rest - FRAME_LEN {
            return Ok(torn(pos, records));
        }
        let payload = &tail[FRAME_LEN as usize..(FRAME_LEN + len) as usize];
        if crc32fast::hash(payload) != be32(&tail[8..12]) {
            if pos + FRAME_LEN + len == total {
                // The last record, length written but contents not all durable.
                return Ok(torn(pos, records));
            }
            return Err(err(pos, "record checksum mismatch".into()));
        }
        records.push(RecordSpan {
            start: pos,
            payload: pos + FRAME_LEN,
            len,
        });
        pos += FRAME_LEN + len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(payloads: &[&[u8]]) -> Vec<u8> {
        let mut b = header(7);
        for p in payloads {
            frame(p, &mut b);
        }
        b
    }

    #[test]
    fn names_roundtrip_and_sort() {
        assert_eq!(parse_file_name(&file_name(42)), Some(42));
        assert!(file_name(9) < file_name(10));
        assert_eq!(parse_file_name("CommitLog-.log"), None);
        assert_eq!(parse_file_name("CommitLog-12.log.tmp"), None);
    }

    #[test]
    fn every_cut_is_a_quiet_torn_tail_keeping_whole_records() {
        let b = segment(&[b"one", b"second record", b"3"]);
        let full = read(&b, Path::new("s")).unwrap();
        assert_eq!(full.records.len(), 3);
        assert_eq!(full.torn_at, None);
        for cut in 0..b.len() {
            let c = read(&b[..cut], Path::new("s")).unwrap();
            let whole = full
                .records
                .iter()
                .filter(|r| r.payload + r.len <= cut as u64)
                .count();
            assert_eq!(c.records.len(), whole, "cut at {cut}");
            let clean = cut as u64 == HEADER_LEN
                || full.records.iter().any(|r| r.payload + r.len == cut as u64);
            assert_eq!(c.torn_at.is_none(), clean, "cut at {cut}");
        }
    }

    #[test]
    fn damage_before_the_tail_is_an_error_with_the_offset() {
        let b = segment(&[b"one", b"two", b"three"]);
        let recs = read(&b, Path::new("s")).unwrap().records;
        for i in HEADER_LEN as usize..(recs[2].start as usize) {
            let mut d = b.clone();
            d[i] ^= 0x20;
            let e = read(&d, Path::new("seg")).unwrap_err();
            assert!(e.offset <= i as u64, "byte {i}: {e}");
            assert!(e.to_string().starts_with("seg at offset"), "{e}");
        }
        // In the header too.
        for i in 0..HEADER_LEN as usize {
            let mut d = b.clone();
            d[i] ^= 0x01;
            assert!(read(&d, Path::new("s")).is_err(), "header byte {i}");
        }
    }

    #[test]
    fn a_damaged_last_record_is_a_torn_tail() {
        let mut b = segment(&[b"one", b"two"]);
        let last = b.len() - 1;
        b[last] ^= 1;
        let c = read(&b, Path::new("s")).unwrap();
        assert_eq!(c.records.len(), 1);
        assert!(c.torn_at.is_some());
    }

    #[test]
    fn zero_fill_after_the_last_record_is_a_torn_tail() {
        let mut b = segment(&[b"one"]);
        b.extend_from_slice(&[0; 100]);
        let c = read(&b, Path::new("s")).unwrap();
        assert_eq!(c.records.len(), 1);
        assert!(c.torn_at.is_some());
    }
}
