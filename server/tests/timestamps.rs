//! A driver's client-side timestamp (QUERY, EXECUTE and BATCH parameters) stamps the writes
//! that give none of their own, as Cassandra uses it; `USING TIMESTAMP` still wins.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use supercolumn_cql::Session;
use support::*;

fn query_at(q: &str, timestamp: i64) -> Vec<u8> {
    let mut b = (q.len() as i32).to_be_bytes().to_vec();
    b.extend_from_slice(q.as_bytes());
    b.extend_from_slice(&1u16.to_be_bytes());
    b.push(0x20);
    b.extend_from_slice(&timestamp.to_be_bytes());
    b
}

fn batch_at(q: &str, timestamp: i64) -> Vec<u8> {
    let mut b = vec![1u8]; // unlogged
    b.extend_from_slice(&1u16.to_be_bytes());
    b.push(0);
    b.extend_from_slice(&(q.len() as i32).to_be_bytes());
    b.extend_from_slice(q.as_bytes());
    b.extend_from_slice(&0u16.to_be_bytes());
    b.extend_from_slice(&1u16.to_be_bytes());
    b.push(0x20);
    b.extend_from_slice(&timestamp.to_be_bytes());
    b
}

#[test]
fn the_client_timestamp_stamps_writes_that_give_none() {
    let server = start(|_| {});
    let mut s = ready(server.addr);
    for (i, q) in [
        "CREATE KEYSPACE ts WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ts.t (k int PRIMARY KEY, v int)",
    ]
    .into_iter()
    .enumerate()
    {
        send(&mut s, 4, i as i16, QUERY, &query_body(q));
        assert_eq!(read(&mut s).unwrap().opcode, RESULT);
    }
    send(
        &mut s,
        4,
        5,
        QUERY,
        &query_at("INSERT INTO ts.t (k, v) VALUES (1, 1)", 12_345),
    );
    assert_eq!(read(&mut s).unwrap().opcode, RESULT);
    send(
        &mut s,
        4,
        6,
        QUERY,
        &query_at(
            "INSERT INTO ts.t (k, v) VALUES (2, 2) USING TIMESTAMP 5",
            99,
        ),
    );
    assert_eq!(read(&mut s).unwrap().opcode, RESULT);
    send(
        &mut s,
        4,
        7,
        0x0D,
        &batch_at("INSERT INTO ts.t (k, v) VALUES (3, 3)", 777),
    );
    assert_eq!(read(&mut s).unwrap().opcode, RESULT);
    // An older client timestamp loses to the newer write, as reconciliation says.
    send(
        &mut s,
        4,
        8,
        QUERY,
        &query_at("UPDATE ts.t SET v = 9 WHERE k = 1", 12_000),
    );
    assert_eq!(read(&mut s).unwrap().opcode, RESULT);

    let rows = Session::new(&server.db)
        .query("SELECT k, v, writetime(v) FROM ts.t")
        .unwrap();
    let mut got: Vec<(i32, i32, i64)> = rows
        .to_vecs()
        .iter()
        .map(|r| {
            let int = |i: usize| i32::from_be_bytes(r[i].clone().unwrap().try_into().unwrap());
            let wt = i64::from_be_bytes(r[2].clone().unwrap().try_into().unwrap());
            (int(0), int(1), wt)
        })
        .collect();
    got.sort();
    assert_eq!(got, [(1, 1, 12_345), (2, 2, 5), (3, 3, 777)]);
}
