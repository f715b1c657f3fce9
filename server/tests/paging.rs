//! Paging over the native protocol: a result pages through every row once at any page size,
//! each page read from where the last ended; a paging state opens only for the statement,
//! keyspace, values and user it was given for (it is sealed with a keyed MAC), so a forged or
//! borrowed state reads nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use supercolumn_cql::Session;
use support::*;

fn page_through(s: &mut std::net::TcpStream, q: &str, size: i32) -> (Vec<i32>, usize) {
    let (mut seen, mut pages, mut state) = (Vec::new(), 0, None::<Vec<u8>>);
    loop {
        send(s, 4, 1, QUERY, &paged_query_body(q, size, state.as_deref()));
        let (rows, next) = rows_result(&read(s).unwrap());
        assert!(rows.len() <= size as usize);
        seen.extend(
            rows.iter()
                .map(|r| i32::from_be_bytes(r[0].as_deref().unwrap().try_into().unwrap())),
        );
        pages += 1;
        match next {
            Some(n) => state = Some(n),
            None => return (seen, pages),
        }
    }
}

#[test]
fn a_partition_pages_through_once_at_every_page_size() {
    let server = start(|_| {});
    let mut cql = Session::new(&server.db);
    cql.execute(
        "CREATE KEYSPACE pf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
         CREATE TABLE pf.t (k int, c int, v int, PRIMARY KEY (k, c))",
    )
    .unwrap();
    let p = cql
        .prepare("INSERT INTO pf.t (k, c, v) VALUES (1, ?, 0)")
        .unwrap();
    for c in 0..2000i32 {
        cql.execute_prepared(&p, &[Some(&c.to_be_bytes()[..])])
            .unwrap();
    }
    let mut s = ready(server.addr);
    for size in [10, 100, 5000] {
        let (seen, pages) = page_through(&mut s, "SELECT c FROM pf.t WHERE k = 1", size);
        assert_eq!(seen, (0..2000).collect::<Vec<_>>(), "by {size}");
        // A full last page may be followed by an empty one, as Cassandra's may.
        let least = 2000usize.div_ceil(size as usize);
        assert!(
            (least..=least + 1).contains(&pages),
            "{pages} pages by {size}"
        );
    }
    // A scan pages too.
    let (seen, _) = page_through(&mut s, "SELECT c FROM pf.t", 7);
    assert_eq!(seen.len(), 2000);
}

#[test]
fn a_paging_state_reads_only_the_statement_it_was_given_for() {
    let server = start(|_| {});
    Session::new(&server.db)
        .execute(
            "CREATE KEYSPACE pf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
             CREATE TABLE pf.public (k int, c int, v int, PRIMARY KEY (k, c));
             CREATE TABLE pf.secret (k int, c int, v int, PRIMARY KEY (k, c));
             INSERT INTO pf.public (k, c, v) VALUES (1, 1, 1);
             INSERT INTO pf.public (k, c, v) VALUES (1, 2, 2);
             INSERT INTO pf.secret (k, c, v) VALUES (1, 1, 100);
             INSERT INTO pf.secret (k, c, v) VALUES (1, 2, 200);
             INSERT INTO pf.secret (k, c, v) VALUES (1, 3, 300)",
        )
        .unwrap();
    let mut s = ready(server.addr);
    send(
        &mut s,
        4,
        1,
        QUERY,
        &paged_query_body("SELECT v FROM pf.secret WHERE k = 1", 1, None),
    );
    let (_, state) = rows_result(&read(&mut s).unwrap());
    let state = state.unwrap();
    // Another statement, with the secret's state: refused, nothing read.
    let other = "SELECT v FROM pf.public WHERE k = 1";
    send(
        &mut s,
        4,
        2,
        QUERY,
        &paged_query_body(other, 1, Some(&state)),
    );
    let f = read(&mut s).unwrap();
    assert_eq!(f.error().0, 0x000A, "{f:?}");
    // A state with a byte changed: refused.
    for i in 0..state.len() {
        let mut forged = state.clone();
        forged[i] ^= 0x40;
        let q = "SELECT v FROM pf.secret WHERE k = 1";
        send(&mut s, 4, 3, QUERY, &paged_query_body(q, 1, Some(&forged)));
        assert_eq!(read(&mut s).unwrap().error().0, 0x000A);
    }
    // The state as given still pages its own statement.
    send(
        &mut s,
        4,
        4,
        QUERY,
        &paged_query_body("SELECT v FROM pf.secret WHERE k = 1", 1, Some(&state)),
    );
    let (rows, _) = rows_result(&read(&mut s).unwrap());
    assert_eq!(rows[0][0].as_deref(), Some(&200i32.to_be_bytes()[..]));
}
