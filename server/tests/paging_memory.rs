//! A SELECT reads about one page from the engine: many pipelined first pages of a large
//! partition hold about a page each, not the partition. Alone in its test binary: it measures
//! the process's resident memory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Write;

use supercolumn_cql::Session;
use support::*;

#[test]
fn pipelined_pages_of_a_large_partition_hold_a_page_each() {
    let server = start(|_| {});
    let mut cql = Session::new(&server.db);
    cql.execute(
        "CREATE KEYSPACE pm WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
         CREATE TABLE pm.t (k int, c int, v blob, PRIMARY KEY (k, c))",
    )
    .unwrap();
    let p = cql
        .prepare("INSERT INTO pm.t (k, c, v) VALUES (1, ?, ?)")
        .unwrap();
    let value = vec![3u8; 200];
    for c in 0..30_000i32 {
        cql.execute_prepared(&p, &[Some(&c.to_be_bytes()[..]), Some(&value)])
            .unwrap();
    }
    server.db.flush_all().unwrap();
    let before = rss();
    // 100 first pages of 10 rows, pipelined: before, each built the whole partition (7 MB of
    // values) before paging it.
    let mut s = ready(server.addr);
    let q = frame(
        4,
        1,
        QUERY,
        &paged_query_body("SELECT * FROM pm.t WHERE k = 1", 10, None),
    );
    let flood: Vec<u8> = q.iter().copied().cycle().take(q.len() * 100).collect();
    s.write_all(&flood).unwrap();
    let mut peak = 0;
    for _ in 0..100 {
        let (rows, state) = rows_result(&read(&mut s).unwrap());
        assert_eq!(rows.len(), 10);
        assert!(state.is_some());
        peak = peak.max(rss().saturating_sub(before));
    }
    assert!(peak < 40 << 20, "grew by {} MiB", peak >> 20);
}
