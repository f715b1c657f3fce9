//! The views only a server can answer: `system_views.clients` lists each connection with what
//! its handshake said and how many requests it sent, and leaves it when it closes;
//! `system_views.thread_pools` counts the requests run (`Native-Transport-Requests`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use support::*;

fn query(s: &mut std::net::TcpStream, q: &str) -> RawRows {
    send(s, 4, 1, QUERY, &query_body(q));
    rows_result(&read(s).unwrap()).0
}

fn text(v: &Option<Vec<u8>>) -> String {
    String::from_utf8(v.clone().expect("not null")).unwrap()
}

fn int(v: &Option<Vec<u8>>) -> i64 {
    let b = v.as_ref().expect("not null");
    match b.len() {
        4 => i64::from(i32::from_be_bytes(b[..].try_into().unwrap())),
        _ => i64::from_be_bytes(b[..].try_into().unwrap()),
    }
}

const CLIENTS: &str = "SELECT port, connection_stage, driver_name, driver_version, \
                       protocol_version, request_count FROM system_views.clients";

#[test]
fn clients_show_each_connections_handshake_and_requests_until_it_closes() {
    let server = start(|_| {});
    let mut a = connect(server.addr);
    let startup = startup_body(&[
        ("CQL_VERSION", "3.4.5"),
        ("DRIVER_NAME", "raw frames"),
        ("DRIVER_VERSION", "1.2"),
    ]);
    send(&mut a, 4, 0, STARTUP, &startup);
    assert_eq!(read(&mut a).unwrap().opcode, READY);
    let quiet = connect(server.addr); // connected, never started up
    for _ in 0..2 {
        query(&mut a, "SELECT release_version FROM system.local");
    }
    // The quiet connection is registered once the server accepts it: ask until it shows.
    let (quiet_port, deadline) = (
        quiet.local_addr().unwrap().port(),
        Instant::now() + Duration::from_secs(10),
    );
    let mut sent = 3; // STARTUP and two queries
    let rows = loop {
        let rows = query(&mut a, CLIENTS);
        sent += 1;
        if rows.iter().any(|r| int(&r[0]) == i64::from(quiet_port)) {
            break rows;
        }
        assert!(
            Instant::now() < deadline,
            "the quiet connection shows: {rows:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let row_of = |rows: &RawRows, port: u16| {
        rows.iter()
            .find(|r| int(&r[0]) == i64::from(port))
            .cloned()
            .unwrap_or_else(|| panic!("port {port} in {rows:?}"))
    };
    let mine = row_of(&rows, a.local_addr().unwrap().port());
    assert_eq!(
        (text(&mine[1]), text(&mine[2]), text(&mine[3])),
        ("ready".into(), "raw frames".into(), "1.2".into())
    );
    assert_eq!(
        (int(&mine[4]), int(&mine[5])),
        (4, sent),
        "STARTUP, two queries and the views' queries"
    );
    let other = row_of(&rows, quiet_port);
    assert_eq!(
        (text(&other[1]), other[2].clone(), int(&other[5])),
        ("established".into(), None, 0)
    );
    drop(quiet);
    let deadline = Instant::now() + Duration::from_secs(10);
    while query(&mut a, CLIENTS).len() != 1 {
        assert!(
            Instant::now() < deadline,
            "the closed connection left the view"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pools = query(
        &mut a,
        "SELECT active_tasks, active_tasks_limit, completed_tasks FROM system_views.thread_pools \
         WHERE name = 'Native-Transport-Requests'",
    );
    assert_eq!(pools.len(), 1, "{pools:?}");
    assert_eq!(int(&pools[0][0]), 1, "this query is running");
    assert!(int(&pools[0][1]) >= 1);
    assert!(int(&pools[0][2]) >= 4, "the queries before it are done");
}
