//! A client that pipelines large answers and never reads them holds at most its connection's
//! share of answer bytes plus what its running requests build; the server goes on serving
//! others. Alone in its test binary: it measures the process's resident memory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Write;
use std::time::{Duration, Instant};

use supercolumn_cql::Session;
use support::*;

#[test]
fn a_client_that_never_reads_holds_about_its_share_of_answers() {
    let server = start(|c| {
        c.max_answer_bytes_per_connection = 4 << 20;
        c.max_running_per_connection = 4;
        c.write_timeout = Duration::from_secs(4);
    });
    let mut s = Session::new(&server.db);
    s.execute(
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
         CREATE TABLE ks.t (k int, c int, v blob, PRIMARY KEY (k, c))",
    )
    .unwrap();
    let mut s = Session::new(&server.db);
    s.set_keyspace(Some("ks".into()));
    let p = s
        .prepare("INSERT INTO t (k, c, v) VALUES (1, ?, ?)")
        .unwrap();
    let value = vec![7u8; 1000];
    for c in 0..1000i32 {
        let c = c.to_be_bytes();
        s.execute_prepared(&p, &[Some(&c[..]), Some(&value[..])])
            .unwrap();
    }
    // About 1 MB an answer; 300 of them pipelined, none read.
    let before = rss();
    let mut greedy = ready(server.addr);
    let q = frame(4, 1, QUERY, &query_body("SELECT * FROM ks.t WHERE k = 1"));
    let flood: Vec<u8> = q.iter().copied().cycle().take(q.len() * 300).collect();
    greedy.write_all(&flood).unwrap();
    let mut peak = 0;
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(3) {
        peak = peak.max(rss().saturating_sub(before));
        std::thread::sleep(Duration::from_millis(20));
    }
    // Another client is served meanwhile.
    serves_a_query_within(server.addr, Duration::from_secs(1));
    // Share (4 MiB) + 4 running (4 MB) + socket buffers; before, every answer was kept
    // (300 MB).
    assert!(peak < 64 << 20, "grew by {} MiB", peak >> 20);
    drop(greedy);
}
