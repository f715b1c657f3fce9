//! A refused statement gets the error code Cassandra sends for it (drivers treat a server
//! error, 0x0000, as a dead node and retry elsewhere), and a long message stays readable.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use supercolumn_cql::Session;
use support::*;

const INVALID: u32 = 0x2200;

fn error_of(s: &mut std::net::TcpStream, q: &str) -> (u32, String) {
    send(s, 4, 3, QUERY, &query_body(q));
    read(s).expect("an answer").error()
}

#[test]
fn refusals_of_user_input_are_invalid_not_server_errors() {
    let server = start(|_| {});
    Session::new(&server.db)
        .execute(
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
             CREATE TABLE ks.t (p text PRIMARY KEY, v int);
             CREATE TABLE ks.c (p int, c text, v int, PRIMARY KEY (p, c))",
        )
        .unwrap();
    let mut s = ready(server.addr);
    let long_key = "x".repeat(70_000);
    let cases = [
        "UPDATE ks.t SET v = 1 WHERE p = ''".to_string(),
        "CREATE KEYSPACE \"a b\" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}".to_string(),
        format!(
            "CREATE KEYSPACE {} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}",
            "k".repeat(500)
        ),
        format!("INSERT INTO ks.t (p, v) VALUES ('{long_key}', 1)"),
        format!("INSERT INTO ks.c (p, c, v) VALUES (1, '{long_key}', 1)"),
        // Past the RandomPartitioner's last token (2^127): the engine refuses it. (A negative
        // one is below every token, as Cassandra's minimum token -1 is: every row.)
        "SELECT * FROM ks.t WHERE token(p) >= 170141183460469231731687303715884105729".to_string(),
    ];
    for q in &cases {
        let (code, msg) = error_of(&mut s, q);
        assert_eq!(code, INVALID, "{:.100}: {msg:.300}", q);
    }
    let (_, msg) = error_of(
        &mut s,
        &format!("INSERT INTO ks.t (p, v) VALUES ('{long_key}', 1)"),
    );
    assert!(
        msg.contains("Key length of 70000 is longer than maximum of 65535"),
        "{msg:.300}"
    );
}

#[test]
fn a_message_longer_than_a_short_string_is_cut_on_a_character_boundary() {
    let server = start(|_| {});
    let mut s = ready(server.addr);
    // The name comes back in the message: 40,000 two-byte characters.
    let name = "é".repeat(40_000);
    send(
        &mut s,
        4,
        3,
        QUERY,
        &query_body(&format!("SELECT * FROM \"{name}\".t")),
    );
    let f = read(&mut s).unwrap();
    let (code, msg) = f.error();
    assert_eq!(code, INVALID);
    // The body is the code, the message's length and the message: nothing after it.
    assert_eq!(f.body.len(), 6 + msg.len(), "the length says what follows");
    assert!(msg.len() <= 65_535 && msg.len() > 1000, "{}", msg.len());
    assert!(!msg.contains('\u{fffd}'), "cut inside a character");
    // The stream is intact: the connection still answers.
    send(&mut s, 4, 4, OPTIONS, &[]);
    assert_eq!(read(&mut s).unwrap().opcode, SUPPORTED);
}
