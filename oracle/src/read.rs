//! Reading the engine back in the model's shape, four ways: a range scan of both column
//! families, every Standard1 row as a reversed slice, every Standard1 column by name, and the
//! Standard1 rows whose `c0` holds a value, through the secondary index on `c0`
//! (`get_indexed_slices`). Each read path merges memtables and SSTables its own way (the index
//! read its entries' too), so each is compared on its own.

use std::collections::BTreeMap;

use supercolumn::{
    Column, ColumnOrSuperColumn, ColumnParent, Database, IndexClause, IndexExpression, KeyRange,
    KeySlice, SlicePredicate, SliceRange,
};

use crate::bounds::{COLS, ROWS};
use crate::ops::Col;

/// The keyspace the runs write to (the default schema's).
pub(crate) const KS: &str = "Keyspace1";

/// Per (row, column): value, timestamp, and when it expires (a TTL cell's local expiration
/// time).
pub type Seen = BTreeMap<(u8, Col), (u8, i64, Option<i64>)>;

/// A read that failed or returned what no operation wrote.
pub(crate) type ReadResult = Result<Seen, String>;

/// `r3` → 3, `c1` → 1, `s2` → 2; anything else is a name no operation wrote.
fn number(name: &[u8]) -> Result<u8, String> {
    std::str::from_utf8(name)
        .ok()
        .and_then(|s| s.get(1..))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("the engine returned a name never written: {name:?}"))
}

fn seen(out: &mut Seen, row: u8, sc: Option<u8>, c: &Column) -> Result<(), String> {
    let col = number(&c.name)?;
    let val = match c.value.as_slice() {
        [v] => *v,
        other => return Err(format!("r{row} c{col}: a value never written: {other:?}")),
    };
    out.insert((row, Col { sc, col }), (val, c.timestamp, c.expires_at));
    Ok(())
}

/// Everything both column families hold, by a range scan.
pub(crate) fn all(db: &Database) -> ReadResult {
    let mut out = BTreeMap::new();
    for cf in ["Standard1", "Super1"] {
        let rows = db
            .get_range_slices(
                KS,
                &ColumnParent::new(cf),
                &SlicePredicate::everything(),
                &KeyRange::all().count(1000),
            )
            .map_err(|e| format!("range read of {cf}: {e}"))?;
        for r in rows {
            let row = number(&r.key)?;
            for c in &r.columns {
                match c {
                    ColumnOrSuperColumn::Column(col) => seen(&mut out, row, None, col)?,
                    ColumnOrSuperColumn::SuperColumn(s) => {
                        let sc = number(&s.name)?;
                        for col in &s.columns {
                            seen(&mut out, row, Some(sc), col)?;
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Every Standard1 row read as a reversed slice, which must come back in reverse order.
pub(crate) fn reversed(db: &Database) -> ReadResult {
    let mut out = BTreeMap::new();
    for row in 0..ROWS {
        let cols = db
            .get_slice(
                KS,
                format!("r{row}"),
                &ColumnParent::new("Standard1"),
                &SlicePredicate::Range(SliceRange::all().reversed()),
            )
            .map_err(|e| format!("reversed read of r{row}: {e}"))?;
        let names: Vec<&[u8]> = cols.iter().map(|c| c.name()).collect();
        if names.windows(2).any(|w| w[0] <= w[1]) {
            return Err(format!(
                "a reversed slice of r{row} is out of order: {names:?}"
            ));
        }
        for c in &cols {
            let col = c
                .as_column()
                .ok_or_else(|| format!("r{row}: a super column in Standard1"))?;
            seen(&mut out, row, None, col)?;
        }
    }
    Ok(out)
}

/// Every Standard1 column the operations can touch, read by name (`multiget_slice`): the read
/// that stops at the newest SSTable holding a column.
pub(crate) fn named(db: &Database) -> ReadResult {
    let keys: Vec<String> = (0..ROWS).map(|r| format!("r{r}")).collect();
    let names = SlicePredicate::Names((0..COLS).map(|c| format!("c{c}").into_bytes()).collect());
    let rows = db
        .multiget_slice(KS, &keys, &ColumnParent::new("Standard1"), &names)
        .map_err(|e| format!("named read: {e}"))?;
    standard_rows(&rows)
}

/// The Standard1 cells of `rows`, as the model holds them.
fn standard_rows(rows: &[KeySlice]) -> ReadResult {
    let mut out = BTreeMap::new();
    for r in rows {
        let row = number(&r.key)?;
        for c in &r.columns {
            let col = c
                .as_column()
                .ok_or_else(|| format!("r{row}: a super column in Standard1"))?;
            seen(&mut out, row, None, col)?;
        }
    }
    Ok(out)
}

/// The name of Standard1's column the runs index, and of its index.
pub(crate) const INDEXED: (&str, &str) = ("c0", "c0_idx");

/// Per value of `c0` asked for: the Standard1 rows the index finds holding it, whole.
pub type IndexedSeen = BTreeMap<u8, Seen>;

/// For each of `values`, the rows `get_indexed_slices` answers for `c0 = value`.
pub(crate) fn indexed(db: &Database, values: &[u8]) -> Result<IndexedSeen, String> {
    let mut out = BTreeMap::new();
    for &v in values {
        let clause = IndexClause {
            expressions: vec![IndexExpression::eq(INDEXED.0, [v])],
            start_key: Vec::new(),
            count: usize::from(ROWS) * 2,
        };
        let rows = db
            .get_indexed_slices(
                KS,
                &ColumnParent::new("Standard1"),
                &clause,
                &SlicePredicate::everything(),
            )
            .map_err(|e| format!("indexed read of c0 = {v}: {e}"))?;
        out.insert(v, standard_rows(&rows)?);
    }
    Ok(out)
}

/// What the index must answer for each of `values`, from the Standard1 cells `standard` a
/// model holds: every row whose `c0` is that value, whole.
pub(crate) fn indexed_in(standard: &Seen, values: &[u8]) -> IndexedSeen {
    let c0 = Col { sc: None, col: 0 };
    values
        .iter()
        .map(|&v| {
            let rows: Vec<u8> = standard
                .iter()
                .filter(|((_, at), (val, ..))| *at == c0 && *val == v)
                .map(|((row, _), _)| *row)
                .collect();
            let found = standard
                .iter()
                .filter(|((row, _), _)| rows.contains(row))
                .map(|(k, v)| (*k, *v))
                .collect();
            (v, found)
        })
        .collect()
}
