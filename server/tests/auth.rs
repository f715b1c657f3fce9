//! `serve --auth`: a client must authenticate (SASL PLAIN, PasswordAuthenticator) before any
//! request runs; a wrong password gets Cassandra's authentication error.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;

use supercolumn_server::auth::Credentials;
use support::*;

const AUTHENTICATE: u8 = 0x03;
const AUTH_RESPONSE: u8 = 0x0F;
const AUTH_SUCCESS: u8 = 0x10;

/// A connection through STARTUP, asked to authenticate.
fn asked_to_authenticate(addr: std::net::SocketAddr) -> std::net::TcpStream {
    let mut s = connect(addr);
    send(
        &mut s,
        4,
        1,
        STARTUP,
        &startup_body(&[("CQL_VERSION", "3.4.5")]),
    );
    let f = read(&mut s).unwrap();
    assert_eq!(f.opcode, AUTHENTICATE);
    assert!(String::from_utf8_lossy(&f.body).contains("PasswordAuthenticator"));
    s
}

fn token(user: &str, password: &str) -> Vec<u8> {
    let t = format!("\0{user}\0{password}");
    let mut b = (t.len() as i32).to_be_bytes().to_vec();
    b.extend_from_slice(t.as_bytes());
    b
}

#[test]
fn no_request_runs_before_a_right_password() {
    let dir = tempfile::tempdir().unwrap();
    let mut creds = Credentials::load(dir.path()).unwrap();
    creds.set_user(dir.path(), "cassandra", "letmein").unwrap();
    let creds = Arc::new(Credentials::load(dir.path()).unwrap());
    let server = start(|c| c.auth = Some(creds));

    let mut s = asked_to_authenticate(server.addr);

    // A query before authenticating does not run.
    send(&mut s, 4, 2, QUERY, &query_body("CREATE KEYSPACE sneaky WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    assert_eq!(read(&mut s).unwrap().error().0, 0x000A);
    assert!(!server.db.keyspaces().contains(&"sneaky".to_string()));

    // A wrong password, then an unknown user: Cassandra's authentication error (0x0100).
    send(&mut s, 4, 3, AUTH_RESPONSE, &token("cassandra", "wrong"));
    let (code, msg) = read(&mut s).unwrap().error();
    assert_eq!(code, 0x0100, "{msg}");
    send(&mut s, 4, 4, AUTH_RESPONSE, &token("nobody", "letmein"));
    assert_eq!(read(&mut s).unwrap().error().0, 0x0100);
    send(
        &mut s,
        4,
        5,
        QUERY,
        &query_body("SELECT key FROM system.local"),
    );
    assert_eq!(read(&mut s).unwrap().error().0, 0x000A);

    send(&mut s, 4, 6, AUTH_RESPONSE, &token("cassandra", "letmein"));
    assert_eq!(read(&mut s).unwrap().opcode, AUTH_SUCCESS);
    send(
        &mut s,
        4,
        7,
        QUERY,
        &query_body("SELECT key FROM system.local"),
    );
    assert_eq!(read(&mut s).unwrap().opcode, RESULT);
}

#[test]
fn repeated_failed_logins_are_slowed() {
    let dir = tempfile::tempdir().unwrap();
    let mut creds = Credentials::load(dir.path()).unwrap();
    creds.set_user(dir.path(), "cassandra", "letmein").unwrap();
    let creds = Arc::new(Credentials::load(dir.path()).unwrap());
    let server = start(|c| c.auth = Some(creds));
    let mut s = asked_to_authenticate(server.addr);
    // Three wrong guesses: 0.25 s, 0.5 s and 1 s before their answers (bcrypt alone takes a
    // few milliseconds each).
    let t = std::time::Instant::now();
    for stream in 2..5 {
        send(
            &mut s,
            4,
            stream,
            AUTH_RESPONSE,
            &token("cassandra", "guess"),
        );
        assert_eq!(read(&mut s).unwrap().error().0, 0x0100);
    }
    let took = t.elapsed();
    assert!(took >= std::time::Duration::from_millis(1700), "{took:?}");
    // A second connection guessing the same user is slowed as much: its first guess waits.
    let mut other = asked_to_authenticate(server.addr);
    let t = std::time::Instant::now();
    send(
        &mut other,
        4,
        2,
        AUTH_RESPONSE,
        &token("cassandra", "guess"),
    );
    assert_eq!(read(&mut other).unwrap().error().0, 0x0100);
    assert!(t.elapsed() >= std::time::Duration::from_millis(1900));
}
