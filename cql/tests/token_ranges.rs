//! `token(k)` restrictions as scan tools write them (`token(k) > ? AND token(k) <= ?`, one
//! split after another): every bound strict or not, under the random and Murmur3
//! partitioners, gives exactly the rows whose tokens lie in it; a range that starts past its
//! end is empty (CQL's token ranges do not wrap), as is one past the last token. With an
//! indexed equality too, the index finds the rows and the range keeps its own, without
//! `ALLOW FILTERING`, as Cassandra takes it.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ks_session, open_cql_with, paged, shown};
use supercolumn::{Options, Partitioner};

fn tokens_hold_their_rows(partitioner: Partitioner, min: &str, max: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.partitioner = Some(partitioner);
    let db = open_cql_with(dir.path(), o, "CREATE TABLE t (k int PRIMARY KEY, v int)");
    let mut cql = ks_session(&db);
    for k in 0..200 {
        cql.execute(&format!("INSERT INTO t (k, v) VALUES ({k}, {})", k % 10))
            .unwrap();
    }
    cql.execute("CREATE INDEX ON t (v)").unwrap();
    let mut all: Vec<(i128, i32)> = shown(&mut cql, "SELECT token(k), k FROM t")
        .iter()
        .map(|r| {
            let (t, k) = r.split_once('|').unwrap();
            (t.parse().unwrap(), k.parse().unwrap())
        })
        .collect();
    all.sort();
    let mut keys = |q: &str| -> Vec<i32> {
        let got = paged(&mut cql, &format!("SELECT k FROM t WHERE {q}"), 7);
        got.iter().map(|k| k.parse().unwrap()).collect()
    };
    let want = |f: &dyn Fn(i128) -> bool| -> Vec<i32> {
        all.iter().filter(|(t, _)| f(*t)).map(|(_, k)| *k).collect()
    };
    let picks = [all[0].0, all[57].0, all[58].0, all[199].0];
    for &a in &picks {
        assert_eq!(keys(&format!("token(k) > {a}")), want(&|t| t > a), "> {a}");
        assert_eq!(keys(&format!("token(k) < {a}")), want(&|t| t < a), "< {a}");
        assert_eq!(keys(&format!("token(k) >= {a}")), want(&|t| t >= a));
        for &b in &picks {
            let q = format!("token(k) > {a} AND token(k) <= {b}");
            assert_eq!(keys(&q), want(&|t| t > a && t <= b), "{q}");
            let q = format!("token(k) >= {a} AND token(k) < {b}");
            assert_eq!(keys(&q), want(&|t| t >= a && t < b), "{q}");
        }
    }
    // The splits of the whole ring, as a scan tool walks it, give every row once.
    let mut walked = Vec::new();
    let mut from = min.to_string();
    for &(t, _) in all.iter().step_by(37).skip(1) {
        walked.extend(keys(&format!("token(k) > {from} AND token(k) <= {t}")));
        from = t.to_string();
    }
    walked.extend(keys(&format!("token(k) > {from} AND token(k) <= {max}")));
    assert_eq!(walked, want(&|_| true));
    assert_eq!(keys(&format!("token(k) > {max}")), Vec::<i32>::new());
    // With an indexed column too: the index lists the rows, the range keeps its own.
    let fives = |f: &dyn Fn(i128) -> bool| -> Vec<i32> {
        want(f).into_iter().filter(|k| k % 10 == 5).collect()
    };
    assert_eq!(
        keys(&format!("token(k) > {max} AND v = 5")),
        Vec::<i32>::new()
    );
    assert_eq!(
        keys(&format!("token(k) >= {min} AND v = 5")),
        fives(&|_| true)
    );
    for &a in &picks {
        for &b in &picks {
            let q = format!("token(k) > {a} AND token(k) <= {b} AND v = 5");
            assert_eq!(keys(&q), fives(&|t| t > a && t <= b), "{q}");
        }
        let q = format!("v = 5 AND token(k) < {a}");
        assert_eq!(keys(&q), fives(&|t| t < a), "{q}");
    }
    let (k, t) = (all[100].1, all[100].0);
    let q = format!("token(k) >= token({k}) AND v = {}", k % 10);
    let same_value = want(&|x| x >= t).into_iter().filter(|x| x % 10 == k % 10);
    assert_eq!(keys(&q), same_value.collect::<Vec<_>>(), "{q}");
    assert_eq!(keys(&format!("token(k) < {min}")), Vec::<i32>::new());
}

#[test]
fn raw_token_bounds_under_the_random_partitioner() {
    tokens_hold_their_rows(Partitioner::Random, "-1", &(1u128 << 127).to_string());
}

#[test]
fn raw_token_bounds_under_murmur3() {
    tokens_hold_their_rows(
        Partitioner::Murmur3,
        &i64::MIN.to_string(),
        &i64::MAX.to_string(),
    );
}

/// `token(k1, k2) op token(v1, v2)` on a composite partition key, literal and prepared: the
/// rows whose tokens lie on that side of the key's token (the key's own partition kept on the
/// inclusive side only); the key columns named out of order, or not all, refused in Cassandra's
/// words.
#[test]
fn a_composite_key_token_bounds_a_scan() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.partitioner = Some(Partitioner::Murmur3);
    let db = open_cql_with(
        dir.path(),
        o,
        "CREATE TABLE t (k1 int, k2 text, c int, PRIMARY KEY ((k1, k2), c))",
    );
    let mut cql = ks_session(&db);
    for k in 0..30 {
        cql.execute(&format!(
            "INSERT INTO t (k1, k2, c) VALUES ({k}, 'x{k}', 0)"
        ))
        .unwrap();
    }
    let all: Vec<(i128, String)> = shown(&mut cql, "SELECT token(k1, k2), k1 FROM t")
        .iter()
        .map(|r| {
            let (t, k) = r.split_once('|').unwrap();
            (t.parse().unwrap(), k.to_string())
        })
        .collect();
    let pivot = shown(
        &mut cql,
        "SELECT token(k1, k2) FROM t WHERE k1 = 7 AND k2 = 'x7'",
    )[0]
    .parse::<i128>()
    .unwrap();
    for (op, keep) in [
        (">", (|t, p| t > p) as fn(i128, i128) -> bool),
        (">=", |t, p| t >= p),
        ("<", |t, p| t < p),
        ("<=", |t, p| t <= p),
        ("=", |t, p| t == p),
    ] {
        let want: Vec<String> = all
            .iter()
            .filter(|(t, _)| keep(*t, pivot))
            .map(|(_, k)| k.clone())
            .collect();
        let q = format!("SELECT k1 FROM t WHERE token(k1, k2) {op} token(7, 'x7')");
        assert_eq!(shown(&mut cql, &q), want, "{q}");
        let q = format!("SELECT k1 FROM t WHERE token(k1, k2) {op} token(?, ?)");
        let p = cql.prepare(&q).unwrap();
        let (k1, k2) = (7i32.to_be_bytes(), b"x7");
        let supercolumn_cql::CqlResult::Rows(rows) = cql
            .execute_prepared(&p, &[Some(&k1[..]), Some(&k2[..])])
            .unwrap()
        else {
            panic!("not rows")
        };
        assert_eq!(rows.displayed().concat(), want, "{q}");
    }
    for (q, says) in [
        (
            "SELECT * FROM t WHERE token(k2, k1) > token('x1', 1)",
            "The token function arguments must be in the partition key order: k1, k2",
        ),
        (
            "SELECT * FROM t WHERE token(k1) > token(1)",
            "The token() function must be applied to all partition key components or none of them",
        ),
        (
            "SELECT * FROM t WHERE token(k1, k2) > token(1)",
            "Invalid number of arguments in call to function system.token: 2 required but 1 provided",
        ),
        (
            "SELECT token(k1) FROM t",
            "Invalid number of arguments in call to function system.token: 2 required but 1 provided",
        ),
        (
            "SELECT token(k2, k1) FROM t",
            "Type error: k2 cannot be passed as argument 0 of function system.token of type int",
        ),
    ] {
        assert_eq!(common::refused(&mut cql, q), says, "{q}");
    }
}
