//! Hostile and broken clients: each gets the protocol's documented answer, only its own
//! connection is closed (or none), and the server goes on serving everyone else.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use support::*;

const PROTOCOL_ERROR: u32 = 0x000A;

#[test]
fn an_oversized_frame_is_refused_before_its_body_is_read() {
    let server = start(|c| c.max_frame = 1 << 16);
    let mut s = ready(server.addr);
    // Claims 1 GiB; the body is never sent.
    let mut h = frame(4, 3, QUERY, &[]);
    h[5..9].copy_from_slice(&(1i32 << 30).to_be_bytes());
    s.write_all(&h).unwrap();
    let f = read(&mut s).unwrap();
    let (code, msg) = f.error();
    assert_eq!((code, f.stream), (PROTOCOL_ERROR, 3), "{msg}");
    assert!(msg.contains("exceeds the limit"), "{msg}");
    assert!(read(&mut s).is_none(), "the connection is closed");
    // A negative length too.
    let mut s = ready(server.addr);
    h[5..9].copy_from_slice(&(-5i32).to_be_bytes());
    s.write_all(&h).unwrap();
    assert_eq!(read(&mut s).unwrap().error().0, PROTOCOL_ERROR);
    still_serves(server.addr);
}

#[test]
fn an_unknown_opcode_and_a_bad_body_are_answered_and_the_connection_goes_on() {
    let server = start(|_| {});
    let mut s = ready(server.addr);
    send(&mut s, 4, 5, 0x42, b"whatever");
    let f = read(&mut s).unwrap();
    assert_eq!((f.error().0, f.stream), (PROTOCOL_ERROR, 5));
    // A server-to-client opcode (RESULT) from a client.
    send(&mut s, 4, 6, RESULT, &[0, 0, 0, 1]);
    assert_eq!(read(&mut s).unwrap().error().0, PROTOCOL_ERROR);
    // A QUERY whose long string claims more bytes than the body has.
    send(&mut s, 4, 7, QUERY, &[0x7f, 0, 0, 0, b'S']);
    let f = read(&mut s).unwrap();
    assert_eq!((f.error().0, f.stream), (PROTOCOL_ERROR, 7));
    // Same connection, a good request.
    send(
        &mut s,
        4,
        8,
        QUERY,
        &query_body("SELECT key FROM system.local"),
    );
    let f = read(&mut s).unwrap();
    assert_eq!((f.opcode, f.stream), (RESULT, 8), "{f:?}");
}

#[test]
fn a_negative_stream_id_is_refused() {
    let server = start(|_| {});
    let mut s = ready(server.addr);
    send(&mut s, 4, -3, OPTIONS, &[]);
    let f = read(&mut s).unwrap();
    let (code, msg) = f.error();
    assert_eq!((code, f.stream), (PROTOCOL_ERROR, -3));
    assert!(msg.contains("negative"), "{msg}");
    send(&mut s, 4, 1, OPTIONS, &[]);
    assert_eq!(read(&mut s).unwrap().opcode, SUPPORTED);
}

#[test]
fn an_unsupported_version_gets_the_error_drivers_downgrade_on() {
    let server = start(|_| {});
    for v in [1u8, 2, 5, 6, 0x45] {
        let mut s = connect(server.addr);
        send(&mut s, v, 0, OPTIONS, &[]);
        let f = read(&mut s).unwrap();
        let (code, msg) = f.error();
        assert_eq!(code, PROTOCOL_ERROR);
        assert!(
            msg.contains("Invalid or unsupported protocol version"),
            "{msg}"
        );
        assert_eq!(f.version, 0x84, "answered in a version the client can read");
    }
    // A frame with the response bit set is not a request.
    let mut s = connect(server.addr);
    send(&mut s, 0x84, 0, OPTIONS, &[]);
    assert_eq!(read(&mut s).unwrap().error().0, PROTOCOL_ERROR);
    still_serves(server.addr);
}

#[test]
fn requests_before_startup_are_refused() {
    let server = start(|_| {});
    let mut s = connect(server.addr);
    send(
        &mut s,
        4,
        1,
        QUERY,
        &query_body("SELECT key FROM system.local"),
    );
    let (code, msg) = read(&mut s).unwrap().error();
    assert_eq!(code, PROTOCOL_ERROR);
    assert!(msg.contains("STARTUP"), "{msg}");
    // Unknown compression is refused; the connection can still start up.
    send(
        &mut s,
        4,
        2,
        STARTUP,
        &startup_body(&[("CQL_VERSION", "3.4.5"), ("COMPRESSION", "zstd")]),
    );
    assert_eq!(read(&mut s).unwrap().error().0, PROTOCOL_ERROR);
    send(
        &mut s,
        4,
        3,
        STARTUP,
        &startup_body(&[("CQL_VERSION", "3.4.5")]),
    );
    assert_eq!(read(&mut s).unwrap().opcode, READY);
}

#[test]
fn a_truncated_frame_and_a_slow_client_are_dropped_on_their_timeouts() {
    let server = start(|c| {
        c.frame_timeout = Duration::from_millis(300);
        c.idle_timeout = Duration::from_millis(600);
    });
    // Half a frame, then silence: dropped after the frame timeout.
    let mut half = ready(server.addr);
    let f = frame(4, 1, QUERY, &query_body("SELECT key FROM system.local"));
    half.write_all(&f[..f.len() - 4]).unwrap();
    let t = Instant::now();
    assert!(read(&mut half).is_none());
    assert!(t.elapsed() < Duration::from_secs(10));
    // An idle connection: dropped after the idle timeout.
    let mut idle = ready(server.addr);
    let t = Instant::now();
    let mut b = [0u8; 1];
    assert_eq!(idle.read(&mut b).unwrap_or(0), 0);
    assert!(t.elapsed() >= Duration::from_millis(500));
    // A header dribbled a byte at a time, past the idle timeout in all.
    let mut slow = ready(server.addr);
    for byte in &f[..9] {
        if slow.write_all(&[*byte]).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(150));
    }
    assert!(read(&mut slow).is_none());
    still_serves(server.addr);
}

#[test]
fn a_client_that_vanishes_mid_frame_leaves_the_others_served() {
    let server = start(|_| {});
    for cut in [1usize, 5, 9, 12] {
        let mut s = ready(server.addr);
        let f = frame(4, 1, QUERY, &query_body("SELECT key FROM system.local"));
        s.write_all(&f[..cut]).unwrap();
        drop(s);
    }
    still_serves(server.addr);
}

#[test]
fn the_fuzz_seeds_are_real_requests() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/seeds/native_frame");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let data = std::fs::read(e.unwrap().path()).unwrap();
        let (flags, frames) = data.split_first().unwrap();
        let expected = if frames.len() > 300 { 9 } else { 1 };
        assert_eq!(
            supercolumn_server::fuzz_frames(frames, flags & 1 == 1),
            expected
        );
        n += 1;
    }
    assert_eq!(n, 11);
}

#[test]
fn random_frames_never_panic_the_decoder() {
    // The body of the `native_frame` fuzz target, over deterministic random input shaped as
    // frames (valid headers, random bodies) so that every request decoder is reached.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..20_000 {
        let opcode = [1u8, 5, 7, 9, 10, 11, 13, 15][round % 8];
        let len = (next() % 64) as usize;
        let body: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let mut f = frame(3 + (round % 2) as u8, 1, opcode, &body);
        f[1] = (next() % 16) as u8;
        let _ = supercolumn_server::fuzz_frames(&f, round % 3 == 0);
    }
}

#[test]
fn a_client_that_never_reads_holds_up_neither_the_others_nor_the_shutdown() {
    let server = start(|c| {
        c.max_in_flight = 8;
        c.max_in_flight_per_connection = 8;
        c.frame_timeout = Duration::from_millis(300);
        c.write_timeout = Duration::from_millis(900);
    });
    // Thousands of answers it never reads: its socket buffers fill, its writer gives up.
    let mut greedy = ready(server.addr);
    let q = frame(4, 1, QUERY, &query_body("SELECT * FROM system.local"));
    let flood: Vec<u8> = q.iter().copied().cycle().take(q.len() * 50_000).collect();
    let writer = std::thread::spawn(move || {
        let _ = greedy.write_all(&flood);
        greedy
    });
    std::thread::sleep(Duration::from_millis(500));
    serves_a_query_within(server.addr, Duration::from_secs(5));
    let t = Instant::now();
    server.shutdown();
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "shutdown took {:?}",
        t.elapsed()
    );
    drop(writer.join());
}

#[test]
fn request_bytes_in_flight_are_bounded_over_all_connections() {
    let server = start(|c| {
        c.max_request_bytes = 200;
        c.frame_timeout = Duration::from_millis(600);
    });
    // A header that claims 150 bytes and sends none holds them until its frame times out.
    let mut holder = ready(server.addr);
    let mut h = frame(4, 1, QUERY, &[]);
    h[5..9].copy_from_slice(&150i32.to_be_bytes());
    holder.write_all(&h).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    // 150 + this one's bytes pass the budget: it waits for them, then is served.
    let mut other = ready(server.addr);
    let t = Instant::now();
    let q = query_body("SELECT key FROM system.local WHERE key = 'local' ALLOW FILTERING");
    assert!(q.len() > 50);
    send(&mut other, 4, 2, QUERY, &q);
    let f = read(&mut other).unwrap();
    assert_eq!(f.opcode, RESULT, "{f:?}");
    assert!(
        t.elapsed() >= Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
    assert!(
        read(&mut holder).is_none(),
        "the half-sent frame was dropped"
    );
}

/// A STARTUP asking for LZ4.
fn ready_lz4(addr: std::net::SocketAddr) -> std::net::TcpStream {
    let mut s = connect(addr);
    send(
        &mut s,
        4,
        0,
        STARTUP,
        &startup_body(&[("CQL_VERSION", "3.4.5"), ("COMPRESSION", "lz4")]),
    );
    assert_eq!(read(&mut s).unwrap().opcode, READY);
    s
}

#[test]
fn compressed_frames_that_fill_the_request_budget_are_refused_not_waited_on() {
    // Before: each frame held its body's bytes, then waited with no deadline for what the
    // body claims to decompress to; with the budget full, every connection froze for good.
    let server = start(|c| {
        c.max_frame = 1 << 20;
        c.max_request_bytes = 4 << 20;
    });
    let len = 1 << 20;
    let mut attackers: Vec<_> = (0..4).map(|_| ready_lz4(server.addr)).collect();
    for s in &mut attackers {
        let mut h = frame(4, 1, QUERY, &[]);
        h[1] = 1; // compressed
        h[5..9].copy_from_slice(&(len as i32).to_be_bytes());
        s.write_all(&h).unwrap();
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut body = vec![0u8; len];
    body[..4].copy_from_slice(&(len as i32).to_be_bytes());
    for s in &mut attackers {
        s.write_all(&body).unwrap();
    }
    // Each is answered: Overloaded when its bytes could not be had at once, or (once a
    // refused one freed its bytes) the error its garbage body earns.
    let mut refused = 0;
    for s in &mut attackers {
        let f = read(s).expect("an answer, not a frozen connection");
        let (code, msg) = f.error();
        assert!(code == 0x1001 || code == PROTOCOL_ERROR, "{code:#x} {msg}");
        refused += usize::from(code == 0x1001);
        // The connection goes on.
        send(s, 4, 2, OPTIONS, &[]);
        assert_eq!(read(s).unwrap().opcode, SUPPORTED);
    }
    assert!(refused >= 1);
    serves_a_query_within(server.addr, Duration::from_secs(1));
    let t = Instant::now();
    server.shutdown();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[test]
fn connections_that_never_log_in_cannot_lock_the_others_out() {
    // Before: every connection slot could be taken by sockets that never send STARTUP, for
    // the whole idle timeout.
    let server = start(|c| {
        c.max_connections = 64;
        c.max_handshaking = 16;
        c.handshake_timeout = Duration::from_millis(1500);
    });
    let idle: Vec<_> = (0..64).map(|_| connect(server.addr)).collect();
    std::thread::sleep(Duration::from_millis(200));
    serves_a_query_within(server.addr, Duration::from_secs(1));
    // A connection that does not finish its handshake in time is closed.
    let t = Instant::now();
    let mut slow = connect(server.addr);
    assert!(read(&mut slow).is_none());
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    drop(idle);
}

#[test]
fn before_its_handshake_a_connection_may_send_only_small_frames() {
    // Before: a client that never logged in could hold 16 MiB of the request budget per
    // connection while it sent a frame's body slowly.
    let server = start(|_| {});
    let mut s = connect(server.addr);
    let mut h = frame(4, 1, QUERY, &[]);
    h[5..9].copy_from_slice(&(1i32 << 20).to_be_bytes());
    s.write_all(&h).unwrap();
    let (code, msg) = read(&mut s).unwrap().error();
    assert_eq!(code, PROTOCOL_ERROR, "{msg}");
    assert!(msg.contains("exceeds the limit"), "{msg}");
    // After STARTUP the same frame is read.
    let mut s = ready(server.addr);
    let q = query_body(&format!(
        "SELECT key FROM system.local WHERE key = '{}' ALLOW FILTERING",
        "x".repeat(100_000)
    ));
    send(&mut s, 4, 2, QUERY, &q);
    assert_eq!(read(&mut s).unwrap().opcode, RESULT);
}
