//! Request tracing on the wire: a frame with the tracing flag is answered with the flag and
//! its session's id before the body, and the session (with the engine's events) is kept for
//! `system_traces`; with a trace probability set, requests no client asked to trace are traced
//! too, without the client being told.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::*;

/// A QUERY frame with the tracing flag set.
fn traced_query(s: &mut std::net::TcpStream, stream: i16, q: &str) -> Frame {
    let mut f = frame(4, stream, QUERY, &query_body(q));
    f[1] |= 0x02;
    use std::io::Write;
    s.write_all(&f).unwrap();
    read_flagged(s)
}

/// Reads one frame, keeping its flags in `version`'s place for the checks here.
fn read_flagged(s: &mut std::net::TcpStream) -> Frame {
    use std::io::Read;
    let mut h = [0u8; 9];
    s.read_exact(&mut h).unwrap();
    let len = i32::from_be_bytes(h[5..9].try_into().unwrap()) as usize;
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).unwrap();
    Frame {
        version: h[1],
        stream: i16::from_be_bytes([h[2], h[3]]),
        opcode: h[4],
        body,
    }
}

#[test]
fn a_traced_request_answers_its_session_id_and_keeps_its_events() {
    let server = start(|_| {});
    let mut s = ready(server.addr);
    for q in [
        "CREATE KEYSPACE tr WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE tr.t (k int PRIMARY KEY, v int)",
        "INSERT INTO tr.t (k, v) VALUES (1, 2)",
    ] {
        send(&mut s, 4, 1, QUERY, &query_body(q));
        assert_ne!(read(&mut s).unwrap().opcode, ERROR);
    }
    let f = traced_query(&mut s, 2, "SELECT v FROM tr.t WHERE k = 1");
    assert_eq!(f.opcode, RESULT, "{f:?}");
    assert_eq!(f.version & 0x02, 0x02, "the tracing flag is set");
    let id: [u8; 16] = f.body[..16].try_into().unwrap();
    assert_eq!(&f.body[16..20], &2i32.to_be_bytes(), "then the Rows result");
    let sessions = server.db.traces().sessions();
    let session = sessions
        .iter()
        .find(|t| t.id == id)
        .expect("the session is kept");
    assert_eq!(session.command, "QUERY");
    let acts: Vec<&str> = session.events.iter().map(|e| e.activity.as_str()).collect();
    assert!(
        acts.iter()
            .any(|a| a.starts_with("Merging memtable contents")),
        "{acts:?}"
    );
    assert_eq!(acts.last(), Some(&"Request complete"));

    // Untraced: no flag, nothing kept; sampled at probability 1: kept, the client not told.
    send(
        &mut s,
        4,
        3,
        QUERY,
        &query_body("SELECT v FROM tr.t WHERE k = 1"),
    );
    assert_eq!(read_flagged(&mut s).version & 0x02, 0);
    assert_eq!(server.db.traces().sessions().len(), 1);
    server.db.traces().set_probability(1.0).unwrap();
    send(
        &mut s,
        4,
        4,
        QUERY,
        &query_body("SELECT v FROM tr.t WHERE k = 1"),
    );
    let f = read_flagged(&mut s);
    assert_eq!((f.opcode, f.version & 0x02), (RESULT, 0), "{f:?}");
    assert_eq!(server.db.traces().sessions().len(), 2);
}
