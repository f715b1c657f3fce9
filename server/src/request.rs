//! Request messages decoded from untrusted bytes (protocol v3/v4): every length and count is
//! checked against the bytes that remain before anything is allocated or sliced, so a hostile
//! body is a typed error naming what did not fit, never a panic or a huge allocation. (The
//! frame codec crate's own request decoders slice and allocate by the lengths they read, so
//! this server decodes requests itself and uses the crate for the answers it encodes.)

use std::collections::HashMap;

use crate::frame::FrameError;

/// A bound value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Bytes.
    Set(Vec<u8>),
    /// `null`.
    Null,
    /// Not set (v4): leave the column alone.
    Unset,
}

/// A QUERY's or EXECUTE's parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    /// The consistency level (one node: every level is met).
    pub consistency: u16,
    /// Bound values, by position.
    pub values: Vec<Value>,
    /// The values came with names.
    pub named: bool,
    /// Their names, one per value, when they came with names (bound to `:name` markers).
    pub names: Vec<String>,
    /// Rows per page.
    pub page_size: Option<i32>,
    /// Where the page starts.
    pub paging_state: Option<Vec<u8>>,
    /// The client's timestamp for writes (microseconds).
    pub timestamp: Option<i64>,
}

/// What a BATCH entry runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A statement's text.
    Text(String),
    /// A prepared statement's id.
    Id(Vec<u8>),
}

/// A request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// STARTUP's options.
    Startup(HashMap<String, String>),
    /// OPTIONS.
    Options,
    /// QUERY.
    Query(String, Params),
    /// PREPARE.
    Prepare(String),
    /// EXECUTE.
    Execute(Vec<u8>, Params),
    /// BATCH: its entries with their values, and the batch's timestamp.
    Batch(Vec<(Subject, Vec<Value>)>, Option<i64>),
    /// REGISTER's event types.
    Register(Vec<String>),
    /// AUTH_RESPONSE's token.
    AuthResponse(Option<Vec<u8>>),
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], FrameError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| {
                FrameError::Body(format!(
                    "{what} of {n} bytes at offset {} runs past the body's {} bytes",
                    self.at,
                    self.b.len()
                ))
            })?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self, what: &str) -> Result<u8, FrameError> {
        Ok(self.take(1, what)?[0])
    }
    fn u16(&mut self, what: &str) -> Result<u16, FrameError> {
        let s = self.take(2, what)?;
        Ok(u16::from_be_bytes([s[0], s[1]]))
    }
    fn i32(&mut self, what: &str) -> Result<i32, FrameError> {
        let s = self.take(4, what)?;
        Ok(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn i64(&mut self, what: &str) -> Result<i64, FrameError> {
        let s = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(i64::from_be_bytes(a))
    }
    fn utf8(&mut self, n: usize, what: &str) -> Result<String, FrameError> {
        let s = self.take(n, what)?;
        String::from_utf8(s.to_vec())
            .map_err(|_| FrameError::Body(format!("{what} is not valid UTF-8")))
    }
    /// `[string]`
    fn string(&mut self, what: &str) -> Result<String, FrameError> {
        let n = self.u16(what)? as usize;
        self.utf8(n, what)
    }
    /// `[long string]`
    fn long_string(&mut self, what: &str) -> Result<String, FrameError> {
        let n = self.i32(what)?;
        let n = usize::try_from(n)
            .map_err(|_| FrameError::Body(format!("{what} has a negative length {n}")))?;
        self.utf8(n, what)
    }
    /// `[short bytes]`
    fn short_bytes(&mut self, what: &str) -> Result<Vec<u8>, FrameError> {
        let n = self.u16(what)? as usize;
        Ok(self.take(n, what)?.to_vec())
    }
    /// `[bytes]` (negative: null)
    fn bytes(&mut self, what: &str) -> Result<Option<Vec<u8>>, FrameError> {
        let n = self.i32(what)?;
        match usize::try_from(n) {
            Ok(n) => Ok(Some(self.take(n, what)?.to_vec())),
            Err(_) => Ok(None),
        }
    }
    /// `[value]`
    fn value(&mut self, v4: bool) -> Result<Value, FrameError> {
        let n = self.i32("a bound value")?;
        match n {
            -1 => Ok(Value::Null),
            -2 if v4 => Ok(Value::Unset),
            n if n < 0 => Err(FrameError::Body(format!("a bound value of length {n}"))),
            n => Ok(Value::Set(self.take(n as usize, "a bound value")?.to_vec())),
        }
    }
    /// A count, bounded by what the remaining bytes could hold at `min` bytes each.
    fn count(&mut self, min: usize, what: &str) -> Result<usize, FrameError> {
        let n = self.u16(what)? as usize;
        if n.saturating_mul(min) > self.b.len() - self.at {
            return Err(FrameError::Body(format!(
                "{what}: {n} entries cannot fit in the {} bytes left",
                self.b.len() - self.at
            )));
        }
        Ok(n)
    }
    /// Bound values, and their names when `named`.
    fn values(&mut self, named: bool, v4: bool) -> Result<(Vec<Value>, Vec<String>), FrameError> {
        let n = self.count(if named { 6 } else { 4 }, "the bound values")?;
        let mut out = Vec::with_capacity(n);
        let mut names = Vec::new();
        for _ in 0..n {
            if named {
                names.push(self.string("a bound value's name")?);
            }
            out.push(self.value(v4)?);
        }
        Ok((out, names))
    }
    fn done(&self, what: &str) -> Result<(), FrameError> {
        if self.at == self.b.len() {
            Ok(())
        } else {
            Err(FrameError::Body(format!(
                "{} bytes left over after {what}",
                self.b.len() - self.at
            )))
        }
    }
}

const VALUES: u8 = 0x01;
const PAGE_SIZE: u8 = 0x04;
const PAGING_STATE: u8 = 0x08;
const SERIAL: u8 = 0x10;
const TIMESTAMP: u8 = 0x20;
const NAMES: u8 = 0x40;

fn params(r: &mut Reader<'_>, v4: bool) -> Result<Params, FrameError> {
    let consistency = r.u16("the consistency")?;
    let flags = r.u8("the query flags")?;
    let named = flags & NAMES != 0;
    let mut p = Params {
        consistency,
        named,
        ..Params::default()
    };
    if flags & VALUES != 0 {
        (p.values, p.names) = r.values(named, v4)?;
    }
    if flags & PAGE_SIZE != 0 {
        p.page_size = Some(r.i32("the page size")?);
    }
    if flags & PAGING_STATE != 0 {
        p.paging_state = r.bytes("the paging state")?;
    }
    if flags & SERIAL != 0 {
        r.u16("the serial consistency")?;
    }
    if flags & TIMESTAMP != 0 {
        p.timestamp = Some(r.i64("the timestamp")?);
    }
    Ok(p)
}

/// Decodes a request message of `opcode` (protocol v3 when `!v4`).
pub fn decode(opcode: u8, body: &[u8], v4: bool) -> Result<Request, FrameError> {
    let mut r = Reader { b: body, at: 0 };
    let req = match opcode {
        0x01 => {
            let n = r.count(4, "the STARTUP options")?;
            let mut map = HashMap::with_capacity(n);
            for _ in 0..n {
                let k = r.string("a STARTUP option")?;
                let v = r.string("a STARTUP option's value")?;
                map.insert(k, v);
            }
            Request::Startup(map)
        }
        0x05 => Request::Options,
        0x07 => {
            let text = r.long_string("the query")?;
            Request::Query(text, params(&mut r, v4)?)
        }
        0x09 => Request::Prepare(r.long_string("the query")?),
        0x0A => {
            let id = r.short_bytes("the prepared id")?;
            Request::Execute(id, params(&mut r, v4)?)
        }
        0x0B => {
            let n = r.count(2, "the event types")?;
            let mut events = Vec::with_capacity(n);
            for _ in 0..n {
                events.push(r.string("an event type")?);
            }
            Request::Register(events)
        }
        0x0D => {
            r.u8("the batch type")?;
            let n = r.count(5, "the batch's statements")?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                let subject = match r.u8("a batch statement's kind")? {
                    0 => Subject::Text(r.long_string("a batch statement")?),
                    1 => Subject::Id(r.short_bytes("a batch statement's id")?),
                    k => return Err(FrameError::Body(format!("batch statement kind {k}"))),
                };
                // Values in a batch carry no names (the names flag is unused for batches).
                items.push((subject, r.values(false, v4)?.0));
            }
            r.u16("the batch consistency")?;
            let flags = r.u8("the batch flags")?;
            if flags & NAMES != 0 {
                return Err(FrameError::Body(
                    "named values in a BATCH are not supported".into(),
                ));
            }
            if flags & SERIAL != 0 {
                r.u16("the batch serial consistency")?;
            }
            let timestamp = if flags & TIMESTAMP != 0 {
                Some(r.i64("the batch timestamp")?)
            } else {
                None
            };
            Request::Batch(items, timestamp)
        }
        0x0F => Request::AuthResponse(r.bytes("the authentication token")?),
        op => return Err(FrameError::UnknownOpcode(op)),
    };
    r.done("the request")?;
    Ok(req)
}
