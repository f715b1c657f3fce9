//! CQL against a model of its semantics: random tables (partition keys of one or two columns,
//! zero to two clustering columns in either order, regular columns of every scalar type, frozen
//! collections and a user type, frozen and not, up to two `map`, `set` or `list` columns) and random statements (inserts with nulls, updates, row,
//! partition and column deletes, every collection operation), with
//! flushes, compactions and reopens in between. After every step the model's rows and the
//! engine's answers must agree: whole partitions in clustering order, clustering ranges forward
//! and backward with limits, and the whole table.
//!
//! The model knows nothing of the engine: each type's values come from a table of (literal,
//! serialized bytes, rank) written out by hand, so both the bytes Cassandra stores and the order
//! of clustering values are stated independently here. Every write carries an explicit,
//! increasing `USING TIMESTAMP`, so the latest write to a cell wins.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "model/collections.rs"]
mod collections;
mod common;
#[path = "model/prepared.rs"]
mod prepared;
#[path = "model/values.rs"]
mod values;

use std::collections::BTreeMap;

use common::Rng;
use supercolumn::{Database, Options};
use supercolumn_cql::{Rows, Session};

use values::{Val, FROZEN_TYPES, KEY_TYPES, VALUE_TYPES};

struct Column {
    name: String,
    values: &'static [Val],
    ty: &'static str,
}

struct Shape {
    name: String,
    pk: Vec<Column>,
    ck: Vec<(Column, bool)>,
    regular: Vec<Column>,
    colls: Vec<collections::Coll>,
}

/// A value's bytes, `None` for null.
type Value = Option<Vec<u8>>;

/// A row as `SELECT *` returns it: each column's bytes, `None` for null.
type OutRow = Vec<Option<Vec<u8>>>;

/// A cell in the model: value bytes (None: deleted) and the timestamp of the write that set it.
type Cell = (Option<Vec<u8>>, i64);

#[derive(Default, Clone)]
struct Row {
    marker: Option<Cell>,
    cells: BTreeMap<String, Cell>,
    colls: BTreeMap<String, collections::State>,
}

/// Partition key (value indexes) → clustering value ranks → row.
type Model = BTreeMap<Vec<usize>, BTreeMap<Vec<usize>, Row>>;

fn pick_type(rng: &mut Rng, key: bool) -> (&'static str, &'static [Val]) {
    let all: Vec<_> = KEY_TYPES
        .iter()
        .chain(FROZEN_TYPES)
        .chain(if key { &[][..] } else { VALUE_TYPES })
        .collect();
    *all[rng.pick(all.len())]
}

fn column(rng: &mut Rng, prefix: &str, i: usize, key: bool) -> Column {
    let (ty, values) = pick_type(rng, key);
    Column {
        name: format!("{prefix}{i}"),
        values,
        ty,
    }
}

fn shape(rng: &mut Rng, n: usize) -> Shape {
    let (npk, nck, nreg) = (1 + rng.pick(2), rng.pick(3), 1 + rng.pick(3));
    let pk = (0..npk).map(|i| column(rng, "p", i, true)).collect();
    let ck = (0..nck)
        .map(|i| {
            let c = column(rng, "c", i, true);
            (c, rng.pick(2) == 1)
        })
        .collect();
    let regular = (0..nreg)
        .map(|i| column(rng, if i % 2 == 0 { "v" } else { "Z" }, i, false))
        .collect();
    let colls = (0..rng.pick(3))
        .map(|i| collections::coll(rng, i))
        .collect();
    Shape {
        name: format!("t{n}"),
        pk,
        ck,
        regular,
        colls,
    }
}

fn create(s: &Shape) -> String {
    let cols: Vec<String> =
        s.pk.iter()
            .chain(s.ck.iter().map(|c| &c.0))
            .chain(&s.regular)
            .map(|c| format!("{} {}", quoted(&c.name), c.ty))
            .chain(s.colls.iter().map(|c| format!("{} {}", c.name, c.ty)))
            .collect();
    let pk: Vec<&str> = s.pk.iter().map(|c| c.name.as_str()).collect();
    let ck: Vec<String> = s.ck.iter().map(|c| quoted(&c.0.name)).collect();
    let mut key = format!("({})", pk.join(", "));
    for c in &ck {
        key.push_str(", ");
        key.push_str(c);
    }
    let mut text = format!(
        "CREATE TABLE ks.{} ({}, PRIMARY KEY ({key}))",
        s.name,
        cols.join(", ")
    );
    if !s.ck.is_empty() {
        let order: Vec<String> =
            s.ck.iter()
                .map(|(c, d)| format!("{} {}", quoted(&c.name), if *d { "DESC" } else { "ASC" }))
                .collect();
        text.push_str(&format!(" WITH CLUSTERING ORDER BY ({})", order.join(", ")));
    }
    text
}

/// Mixed-case names are double-quoted so they keep their case.
fn quoted(name: &str) -> String {
    if name.chars().any(|c| c.is_ascii_uppercase()) {
        format!("\"{name}\"")
    } else {
        name.to_string()
    }
}

fn where_clause(s: &Shape, pk: &[usize], ck: Option<&[usize]>) -> String {
    let mut parts: Vec<String> =
        s.pk.iter()
            .zip(pk)
            .map(|(c, &v)| format!("{} = {}", c.name, c.values[v].0))
            .collect();
    if let Some(ck) = ck {
        parts.extend(
            s.ck.iter()
                .zip(ck)
                .map(|((c, _), &v)| format!("{} = {}", quoted(&c.name), c.values[v].0)),
        );
    }
    parts.join(" AND ")
}

/// The model's rows of a partition as `SELECT *` returns them, in clustering order.
fn expected(
    s: &Shape,
    pk: &[usize],
    rows: &BTreeMap<Vec<usize>, Row>,
    reversed: bool,
) -> Vec<Vec<Option<Vec<u8>>>> {
    let mut live: Vec<(Vec<usize>, OutRow)> = Vec::new();
    // `SELECT *` shows regular and collection columns by name.
    let mut regular: Vec<&str> = s
        .regular
        .iter()
        .map(|c| c.name.as_str())
        .chain(s.colls.iter().map(|c| c.name.as_str()))
        .collect();
    regular.sort();
    for (ck, row) in rows {
        let exists = row.marker.as_ref().is_some_and(|c| c.0.is_some())
            || row.cells.values().any(|c| c.0.is_some())
            || row.colls.values().any(collections::State::is_live);
        if !exists {
            continue;
        }
        let mut out: Vec<Option<Vec<u8>>> =
            s.pk.iter()
                .zip(pk)
                .map(|(c, &v)| Some(c.values[v].1.to_vec()))
                .collect();
        out.extend(
            s.ck.iter()
                .zip(ck)
                .map(|((c, _), &v)| Some(c.values[v].1.to_vec())),
        );
        out.extend(
            regular
                .iter()
                .map(|&n| match s.colls.iter().find(|c| c.name == n) {
                    Some(c) => row.colls.get(n).and_then(|st| st.selected(c)),
                    None => row.cells.get(n).and_then(|x| x.0.clone()),
                }),
        );
        // Sort key: each clustering rank, negated for DESC columns.
        let key: Vec<usize> =
            s.ck.iter()
                .zip(ck)
                .map(|((c, desc), &v)| {
                    let r = usize::from(c.values[v].2);
                    if *desc {
                        255 - r
                    } else {
                        r
                    }
                })
                .collect();
        live.push((key, out));
    }
    live.sort_by(|a, b| a.0.cmp(&b.0));
    if reversed {
        live.reverse();
    }
    live.into_iter().map(|x| x.1).collect()
}

fn values(v: &[Val], rng: &mut Rng) -> usize {
    rng.pick(v.len())
}

fn reopen(db: &mut Option<Database>, dir: &std::path::Path) {
    db.take().unwrap().close().unwrap();
    *db = Some(Database::open(dir, Options::default()).unwrap());
}

fn run_sequence(
    holder: &mut Option<Database>,
    dir: &std::path::Path,
    rng: &mut Rng,
    n: usize,
    ts: &mut i64,
) {
    let s = shape(rng, n);
    Session::new(holder.as_ref().unwrap())
        .execute(&create(&s))
        .unwrap_or_else(|e| panic!("{}: {e}", create(&s)));
    let mut model: Model = BTreeMap::new();
    let mut positions = collections::Positions::default();
    for step in 0..20 {
        let db = holder.as_ref().unwrap();
        let mut cql = Session::new(db);
        *ts += 1;
        let pk: Vec<usize> = s.pk.iter().map(|c| values(c.values, rng)).collect();
        let ck: Vec<usize> = s.ck.iter().map(|c| values(c.0.values, rng)).collect();
        let op = rng.pick(14);
        // An insert to run as a prepared statement instead: its columns and values.
        let mut as_prepared: Option<(Vec<String>, Vec<Value>)> = None;
        let stmt = match op {
            0..=4 => {
                let mut cols: Vec<String> = s.pk.iter().map(|c| c.name.clone()).collect();
                cols.extend(s.ck.iter().map(|c| quoted(&c.0.name)));
                let mut vals: Vec<&str> =
                    s.pk.iter().zip(&pk).map(|(c, &v)| c.values[v].0).collect();
                let mut lits: Vec<String> = Vec::new();
                vals.extend(s.ck.iter().zip(&ck).map(|(c, &v)| c.0.values[v].0));
                let mut bytes: Vec<Value> = (s.pk.iter().zip(&pk))
                    .map(|(c, &v)| c.values[v].1)
                    .chain(s.ck.iter().zip(&ck).map(|(c, &v)| c.0.values[v].1))
                    .map(|b| Some(b.to_vec()))
                    .collect();
                let row = model
                    .entry(pk.clone())
                    .or_default()
                    .entry(ck.clone())
                    .or_default();
                row.marker = Some((Some(Vec::new()), *ts));
                for c in &s.regular {
                    match rng.pick(3) {
                        0 => continue,
                        1 => {
                            cols.push(quoted(&c.name));
                            vals.push("null");
                            bytes.push(None);
                            row.cells.insert(c.name.clone(), (None, *ts));
                        }
                        _ => {
                            let v = &c.values[values(c.values, rng)];
                            cols.push(quoted(&c.name));
                            vals.push(v.0);
                            bytes.push(Some(v.1.to_vec()));
                            row.cells.insert(c.name.clone(), (Some(v.1.to_vec()), *ts));
                        }
                    }
                }
                for c in &s.colls {
                    if rng.pick(3) == 0 {
                        continue;
                    }
                    let state = row.colls.entry(c.name.clone()).or_default();
                    cols.push(c.name.clone());
                    lits.push(collections::replace(rng, c, state, &mut positions));
                }
                vals.extend(lits.iter().map(String::as_str));
                if lits.is_empty() && rng.pick(2) == 0 {
                    as_prepared = Some((cols.clone(), bytes));
                }
                format!(
                    "INSERT INTO ks.{} ({}) VALUES ({}) USING TIMESTAMP {ts}",
                    s.name,
                    cols.join(", "),
                    vals.join(", ")
                )
            }
            5 | 6 => {
                let c = &s.regular[rng.pick(s.regular.len())];
                let (lit, bytes) = if rng.pick(4) == 0 {
                    ("null", None)
                } else {
                    let v = &c.values[values(c.values, rng)];
                    (v.0, Some(v.1.to_vec()))
                };
                model
                    .entry(pk.clone())
                    .or_default()
                    .entry(ck.clone())
                    .or_default()
                    .cells
                    .insert(c.name.clone(), (bytes, *ts));
                format!(
                    "UPDATE ks.{} USING TIMESTAMP {ts} SET {} = {lit} WHERE {}",
                    s.name,
                    quoted(&c.name),
                    where_clause(&s, &pk, Some(&ck))
                )
            }
            7 if !s.ck.is_empty() => {
                // One row, or every row under a prefix of its clustering values (a range of
                // rows).
                let named = if rng.pick(2) == 0 {
                    s.ck.len()
                } else {
                    1 + rng.pick(s.ck.len())
                };
                let prefix = &ck[..named];
                model
                    .entry(pk.clone())
                    .or_default()
                    .entry(ck.clone())
                    .or_default();
                for (key, row) in model.entry(pk.clone()).or_default().iter_mut() {
                    if key.starts_with(prefix) {
                        row.marker = Some((None, *ts));
                        for c in &s.regular {
                            row.cells.insert(c.name.clone(), (None, *ts));
                        }
                        row.colls.clear();
                    }
                }
                format!(
                    "DELETE FROM ks.{} USING TIMESTAMP {ts} WHERE {}",
                    s.name,
                    where_clause(&s, &pk, Some(prefix))
                )
            }
            7 | 8 => {
                model.remove(&pk);
                format!(
                    "DELETE FROM ks.{} USING TIMESTAMP {ts} WHERE {}",
                    s.name,
                    where_clause(&s, &pk, None)
                )
            }
            9 => {
                let c = &s.regular[rng.pick(s.regular.len())];
                model
                    .entry(pk.clone())
                    .or_default()
                    .entry(ck.clone())
                    .or_default()
                    .cells
                    .insert(c.name.clone(), (None, *ts));
                format!(
                    "DELETE {} FROM ks.{} USING TIMESTAMP {ts} WHERE {}",
                    quoted(&c.name),
                    s.name,
                    where_clause(&s, &pk, Some(&ck))
                )
            }
            12 | 13 if !s.colls.is_empty() => {
                let c = &s.colls[rng.pick(s.colls.len())];
                let state = model
                    .entry(pk.clone())
                    .or_default()
                    .entry(ck.clone())
                    .or_default()
                    .colls
                    .entry(c.name.clone())
                    .or_default();
                let Some((text, delete)) = collections::change(rng, c, state, &mut positions)
                else {
                    continue;
                };
                if delete {
                    format!(
                        "DELETE {text} FROM ks.{} USING TIMESTAMP {ts} WHERE {}",
                        s.name,
                        where_clause(&s, &pk, Some(&ck))
                    )
                } else {
                    format!(
                        "UPDATE ks.{} USING TIMESTAMP {ts} SET {text} WHERE {}",
                        s.name,
                        where_clause(&s, &pk, Some(&ck))
                    )
                }
            }
            10 | 12 | 13 => {
                db.flush_all().unwrap();
                continue;
            }
            _ => {
                if rng.pick(5) == 0 {
                    drop(cql);
                    reopen(holder, dir);
                    let mut cql = Session::new(holder.as_ref().unwrap());
                    check(&mut cql, &s, &model, rng, "a reopen");
                } else {
                    db.compact("ks", Some(&s.name)).unwrap();
                    check(&mut cql, &s, &model, rng, "a compaction");
                }
                continue;
            }
        };
        match as_prepared {
            Some((cols, values)) => prepared::insert(&mut cql, &s.name, &cols, &values, *ts)
                .unwrap_or_else(|e| panic!("step {step}: prepared {e}")),
            None => {
                cql.execute(&stmt)
                    .unwrap_or_else(|e| panic!("step {step}: {stmt}: {e}"));
            }
        }
        check(&mut cql, &s, &model, rng, &stmt);
    }
    let mut cql = Session::new(holder.as_ref().unwrap());
    check_all(&mut cql, &s, &model);
    cql.execute(&format!("DROP TABLE ks.{}", s.name)).unwrap();
}

fn rows_of(cql: &mut Session<'_>, q: &str) -> Rows {
    cql.query(q).unwrap_or_else(|e| panic!("{q}: {e}"))
}

/// Every partition of the model read back whole, and a random clustering range.
fn check(cql: &mut Session<'_>, s: &Shape, model: &Model, rng: &mut Rng, after: &str) {
    for (pk, rows) in model {
        let q = format!(
            "SELECT * FROM ks.{} WHERE {}",
            s.name,
            where_clause(s, pk, None)
        );
        let want = expected(s, pk, rows, false);
        assert_eq!(
            rows_of(cql, &q).to_vecs(),
            want,
            "{q} after {after}\n{}",
            create(s)
        );
        // The same partition read prepared (a planned slice when the table has clustering
        // columns and no collections).
        let got = prepared::select(cql, &s.name, &partition_key(s, pk)).to_vecs();
        assert_eq!(got, want, "prepared {q} after {after}\n{}", create(s));
    }
    // One CQL row named by its whole primary key (read by cell names, not as a slice).
    if let Some((pk, rows)) = model.iter().next() {
        let ck: Vec<usize> = s.ck.iter().map(|(c, _)| rng.pick(c.values.len())).collect();
        let q = format!(
            "SELECT * FROM ks.{} WHERE {}",
            s.name,
            where_clause(s, pk, Some(&ck))
        );
        let one: BTreeMap<Vec<usize>, Row> = rows
            .get(&ck)
            .map(|r| (ck.clone(), r.clone()))
            .into_iter()
            .collect();
        let want = expected(s, pk, &one, false);
        assert_eq!(
            rows_of(cql, &q).to_vecs(),
            want,
            "{q} after {after}\n{}",
            create(s)
        );
        // The same read prepared, as a driver makes it.
        let key: Vec<(String, &[u8])> = (s.pk.iter().zip(pk))
            .map(|(c, &v)| (c.name.clone(), c.values[v].1))
            .chain(
                s.ck.iter()
                    .zip(&ck)
                    .map(|((c, _), &v)| (quoted(&c.name), c.values[v].1)),
            )
            .collect();
        let got = prepared::select(cql, &s.name, &key).to_vecs();
        assert_eq!(got, want, "prepared {q} after {after}\n{}", create(s));
    }
    let Some(((c0, desc), (pk, rows))) = s.ck.first().zip(model.iter().next()) else {
        return;
    };
    let v = rng.pick(c0.values.len());
    let (op, keep): (&str, fn(u8, u8) -> bool) = match rng.pick(4) {
        0 => (">", |a, b| a > b),
        1 => (">=", |a, b| a >= b),
        2 => ("<", |a, b| a < b),
        _ => ("<=", |a, b| a <= b),
    };
    let reversed = rng.pick(2) == 1;
    let limit = 1 + rng.pick(3);
    let order = if reversed != *desc { "DESC" } else { "ASC" };
    let q = format!(
        "SELECT * FROM ks.{} WHERE {} AND {} {op} {} ORDER BY {} {order} LIMIT {limit}",
        s.name,
        where_clause(s, pk, None),
        quoted(&c0.name),
        c0.values[v].0,
        quoted(&c0.name)
    );
    let kept: BTreeMap<Vec<usize>, Row> = rows
        .iter()
        .filter(|(ck, _)| keep(c0.values[ck[0]].2, c0.values[v].2))
        .map(|(k, r)| (k.clone(), r.clone()))
        .collect();
    let mut want = expected(s, pk, &kept, reversed);
    want.truncate(limit);
    assert_eq!(
        rows_of(cql, &q).to_vecs(),
        want,
        "{q} after {after}\n{}",
        create(s)
    );
    let c0_name = quoted(&c0.name);
    let got = prepared::select_range(
        cql,
        &s.name,
        &partition_key(s, pk),
        (&c0_name, op, c0.values[v].1),
        order,
        limit,
    );
    assert_eq!(
        got.to_vecs(),
        want,
        "prepared {q} after {after}\n{}",
        create(s)
    );
}

/// The partition key's columns and the serialized values of partition `pk`.
fn partition_key<'s>(s: &'s Shape, pk: &[usize]) -> Vec<(String, &'s [u8])> {
    s.pk.iter()
        .zip(pk)
        .map(|(c, &v)| (c.name.clone(), c.values[v].1))
        .collect()
}

/// The whole table, in any order, and its count.
fn check_all(cql: &mut Session<'_>, s: &Shape, model: &Model) {
    let mut want: Vec<_> = model
        .iter()
        .flat_map(|(pk, rows)| expected(s, pk, rows, false))
        .collect();
    let mut got = rows_of(cql, &format!("SELECT * FROM ks.{}", s.name)).to_vecs();
    want.sort();
    got.sort();
    assert_eq!(got, want, "{}", create(s));
    let count = rows_of(cql, &format!("SELECT COUNT(*) FROM ks.{}", s.name)).to_vecs();
    assert_eq!(
        count,
        [vec![Some((want.len() as i64).to_be_bytes().to_vec())]]
    );
}

#[test]
fn random_statement_sequences_agree_with_the_model() {
    let seed = std::env::var("CQL_MODEL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_c0de_u64);
    let mut rng = Rng(seed | 1);
    let mut ts = 1_000_000i64;
    let dir = tempfile::tempdir().unwrap();
    let mut db = Some(Database::open(dir.path(), Options::default()).unwrap());
    Session::new(db.as_ref().unwrap())
        .execute("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TYPE ks.pt (x int, y text)")
        .unwrap();
    let sequences = 2000;
    for n in 0..sequences {
        run_sequence(&mut db, dir.path(), &mut rng, n, &mut ts);
    }
    db.take().unwrap().close().unwrap();
}
