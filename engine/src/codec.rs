//! Bounded big-endian encoding helpers for the engine's own file formats.
//!
//! [`Reader`] never trusts a length: every read checks it against the bytes that remain before
//! anything is allocated, and reports the offset of the fault. Formats themselves are described
//! in `engine/FORMAT.md`; this file only moves bytes.

use crate::error::{CorruptKind, FormatError, Place};

/// Whether a computed checksum matches the stored one. Built for fuzzing (`cfg(fuzzing)`, which
/// cargo-fuzz sets), every checksum passes, so mutated inputs reach the decoders behind them
/// instead of stopping at the first CRC; every other build checks.
#[inline]
pub fn checksum_ok(computed: u32, stored: u32) -> bool {
    computed == stored || cfg!(fuzzing)
}
/// A big-endian `u32` from the first 4 bytes of `b` (the caller has checked there are 4).
pub fn be32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_be_bytes(a)
}

/// A big-endian `u64` from the first 8 bytes of `b` (the caller has checked there are 8).
pub fn be64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
}

/// Checks that `bytes` start with `magic` and a big-endian version in `versions`, as every
/// file of the engine does; returns the version. `what` names the format in errors.
pub fn check_magic_version(
    bytes: &[u8],
    magic: &[u8; 8],
    versions: std::ops::RangeInclusive<u32>,
    what: &str,
) -> Result<u32, FormatError> {
    if bytes.len() < 8 || &bytes[..8] != magic {
        return Err(FormatError::new(
            if bytes.len() < 8 {
                CorruptKind::Truncated
            } else {
                CorruptKind::BadMagic
            },
            format!("not a supercolumn {what} (bad magic)"),
        ));
    }
    if bytes.len() < 12 {
        return Err(FormatError::new(
            CorruptKind::Truncated,
            format!("a {what} cut short in its header"),
        )
        .at(Place::Offset(8)));
    }
    let version = be32(&bytes[8..12]);
    if !versions.contains(&version) {
        return Err(FormatError::new(
            CorruptKind::UnknownVersion,
            format!(
                "{what} format version {version}; this build reads versions {} to {}",
                versions.start(),
                versions.end()
            ),
        )
        .at(Place::Offset(8)));
    }
    Ok(version)
}

/// Appends encoded values to a buffer.
#[derive(Debug, Default)]
pub struct Writer {
    /// The bytes written so far.
    pub buf: Vec<u8>,
}

impl Writer {
    /// A `u8`.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    /// A big-endian `u32`.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    /// A big-endian `u64`.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    /// An `f64` by its bits.
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    /// Bytes with a `u32` length.
    pub fn bytes(&mut self, v: &[u8]) {
        self.u32(u32::try_from(v.len()).unwrap_or(u32::MAX));
        self.buf
            .extend_from_slice(&v[..v.len().min(u32::MAX as usize)]);
    }
    /// A string with a `u32` length.
    pub fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
    /// An unsigned LEB128 varint (7 bits a byte, low bits first).
    pub fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }
    /// An `i64` zigzag-mapped to a varint (small magnitudes, either sign, take few bytes).
    pub fn zigzag(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }
    /// Bytes with a varint length.
    pub fn vbytes(&mut self, v: &[u8]) {
        self.varint(v.len() as u64);
        self.buf.extend_from_slice(v);
    }
    /// An optional value: a presence byte, then the value.
    pub fn opt<T>(&mut self, v: Option<T>, f: impl FnOnce(&mut Self, T)) {
        match v {
            None => self.u8(0),
            Some(x) => {
                self.u8(1);
                f(self, x);
            }
        }
    }
}

/// Reads encoded values from a slice, checking every length against what remains.
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// A malformed structure at the current offset.
    pub fn error(&self, reason: impl Into<String>) -> FormatError {
        FormatError::malformed(reason).at(Place::Offset(self.pos as u64))
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], FormatError> {
        if n > self.remaining() {
            return Err(FormatError::new(
                CorruptKind::Truncated,
                format!("needs {n} bytes but only {} remain", self.remaining()),
            )
            .at(Place::Offset(self.pos as u64)));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], FormatError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// A `u8`.
    pub fn u8(&mut self) -> Result<u8, FormatError> {
        Ok(self.array::<1>()?[0])
    }
    /// A big-endian `u32`.
    pub fn u32(&mut self) -> Result<u32, FormatError> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    /// A big-endian `u64`.
    pub fn u64(&mut self) -> Result<u64, FormatError> {
        Ok(u64::from_be_bytes(self.array()?))
    }
    /// An `f64` by its bits.
    pub fn f64(&mut self) -> Result<f64, FormatError> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// An unsigned LEB128 varint of at most 10 bytes.
    // Inlined across codegen units: each entry a slice decodes reads several.
    #[inline]
    pub fn varint(&mut self) -> Result<u64, FormatError> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.u8()?;
            if i == 9 && b > 1 {
                return Err(self.error("varint overflows 64 bits"));
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(self.error("varint longer than 10 bytes"))
    }
    /// A varint that must fit a `u32`.
    pub fn varint32(&mut self) -> Result<u32, FormatError> {
        let v = self.varint()?;
        u32::try_from(v).map_err(|_| self.error(format!("{v} does not fit 32 bits")))
    }
    /// A zigzag-mapped `i64`.
    pub fn zigzag(&mut self) -> Result<i64, FormatError> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }
    /// A varint length, bounded by what remains.
    pub fn vlen(&mut self) -> Result<usize, FormatError> {
        let n = self.varint()?;
        if n > self.remaining() as u64 {
            return Err(FormatError::new(
                CorruptKind::Truncated,
                format!("needs {n} bytes but only {} remain", self.remaining()),
            )
            .at(Place::Offset(self.pos as u64)));
        }
        Ok(n as usize)
    }
    /// Bytes with a varint length, bounded by what remains.
    pub fn vbytes(&mut self) -> Result<&'a [u8], FormatError> {
        let n = self.vlen()?;
        self.take(n)
    }
    /// Bytes with a `u32` length, bounded by what remains.
    pub fn bytes(&mut self) -> Result<&'a [u8], FormatError> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    /// A UTF-8 string with a `u32` length.
    pub fn str(&mut self) -> Result<&'a str, FormatError> {
        let at = self.pos;
        let b = self.bytes()?;
        std::str::from_utf8(b)
            .map_err(|_| FormatError::malformed("string is not UTF-8").at(Place::Offset(at as u64)))
    }
    /// An optional value written by [`Writer::opt`].
    pub fn opt<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, FormatError>,
    ) -> Result<Option<T>, FormatError> {
        match self.u8()? {
            0 => Ok(None),
            1 => f(self).map(Some),
            b => Err(self.error(format!("presence byte {b} is neither 0 nor 1"))),
        }
    }
    /// A count of items that each take at least `min_item_size` bytes, bounded by what remains.
    pub fn count(&mut self, min_item_size: usize) -> Result<usize, FormatError> {
        let n = self.u32()? as usize;
        self.bounded_count(n, min_item_size)
    }
    /// As [`Reader::count`], the count a varint.
    pub fn vcount(&mut self, min_item_size: usize) -> Result<usize, FormatError> {
        let n = usize::try_from(self.varint()?).unwrap_or(usize::MAX);
        self.bounded_count(n, min_item_size)
    }
    fn bounded_count(&mut self, n: usize, min_item_size: usize) -> Result<usize, FormatError> {
        if n.saturating_mul(min_item_size.max(1)) > self.remaining() {
            return Err(self.error(format!(
                "count {n} cannot fit in the {} bytes that remain",
                self.remaining()
            )));
        }
        Ok(n)
    }
}

/// Seals a small file: `magic | version u32 | payload bytes | CRC32 of all before`. The catalog
/// and the manifest are stored this way.
pub fn seal(magic: &[u8; 8], version: u32, payload: &[u8]) -> Vec<u8> {
    let mut w = Writer::default();
    w.buf.extend_from_slice(magic);
    w.u32(version);
    w.bytes(payload);
    let crc = crc32fast::hash(&w.buf);
    w.u32(crc);
    w.buf
}

/// Opens a file written by [`seal`]: checks magic, version (one of `versions`) and checksum;
/// returns the version found and the payload.
pub fn unseal<'a>(
    bytes: &'a [u8],
    magic: &[u8; 8],
    versions: std::ops::RangeInclusive<u32>,
    what: &str,
) -> Result<(u32, &'a [u8]), FormatError> {
    let found = check_magic_version(bytes, magic, versions, what)?;
    if bytes.len() < 8 + 4 + 4 + 4 {
        return Err(FormatError::new(
            CorruptKind::Truncated,
            format!("a {what} of {} bytes", bytes.len()),
        ));
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    if !checksum_ok(crc32fast::hash(body), be32(crc)) {
        return Err(FormatError::new(CorruptKind::Checksum, "checksum mismatch"));
    }
    let mut r = Reader::new(&body[12..]);
    let payload = r.bytes().map_err(|e| e.at(Place::Offset(12)))?;
    if r.remaining() != 0 {
        return Err(FormatError::malformed("trailing bytes after the payload"));
    }
    Ok((found, payload))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_bounded_before_allocation() {
        let mut w = Writer::default();
        w.u32(u32::MAX);
        let mut r = Reader::new(&w.buf);
        let e = r.bytes().unwrap_err();
        assert_eq!(
            (e.kind, e.place),
            (CorruptKind::Truncated, Place::Offset(4))
        );
        let mut r = Reader::new(&w.buf);
        assert!(r.count(1).is_err());
    }

    #[test]
    fn roundtrip() {
        let mut w = Writer::default();
        w.str("héllo");
        w.opt(Some(7u32), |w, v| w.u32(v));
        w.opt(None::<u32>, |w, v| w.u32(v));
        w.f64(0.25);
        let mut r = Reader::new(&w.buf);
        assert_eq!(r.str().unwrap(), "héllo");
        assert_eq!(r.opt(|r| r.u32()).unwrap(), Some(7));
        assert_eq!(r.opt(|r| r.u32()).unwrap(), None);
        assert_eq!(r.f64().unwrap(), 0.25);
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn varints_roundtrip_take_few_bytes_and_refuse_overlong_input() {
        let values = [
            0u64,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            u32::MAX as u64,
            u64::MAX,
        ];
        let signed = [
            0i64,
            -1,
            1,
            -64,
            63,
            i64::MIN,
            i64::MAX,
            1_700_000_000_000_000,
        ];
        let mut w = Writer::default();
        for v in values {
            w.varint(v);
        }
        for v in signed {
            w.zigzag(v);
        }
        w.vbytes(b"abc");
        let mut r = Reader::new(&w.buf);
        for v in values {
            assert_eq!(r.varint().unwrap(), v);
        }
        for v in signed {
            assert_eq!(r.zigzag().unwrap(), v);
        }
        assert_eq!(r.vbytes().unwrap(), b"abc");
        assert_eq!(r.remaining(), 0);
        let mut one = Writer::default();
        one.varint(127);
        one.zigzag(-64);
        assert_eq!(one.buf.len(), 2, "small values take one byte each");
        // Eleven continuation bytes, a tenth byte past 64 bits, a length past the end.
        assert!(Reader::new(&[0xff; 11]).varint().is_err());
        let mut over = vec![0xffu8; 9];
        over.push(0x02);
        assert!(Reader::new(&over).varint().is_err());
        assert!(Reader::new(&[0x05, b'a']).vbytes().is_err());
        assert!(Reader::new(&[0x80]).varint().is_err(), "truncated");
        let mut big = Writer::default();
        big.varint(u64::from(u32::MAX) + 1);
        assert!(Reader::new(&big.buf).varint32().is_err());
    }
}
