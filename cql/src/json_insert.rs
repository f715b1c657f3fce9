//! `INSERT INTO t JSON '{…}'`: the object read into the `INSERT` it stands for. Each key names
//! a column (folded to lower case unless it is written in double quotes, as CQL names are),
//! each value becomes that column's bytes by Cassandra's JSON reading of its type
//! (`CqlType::from_json`); a column the object leaves out is set to null (`DEFAULT NULL`, the
//! default) or left alone (`DEFAULT UNSET`). The session reads the statement's JSON text and
//! runs the `INSERT` (`execute.rs`).

use super::ast::Term;
use super::error::CqlError;
use super::table::{Kind, Table};
use super::types::Literal;

/// The `INSERT` of `json` (a JSON object's text) into `t`.
pub(super) fn columns_of(
    t: &Table,
    json: &str,
    default_unset: bool,
) -> Result<(Vec<String>, Vec<Term>), CqlError> {
    let value: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| CqlError::invalid(format!("Could not decode JSON string '{json}': {e}")))?;
    let serde_json::Value::Object(entries) = value else {
        return Err(CqlError::invalid(format!(
            "Got non-map value when decoding JSON map: {json}"
        )));
    };
    let mut columns = Vec::with_capacity(t.columns.len());
    let mut values = Vec::with_capacity(t.columns.len());
    for (key, v) in &entries {
        let name = match key.strip_prefix('"').and_then(|k| k.strip_suffix('"')) {
            Some(quoted) => quoted.replace("\"\"", "\""),
            None => key.to_lowercase(),
        };
        let (_, def) = t.column(&name).map_err(|_| {
            CqlError::invalid(format!(
                "JSON values map contains unrecognized column: {key}"
            ))
        })?;
        if columns.contains(&def.name) {
            return Err(CqlError::invalid(format!(
                "JSON values map contains column {key} twice"
            )));
        }
        let bytes = def.ty.from_json(v, &def.name)?;
        columns.push(def.name.clone());
        values.push(Term::Literal(Literal::Typed(def.ty.clone(), bytes)));
    }
    if !default_unset {
        for def in t.columns.iter().filter(|d| d.kind == Kind::Regular) {
            if !columns.contains(&def.name) {
                columns.push(def.name.clone());
                values.push(Term::Literal(Literal::Null));
            }
        }
    }
    Ok((columns, values))
}
