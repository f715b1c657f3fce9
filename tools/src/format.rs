//! The output of `get`, `list` and `sstable-dump` (SPEC §8): names by the comparator, values by
//! the validator, row keys as text when printable, timestamps in microseconds.

use supercolumn::comparator::{builtin::to_hex, Comparator};
use supercolumn::{Column, ColumnOrSuperColumn};

/// A row key as text: by the column family's key type when it has one (a CQL table's partition
/// key: `1`, `partitionVal1:partitionVal2`), else the key itself when it is printable UTF-8,
/// otherwise `0x`-prefixed hex.
pub fn key_text(key: &[u8], key_type: Option<&dyn Comparator>) -> String {
    if let Some(t) = key_type.filter(|t| t.validate(key).is_ok()) {
        return t.to_text(key);
    }
    match std::str::from_utf8(key) {
        Ok(s) if !s.is_empty() && s.chars().all(|c| !c.is_control()) => s.to_string(),
        _ => format!("0x{}", to_hex(key)),
    }
}

/// `(column=NAME, value=VALUE, timestamp=TS[, ttl=N])`.
pub fn column(c: &Column, names: &dyn Comparator, values: &dyn Comparator) -> String {
    let ttl = c.ttl.map(|t| format!(", ttl={t}")).unwrap_or_default();
    format!(
        "(column={}, value={}, timestamp={}{ttl})",
        names.to_text(&c.name),
        names
            .value_text(&c.name, &c.value)
            .unwrap_or_else(|| values.to_text(&c.value)),
        c.timestamp
    )
}

/// The lines of one result: `=> (column=…)`, or a super column's block.
pub fn result_lines(
    r: &ColumnOrSuperColumn,
    names: &dyn Comparator,
    subnames: &dyn Comparator,
    values: &dyn Comparator,
) -> Vec<String> {
    match r {
        ColumnOrSuperColumn::Column(c) => vec![format!("=> {}", column(c, names, values))],
        ColumnOrSuperColumn::SuperColumn(s) => {
            let mut lines = vec![format!("=> (super_column={},", names.to_text(&s.name))];
            let n = s.columns.len();
            for (i, c) in s.columns.iter().enumerate() {
                let close = if i + 1 == n { ")" } else { "" };
                lines.push(format!("     {}{close}", column(c, subnames, values)));
            }
            lines
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use supercolumn::comparator::{BytesType, Utf8Type};
    use supercolumn::SuperColumn;

    #[test]
    fn lines_match_spec_section_8() {
        let c = Column {
            name: b"first".to_vec(),
            value: b"John".to_vec(),
            timestamp: 1374546754299000,
            ttl: None,
            expires_at: None,
        };
        assert_eq!(
            result_lines(
                &ColumnOrSuperColumn::Column(c.clone()),
                &Utf8Type,
                &Utf8Type,
                &BytesType
            ),
            ["=> (column=first, value=4a6f686e, timestamp=1374546754299000)"]
        );
        let sc = SuperColumn {
            name: b"homeAddress".to_vec(),
            columns: vec![
                Column {
                    name: b"city".to_vec(),
                    value: b"san francisco".to_vec(),
                    ..c.clone()
                },
                Column {
                    name: b"zip".to_vec(),
                    value: b"94107".to_vec(),
                    ttl: Some(60),
                    ..c
                },
            ],
        };
        assert_eq!(
            result_lines(
                &ColumnOrSuperColumn::SuperColumn(sc),
                &Utf8Type,
                &Utf8Type,
                &BytesType
            ),
            [
                "=> (super_column=homeAddress,",
                "     (column=city, value=73616e206672616e636973636f, timestamp=1374546754299000)",
                "     (column=zip, value=3934313037, timestamp=1374546754299000, ttl=60))",
            ]
        );
        assert_eq!(key_text(b"jsmith", None), "jsmith");
        assert_eq!(key_text(&[0, 1, 0xff], None), "0x0001ff");
        let int = supercolumn::comparator::Int32Type;
        assert_eq!(key_text(&[0, 0, 0, 7], Some(&int)), "7");
        assert_eq!(
            key_text(b"abc", Some(&int)),
            "abc",
            "a key its type refuses shows as before"
        );
    }
}
