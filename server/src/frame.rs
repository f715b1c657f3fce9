//! The native protocol's frames (v3 and v4): the 9-byte header checked before a body is read
//! (direction, version, length bounded by the server's limit), LZ4 bodies, a v4 custom payload
//! skipped, and response frames encoded. It knows bytes, not what a request means
//! (`dispatch.rs`) nor the connection it came on (`connection.rs`).

use cassandra_protocol::frame::{Opcode, Version};

/// Length of a frame header (v3–v4).
pub const HEADER_LEN: usize = 9;

/// The longest answer body: a frame's length is an `int`, and a compressed body may grow.
const MAX_ANSWER: usize = (i32::MAX as usize) / 2;

const FLAG_COMPRESSION: u8 = 0x01;
const FLAG_CUSTOM_PAYLOAD: u8 = 0x04;

/// What a frame header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The protocol version, 3 or 4.
    pub version: Version,
    /// Its flags byte.
    pub flags: u8,
    /// The stream the answer must carry.
    pub stream: i16,
    /// The opcode byte (checked later: an unknown one is answered, the body skipped).
    pub opcode: u8,
    /// The body's length, within the server's limit.
    pub length: usize,
}

/// Why a frame cannot be taken. Each is answered with a protocol error; all but
/// `UnknownOpcode` and `Body` then close the connection, since the stream cannot be resynced.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FrameError {
    /// A version this server does not speak; drivers downgrade on this exact message.
    #[error("Invalid or unsupported protocol version ({0}); supported versions are (3/v3, 4/v4)")]
    Version(u8),
    /// The direction bit says response.
    #[error("a request frame has the response direction bit set (stream {0})")]
    Direction(i16),
    /// The length is negative or over the limit.
    #[error("frame of {length} bytes (stream {stream}) exceeds the limit of {limit} bytes")]
    TooLong {
        /// The stream.
        stream: i16,
        /// What the header claims.
        length: i64,
        /// The server's limit.
        limit: usize,
    },
    /// A negative stream id (those are the server's, for events).
    #[error("stream id {0} is negative: a client's streams are 0 and up")]
    Stream(i16),
    /// The opcode is not a request this server knows.
    #[error("unknown or unexpected opcode 0x{0:02x}")]
    UnknownOpcode(u8),
    /// The body does not decode.
    #[error("invalid frame body: {0}")]
    Body(String),
}

impl FrameError {
    /// Whether the connection can go on after this error is answered.
    pub fn recoverable(&self) -> bool {
        matches!(
            self,
            FrameError::UnknownOpcode(_) | FrameError::Body(_) | FrameError::Stream(_)
        )
    }
}

/// Checks a header; `limit` bounds the body's length.
pub fn parse_header(h: &[u8; HEADER_LEN], limit: usize) -> Result<Header, FrameError> {
    let stream = i16::from_be_bytes([h[2], h[3]]);
    if h[0] & 0x80 != 0 {
        return Err(FrameError::Direction(stream));
    }
    let version = match h[0] {
        3 => Version::V3,
        4 => Version::V4,
        v => return Err(FrameError::Version(v)),
    };
    let length = i32::from_be_bytes([h[5], h[6], h[7], h[8]]);
    if length < 0 || length as usize > limit {
        return Err(FrameError::TooLong {
            stream,
            length: length.into(),
            limit,
        });
    }
    Ok(Header {
        version,
        flags: h[1],
        stream,
        opcode: h[4],
        length: length as usize,
    })
}

/// A request from its header and body as read: the stream id checked, the body decompressed
/// and decoded. What a connection does with every frame, and what the `native_frame` fuzz
/// target drives.
pub fn decode_request(
    header: &Header,
    body: Vec<u8>,
    lz4: bool,
    limit: usize,
) -> Result<crate::request::Request, FrameError> {
    if header.stream < 0 {
        return Err(FrameError::Stream(header.stream));
    }
    if !matches!(
        header.opcode,
        0x01 | 0x05 | 0x07 | 0x09 | 0x0A | 0x0B | 0x0D | 0x0F
    ) {
        return Err(FrameError::UnknownOpcode(header.opcode));
    }
    let message = request_message(header, body, lz4, limit)?;
    crate::request::decode(header.opcode, &message, header.version >= Version::V4)
}

/// The message bytes of a request body: decompressed if the frame says so (LZ4 was
/// negotiated), a v4 custom payload skipped. `limit` bounds the decompressed size.
pub fn request_message(
    header: &Header,
    body: Vec<u8>,
    lz4: bool,
    limit: usize,
) -> Result<Vec<u8>, FrameError> {
    let mut body = if header.flags & FLAG_COMPRESSION != 0 {
        if !lz4 {
            return Err(FrameError::Body(
                "a compressed frame, but no compression was negotiated".into(),
            ));
        }
        decompress(&body, limit)?
    } else {
        body
    };
    if header.flags & FLAG_CUSTOM_PAYLOAD != 0 && header.version >= Version::V4 {
        let skip = custom_payload_len(&body)?;
        body.drain(..skip);
    }
    Ok(body)
}

/// What a compressed body says it decompresses to (the bytes a server must budget for).
pub fn claimed_uncompressed(header: &Header, body: &[u8], lz4: bool) -> Option<usize> {
    if !lz4 || header.flags & FLAG_COMPRESSION == 0 {
        return None;
    }
    let len = i32::from_be_bytes(*body.first_chunk::<4>()?);
    usize::try_from(len).ok()
}

/// LZ4 as the protocol carries it: the uncompressed length (big-endian `int`), then a block.
fn decompress(body: &[u8], limit: usize) -> Result<Vec<u8>, FrameError> {
    let Some((len, block)) = body.split_first_chunk::<4>() else {
        return Err(FrameError::Body(
            "a compressed body shorter than 4 bytes".into(),
        ));
    };
    let len = i32::from_be_bytes(*len);
    if len < 0 || len as usize > limit {
        return Err(FrameError::Body(format!(
            "a compressed body claims {len} bytes uncompressed (limit {limit})"
        )));
    }
    lz4_flex::block::decompress(block, len as usize)
        .map_err(|e| FrameError::Body(format!("LZ4: {e}")))
}

/// The protocol's LZ4 form of `body`.
pub fn compress(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() / 2 + 16);
    out.extend_from_slice(&(body.len() as i32).to_be_bytes());
    out.extend_from_slice(&lz4_flex::block::compress(body));
    out
}

/// The length of a `[bytes map]` at the start of `b`.
fn custom_payload_len(b: &[u8]) -> Result<usize, FrameError> {
    let bad = || FrameError::Body("truncated custom payload".into());
    let short = |at: usize| -> Result<usize, FrameError> {
        let s = b.get(at..at + 2).ok_or_else(bad)?;
        Ok(u16::from_be_bytes([s[0], s[1]]) as usize)
    };
    let n = short(0)?;
    let mut at = 2;
    for _ in 0..n {
        at += 2 + short(at)?;
        let l = b.get(at..at + 4).ok_or_else(bad)?;
        let l = i32::from_be_bytes([l[0], l[1], l[2], l[3]]);
        at += 4 + usize::try_from(l).unwrap_or(0);
        if at > b.len() {
            return Err(bad());
        }
    }
    Ok(at)
}

/// A response frame: `body` is the message, compressed when `lz4`.
pub fn response(version: Version, stream: i16, opcode: Opcode, body: &[u8], lz4: bool) -> Vec<u8> {
    framed(version, stream, opcode, body, lz4, 0)
}

/// A response to a traced request: the tracing flag set and the session's id before `body`.
pub fn traced_response(
    version: Version,
    stream: i16,
    opcode: Opcode,
    body: &[u8],
    lz4: bool,
    session: &[u8; 16],
) -> Vec<u8> {
    let mut with_id = Vec::with_capacity(16 + body.len());
    with_id.extend_from_slice(session);
    with_id.extend_from_slice(body);
    framed(
        version,
        stream,
        opcode,
        &with_id,
        lz4,
        crate::traced::FLAG_TRACING,
    )
}

fn framed(
    version: Version,
    stream: i16,
    opcode: Opcode,
    body: &[u8],
    lz4: bool,
    extra_flags: u8,
) -> Vec<u8> {
    // A frame's length is an `int`: an answer longer than that cannot be framed, and is
    // answered with an error the client can act on (page the query) instead of a length that
    // wraps into a corrupt stream.
    if body.len() > MAX_ANSWER {
        let e = crate::results::error(
            cassandra_protocol::frame::message_error::ErrorType::Invalid,
            format!(
                "the result is {} bytes, more than a frame can carry: page it (a smaller page size or LIMIT)",
                body.len()
            ),
            version,
        );
        return response(version, stream, Opcode::Error, &e, lz4);
    }
    let compressed;
    let (flags, body) = if lz4 && !body.is_empty() {
        compressed = compress(body);
        (FLAG_COMPRESSION, compressed.as_slice())
    } else {
        (0, body)
    };
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.push(u8::from(version) | 0x80);
    out.push(flags | extra_flags);
    out.extend_from_slice(&stream.to_be_bytes());
    out.push(u8::from(opcode));
    out.extend_from_slice(&(body.len() as i32).to_be_bytes());
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(version: u8, length: i32) -> [u8; HEADER_LEN] {
        let mut h = [version, 0, 0, 7, 0x07, 0, 0, 0, 0];
        h[5..].copy_from_slice(&length.to_be_bytes());
        h
    }

    #[test]
    fn a_header_is_checked_before_its_body() {
        let h = parse_header(&header(4, 10), 100).unwrap();
        assert_eq!((h.version, h.stream, h.length), (Version::V4, 7, 10));
        assert_eq!(
            parse_header(&header(5, 10), 100),
            Err(FrameError::Version(5))
        );
        assert!(matches!(
            parse_header(&header(4, 101), 100),
            Err(FrameError::TooLong { length: 101, .. })
        ));
        assert!(matches!(
            parse_header(&header(4, -1), 100),
            Err(FrameError::TooLong { length: -1, .. })
        ));
        assert_eq!(
            parse_header(&header(0x84, 1), 100),
            Err(FrameError::Direction(7))
        );
    }

    #[test]
    fn lz4_bodies_round_trip_and_bombs_are_refused() {
        let body = b"SELECT * FROM system.local".repeat(20);
        let h = Header {
            version: Version::V4,
            flags: FLAG_COMPRESSION,
            stream: 1,
            opcode: 7,
            length: 0,
        };
        let c = compress(&body);
        assert_eq!(request_message(&h, c.clone(), true, 1 << 20).unwrap(), body);
        assert!(request_message(&h, c.clone(), false, 1 << 20).is_err());
        assert!(request_message(&h, c, true, 100).is_err());
        assert!(request_message(&h, vec![0, 0], true, 100).is_err());
    }

    #[test]
    fn a_custom_payload_is_skipped_and_a_truncated_one_refused() {
        let h = Header {
            version: Version::V4,
            flags: FLAG_CUSTOM_PAYLOAD,
            stream: 1,
            opcode: 7,
            length: 0,
        };
        let mut b = vec![0, 1, 0, 1, b'k', 0, 0, 0, 2, 9, 9];
        b.extend_from_slice(b"rest");
        assert_eq!(request_message(&h, b, false, 100).unwrap(), b"rest");
        assert!(request_message(&h, vec![0, 1, 0, 9], false, 100).is_err());
        assert!(request_message(&h, vec![0, 1, 0, 0, 0x7f, 0, 0, 0], false, 100).is_err());
    }
}
