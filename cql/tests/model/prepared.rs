//! Statements as a driver sends them: prepared with `?` markers, executed with serialized
//! values. The model test runs some of its inserts and its reads (one row, a whole partition,
//! a clustering range) both ways, so the prepared statements' fast paths answer to the same
//! model as the text statements.

use supercolumn_cql::{Rows, Session};

/// `INSERT INTO ks.{table} (cols) VALUES (?, …)` with these values (`None`: null), stamped
/// `ts` as a driver's client-side timestamp.
pub fn insert(
    cql: &mut Session<'_>,
    table: &str,
    cols: &[String],
    values: &[Option<Vec<u8>>],
    ts: i64,
) -> Result<(), String> {
    let marks = vec!["?"; cols.len()].join(", ");
    let text = format!(
        "INSERT INTO ks.{table} ({}) VALUES ({marks})",
        cols.join(", ")
    );
    let p = cql.prepare(&text).map_err(|e| format!("{text}: {e}"))?;
    let values: Vec<Option<&[u8]>> = values.iter().map(Option::as_deref).collect();
    cql.set_default_timestamp(Some(ts));
    let done = cql.execute_prepared(&p, &values);
    cql.set_default_timestamp(None);
    done.map(|_| ()).map_err(|e| format!("{text}: {e}"))
}

/// `SELECT * FROM ks.{table} WHERE c1 = ? AND …` with these columns and values.
pub fn select(cql: &mut Session<'_>, table: &str, key: &[(String, &[u8])]) -> Rows {
    let relations: Vec<String> = key.iter().map(|(c, _)| format!("{c} = ?")).collect();
    let text = format!("SELECT * FROM ks.{table} WHERE {}", relations.join(" AND "));
    let p = cql.prepare(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let values: Vec<Option<&[u8]>> = key.iter().map(|(_, v)| Some(*v)).collect();
    match cql.execute_prepared(&p, &values) {
        Ok(supercolumn_cql::CqlResult::Rows(rows)) => rows,
        other => panic!("{text}: {other:?}"),
    }
}

/// `SELECT * FROM ks.{table} WHERE <key> = ? AND … AND {column} {op} ? ORDER BY {column}
/// {order} LIMIT ?` with these values: the key's, the bound's, and the limit as an `int`.
pub fn select_range(
    cql: &mut Session<'_>,
    table: &str,
    key: &[(String, &[u8])],
    range: (&str, &str, &[u8]),
    order: &str,
    limit: usize,
) -> Rows {
    let (column, op, bound) = range;
    let relations: Vec<String> = key.iter().map(|(c, _)| format!("{c} = ?")).collect();
    let text = format!(
        "SELECT * FROM ks.{table} WHERE {} AND {column} {op} ? ORDER BY {column} {order} LIMIT ?",
        relations.join(" AND ")
    );
    let p = cql.prepare(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let limit = i32::try_from(limit).unwrap().to_be_bytes();
    let values: Vec<Option<&[u8]>> = key
        .iter()
        .map(|(_, v)| Some(*v))
        .chain([Some(bound), Some(&limit[..])])
        .collect();
    match cql.execute_prepared(&p, &values) {
        Ok(supercolumn_cql::CqlResult::Rows(rows)) => rows,
        other => panic!("{text}: {other:?}"),
    }
}
