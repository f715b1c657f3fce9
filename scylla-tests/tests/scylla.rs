//! The Rust `scylla` driver against the server: it connects (reading the system tables), and
//! prepared statements round-trip every type it maps, 10,000 rows page through, batches apply
//! as one, and errors come back as errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../server/tests/support/mod.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use futures::StreamExt;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::statement::batch::Batch;
use scylla::value::CqlTimestamp;

async fn connect(addr: std::net::SocketAddr) -> Session {
    let s = SessionBuilder::new()
        .known_node(addr.to_string())
        .build()
        .await
        .unwrap();
    s.query_unpaged(
        "CREATE KEYSPACE IF NOT EXISTS rs WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        (),
    )
    .await
    .unwrap();
    s.use_keyspace("rs", false).await.unwrap();
    s
}

type Everything = (
    i32,
    i64,
    String,
    Vec<u8>,
    bool,
    f64,
    uuid::Uuid,
    CqlTimestamp,
    IpAddr,
    Vec<i32>,
    BTreeSet<String>,
    BTreeMap<String, i32>,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_round_trip_every_type() {
    let server = support::start(|_| {});
    let s = connect(server.addr).await;
    s.query_unpaged(
        "CREATE TABLE types (k int PRIMARY KEY, i bigint, t text, b blob, f boolean, d double,
         u uuid, ts timestamp, n inet, l list<int>, st set<text>, m map<text, int>)",
        (),
    )
    .await
    .unwrap();
    let insert = s
        .prepare("INSERT INTO types (k, i, t, b, f, d, u, ts, n, l, st, m) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .await
        .unwrap();
    let select = s
        .prepare("SELECT k, i, t, b, f, d, u, ts, n, l, st, m FROM types WHERE k = ?")
        .await
        .unwrap();
    let rows: Vec<Everything> = vec![
        (
            1,
            i64::MIN,
            "naïve ☃".into(),
            vec![0, 255],
            true,
            -0.5,
            uuid::Uuid::from_u128(0x5132_b130_ae79_11e4_ab27_0800_200c_9a66),
            CqlTimestamp(1_374_546_754_299),
            "::1".parse().unwrap(),
            vec![3, 1, 3],
            ["b".to_string(), "a".to_string()].into(),
            [("x".to_string(), 1), ("y".to_string(), -2)].into(),
        ),
        (
            i32::MAX,
            i64::MAX,
            String::new(),
            Vec::new(),
            false,
            f64::MAX,
            uuid::Uuid::nil(),
            CqlTimestamp(-1),
            "10.1.2.3".parse().unwrap(),
            vec![i32::MIN],
            ["".to_string()].into(),
            [(String::new(), 0)].into(),
        ),
    ];
    for r in &rows {
        s.execute_unpaged(&insert, r).await.unwrap();
        let got = s
            .execute_unpaged(&select, (r.0,))
            .await
            .unwrap()
            .into_rows_result()
            .unwrap()
            .single_row::<Everything>()
            .unwrap();
        assert_eq!(&got, r);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_rows_page_through_and_batches_apply() {
    let server = support::start(|_| {});
    let s = std::sync::Arc::new(connect(server.addr).await);
    s.query_unpaged(
        "CREATE TABLE wide (k text, c int, v text, PRIMARY KEY (k, c))",
        (),
    )
    .await
    .unwrap();
    let insert = s
        .prepare("INSERT INTO wide (k, c, v) VALUES (?, ?, ?)")
        .await
        .unwrap();
    // Many requests in flight on the driver's connections at once.
    let writes = (0..10_000).map(|c| {
        let (s, insert) = (s.clone(), insert.clone());
        async move { s.execute_unpaged(&insert, ("p", c, format!("v{c}"))).await }
    });
    let results = futures::stream::iter(writes)
        .buffer_unordered(256)
        .collect::<Vec<_>>()
        .await;
    assert!(results.iter().all(Result::is_ok));

    let mut select = s
        .prepare("SELECT c, v FROM wide WHERE k = ?")
        .await
        .unwrap();
    select.set_page_size(1000);
    let mut stream = s
        .execute_iter(select, ("p",))
        .await
        .unwrap()
        .rows_stream::<(i32, String)>()
        .unwrap();
    let mut n = 0;
    while let Some(row) = stream.next().await {
        let (c, v) = row.unwrap();
        assert_eq!(
            (c, v),
            (n, format!("v{n}")),
            "every row once, in clustering order"
        );
        n += 1;
    }
    assert_eq!(n, 10_000);

    let mut batch = Batch::default();
    batch.append_statement(insert.clone());
    batch.append_statement("UPDATE wide SET v = ? WHERE k = ? AND c = ?");
    s.batch(&batch, (("q", 1, "one"), ("two", "q", 2)))
        .await
        .unwrap();
    let got = s
        .query_unpaged("SELECT c, v FROM wide WHERE k = 'q'", ())
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows::<(i32, String)>()
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    assert_eq!(got, [(1, "one".to_string()), (2, "two".to_string())]);

    // A batch with a bad statement applies nothing.
    let mut bad = Batch::default();
    bad.append_statement(insert);
    bad.append_statement("UPDATE nowhere SET v = ? WHERE k = ?");
    assert!(s.batch(&bad, (("r", 1, "x"), ("y", "r"))).await.is_err());
    let none = s
        .query_unpaged("SELECT c FROM wide WHERE k = 'r'", ())
        .await
        .unwrap()
        .into_rows_result()
        .unwrap()
        .rows_num();
    assert_eq!(none, 0);
    assert!(s.query_unpaged("SELEC nonsense", ()).await.is_err());
}
