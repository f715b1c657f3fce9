//! Reading the engine back in the model's shape, three ways: a range scan of both column
//! families, every Standard1 row as a reversed slice, and every Standard1 column by name. Each
//! read path merges memtables and SSTables its own way, so each is compared on its own.

use std::collections::BTreeMap;

use supercolumn::{
    Column, ColumnOrSuperColumn, ColumnParent, Database, KeyRange, SlicePredicate, SliceRange,
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
