//! Values bound by name (the QUERY/EXECUTE flag 0x40): each `:name` marker takes the value sent
//! under its name, whatever the order they were sent in; a name no marker has is refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use supercolumn_cql::{CqlResult, Session};
use support::*;

/// A v4 QUERY body with values sent by name.
fn named_query(q: &str, values: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = (q.len() as i32).to_be_bytes().to_vec();
    b.extend_from_slice(q.as_bytes());
    b.extend_from_slice(&1u16.to_be_bytes());
    b.push(0x01 | 0x40);
    b.extend_from_slice(&(values.len() as u16).to_be_bytes());
    for (name, v) in values {
        b.extend_from_slice(&(name.len() as u16).to_be_bytes());
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(&(v.len() as i32).to_be_bytes());
        b.extend_from_slice(v);
    }
    b
}

#[test]
fn values_sent_by_name_reach_the_markers_of_that_name() {
    let server = start(|_| {});
    Session::new(&server.db)
        .execute(
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
             CREATE TABLE ks.t (k int, c int, v text, PRIMARY KEY (k, c))",
        )
        .unwrap();
    let mut s = ready(server.addr);
    let k = 5i32.to_be_bytes();
    let c = 9i32.to_be_bytes();
    send(
        &mut s,
        4,
        1,
        QUERY,
        &named_query(
            "INSERT INTO ks.t (k, c, v) VALUES (:k, :c, :v)",
            &[("v", b"hello"), ("c", &c), ("k", &k)],
        ),
    );
    let f = read(&mut s).unwrap();
    assert_eq!(f.opcode, RESULT, "{f:?}");
    match Session::new(&server.db)
        .execute("SELECT c, v FROM ks.t WHERE k = 5")
        .unwrap()
        .remove(0)
    {
        CqlResult::Rows(r) => assert_eq!(
            r.to_vecs(),
            vec![vec![Some(c.to_vec()), Some(b"hello".to_vec())]]
        ),
        other => panic!("{other:?}"),
    }
    // A name that is no marker's, and a marker left without a value.
    for values in [
        &[("v", &b"x"[..]), ("c", &c), ("k", &k), ("w", &k)][..],
        &[("v", &b"x"[..]), ("k", &k)][..],
    ] {
        send(
            &mut s,
            4,
            2,
            QUERY,
            &named_query("INSERT INTO ks.t (k, c, v) VALUES (:k, :c, :v)", values),
        );
        let (code, message) = read(&mut s).unwrap().error();
        assert_eq!(code, 0x2200, "{message}");
    }
}
