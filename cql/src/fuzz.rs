//! The body of the `cql_parse` cargo-fuzz target in `fuzz/`: it takes arbitrary bytes and must
//! return (an answer or an error) without panicking or hanging. This crate's tests call it on
//! random and mutated statements, so CI exercises it without a nightly compiler.

use crate::parser::parse;
use crate::table::Table;

/// `cql_parse`: arbitrary bytes as CQL text. Every `CREATE TABLE` that makes a valid table must
/// come back from the statement the catalog would store for it as the same table (a failure
/// panics, so the fuzzer reports it). Returns the statements parsed.
pub fn cql_parse(bytes: &[u8]) -> Result<usize, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
    let statements = parse(text).map_err(|e| e.to_string())?;
    for s in &statements {
        if let Ok(t) = Table::from_statement("ks", s) {
            let stored = t.create_statement();
            let again = parse(&stored)
                .ok()
                .and_then(|p| p.first().and_then(|s| Table::from_statement("ks", s).ok()));
            assert_eq!(
                again.as_ref(),
                Some(&t),
                "the stored form does not recreate the table: {stored}"
            );
        }
    }
    Ok(statements.len())
}
