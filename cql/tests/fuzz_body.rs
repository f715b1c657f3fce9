//! The `cql_parse` fuzz target's body (see `fuzz/`) on random and mutated statements, so CI
//! exercises it without a nightly compiler: it may not panic, and must finish.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::fuzz_input::run;
use supercolumn_cql::fuzz;

#[test]
fn cql_parse_survives_random_and_mutated_statements() {
    let seeds: Vec<Vec<u8>> = [
        "CREATE TABLE example (partitionKey1 text, partitionKey2 text, clusterKey1 text, clusterKey2 text, normalField1 text, PRIMARY KEY ((partitionKey1, partitionKey2), clusterKey1, clusterKey2)) WITH CLUSTERING ORDER BY (clusterKey1 DESC);",
        "CREATE TABLE \"Odd \"\"name\"\"\" (\"Key\" int PRIMARY KEY, \"select\" blob, v map<text, frozen<list<int>>>);",
        "CREATE TABLE IF NOT EXISTS t (\"Key\" int, \"select\" blob, \"a\"\"b\" text, \"primary\" int, PRIMARY KEY ((\"Key\", \"primary\"), \"select\")) WITH CLUSTERING ORDER BY (\"select\" DESC);",
        "INSERT INTO t (a, b) VALUES (1, 'x''y') USING TTL 10 AND TIMESTAMP 5; SELECT a, WRITETIME(b) FROM ks.t WHERE a IN (1, 2) AND c >= ? ORDER BY c DESC LIMIT 3 ALLOW FILTERING",
        "BEGIN BATCH UPDATE t SET m['k'] = 0x00ff, l = l + [1.5e3] WHERE k = now(); DELETE FROM t WHERE token(k) > token(:x) APPLY BATCH",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let body = |b: &[u8]| fuzz::cql_parse(b).map(|n| n as u64);
    let valid = run(&seeds, body, 5000, 4);
    assert!(valid > 0, "no input parsed");
}
