//! Distinct statements prepared by the thousand hold no more than the prepared cache's bound
//! in bytes (each counted by what it holds, not by its text). Alone in its test binary: it
//! measures the process's resident memory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use supercolumn_cql::Session;
use support::*;

const PREPARE: u8 = 0x09;

#[test]
fn many_large_prepared_statements_stay_within_the_cache_bound() {
    let server = start(|_| {});
    Session::new(&server.db)
        .execute(
            "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
             CREATE TABLE ks.t (k int, c int, v int, PRIMARY KEY (k, c))",
        )
        .unwrap();
    let mut s = ready(server.addr);
    let list: String = (0..9000).map(|i| format!("{},", i % 10)).collect();
    let before = rss();
    // 400 distinct statements of 18 KB, each holding about 1 MB once prepared: 400 MB before
    // the cache counted what they hold.
    for n in 0..400 {
        let q = format!("SELECT * FROM ks.t WHERE k = {n} AND c IN ({list}0)");
        let mut body = (q.len() as i32).to_be_bytes().to_vec();
        body.extend_from_slice(q.as_bytes());
        send(&mut s, 4, 1, PREPARE, &body);
        assert_eq!(read(&mut s).unwrap().opcode, RESULT);
    }
    let grew = rss().saturating_sub(before);
    // The bound (64 MiB) and what parsing left to the allocator.
    assert!(grew < 160 << 20, "grew by {} MiB", grew >> 20);
}
