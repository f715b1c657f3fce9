//! A differential check of the CQL layer against an independent model of Cassandra's rules:
//! hundreds of random writes (INSERT with and without TTL, UPDATE, row, range and cell DELETE,
//! conditional writes) and SELECTs (= and IN on the partition key, clustering ranges, ORDER BY
//! both ways, PER PARTITION LIMIT, LIMIT, paging at random sizes) on tables ordered ASC and
//! DESC, with the clock moving in fractions of seconds past TTLs and flushes in between. Both
//! tables index `v`, and SELECTs by `v = x` (with a clustering range, LIMIT, paged) read
//! through the index, answered as the model answers: every live row holding `x`, in token
//! order. After every statement the engine's answer must be the model's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{ks_session, open_cql_with};
use supercolumn::{Clock, ManualClock, Options};
use supercolumn_cql::{CqlResult, PageRequest, Position, Rows, Session};

/// The model's row: its marker and value, each with the whole second it expires at.
#[derive(Clone, Copy, Default, Debug)]
struct ModelRow {
    marker: Option<Option<i64>>,
    v: Option<(i32, Option<i64>)>,
}

fn alive(expires: Option<i64>, now: i64) -> bool {
    expires.is_none_or(|e| now < e)
}

impl ModelRow {
    fn live(&self, now: i64) -> bool {
        self.marker.is_some_and(|m| alive(m, now)) || self.value(now).is_some()
    }
    fn value(&self, now: i64) -> Option<i32> {
        self.v.filter(|(_, e)| alive(*e, now)).map(|(v, _)| v)
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> i64 {
        (self.next() % n) as i64
    }
}

type Answer = Vec<(i32, i32, Option<i32>)>;

fn answer(rows: &Rows) -> Answer {
    let int = |v: Option<&[u8]>| v.map(|b| i32::from_be_bytes(b.try_into().unwrap()));
    rows.iter()
        .map(|r| {
            (
                int(r.get(0)).unwrap(),
                int(r.get(1)).unwrap(),
                int(r.get(2)),
            )
        })
        .collect()
}

/// What Cassandra answers for a SELECT over the model.
#[allow(clippy::too_many_arguments)] // one query's parts, as the statement gives them
fn model_select(
    m: &BTreeMap<(i32, i32), ModelRow>,
    now: i64,
    keys: &[i32],
    range: (Option<i32>, Option<i32>),
    desc_table: bool,
    order: Option<bool>,
    per_partition: Option<usize>,
    limit: Option<usize>,
) -> Answer {
    let mut keys = keys.to_vec();
    keys.sort();
    keys.dedup();
    // Each partition in read order: the table's, or ORDER BY's.
    let descending = order.unwrap_or(desc_table);
    let mut parts: Vec<Answer> = Vec::new();
    for k in &keys {
        let mut rows: Answer = m
            .range((*k, i32::MIN)..=(*k, i32::MAX))
            .filter(|((_, c), r)| {
                r.live(now) && range.0.is_none_or(|a| *c >= a) && range.1.is_none_or(|b| *c < b)
            })
            .map(|((k, c), r)| (*k, *c, r.value(now)))
            .collect();
        if descending {
            rows.reverse();
        }
        rows.truncate(per_partition.unwrap_or(usize::MAX));
        parts.push(rows);
    }
    let mut all: Answer = parts.into_iter().flatten().collect();
    if order.is_some() && keys.len() > 1 {
        // Post-query ordering: by clustering, the earlier partition first among equals.
        all.sort_by(|a, b| {
            if descending {
                b.1.cmp(&a.1)
            } else {
                a.1.cmp(&b.1)
            }
        });
    }
    all.truncate(limit.unwrap_or(usize::MAX));
    all
}

fn applied(r: CqlResult) -> bool {
    match r {
        CqlResult::Rows(rows) => rows.row(0).get(0) == Some(&[1][..]),
        other => panic!("{other:?}"),
    }
}

/// Every page of `q`, `size` rows at a time; `Err` with the error's text.
fn paged(cql: &mut Session<'_>, q: &str, size: usize) -> Result<Answer, String> {
    let (mut all, mut after) = (Vec::new(), None::<Position>);
    for _ in 0..10_000 {
        cql.set_page(Some(PageRequest {
            size,
            after: after.take(),
        }));
        let rows = cql.query(q).map_err(|e| e.to_string())?;
        assert!(rows.len() <= size, "{q}: a page of {} rows", rows.len());
        all.extend(answer(&rows));
        match cql.page_end() {
            Some(end) => after = Some(end),
            None => return Ok(all),
        }
    }
    panic!("{q}: never ends")
}

#[test]
fn random_statements_answer_as_the_model_of_cassandra_s_rules() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1_700_000_000_000_000));
    let db = open_cql_with(
        dir.path(),
        Options::default().with_clock(clock.clone()),
        "CREATE TABLE up (k int, c int, v int, PRIMARY KEY (k, c));
         CREATE TABLE down (k int, c int, v int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC);
         CREATE INDEX ON up (v);
         CREATE INDEX ON down (v)",
    );
    let mut cql = ks_session(&db);
    let mut rng = Rng(0x5eed_cafe_f00d_1234);
    let mut models = [BTreeMap::new(), BTreeMap::new()];
    let (mut writes, mut selects, mut found) = (0, 0, 0);
    for step in 0..1200 {
        // A fraction of a second, sometimes more: TTLs of 1 to 3 seconds lapse along the way.
        clock.advance_micros(1 + rng.below(700_000));
        let now = clock.now_micros().div_euclid(1_000_000);
        let which = rng.below(2) as usize;
        let (table, m) = (["up", "down"][which], &mut models[which]);
        let (k, c, v) = (
            rng.below(4) as i32,
            rng.below(8) as i32,
            rng.below(100) as i32,
        );
        let ttl = (rng.below(3) == 0).then(|| 1 + rng.below(3));
        let using = ttl.map_or(String::new(), |t| format!(" USING TTL {t}"));
        let expires = ttl.map(|t| now + t);
        let op = rng.below(10);
        if op >= 8 {
            selects += 1;
            if rng.below(2) == 0 {
                found += usize::from(indexed_step(&mut cql, &mut rng, table, m, now, step));
            } else {
                select_step(&mut cql, &mut rng, table, m, now, step);
            }
            continue;
        }
        let row = m.entry((k, c)).or_default();
        match op {
            0..=2 => {
                cql.execute(&format!(
                    "INSERT INTO {table} (k, c, v) VALUES ({k}, {c}, {v}){using}"
                ))
                .unwrap();
                (row.marker, row.v) = (Some(expires), Some((v, expires)));
            }
            3 => {
                cql.execute(&format!(
                    "UPDATE {table}{using} SET v = {v} WHERE k = {k} AND c = {c}"
                ))
                .unwrap();
                row.v = Some((v, expires));
            }
            4 if rng.below(2) == 0 => {
                let (q, range) = range_deletion(&mut rng, table, k);
                cql.execute(&q).unwrap();
                for ((_, c), row) in m.range_mut((k, i32::MIN)..=(k, i32::MAX)) {
                    if range.contains(c) {
                        *row = ModelRow::default();
                    }
                }
            }
            4 => {
                cql.execute(&format!("DELETE FROM {table} WHERE k = {k} AND c = {c}"))
                    .unwrap();
                *row = ModelRow::default();
            }
            5 => {
                cql.execute(&format!("DELETE v FROM {table} WHERE k = {k} AND c = {c}"))
                    .unwrap();
                row.v = None;
            }
            6 => {
                let want = rng.below(100) as i32;
                let q =
                    format!("UPDATE {table} SET v = {v} WHERE k = {k} AND c = {c} IF v = {want}");
                let model = row.live(now) && row.value(now) == Some(want);
                assert_eq!(
                    applied(cql.execute(&q).unwrap().remove(0)),
                    model,
                    "step {step}: {q}"
                );
                if model {
                    row.v = Some((v, None));
                }
            }
            _ => {
                let q =
                    format!("INSERT INTO {table} (k, c, v) VALUES ({k}, {c}, {v}) IF NOT EXISTS");
                let model = !row.live(now);
                assert_eq!(
                    applied(cql.execute(&q).unwrap().remove(0)),
                    model,
                    "step {step}: {q}"
                );
                if model {
                    (row.marker, row.v) = (Some(None), Some((v, None)));
                }
            }
        }
        writes += 1;
        if rng.below(100) == 0 {
            db.flush_all().unwrap();
        }
        if rng.below(300) == 0 {
            db.compact("ks", None).unwrap();
        }
    }
    assert!(
        writes > 500 && selects > 200 && found > 40,
        "{writes} writes, {selects} selects, {found} indexed ones that found rows"
    );
}

/// A random range deletion in partition `k` (a bound on either side or both, each strict or
/// not, sometimes crossed: then it deletes nothing), and the clustering values it covers.
fn range_deletion(rng: &mut Rng, table: &str, k: i32) -> (String, std::ops::RangeInclusive<i32>) {
    let mut q = format!("DELETE FROM {table} WHERE k = {k}");
    let (mut lo, mut hi) = (i32::MIN, i32::MAX);
    if rng.below(4) != 0 {
        let (a, strict) = (rng.below(8) as i32, rng.below(2) == 0);
        q.push_str(&format!(" AND c {} {a}", if strict { ">" } else { ">=" }));
        lo = if strict { a + 1 } else { a };
    }
    if lo == i32::MIN || rng.below(3) != 0 {
        let (b, strict) = (rng.below(9) as i32, rng.below(2) == 0);
        q.push_str(&format!(" AND c {} {b}", if strict { "<" } else { "<=" }));
        hi = if strict { b - 1 } else { b };
    }
    (q, lo..=hi)
}

/// One random SELECT through the index on `v`, checked against the model: every live row
/// holding the value, partitions in token order, rows in the table's clustering order.
/// Whether it found rows.
fn indexed_step(
    cql: &mut Session<'_>,
    rng: &mut Rng,
    table: &str,
    m: &BTreeMap<(i32, i32), ModelRow>,
    now: i64,
    step: usize,
) -> bool {
    // Mostly a value some row holds (or held), sometimes one none does.
    let held: Vec<i32> = m.values().filter_map(|r| r.v.map(|(v, _)| v)).collect();
    let x = if held.is_empty() || rng.below(4) == 0 {
        rng.below(100) as i32
    } else {
        held[rng.below(held.len() as u64) as usize]
    };
    let mut q = format!("SELECT k, c, v FROM {table} WHERE v = {x}");
    let from = (rng.below(3) == 0).then(|| rng.below(8) as i32);
    if let Some(a) = from {
        q.push_str(&format!(" AND c >= {a}"));
    }
    let limit = (rng.below(2) == 0).then(|| 1 + rng.below(6) as usize);
    if let Some(n) = limit {
        q.push_str(&format!(" LIMIT {n}"));
    }
    // A clustering restriction without the partition key is one the index does not serve:
    // Cassandra filters with it, so it asks for ALLOW FILTERING.
    if from.is_some() {
        q.push_str(" ALLOW FILTERING");
    }
    let token = |k: i32| supercolumn::Partitioner::Random.row_sort_key(&k.to_be_bytes());
    let mut want: Vec<(Vec<u8>, i32, i32, Option<i32>)> = m
        .iter()
        .filter(|((_, c), r)| {
            r.live(now) && r.value(now) == Some(x) && from.is_none_or(|a| *c >= a)
        })
        .map(|((k, c), r)| {
            (
                token(*k),
                if table == "down" { -c } else { *c },
                *k,
                r.value(now),
            )
        })
        .collect();
    want.sort();
    let mut want: Answer = want
        .into_iter()
        .map(|(_, c, k, v)| (k, c.abs(), v))
        .collect();
    want.truncate(limit.unwrap_or(usize::MAX));
    let page = (rng.below(2) == 0).then(|| 1 + rng.below(4) as usize);
    let got = match page {
        None => cql.query(&q).map(|r| answer(&r)).map_err(|e| e.to_string()),
        Some(size) => paged(cql, &q, size),
    };
    assert_eq!(got.unwrap(), want, "step {step}: {q} (page {page:?})");
    !want.is_empty()
}

/// One random SELECT, checked against the model (paged when the draw says so).
fn select_step(
    cql: &mut Session<'_>,
    rng: &mut Rng,
    table: &str,
    m: &BTreeMap<(i32, i32), ModelRow>,
    now: i64,
    step: usize,
) {
    let keys: Vec<i32> = (0..1 + rng.below(4)).map(|_| rng.below(5) as i32).collect();
    let list = keys
        .iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let mut q = format!("SELECT k, c, v FROM {table} WHERE k IN ({list})");
    let range = (
        (rng.below(3) == 0).then(|| rng.below(8) as i32),
        (rng.below(3) == 0).then(|| rng.below(9) as i32),
    );
    if let Some(a) = range.0 {
        q.push_str(&format!(" AND c >= {a}"));
    }
    if let Some(b) = range.1 {
        q.push_str(&format!(" AND c < {b}"));
    }
    let order = match rng.below(3) {
        0 => None,
        n => Some(n == 2),
    };
    if let Some(desc) = order {
        q.push_str(if desc {
            " ORDER BY c DESC"
        } else {
            " ORDER BY c ASC"
        });
    }
    let per_partition = (rng.below(3) == 0).then(|| 1 + rng.below(3) as usize);
    if let Some(n) = per_partition {
        q.push_str(&format!(" PER PARTITION LIMIT {n}"));
    }
    let limit = (rng.below(2) == 0).then(|| 1 + rng.below(10) as usize);
    if let Some(n) = limit {
        q.push_str(&format!(" LIMIT {n}"));
    }
    let want = model_select(
        m,
        now,
        &keys,
        range,
        table == "down",
        order,
        per_partition,
        limit,
    );
    let page = (rng.below(2) == 0).then(|| 1 + rng.below(6) as usize);
    let mut distinct = keys.clone();
    distinct.sort();
    distinct.dedup();
    let got = match page {
        None => cql.query(&q).map(|r| answer(&r)).map_err(|e| e.to_string()),
        Some(size) => paged(cql, &q, size),
    };
    // Cassandra refuses to page an ORDER BY over several partitions past one page.
    let refused =
        order.is_some() && distinct.len() > 1 && page.is_some_and(|s| limit.is_none_or(|l| l > s));
    if refused {
        let e = got.expect_err(&q);
        assert!(
            e.contains("Cannot page queries with both ORDER BY"),
            "{q}: {e}"
        );
    } else {
        assert_eq!(got.unwrap(), want, "step {step}: {q} (page {page:?})");
    }
}
