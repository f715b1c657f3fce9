//! A value written as text, as `COPY FROM` reads a CSV field: text types as they are, blobs in
//! hex (with or without `0x`), booleans in any case, and every other type as its CQL literal,
//! quoted or not (`2024-05-01 12:00:00+0000`, `{'a': 1}`, `[1, 2]`). Nothing here reads or
//! writes a table.

use super::error::CqlError;
use super::parser::parse_literal;
use super::types::{CqlType, Literal};

/// The bytes of `text` as a value of `ty` for `column` (`None`: the value is null).
pub fn value_from_text(
    ty: &CqlType,
    text: &str,
    column: &str,
) -> Result<Option<Vec<u8>>, CqlError> {
    let literal = match ty {
        CqlType::Text | CqlType::Ascii => Literal::Str(text.to_string()),
        CqlType::Duration => Literal::Duration(text.trim().to_string()),
        CqlType::Blob => Literal::Hex(
            text.strip_prefix("0x")
                .or_else(|| text.strip_prefix("0X"))
                .unwrap_or(text)
                .to_string(),
        ),
        CqlType::Boolean => match text.trim().to_ascii_lowercase().as_str() {
            "true" => Literal::Bool(true),
            "false" => Literal::Bool(false),
            _ => {
                return Err(CqlError::invalid(format!(
                    "invalid boolean for {column}: '{text}'"
                )))
            }
        },
        _ => match parse_literal(text.trim()) {
            // A literal of the wrong kind for the type (a date typed without quotes reads as
            // a number or a word) is tried as a string.
            Ok(l) => match ty.encode(&l, column) {
                Ok(v) => return Ok(v),
                Err(e) => {
                    return ty
                        .encode(&Literal::Str(text.trim().to_string()), column)
                        .map_err(|_| e)
                }
            },
            Err(_) => Literal::Str(text.trim().to_string()),
        },
    };
    ty.encode(&literal, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(ty: &str, text: &str) -> Result<Option<Vec<u8>>, CqlError> {
        let create = format!("CREATE TABLE t (k int PRIMARY KEY, v {ty})");
        let statement = crate::parser::parse(&create).unwrap().remove(0);
        let table = crate::table::Table::from_statement("ks", &statement).unwrap();
        let (_, column) = table.column("v").unwrap();
        value_from_text(&column.ty, text, "v")
    }

    #[test]
    fn fields_read_as_cqlsh_copy_reads_them() {
        assert_eq!(v("int", "42").unwrap(), Some(vec![0, 0, 0, 42]));
        assert_eq!(v("int", " -1 ").unwrap(), Some(vec![0xff; 4]));
        assert_eq!(v("text", " a, b ").unwrap(), Some(b" a, b ".to_vec()));
        assert_eq!(v("blob", "0x0a0b").unwrap(), Some(vec![10, 11]));
        assert_eq!(v("blob", "0a0b").unwrap(), Some(vec![10, 11]));
        assert_eq!(v("boolean", "True").unwrap(), Some(vec![1]));
        assert_eq!(
            v("list<int>", "[1, 2]").unwrap(),
            Some(vec![
                0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2
            ])
        );
        assert!(v("timestamp", "2024-05-01 12:00:00+0000")
            .unwrap()
            .is_some());
        assert!(v("date", "2024-05-01").unwrap().is_some());
        assert!(v("uuid", "550e8400-e29b-41d4-a716-446655440000")
            .unwrap()
            .is_some());
        assert!(v("int", "forty-two").is_err());
        assert!(v("boolean", "yes").is_err());
    }
}
