//! The composite slice bounds of a `SELECT`'s clustering restrictions (SPEC §9, the
//! end-of-component rules of `CompositeType`): `=`/`IN` on a prefix of the clustering columns,
//! then a range on the next one; a DESC column's bounds change sides. And the row keys its
//! partition key restrictions name, and the inclusive token a strict `token(k)` bound means.

use std::cmp::Ordering;

use super::error::CqlError;
use super::table::Table;
use supercolumn::model::comparator::CompositeType;
use supercolumn::Partitioner;

/// One slice of a partition: composite bounds (empty: open).
pub(super) struct Bounds {
    pub start: Vec<u8>,
    pub finish: Vec<u8>,
}

/// Composite bounds for each combination of `=`/`IN` values on a clustering prefix, with the
/// range on the next clustering column (SPEC §9; a DESC column's bounds swap sides).
// Long because the end-of-component rules for each bound (inclusive or not, ASC or DESC) are
// easiest to check side by side.
pub(super) fn clustering_slices(
    t: &Table,
    eq: &[Option<Vec<Vec<u8>>>],
    lower: &[Option<(Vec<u8>, bool)>],
    upper: &[Option<(Vec<u8>, bool)>],
) -> Result<Vec<Bounds>, CqlError> {
    let mut prefixes: Vec<Vec<Vec<u8>>> = vec![Vec::new()];
    let mut k = 0;
    while k < t.clustering.len() {
        let ci = t.clustering[k];
        let Some(vals) = &eq[ci] else { break };
        if lower[ci].is_some() || upper[ci].is_some() {
            return Err(CqlError::invalid(format!(
                "{} is restricted by both an equality and a range",
                t.columns[ci].name
            )));
        }
        let mut next = Vec::new();
        for p in &prefixes {
            // No row holds a clustering value longer than a composite can: such an `=` or
            // `IN` value names nothing (Cassandra's answer: no rows).
            for v in vals.iter().filter(|v| v.len() <= usize::from(u16::MAX)) {
                let mut q = p.clone();
                q.push(v.clone());
                next.push(q);
            }
        }
        prefixes = next;
        k += 1;
    }
    let range_col = t.clustering.get(k).copied();
    for (j, &ci) in t.clustering.iter().enumerate() {
        let restricted = eq[ci].is_some() || lower[ci].is_some() || upper[ci].is_some();
        let allowed = j < k || (Some(ci) == range_col && eq[ci].is_none());
        if restricted && !allowed {
            let name = &t.columns[ci].name;
            let before = t.clustering[j.saturating_sub(1)];
            let ranged = lower[before].is_some() || upper[before].is_some();
            let prev = &t.columns[before].name;
            return Err(CqlError::invalid(if ranged {
                format!("Clustering column \"{name}\" cannot be restricted (preceding column \"{prev}\" is restricted by a non-EQ relation)")
            } else {
                format!("PRIMARY KEY column \"{name}\" cannot be restricted as preceding column \"{prev}\" is not restricted")
            }));
        }
    }
    let build = |parts: &[&[u8]], eoc: i8| -> Result<Vec<u8>, CqlError> {
        if !CompositeType::fits(parts) {
            return Err(CqlError::invalid(
                "a clustering value is longer than 65535 bytes",
            ));
        }
        Ok(CompositeType::build(parts, eoc))
    };
    // IN values in clustering order, each once, whatever order the statement gave them.
    let cmp = std::cell::OnceCell::new();
    let cmp = || cmp.get_or_init(|| t.comparator());
    if prefixes.len() > 1 {
        let cmp = cmp();
        let key = |p: &Vec<Vec<u8>>| {
            let parts: Vec<&[u8]> = p.iter().map(Vec::as_slice).collect();
            CompositeType::build(&parts, 0)
        };
        prefixes.sort_by(|a, b| cmp.compare(&key(a), &key(b)));
        prefixes.dedup();
    }
    let mut out = Vec::new();
    for p in &prefixes {
        let mut parts: Vec<&[u8]> = p.iter().map(Vec::as_slice).collect();
        let (mut start, mut finish) = if parts.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            (build(&parts, 0)?, build(&parts, 1)?)
        };
        if let Some(ci) = range_col {
            let desc = t.descending[k];
            // In storage order a DESC column's "greater" values come first.
            let (lo, hi) = if desc {
                (&upper[ci], &lower[ci])
            } else {
                (&lower[ci], &upper[ci])
            };
            if let Some((v, inclusive)) = lo {
                parts.push(v);
                start = build(&parts, if *inclusive { 0 } else { 1 })?;
                parts.pop();
            }
            if let Some((v, inclusive)) = hi {
                parts.push(v);
                finish = build(&parts, if *inclusive { 1 } else { -1 })?;
                parts.pop();
            }
        }
        // An empty range (`c > 2 AND c < 1`) selects nothing; the engine refuses it as a slice.
        let ranged = range_col.is_some_and(|ci| lower[ci].is_some() || upper[ci].is_some());
        if ranged
            && !start.is_empty()
            && !finish.is_empty()
            && cmp().compare(&start, &finish).is_gt()
        {
            continue;
        }
        out.push(Bounds { start, finish });
    }
    Ok(out)
}

/// A tuple's values, one per leading clustering column.
pub(super) type Tuple = Vec<Vec<u8>>;

/// The slices of a multi-column range on the `width` clustering columns after `prefix` (the
/// values an `=` holds the columns before them to), `(c1, …) > (v1, …)` and the like,
/// compared in the columns' value order (Cassandra's): with the range's columns all ascending
/// or all descending, one composite slice (a descending one's bounds change sides); with mixed
/// orders, the disjoint slices `mixed_slices` cuts it into.
pub(super) fn multi_slice(
    t: &Table,
    prefix: &[Vec<u8>],
    width: usize,
    lower: Option<&(Tuple, bool)>,
    upper: Option<&(Tuple, bool)>,
) -> Result<Vec<Bounds>, CqlError> {
    let from = prefix.len().min(t.descending.len());
    let orders = &t.descending[from..(from + width).min(t.descending.len())];
    let desc = orders.first().copied().unwrap_or(false);
    if orders.iter().any(|d| *d != desc) {
        return mixed_slices(t, prefix, lower, upper);
    }
    let (lo, hi) = if desc { (upper, lower) } else { (lower, upper) };
    let build = |v: &[Vec<u8>], eoc: i8| -> Result<Vec<u8>, CqlError> {
        let parts: Vec<&[u8]> = prefix.iter().chain(v).map(Vec::as_slice).collect();
        if !CompositeType::fits(&parts) {
            return Err(CqlError::invalid(
                "a clustering value is longer than 65535 bytes",
            ));
        }
        Ok(CompositeType::build(&parts, eoc))
    };
    // Without a bound on one side, the prefix's own end bounds the slice.
    let start = match lo {
        Some((v, inclusive)) => build(v, if *inclusive { 0 } else { 1 })?,
        None if !prefix.is_empty() => build(&[], 0)?,
        None => Vec::new(),
    };
    let finish = match hi {
        Some((v, inclusive)) => build(v, if *inclusive { 1 } else { -1 })?,
        None if !prefix.is_empty() => build(&[], 1)?,
        None => Vec::new(),
    };
    if !start.is_empty() && !finish.is_empty() && t.comparator().compare(&start, &finish).is_gt() {
        return Ok(Vec::new());
    }
    Ok(vec![Bounds { start, finish }])
}

/// A multi-column range over clustering columns of mixed orders, after `prefix`, as disjoint
/// slices in clustering order. `(a, b) > (1, 2)` is `a = 1 AND b > 2` or `a > 1`: a bound is
/// the union, over each of its columns, of `=` on the columns before it and a one-sided range
/// on it (`>=` on the last where the bound is inclusive), each of which is one slice whatever
/// the columns' orders. With both bounds, each piece of one meets each piece of the other:
/// where they range on one column, a range between the two values; where one ranges on an
/// earlier column than the other, the other's piece, if its value on that column passes the
/// first's bound.
fn mixed_slices(
    t: &Table,
    prefix: &[Vec<u8>],
    lower: Option<&(Tuple, bool)>,
    upper: Option<&(Tuple, bool)>,
) -> Result<Vec<Bounds>, CqlError> {
    let from = prefix.len();
    // Each piece of a bound: the column it ranges on, and whether inclusively.
    let pieces = |b: Option<&(Tuple, bool)>| -> Vec<Option<(usize, bool)>> {
        match b {
            Some((v, inclusive)) => (from..from + v.len())
                .map(|i| Some((i, *inclusive && i + 1 == from + v.len())))
                .collect(),
            None => vec![None],
        }
    };
    let whole = |b: Option<&(Tuple, bool)>| -> Tuple {
        prefix
            .iter()
            .chain(b.map_or(&[][..], |b| &b.0))
            .cloned()
            .collect()
    };
    let (lv, uv) = (whole(lower), whole(upper));
    let mut out = Vec::new();
    for lp in pieces(lower) {
        for up in pieces(upper) {
            // (prefix held by `=`, range below, range above)
            let piece = match (lp, up) {
                (None, None) => continue,
                (Some((i, inc)), None) => (&lv[..i], Some((&lv[i], inc)), None),
                (None, Some((j, inc))) => (&uv[..j], None, Some((&uv[j], inc))),
                (Some((i, ia)), Some((j, ib))) => {
                    let common = i.min(j);
                    if lv[..common] != uv[..common] {
                        continue;
                    }
                    match i.cmp(&j) {
                        Ordering::Equal => (&lv[..i], Some((&lv[i], ia)), Some((&uv[i], ib))),
                        // The upper piece holds column i at uv[i]: it must be above lv[i]
                        // (or at it, where the lower piece includes its value).
                        Ordering::Less
                            if passes(value_cmp(t, &uv[..i], i, &uv[i], &lv[i]).reverse(), ia) =>
                        {
                            (&uv[..j], None, Some((&uv[j], ib)))
                        }
                        // The lower piece holds column j at lv[j]: it must be below uv[j]
                        // (or at it, where the upper piece includes its value).
                        Ordering::Greater
                            if passes(value_cmp(t, &lv[..j], j, &lv[j], &uv[j]), ib) =>
                        {
                            (&lv[..i], Some((&lv[i], ia)), None)
                        }
                        _ => continue,
                    }
                }
            };
            out.extend(piece_slice(t, piece)?);
        }
    }
    let cmp = t.comparator();
    out.sort_by(|a, b| cmp.compare(&a.start, &b.start));
    Ok(out)
}

/// Whether a value comparing `o` against an upper bound passes it: below it, or at it where
/// the bound is `inclusive`.
fn passes(o: Ordering, inclusive: bool) -> bool {
    o.is_lt() || (inclusive && o.is_eq())
}

/// `x` against `y` as values of clustering column `c` (its type's order, not its storage
/// order), both after `prefix`.
fn value_cmp(t: &Table, prefix: &[Vec<u8>], c: usize, x: &[u8], y: &[u8]) -> Ordering {
    let key = |v: &[u8]| {
        let mut parts: Vec<&[u8]> = prefix.iter().map(Vec::as_slice).collect();
        parts.push(v);
        CompositeType::build(&parts, 0)
    };
    let o = t.comparator().compare(&key(x), &key(y));
    if t.descending[c] {
        o.reverse()
    } else {
        o
    }
}

/// The slice of `=` on a clustering prefix and a range on the next column (none if empty).
type Piece<'a> = (
    &'a [Vec<u8>],
    Option<(&'a Vec<u8>, bool)>,
    Option<(&'a Vec<u8>, bool)>,
);

fn piece_slice(t: &Table, (prefix, lo, hi): Piece<'_>) -> Result<Vec<Bounds>, CqlError> {
    let n = t.columns.len();
    let (mut eq, mut lower, mut upper) = (vec![None; n], vec![None; n], vec![None; n]);
    for (&ci, v) in t.clustering.iter().zip(prefix) {
        eq[ci] = Some(vec![v.clone()]);
    }
    if let Some(&ci) = t.clustering.get(prefix.len()) {
        lower[ci] = lo.map(|(v, inc)| (v.clone(), inc));
        upper[ci] = hi.map(|(v, inc)| (v.clone(), inc));
    }
    clustering_slices(t, &eq, &lower, &upper)
}

/// The partitions named by `=`/`IN` on the whole partition key (every combination), in the
/// order of the key's types and each once; `None` when no partition key column is restricted.
pub(super) fn partition_keys(
    t: &Table,
    eq: &[Option<Vec<Vec<u8>>>],
) -> Result<Option<Vec<Vec<u8>>>, CqlError> {
    match t.partition_key.iter().filter(|&&i| eq[i].is_some()).count() {
        0 => return Ok(None),
        k if k == t.partition_key.len() => {}
        _ => {
            return Err(CqlError::invalid(
                "a partition key must be restricted on all its columns, or not at all",
            ))
        }
    }
    let mut combos: Vec<Vec<&[u8]>> = vec![Vec::new()];
    for &i in &t.partition_key {
        let mut next = Vec::new();
        for p in &combos {
            for v in eq[i].iter().flatten() {
                let mut q = p.clone();
                q.push(v.as_slice());
                next.push(q);
            }
        }
        combos = next;
    }
    let mut keys = combos
        .iter()
        .map(|parts| t.row_key(parts))
        .collect::<Result<Vec<_>, _>>()?;
    if keys.len() > 1 {
        let cmp = t.key_comparator();
        keys.sort_by(|a, b| cmp.compare(a, b));
        keys.dedup();
    }
    Ok(Some(keys))
}

/// The inclusive token bound that `token(k) > t` (`up`, `strict`), `>= t`, `< t` or `<= t`
/// means: tokens are integers, so `> t` is `>= t + 1`; an order-preserving token is a key, and
/// the first key after `t` is `t` and a zero byte. `None` when no token lies on that side.
pub fn token_bound(
    p: Partitioner,
    text: &str,
    up: bool,
    strict: bool,
) -> Result<Option<String>, CqlError> {
    let bad = || CqlError::invalid(format!("'{text}' is not a {} token", p.class_name()));
    let t = text.trim();
    if let (Partitioner::Random, Some(below_zero)) = (p, t.strip_prefix('-')) {
        // Tokens run from 0 to 2^127 (Cassandra's minimum token is -1): every token is above
        // a negative one, none below it.
        below_zero.parse::<u128>().map_err(|_| bad())?;
        return Ok(up.then(|| "0".to_string()));
    }
    if !strict {
        return Ok(Some(text.to_string()));
    }
    Ok(match p {
        Partitioner::Random => {
            const MAX: u128 = 1 << 127;
            let t: u128 = t.parse().map_err(|_| bad())?;
            match (up, t) {
                (true, t) if t >= MAX => None,
                (true, t) => Some((t + 1).to_string()),
                (false, 0) => None,
                (false, t) => Some((t.min(MAX + 1) - 1).to_string()),
            }
        }
        Partitioner::Murmur3 => {
            let t: i64 = text.trim().parse().map_err(|_| bad())?;
            let next = if up {
                t.checked_add(1)
            } else {
                t.checked_sub(1)
            };
            next.map(|n| n.to_string())
        }
        Partitioner::OrderPreserving if up => Some(format!("{text}\0")),
        Partitioner::OrderPreserving => {
            return Err(CqlError::invalid(
                "token(k) < 'key' under the order-preserving partitioner: use <= or token(key)",
            ))
        }
        _ => return Err(bad()),
    })
}
