//! Commit log segment files: the header, record framing, the end-of-segment marker, and reading
//! a segment back. Reading reports what it found — intact records, a clean end, a torn tail, or
//! damage — and leaves judging it to replay, which knows whether the segment is the newest
//! (where a torn tail is a crash's normal leftover) or an older one (where it is lost data).
//!
//! Layout in `engine/FORMAT.md`. This file reads and frames bytes; it knows nothing of rows.

use crate::codec::{be32, be64, check_magic_version, checksum_ok};
use crate::error::{CorruptKind, FormatError, Place};

/// Segment file magic.
pub const MAGIC: &[u8; 8] = b"SCCOMLOG";
/// The segment format version this build writes; it reads 1 and 2 too. Version 3 differs from
/// 2 only in its records' payloads (varint lengths, `commitlog/record.rs`).
pub const VERSION: u32 = 3;
/// Bytes of a version 2 or 3 header: magic, version, sequence number, the previous segment's end,
/// checksum.
pub const HEADER_LEN: u64 = 8 + 4 + 8 + 8 + 4;
/// Bytes of a version 1 header (no previous segment's end).
const HEADER_LEN_V1: u64 = 8 + 4 + 8 + 4;
/// Bytes of a record's frame before its payload: length, length checksum, payload checksum.
pub const FRAME_LEN: u64 = 12;
/// The largest payload a record may have (a row mutation is bounded by the value limit).
pub const MAX_PAYLOAD: u64 = 1 << 31;

/// The header of segment `seq`, whose predecessor (`seq - 1`) held `prev_end` bytes of intact
/// records when this one was started (0: there was none).
pub fn header(seq: u64, prev_end: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER_LEN as usize);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&VERSION.to_be_bytes());
    h.extend_from_slice(&seq.to_be_bytes());
    h.extend_from_slice(&prev_end.to_be_bytes());
    let crc = crc32fast::hash(&h);
    h.extend_from_slice(&crc.to_be_bytes());
    h
}

/// The third word of the end marker's frame: tells a marker from any record's frame.
fn end_marker_check(seq: u64) -> u32 {
    let mut b = *b"END-OF-SEGMENT\0\0\0\0\0\0\0\0";
    b[14..].copy_from_slice(&seq.to_be_bytes());
    crc32fast::hash(&b)
}

/// The marker that closes segment `seq`: the log goes on in `seq + 1`. A frame of length 0,
/// which no record has.
pub fn end_marker(seq: u64) -> [u8; FRAME_LEN as usize] {
    let mut m = [0u8; FRAME_LEN as usize];
    m[4..8].copy_from_slice(&crc32fast::hash(&[0u8; 4]).to_be_bytes());
    m[8..12].copy_from_slice(&end_marker_check(seq).to_be_bytes());
    m
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

impl RecordSpan {
    /// The offset just past the record.
    pub fn end(&self) -> u64 {
        self.payload + self.len
    }
}

/// The header of a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Format version.
    pub version: u32,
    /// Sequence number.
    pub seq: u64,
    /// How many bytes of intact records the previous segment held when this one started
    /// (version 2; 0 when there was no previous segment).
    pub prev_end: Option<u64>,
}

/// How reading a segment ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// At the end-of-segment marker (at this offset): the log goes on in the next segment.
    Closed(u64),
    /// At the end of the file, after the last intact record, without a marker.
    Open,
    /// In a torn tail starting at this offset: a record cut short, zeros, or a last record whose
    /// contents fail their checksum — what a crash mid-append leaves.
    Torn(u64),
    /// At damage no crash explains (a bad length checksum, an impossible length, a bad
    /// checksum with more records after it, bytes after the marker).
    Damaged(FormatError),
}

/// What reading a segment found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentContents {
    /// The header, or `None` if the file is shorter than one (a crash right after creating it).
    pub header: Option<Header>,
    /// The intact records before the ending, in order.
    pub records: Vec<RecordSpan>,
    /// How reading ended.
    pub ending: Ending,
}

impl SegmentContents {
    /// The offset just past the last intact record (the header's end if there is none).
    pub fn valid_end(&self) -> u64 {
        self.records.last().map_or_else(
            || match self.header {
                Some(h) if h.version == 1 => HEADER_LEN_V1,
                Some(_) => HEADER_LEN,
                None => 0,
            },
            RecordSpan::end,
        )
    }
}

/// Reads the header of a segment: `Ok(None)` if the file is too short to hold one (torn), an
/// error if it is damaged or of an unknown version.
fn read_header(bytes: &[u8]) -> Result<Option<Header>, FormatError> {
    if bytes.len() < 12 {
        return Ok(None);
    }
    let version = check_magic_version(bytes, MAGIC, 1..=VERSION, "commit log segment")?;
    let len = if version == 1 {
        HEADER_LEN_V1
    } else {
        HEADER_LEN
    } as usize;
    if bytes.len() < len {
        return Ok(None);
    }
    if !checksum_ok(
        crc32fast::hash(&bytes[..len - 4]),
        be32(&bytes[len - 4..len]),
    ) {
        return Err(
            FormatError::new(CorruptKind::Checksum, "header checksum mismatch")
                .at(Place::Offset(0)),
        );
    }
    Ok(Some(Header {
        version,
        seq: be64(&bytes[12..20]),
        prev_end: (version >= 2).then(|| be64(&bytes[20..28])),
    }))
}

/// Reads the records of a segment's bytes. Never panics and never allocates from a length read
/// from the file.
// Long because it reads a segment record by record, each check naming what it found, and never
// allocates from a length it read.
pub fn read(bytes: &[u8]) -> SegmentContents {
    let err = |kind: CorruptKind, offset: u64, reason: &str| {
        FormatError::new(kind, reason).at(Place::Offset(offset))
    };
    let header = match read_header(bytes) {
        Ok(Some(h)) => h,
        Ok(None) => {
            return SegmentContents {
                header: None,
                records: Vec::new(),
                ending: Ending::Torn(0),
            }
        }
        Err(e) => {
            return SegmentContents {
                header: None,
                records: Vec::new(),
                ending: Ending::Damaged(e),
            }
        }
    };
    let total = bytes.len() as u64;
    let mut records = Vec::new();
    let mut pos = if header.version == 1 {
        HEADER_LEN_V1
    } else {
        HEADER_LEN
    };
    let ending = loop {
        let rest = total - pos;
        if rest == 0 {
            break Ending::Open;
        }
        let tail = &bytes[pos as usize..];
        if rest < FRAME_LEN {
            break Ending::Torn(pos);
        }
        let len = u64::from(be32(&tail[0..4]));
        if !checksum_ok(crc32fast::hash(&tail[0..4]), be32(&tail[4..8])) {
            if !intact_frame_after(bytes, pos, &header) {
                // Zeros where a frame would start (space the file grew by that a crash left
                // unwritten), or a last append cut short: nothing intact follows.
                break Ending::Torn(pos);
            }
            break Ending::Damaged(err(
                CorruptKind::Checksum,
                pos,
                "record length checksum mismatch",
            ));
        }
        if len == 0 && header.version >= 2 && be32(&tail[8..12]) == end_marker_check(header.seq) {
            let after = &tail[FRAME_LEN as usize..];
            if after.iter().any(|b| *b != 0) {
                break Ending::Damaged(err(
                    CorruptKind::Malformed,
                    pos + FRAME_LEN,
                    "bytes after the end-of-segment marker",
                ));
            }
            break Ending::Closed(pos);
        }
        if len == 0 || len > MAX_PAYLOAD {
            break Ending::Damaged(err(
                CorruptKind::Malformed,
                pos,
                &format!("impossible record length {len}"),
            ));
        }
        if len > rest - FRAME_LEN {
            break Ending::Torn(pos);
        }
        let payload = &tail[FRAME_LEN as usize..(FRAME_LEN + len) as usize];
        if !checksum_ok(crc32fast::hash(payload), be32(&tail[8..12])) {
            if !intact_frame_after(bytes, pos, &header) {
                // The last record, length written but contents not all durable.
                break Ending::Torn(pos);
            }
            break Ending::Damaged(err(CorruptKind::Checksum, pos, "record checksum mismatch"));
        }
        records.push(RecordSpan {
            start: pos,
            payload: pos + FRAME_LEN,
            len,
        });
        pos += FRAME_LEN + len;
    };
    SegmentContents {
        header: Some(header),
        records,
        ending,
    }
}

/// Whether an intact frame (a record whose checksums hold, or this segment's end marker) starts
/// anywhere after `from`. Damage with one after it lost records; damage with none after it is
/// the tail a crash cut: a prefix of an append (its frame or payload cut anywhere), then zeros
/// or the end of the file.
fn intact_frame_after(bytes: &[u8], from: u64, header: &Header) -> bool {
    let frame = FRAME_LEN as usize;
    let total = bytes.len();
    let mut q = from as usize + 1;
    while q + frame <= total {
        let t = &bytes[q..];
        if t[..8].iter().all(|&b| b == 0) {
            // A frame's first 8 bytes are never all zero (a zero length's checksum is not
            // zero): the next candidate starts at most 7 bytes before the next nonzero byte.
            match t[8..].iter().position(|&b| b != 0) {
                Some(z) => q += (z + 8).saturating_sub(7).max(1),
                None => return false,
            }
            continue;
        }
        let len = u64::from(be32(&t[0..4]));
        if checksum_ok(crc32fast::hash(&t[0..4]), be32(&t[4..8])) {
            let intact = if len == 0 {
                header.version >= 2 && be32(&t[8..12]) == end_marker_check(header.seq)
            } else {
                len <= MAX_PAYLOAD
                    && (q + frame) as u64 + len <= total as u64
                    && checksum_ok(
                        crc32fast::hash(&t[frame..frame + len as usize]),
                        be32(&t[8..12]),
                    )
            };
            if intact {
                return true;
            }
        }
        q += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(payloads: &[&[u8]]) -> Vec<u8> {
        let mut b = header(7, 0);
        for p in payloads {
            frame(p, &mut b);
        }
        b
    }

    #[test]
    fn every_cut_keeps_the_whole_records_before_it() {
        let b = segment(&[b"one", b"second record", b"3"]);
        let full = read(&b);
        assert_eq!(full.records.len(), 3);
        assert_eq!(full.ending, Ending::Open);
        for cut in 0..b.len() {
            let c = read(&b[..cut]);
            let whole = full
                .records
                .iter()
                .filter(|r| r.end() <= cut as u64)
                .count();
            assert_eq!(c.records.len(), whole, "cut at {cut}");
            let clean =
                cut as u64 == HEADER_LEN || full.records.iter().any(|r| r.end() == cut as u64);
            assert_eq!(c.ending == Ending::Open, clean, "cut at {cut}");
            assert!(!matches!(c.ending, Ending::Damaged(_)), "cut at {cut}");
        }
    }

    #[test]
    fn damage_before_the_tail_is_reported_with_the_offset() {
        let b = segment(&[b"one", b"two", b"three"]);
        let recs = read(&b).records;
        for i in HEADER_LEN as usize..(recs[2].start as usize) {
            let mut d = b.clone();
            d[i] ^= 0x20;
            let Ending::Damaged(e) = read(&d).ending else {
                panic!("byte {i} not reported");
            };
            assert!(
                matches!(e.place, Place::Offset(o) if o <= i as u64),
                "byte {i}: {e}"
            );
        }
        for i in 0..HEADER_LEN as usize {
            let mut d = b.clone();
            d[i] ^= 0x01;
            assert!(
                matches!(read(&d).ending, Ending::Damaged(_)),
                "header byte {i}"
            );
        }
    }

    #[test]
    fn a_damaged_last_record_is_a_torn_tail() {
        let mut b = segment(&[b"one", b"two"]);
        let last = b.len() - 1;
        b[last] ^= 1;
        let c = read(&b);
        assert_eq!(c.records.len(), 1);
        assert!(matches!(c.ending, Ending::Torn(_)));
    }

    #[test]
    fn a_torn_append_of_any_shape_is_a_torn_tail_and_damage_before_a_record_is_not() {
        let b = segment(&[b"one", b"second record, a longer one", b"3"]);
        let recs = read(&b).records;
        let (from, to) = (recs[1].start as usize, b.len());
        // The last two records appended in one copy that was cut: a prefix of their bytes,
        // then the zeros the file grew by.
        for keep in 0..(to - from) {
            let mut d = b[..from + keep].to_vec();
            d.extend_from_slice(&[0; 4096]);
            let c = read(&d);
            assert!(matches!(c.ending, Ending::Torn(_)), "kept {keep}");
            let whole = recs
                .iter()
                .filter(|r| r.end() <= (from + keep) as u64)
                .count();
            assert_eq!(c.records.len(), whole, "kept {keep}");
        }
        // Zeros over a record with an intact one after it lose that record: damage.
        let mut d = b.clone();
        d[from..recs[2].start as usize].fill(0);
        assert!(matches!(read(&d).ending, Ending::Damaged(_)));
    }

    #[test]
    fn zero_fill_after_the_last_record_is_a_torn_tail() {
        let mut b = segment(&[b"one"]);
        b.extend_from_slice(&[0; 100]);
        let c = read(&b);
        assert_eq!(c.records.len(), 1);
        assert!(matches!(c.ending, Ending::Torn(_)));
    }

    #[test]
    fn the_end_marker_closes_a_segment_and_is_told_from_records() {
        let mut b = segment(&[b"one", b"two"]);
        let end = b.len() as u64;
        b.extend_from_slice(&end_marker(7));
        let c = read(&b);
        assert_eq!(
            (c.records.len(), c.ending.clone()),
            (2, Ending::Closed(end))
        );
        assert_eq!(c.valid_end(), end);
        // A marker for another segment is not one for this.
        let mut other = segment(&[b"one"]);
        other.extend_from_slice(&end_marker(8));
        assert!(matches!(read(&other).ending, Ending::Damaged(_)));
        // Anything but zeros after the marker is damage.
        b.push(1);
        assert!(matches!(read(&b).ending, Ending::Damaged(_)));
    }

    #[test]
    fn version_1_segments_are_read() {
        let mut b = Vec::new();
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&1u32.to_be_bytes());
        b.extend_from_slice(&5u64.to_be_bytes());
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_be_bytes());
        frame(b"old", &mut b);
        let c = read(&b);
        assert_eq!(
            c.header,
            Some(Header {
                version: 1,
                seq: 5,
                prev_end: None
            })
        );
        assert_eq!(c.records.len(), 1);
        assert_eq!(c.ending, Ending::Open);
    }
}
