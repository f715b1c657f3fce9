//! Native functions as Cassandra users call them: in selectors (`toDate(ts)`, `token(k)`,
//! `CAST`, arithmetic, aliases, `blobAsText`) and where values stand (`now()`,
//! `toTimestamp(now())`, `textAsBlob('x')`, calls inside collection literals), with the
//! result column names and types, and the refusals, Cassandra gives.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, names, open_cql, open_cql_with, refused, shown};
use supercolumn::model::partitioner::Partitioner;
use supercolumn::Options;
use supercolumn_cql::CqlResult;

#[test]
fn selectors_call_functions_and_name_their_columns_as_cassandra_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, c int, ts timestamp, u timeuuid, v int, b bigint, d double, s text,
         PRIMARY KEY (k, c))",
    );
    let mut cql = ks_session(&db);
    cql.execute(
        "INSERT INTO t (k, c, ts, u, v, b, d, s) VALUES (1, 2, '2011-02-03 04:05:06+0000',
         50554d6e-29bb-11e5-b345-feff819cdc9f, 7, 40, 2.5, 'hi')",
    )
    .unwrap();
    let q =
        "SELECT toDate(ts), toUnixTimestamp(ts), toTimestamp(u), v + 1, v * b, d / 2, -v, v % 4,
             CAST(v AS text), CAST(b AS int), textAsBlob(s), blobAsText(textAsBlob(s)) AS back
             FROM t WHERE k = 1";
    assert_eq!(
        shown(&mut cql, q),
        ["2011-02-03|1296705906000|2015-07-14 00:00:18.805000+0000|8|280|1.25|-7|3|7|40|0x6869|hi"]
    );
    assert_eq!(
        names(&mut cql, q),
        [
            "system.todate(ts):date",
            "system.tounixtimestamp(ts):bigint",
            "system.totimestamp(u):timestamp",
            "v + 1:int",
            "v * b:bigint",
            "d / 2:double",
            "-v:int",
            "v % 4:int",
            "cast(v as text):text",
            "cast(b as int):int",
            "system.textasblob(s):blob",
            "back:text",
        ]
    );
    // Aliases rename plain columns too; a function's null argument gives null.
    assert_eq!(
        names(
            &mut cql,
            "SELECT k AS key, v AS value, writetime(v) AS w FROM t"
        ),
        ["key:int", "value:int", "w:bigint"]
    );
    cql.execute("INSERT INTO t (k, c) VALUES (2, 0)").unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT v + 1, toDate(ts) FROM t WHERE k = 2"),
        ["null|null"]
    );
}

#[test]
fn token_selects_each_partitions_murmur3_token() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql_with(
        dir.path(),
        Options::default().with_partitioner(Partitioner::Murmur3),
        "CREATE TABLE t (k int PRIMARY KEY, v int); CREATE TABLE c (a text, b int, v int, PRIMARY KEY ((a, b)))",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, v) VALUES (1, 1)").unwrap();
    // Cassandra's Murmur3 token of the int 1.
    assert_eq!(
        shown(&mut cql, "SELECT token(k), k FROM t"),
        ["-4069959284402364209|1"]
    );
    assert_eq!(
        names(&mut cql, "SELECT token(k) FROM t"),
        ["system.token(k):bigint"]
    );
    let e = refused(&mut cql, "SELECT token(v) FROM t");
    assert!(e.contains("partition key columns in order"), "{e}");
    cql.execute("INSERT INTO c (a, b, v) VALUES ('x', 2, 3)")
        .unwrap();
    let by_fn = shown(&mut cql, "SELECT token(a, b) FROM c");
    assert_eq!(by_fn.len(), 1);
    let e = refused(&mut cql, "SELECT token(b, a) FROM c");
    assert_eq!(
        e,
        "Type error: b cannot be passed as argument 0 of function system.token of type text"
    );
}

#[test]
fn function_calls_stand_where_values_do() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int PRIMARY KEY, u timeuuid, id uuid, ts timestamp, d date, b blob,
         l list<timeuuid>, m map<text, blob>)",
    );
    let mut cql = ks_session(&db);
    cql.execute(
        "INSERT INTO t (k, u, id, ts, d, b, l, m) VALUES (1, now(), uuid(), toTimestamp(now()),
         currentDate(), textAsBlob('x'), [now(), now()], {'a': textAsBlob('y')})",
    )
    .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT b, m FROM t WHERE k = 1"),
        ["0x78|{'a': 0x79}"]
    );
    let times = shown(
        &mut cql,
        "SELECT toUnixTimestamp(u), toUnixTimestamp(ts), writetime(b) FROM t WHERE k = 1",
    );
    let parts: Vec<i64> = times[0].split('|').map(|x| x.parse().unwrap()).collect();
    assert!((parts[0] - parts[1]).abs() < 5_000, "{parts:?}");
    assert!((parts[2] / 1000 - parts[1]).abs() < 5_000, "{parts:?}");
    let version = shown(&mut cql, "SELECT id FROM t WHERE k = 1");
    assert_eq!(
        version[0].as_bytes()[14],
        b'4',
        "uuid() is a random (version 4) UUID"
    );
    cql.execute("UPDATE t SET b = bigintAsBlob(7) WHERE k = 2")
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT blobAsBigint(b) FROM t WHERE k = 2"),
        ["7"]
    );
    assert_eq!(
        shown(&mut cql, "SELECT k FROM t WHERE k = blobAsInt(0x00000002)"),
        ["2"]
    );
    // Prepared: chosen and typed once, evaluated per execution.
    let p = cql
        .prepare("INSERT INTO t (k, u) VALUES (?, now())")
        .unwrap();
    for k in [3i32, 4] {
        cql.execute_prepared(&p, &[Some(&k.to_be_bytes()[..])])
            .unwrap();
    }
    let us = shown(&mut cql, "SELECT u FROM t WHERE k IN (3, 4)");
    assert_eq!(us.len(), 2);
    assert_ne!(us[0], us[1], "now() is evaluated per execution");
}

#[test]
fn mistyped_and_unknown_calls_are_refused_with_cassandras_messages() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int PRIMARY KEY, v int, ts timestamp)",
    );
    let mut cql = ks_session(&db);
    let e = refused(&mut cql, "INSERT INTO t (k, v) VALUES (1, now())");
    assert!(e.contains("Type error") && e.contains("system.now"), "{e}");
    let e = refused(&mut cql, "INSERT INTO t (k, v) VALUES (1, nosuch(1))");
    assert_eq!(e, "Unknown function 'nosuch'");
    let e = refused(&mut cql, "SELECT nosuch(v) FROM t");
    assert_eq!(e, "Unknown function 'nosuch'");
    let e = refused(&mut cql, "SELECT toDate(v) FROM t");
    assert!(e.contains("none of its type signatures match"), "{e}");
    let e = refused(&mut cql, "INSERT INTO t (k, v) VALUES (1, blobAsInt(0x01))");
    assert!(e.contains("not a valid binary representation"), "{e}");
    let e = cql
        .prepare("INSERT INTO t (k, v) VALUES (?, now())")
        .unwrap_err();
    assert!(
        e.to_string().contains("Type error"),
        "refused at PREPARE: {e}"
    );
    let e = refused(&mut cql, "SELECT CAST(ts AS int) FROM t");
    assert!(e.contains("cannot be cast"), "{e}");
    cql.execute("INSERT INTO t (k, v) VALUES (1, 0)").unwrap();
    let e = refused(&mut cql, "SELECT 1 / v FROM t");
    assert!(e.contains("/ by zero"), "{e}");
}

#[test]
fn timestamp_literals_in_every_form_cassandra_takes_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int PRIMARY KEY, ts timestamp)",
    );
    let mut cql = ks_session(&db);
    let base = 1_296_705_900_000i64; // 2011-02-03 04:05:00 UTC
    for (text, ms) in [
        ("2011-02-03", 1_296_691_200_000),
        ("2011-02-03+0000", 1_296_691_200_000),
        ("2011-02-03 04:05", base),
        ("2011-02-03 04:05+0000", base),
        ("2011-02-03 04:05:00", base),
        ("2011-02-03 04:05:00+0000", base),
        ("2011-02-03 04:05:00.000", base),
        ("2011-02-03 04:05:00.000+0000", base),
        ("2011-02-03T04:05", base),
        ("2011-02-03T04:05+0000", base),
        ("2011-02-03T04:05:00", base),
        ("2011-02-03T04:05:00+0000", base),
        ("2011-02-03T04:05:00.000+0000", base),
        ("2011-02-03T04:05:00.12Z", base + 120),
        ("2011-02-03 04:05:00.1+0100", base + 100 - 3_600_000),
        ("2011-02-03 04:05:00-0130", base + 5_400_000),
        // As cqlsh prints one: zeros past the millisecond lose nothing.
        ("2011-02-03 04:05:00.120000+0000", base + 120),
    ] {
        cql.execute(&format!("INSERT INTO t (k, ts) VALUES (1, '{text}')"))
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(
            shown(&mut cql, "SELECT toUnixTimestamp(ts) FROM t WHERE k = 1"),
            [ms.to_string()],
            "{text}"
        );
    }
    for text in [
        "2011-02-03 04:05:00.0001",
        "2011-02-03 04:05:00.123456",
        "2011-02-03 04:05:00.",
        "2011-02-30",
        "2011-02-03 25:00",
        "yesterday",
    ] {
        let e = refused(
            &mut cql,
            &format!("INSERT INTO t (k, ts) VALUES (1, '{text}')"),
        );
        assert!(e.contains("timestamp"), "{text}: {e}");
    }
}

#[test]
fn elements_and_slices_of_maps_and_sets_are_selected() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int PRIMARY KEY, m map<text, int>, s set<int>, fm frozen<map<int, text>>,
         l list<int>)",
    );
    let mut cql = ks_session(&db);
    cql.execute(
        "INSERT INTO t (k, m, s, fm, l) VALUES (1, {'a': 1, 'b': 2, 'c': 3, 'd': 4}, {5, 10, 15},
         {1: 'x', 2: 'y'}, [7])",
    )
    .unwrap();
    cql.execute("INSERT INTO t (k) VALUES (2)").unwrap();
    let q = "SELECT m['b'], m['z'], s[10], s[11], fm[2], m['b'..'c'], m[..'a'], m['c'..], s[6..15],
             m['x'..'y'] FROM t WHERE k IN (1, 2)";
    assert_eq!(
        shown(&mut cql, q),
        [
            "2|null|10|null|y|{'b': 2, 'c': 3}|{'a': 1}|{'c': 3, 'd': 4}|{10, 15}|null",
            "null|null|null|null|null|null|null|null|null|null"
        ]
    );
    assert_eq!(
        names(&mut cql, "SELECT m['b'], m['b'..'c'], s[..3] FROM t"),
        [
            "m['b']:int",
            "m['b'..'c']:map<text, int>",
            "s[..3]:set<int>"
        ]
    );
    assert_eq!(
        refused(&mut cql, "SELECT l[0] FROM t"),
        "Element selection is only allowed on sets and maps, but l is a list"
    );
    let e = refused(&mut cql, "SELECT m[1] FROM t");
    assert!(e.contains("Invalid INTEGER constant (1)"), "{e}");
}

#[test]
fn select_json_and_to_json_encode_every_type_as_cassandra_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, \"Mixed\" text, ts timestamp, d double, f float, m map<int, text>,
         s set<text>, l list<boolean>, u uuid, b blob, dec decimal, tu tuple<int, text>,
         PRIMARY KEY (k, \"Mixed\"))",
    );
    let mut cql = ks_session(&db);
    cql.execute(
        "INSERT INTO t (k, \"Mixed\", ts, d, f, m, s, l, u, b, dec, tu) VALUES (1, 'a\"b', '2011-02-03 04:05:06.789+0000',
         1e10, 2.5, {1: 'one', 2: 'two'}, {'x'}, [true, false], 5132b130-ae79-11e4-ab27-0800200c9a66,
         0xcafe, 12.50, (3, null))",
    )
    .unwrap();
    cql.execute("INSERT INTO t (k, \"Mixed\") VALUES (2, 'z')")
        .unwrap();
    let rows = cql.query("SELECT JSON * FROM t").unwrap();
    assert_eq!(rows.columns()[0].0, "[json]");
    assert_eq!(
        rows.displayed().concat(),
        [
            r#"{"k": 1, "\"Mixed\"": "a\"b", "b": "0xcafe", "d": 1.0E10, "dec": 12.50, "f": 2.5, "l": [true, false], "m": {"1": "one", "2": "two"}, "s": ["x"], "ts": "2011-02-03 04:05:06.789Z", "tu": [3, null], "u": "5132b130-ae79-11e4-ab27-0800200c9a66"}"#,
            r#"{"k": 2, "\"Mixed\"": "z", "b": null, "d": null, "dec": null, "f": null, "l": null, "m": null, "s": null, "ts": null, "tu": null, "u": null}"#,
        ]
    );
    assert_eq!(
        shown(&mut cql, "SELECT JSON k, count(*) AS n FROM t WHERE k = 1"),
        [r#"{"k": 1, "n": 1}"#]
    );
    assert_eq!(
        shown(
            &mut cql,
            "SELECT toJson(m), toJson(ts), toJson(d) FROM t WHERE k = 2"
        ),
        ["null|null|null"]
    );
    assert_eq!(
        shown(&mut cql, "SELECT toJson(s), toJson(tu) FROM t WHERE k = 1"),
        [r#"["x"]|[3, null]"#]
    );
    // `json` stays a column's name where one is expected.
    let db2 = tempfile::tempdir().unwrap();
    let db2 = open_cql(db2.path(), "CREATE TABLE j (k int PRIMARY KEY, json text)");
    let mut cql = ks_session(&db2);
    cql.execute("INSERT INTO j (k, json) VALUES (1, 'x')")
        .unwrap();
    assert_eq!(shown(&mut cql, "SELECT json FROM j"), ["x"]);
    assert_eq!(
        shown(&mut cql, "SELECT JSON json FROM j"),
        [r#"{"json": "x"}"#]
    );
    // So does `distinct`, beside `json`.
    cql.execute("CREATE TABLE dj (distinct int, json int, v int, PRIMARY KEY (distinct, json))")
        .unwrap();
    cql.execute("INSERT INTO dj (distinct, json, v) VALUES (0, 1, 2)")
        .unwrap();
    assert_eq!(shown(&mut cql, "SELECT distinct, json FROM dj"), ["0|1"]);
    assert_eq!(shown(&mut cql, "SELECT json, distinct FROM dj"), ["1|0"]);
    assert_eq!(shown(&mut cql, "SELECT DISTINCT distinct FROM dj"), ["0"]);
}

#[test]
fn insert_json_reads_every_type_and_round_trips_select_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int, \"Mixed\" text, ts timestamp, d double, m map<int, text>,
         s set<text>, l list<boolean>, u uuid, b blob, dec decimal, tu tuple<int, text>, v bigint,
         PRIMARY KEY (k, \"Mixed\"))",
    );
    let mut cql = ks_session(&db);
    let json = r#"{"k": 1, "\"Mixed\"": "a\"b", "b": "0xcafe", "d": 1.0E10, "dec": 12.50, "l": [true, false], "m": {"1": "one", "2": "two"}, "s": ["x"], "ts": "2011-02-03 04:05:06.789Z", "tu": [3, null], "u": "5132b130-ae79-11e4-ab27-0800200c9a66", "v": "42"}"#;
    cql.execute(&format!(
        "INSERT INTO t JSON '{}'",
        json.replace('\'', "''")
    ))
    .unwrap();
    let back = shown(&mut cql, "SELECT JSON * FROM t WHERE k = 1");
    assert_eq!(back, [json.replace(r#""v": "42""#, r#""v": 42"#)]);
    // DEFAULT NULL (the default) clears what the object leaves out; DEFAULT UNSET keeps it.
    cql.execute(r#"INSERT INTO t JSON '{"k": 1, "\"Mixed\"": "z", "v": 1}'"#)
        .unwrap();
    cql.execute(r#"INSERT INTO t JSON '{"k": 1, "\"Mixed\"": "z", "d": 2}'"#)
        .unwrap();
    assert_eq!(
        shown(
            &mut cql,
            "SELECT v, d FROM t WHERE k = 1 AND \"Mixed\" = 'z'"
        ),
        ["null|2"]
    );
    cql.execute(r#"INSERT INTO t JSON '{"k": 1, "\"Mixed\"": "z", "v": 5}' DEFAULT UNSET"#)
        .unwrap();
    assert_eq!(
        shown(
            &mut cql,
            "SELECT v, d FROM t WHERE k = 1 AND \"Mixed\" = 'z'"
        ),
        ["5|2"]
    );
    // Bound, prepared, with IF NOT EXISTS.
    let p = cql.prepare("INSERT INTO t JSON ? IF NOT EXISTS").unwrap();
    let row = br#"{"k": 2, "\"Mixed\"": "q", "v": 7}"#;
    cql.execute_prepared(&p, &[Some(row)]).unwrap();
    assert_eq!(shown(&mut cql, "SELECT v FROM t WHERE k = 2"), ["7"]);
    for (bad, want) in [
        (r#"{"k": 1, "nope": 1}"#, "unrecognized column: nope"),
        (r#"{"k": "x"}"#, "k"),
        (r#"[1]"#, "non-map"),
        (r#"{"k": 1"#, "Could not decode JSON"),
    ] {
        let e = refused(&mut cql, &format!("INSERT INTO t JSON '{bad}'"));
        assert!(e.contains(want), "{bad}: {e}");
    }
    let e = refused(&mut cql, r#"INSERT INTO t JSON '{"k": 1, "Mixed": "z"}'"#);
    assert!(e.contains("unrecognized column: Mixed"), "{e}");
    let e = cql
        .prepare(r#"INSERT INTO t JSON '{"nope": 1}'"#)
        .unwrap_err();
    assert!(
        e.to_string().contains("unrecognized column"),
        "at PREPARE: {e}"
    );
}

#[test]
fn vector_similarities_score_as_cassandra_5() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int PRIMARY KEY, v vector<float, 2>, i vector<int, 2>)",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, v, i) VALUES (1, [1, 0], [1, 2])")
        .unwrap();
    assert_eq!(
        shown(
            &mut cql,
            "SELECT similarity_cosine(v, [0, 1]), similarity_cosine(v, v), similarity_euclidean(v, [1, 2]), similarity_dot_product([0.5, 0.5], v) FROM t"
        ),
        ["0.5|1|0.2|0.75"]
    );
    assert_eq!(
        names(&mut cql, "SELECT similarity_cosine(v, [0, 1]) FROM t"),
        ["system.similarity_cosine(v, [0, 1]):float"]
    );
    let e = refused(&mut cql, "SELECT similarity_cosine(i, [0, 1]) FROM t");
    assert!(e.contains("requires a float vector"), "{e}");
    let e = refused(&mut cql, "SELECT similarity_cosine(v, [0, 0]) FROM t");
    assert!(e.contains("all-zero"), "{e}");
    let e = refused(&mut cql, "SELECT similarity_cosine(v, [0, 0, 1]) FROM t");
    assert!(e.contains("expected 2 elements"), "{e}");
}

#[test]
fn from_json_reads_a_value_as_the_column_it_stands_for() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int PRIMARY KEY, m map<text, int>, ts timestamp, l list<int>)",
    );
    let mut cql = ks_session(&db);
    cql.execute(
        r#"INSERT INTO t (k, m, ts, l) VALUES (fromJson('1'), fromJson('{"a": 1}'), fromJson('"2011-02-03 04:05:06.789Z"'), [fromJson('7')])"#,
    )
    .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT JSON m, ts, l FROM t WHERE k = 1"),
        [r#"{"m": {"a": 1}, "ts": "2011-02-03 04:05:06.789Z", "l": [7]}"#]
    );
    let e = refused(&mut cql, "INSERT INTO t (k, m) VALUES (2, fromJson('[1]'))");
    assert!(e.contains("is not a map<text, int>"), "{e}");
}

#[test]
fn what_a_client_could_make_unbounded_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int PRIMARY KEY, v int, d decimal)",
    );
    let mut cql = ks_session(&db);
    // A chain of operations nests the tree evaluation walks: bounded at parse time.
    let long = format!("SELECT v{} FROM t", " + 1".repeat(100));
    let e = cql.execute(&long).unwrap_err();
    assert!(e.to_string().contains("at most 64 operations"), "{e}");
    let fine = format!("SELECT v{} FROM t", " + 1".repeat(64));
    cql.execute(&fine).unwrap();
    // A decimal whose scale would make its arithmetic take the process's memory.
    cql.execute("INSERT INTO t (k, v, d) VALUES (1, 1, blobAsDecimal(0x7fffffff01))")
        .unwrap();
    let e = refused(&mut cql, "SELECT CAST(d AS int) FROM t");
    assert!(e.contains("beyond"), "{e}");
    let e = refused(&mut cql, "SELECT sum(d) FROM t");
    assert!(e.contains("beyond"), "{e}");
}

#[test]
fn a_function_s_argument_may_be_a_bind_marker_typed_as_its_parameter() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE f (k int PRIMARY KEY, b blob, v int, t timestamp)",
    );
    let mut cql = ks_session(&db);
    let insert = cql
        .prepare("INSERT INTO f (k, b, v) VALUES (?, intAsBlob(?), blobAsInt(:raw))")
        .unwrap();
    let bound: Vec<(String, String)> = insert
        .bind_columns()
        .into_iter()
        .map(|(n, ty)| (n, ty.to_string()))
        .collect();
    let want = [
        ("k", "int"),
        ("arg0(system.intasblob)", "int"),
        ("raw", "blob"),
    ];
    assert_eq!(bound, want.map(|(n, t)| (n.to_string(), t.to_string())));
    let (k, seven, raw) = (1i32.to_be_bytes(), 7i32.to_be_bytes(), [0u8, 0, 1, 0]);
    cql.execute_prepared(&insert, &[Some(&k), Some(&seven), Some(&raw)])
        .unwrap();
    assert_eq!(
        shown(&mut cql, "SELECT b, v FROM f WHERE k = 1"),
        ["0x00000007|256"]
    );
    // A value that is not of the parameter's type is refused, and nothing is written.
    let e = cql
        .execute_prepared(
            &insert,
            &[Some(&2i32.to_be_bytes()), Some(&[1, 2]), Some(&raw)],
        )
        .unwrap_err();
    assert!(e.to_string().contains("function's argument"), "{e}");
    assert!(shown(&mut cql, "SELECT v FROM f WHERE k = 2").is_empty());
    // In a WHERE, and nested in another call; null in, null out.
    let read = cql
        .prepare("SELECT v FROM f WHERE k = blobAsInt(intAsBlob(?))")
        .unwrap();
    let bound: Vec<String> = read.bind_columns().into_iter().map(|(n, _)| n).collect();
    assert_eq!(bound, ["arg0(system.intasblob)"]);
    let CqlResult::Rows(rows) = cql.execute_prepared(&read, &[Some(&k)]).unwrap() else {
        panic!("not rows");
    };
    assert_eq!(rows.displayed(), [["256"]]);
    let update = cql
        .prepare("UPDATE f SET b = intAsBlob(?) WHERE k = 1")
        .unwrap();
    cql.execute_prepared(&update, &[None]).unwrap();
    assert_eq!(shown(&mut cql, "SELECT b FROM f WHERE k = 1"), ["null"]);
    // A marker no one signature types is refused, as Cassandra refuses it.
    let e = match cql.prepare("INSERT INTO f (k, t) VALUES (3, toTimestamp(?))") {
        Ok(p) => cql.execute_prepared(&p, &[None]).unwrap_err(),
        Err(e) => e,
    };
    assert!(e.to_string().contains("Ambiguous call to function"), "{e}");
}

#[test]
fn decimal_arithmetic_answers_with_cassandras_digits_and_scale() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE t (k int PRIMARY KEY, d decimal, e decimal, f float)",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO t (k, d, e, f) VALUES (1, 7.50, 0.3, NaN)")
        .unwrap();
    // A quotient to 32 significant digits, or exact and stripped; a remainder at the
    // dividend's scale; a sum at the larger scale.
    assert_eq!(
        shown(
            &mut cql,
            "SELECT d / 3, d / 2, 1 / e, d % 2, d % e, d + e, d * e, d - 7.5 FROM t WHERE k = 1"
        ),
        ["2.5|3.75|3.33333333333333333333333333333333|1.50|0.00|7.80|2.250|0.00"]
    );
    let e = refused(&mut cql, "SELECT d / 0 FROM t");
    assert!(
        e.contains("the operation 'decimal / int' failed: BigInteger divide by zero"),
        "{e}"
    );
    let e = refused(&mut cql, "SELECT d % 0 FROM t");
    assert!(e.contains("Division by zero"), "{e}");
    // A float's NaN has no decimal value: refused, never read as zero.
    let e = refused(&mut cql, "SELECT d + f FROM t");
    assert!(
        e.contains("A NaN cannot be converted into a decimal"),
        "{e}"
    );
    let e = refused(&mut cql, "SELECT CAST(f AS decimal) FROM t");
    assert!(
        e.contains("A NaN cannot be converted into a decimal"),
        "{e}"
    );
    // avg is Cassandra's running mean, each step rounded half to even at its scale: 7.50,
    // then 7.50 - 2.625→2.62 = 4.88, then 4.88 - 1.2933→1.29 = 3.59 (not 10.75 / 3 = 3.58).
    cql.execute("CREATE TABLE w (k int, c int, d decimal, PRIMARY KEY (k, c))")
        .unwrap();
    for (c, d) in [(1, "7.50"), (2, "2.25"), (3, "1")] {
        cql.execute(&format!("INSERT INTO w (k, c, d) VALUES (0, {c}, {d})"))
            .unwrap();
    }
    assert_eq!(
        shown(&mut cql, "SELECT avg(d), sum(d) FROM w WHERE k = 0"),
        ["3.59|10.75"]
    );
}

#[test]
fn cassandra_5_snake_case_names_call_the_same_functions() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_cql(
        dir.path(),
        "CREATE TABLE sn (k int PRIMARY KEY, b blob, ts timestamp, j text)",
    );
    let mut cql = ks_session(&db);
    cql.execute("INSERT INTO sn (k, b, ts) VALUES (1, text_as_blob('hi'), to_timestamp(min_timeuuid(5000)))")
        .unwrap();
    cql.execute("UPDATE sn SET j = from_json('\"x\"') WHERE k = 1")
        .unwrap();
    assert_eq!(
        shown(
            &mut cql,
            "SELECT blob_as_text(b), to_unix_timestamp(ts), to_json(k), int_as_blob(k), j FROM sn"
        ),
        ["hi|5000|1|0x00000001|x"]
    );
    assert_eq!(
        shown(
            &mut cql,
            "SELECT k FROM sn WHERE k = blob_as_int(int_as_blob(1))"
        ),
        ["1"]
    );
    assert_eq!(
        refused(&mut cql, "SELECT nosuch_as_blob(k) FROM sn"),
        "Unknown function 'nosuch_as_blob'"
    );
}
