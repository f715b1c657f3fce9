//! A server on an ephemeral loopback port over a fresh database, and a raw frame client: what
//! the protocol tests share.

#![allow(dead_code)]

pub mod python;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use supercolumn::{Database, Options};
use supercolumn_server::{Config, Server};
use tokio::sync::watch;

/// A running server; dropping it shuts the server down.
pub struct Running {
    pub addr: SocketAddr,
    stop: Option<watch::Sender<bool>>,
    thread: Option<std::thread::JoinHandle<()>>,
    pub db: Arc<Database>,
    _dir: tempfile::TempDir,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(true);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Running {
    /// Stops accepting and waits until the requests in flight have finished.
    pub fn shutdown(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(true);
        }
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

/// Starts a server with `tune` applied to the default limits.
pub fn start(tune: impl FnOnce(&mut Config)) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Database::open(dir.path(), Options::default()).unwrap());
    let mut config = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..Config::default()
    };
    tune(&mut config);
    let (tx, rx) = watch::channel(false);
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let db2 = db.clone();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let server = Server::bind(db2, config).await.unwrap();
            addr_tx.send(server.local_addr().unwrap()).unwrap();
            server.run(rx).await;
        });
    });
    let addr = addr_rx.recv().unwrap();
    Running {
        addr,
        stop: Some(tx),
        thread: Some(thread),
        db,
        _dir: dir,
    }
}

pub const OPTIONS: u8 = 0x05;
pub const STARTUP: u8 = 0x01;
pub const QUERY: u8 = 0x07;
pub const ERROR: u8 = 0x00;
pub const READY: u8 = 0x02;
pub const SUPPORTED: u8 = 0x06;
pub const RESULT: u8 = 0x08;

/// A frame as read back.
#[derive(Debug)]
pub struct Frame {
    pub version: u8,
    pub stream: i16,
    pub opcode: u8,
    pub body: Vec<u8>,
}

impl Frame {
    /// An ERROR's code and message.
    pub fn error(&self) -> (u32, String) {
        assert_eq!(self.opcode, ERROR, "expected an ERROR, got {self:?}");
        let code = u32::from_be_bytes(self.body[0..4].try_into().unwrap());
        let len = u16::from_be_bytes(self.body[4..6].try_into().unwrap()) as usize;
        (
            code,
            String::from_utf8_lossy(&self.body[6..6 + len]).into_owned(),
        )
    }
}

pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

pub fn frame(version: u8, stream: i16, opcode: u8, body: &[u8]) -> Vec<u8> {
    let mut f = vec![version, 0];
    f.extend_from_slice(&stream.to_be_bytes());
    f.push(opcode);
    f.extend_from_slice(&(body.len() as i32).to_be_bytes());
    f.extend_from_slice(body);
    f
}

pub fn send(s: &mut TcpStream, version: u8, stream: i16, opcode: u8, body: &[u8]) {
    s.write_all(&frame(version, stream, opcode, body)).unwrap();
}

/// Reads one frame; `None` when the server closed the connection.
pub fn read(s: &mut TcpStream) -> Option<Frame> {
    let mut h = [0u8; 9];
    s.read_exact(&mut h).ok()?;
    let len = i32::from_be_bytes(h[5..9].try_into().unwrap()) as usize;
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).ok()?;
    if h[1] & 1 != 0 {
        // LZ4, as negotiated at STARTUP: the uncompressed length, then a block.
        let (n, block) = body.split_first_chunk::<4>()?;
        body = lz4_flex::block::decompress(block, i32::from_be_bytes(*n) as usize).ok()?;
    }
    Some(Frame {
        version: h[0],
        stream: i16::from_be_bytes([h[2], h[3]]),
        opcode: h[4],
        body,
    })
}

/// `[string map]` of STARTUP.
pub fn startup_body(pairs: &[(&str, &str)]) -> Vec<u8> {
    let mut b = (pairs.len() as u16).to_be_bytes().to_vec();
    for (k, v) in pairs {
        for s in [k, v] {
            b.extend_from_slice(&(s.len() as u16).to_be_bytes());
            b.extend_from_slice(s.as_bytes());
        }
    }
    b
}

/// A v4 QUERY body: `[long string]` query, consistency ONE, no flags.
pub fn query_body(q: &str) -> Vec<u8> {
    let mut b = (q.len() as i32).to_be_bytes().to_vec();
    b.extend_from_slice(q.as_bytes());
    b.extend_from_slice(&1u16.to_be_bytes());
    b.push(0);
    b
}

/// A connection through STARTUP.
pub fn ready(addr: SocketAddr) -> TcpStream {
    let mut s = connect(addr);
    send(
        &mut s,
        4,
        0,
        STARTUP,
        &startup_body(&[("CQL_VERSION", "3.4.5")]),
    );
    let f = read(&mut s).unwrap();
    assert_eq!(f.opcode, READY, "{f:?}");
    s
}

/// The connection still answers: OPTIONS gets SUPPORTED.
pub fn still_serves(addr: SocketAddr) {
    let mut s = connect(addr);
    send(&mut s, 4, 9, OPTIONS, &[]);
    let f = read(&mut s).expect("the server answers a new connection");
    assert_eq!((f.opcode, f.stream), (SUPPORTED, 9));
}

/// A new client connects, starts up and runs a query within `limit`.
pub fn serves_a_query_within(addr: SocketAddr, limit: Duration) {
    let t = std::time::Instant::now();
    let mut other = ready(addr);
    send(
        &mut other,
        4,
        2,
        0x07,
        &query_body("SELECT key FROM system.local"),
    );
    assert_eq!(read(&mut other).unwrap().opcode, RESULT);
    assert!(t.elapsed() < limit, "took {:?}", t.elapsed());
}

/// A v4 QUERY body that pages: `page_size` rows, from `state` when given.
pub fn paged_query_body(q: &str, page_size: i32, state: Option<&[u8]>) -> Vec<u8> {
    let mut b = (q.len() as i32).to_be_bytes().to_vec();
    b.extend_from_slice(q.as_bytes());
    b.extend_from_slice(&1u16.to_be_bytes());
    b.push(0x04 | if state.is_some() { 0x08 } else { 0 });
    b.extend_from_slice(&page_size.to_be_bytes());
    if let Some(s) = state {
        b.extend_from_slice(&(s.len() as i32).to_be_bytes());
        b.extend_from_slice(s);
    }
    b
}

/// Rows as read back: each column's value (`None`: null).
pub type RawRows = Vec<Vec<Option<Vec<u8>>>>;

/// A Rows RESULT of columns of simple types: its rows and paging state.
pub fn rows_result(f: &Frame) -> (RawRows, Option<Vec<u8>>) {
    assert_eq!(f.opcode, RESULT, "{f:?}");
    let b = &f.body;
    let int = |at: usize| i32::from_be_bytes(b[at..at + 4].try_into().unwrap());
    let short = |at: usize| u16::from_be_bytes(b[at..at + 2].try_into().unwrap()) as usize;
    assert_eq!(int(0), 2, "a Rows result");
    let (flags, columns) = (int(4), int(8) as usize);
    let mut at = 12;
    let mut state = None;
    if flags & 0x02 != 0 {
        let n = int(at) as usize;
        state = Some(b[at + 4..at + 4 + n].to_vec());
        at += 4 + n;
    }
    if flags & 0x01 != 0 {
        at += 2 + short(at);
        at += 2 + short(at);
    }
    if flags & 0x04 == 0 {
        for _ in 0..columns {
            at += 2 + short(at); // name
            assert!(short(at) >= 0x0001 && short(at) <= 0x0014, "a simple type");
            at += 2;
        }
    }
    let count = int(at) as usize;
    at += 4;
    let mut rows = Vec::with_capacity(count);
    for _ in 0..count {
        let mut row = Vec::with_capacity(columns);
        for _ in 0..columns {
            let n = int(at);
            at += 4;
            if n < 0 {
                row.push(None);
            } else {
                row.push(Some(b[at..at + n as usize].to_vec()));
                at += n as usize;
            }
        }
        rows.push(row);
    }
    (rows, state)
}

/// The process's resident set, in bytes (Linux; 0 elsewhere).
pub fn rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}
