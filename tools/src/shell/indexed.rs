//! The shell's secondary indexes (Cassandra 0.7's KEYS index): `column_metadata` entries with
//! `index_type: KEYS` on `create column family` and `update column family`, and `get CF where
//! …`, the indexed query, printed as `list` prints rows. Parsing is the parser's; this file runs
//! them through the engine's index API.

use super::parser::ColumnMeta;
use super::*;
use supercolumn::schema::IndexDef;
use supercolumn::{IndexClause, IndexExpression, IndexOperator};

/// How long the shell waits for a new index's build before it goes on (the build does not
/// stop; `get … where` through it is refused until it ends).
const BUILD_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The properties a `column_metadata` entry may have.
const COLUMN_PROPERTIES: [&str; 4] = [
    "column_name",
    "validation_class",
    "index_type",
    "index_name",
];

impl Shell {
    /// Creates the KEYS indexes `columns` declare on `cf` (an entry without `index_type`
    /// declares nothing this engine keeps); returns a line per index.
    pub(super) fn add_indexes(&self, cf: &str, columns: &[ColumnMeta]) -> Out {
        let def = self.def(cf)?;
        let mut lines = Vec::new();
        for column in columns {
            let get = |k: &str| column.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
            if let Some((k, _)) = column
                .iter()
                .find(|(k, _)| !COLUMN_PROPERTIES.contains(&k.as_str()))
            {
                return Err(format!("unknown column_metadata property '{k}'"));
            }
            let name = get("column_name").ok_or("a column_metadata entry needs a column_name")?;
            if let Some(v) = get("validation_class") {
                // Values are checked and compared by the column family's one validator.
                let given = self
                    .db
                    .options()
                    .comparators
                    .resolve(v)
                    .map_err(|e| e.to_string())?;
                if given.name() != def.default_validation_class.name() {
                    return Err(format!(
                        "column {name}: a validation_class of its own ({}) is not supported; \
                         the column family's default_validation_class ({}) applies",
                        given.name(),
                        def.default_validation_class.name()
                    ));
                }
            }
            match get("index_type") {
                None => continue,
                Some(t) if t.eq_ignore_ascii_case("keys") || t == "0" => {}
                Some(t) => return Err(format!("index_type {t} is not supported (KEYS is)")),
            }
            let column = bytes_for(
                &Lit::Word(name.to_string()),
                def.comparator.as_ref(),
                &self.ids,
                self.now(),
            )?;
            let index = match get("index_name") {
                Some(n) => n.to_string(),
                None => {
                    let clean: String = name
                        .chars()
                        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    format!("{cf}_{clean}_idx")
                }
            };
            let ks = self.ks()?;
            self.db
                .create_index(ks, cf, IndexDef::new(index.clone(), column, 0))
                .map_err(|e| e.to_string())?;
            let built = self
                .db
                .wait_for_index(ks, &index, BUILD_WAIT)
                .map_err(|e| e.to_string())?;
            lines.push(if built {
                format!("Index {index} on {cf}.{name} built.")
            } else {
                format!("Index {index} on {cf}.{name} is building in the background.")
            });
        }
        Ok(lines)
    }

    /// `get CF where …`: the rows matching every expression, found through an index on a
    /// column the first `=` names.
    pub(super) fn get_where(
        &self,
        cf: &str,
        exprs: &[(String, String, Lit)],
        limit: Option<usize>,
    ) -> Out {
        let def = self.def(cf)?;
        let now = self.now();
        let mut expressions = Vec::with_capacity(exprs.len());
        for (column, op, value) in exprs {
            let op = match op.as_str() {
                "=" => IndexOperator::Eq,
                ">" => IndexOperator::Gt,
                ">=" => IndexOperator::Gte,
                "<" => IndexOperator::Lt,
                _ => IndexOperator::Lte,
            };
            let column_name = bytes_for(
                &Lit::Word(column.clone()),
                def.comparator.as_ref(),
                &self.ids,
                now,
            )?;
            let value = bytes_for(value, def.default_validation_class.as_ref(), &self.ids, now)?;
            expressions.push(IndexExpression {
                column_name,
                op,
                value,
            });
        }
        let clause = IndexClause {
            expressions,
            start_key: Vec::new(),
            count: limit.unwrap_or(100),
        };
        let rows = self
            .db
            .get_indexed_slices(
                self.ks()?,
                &ColumnParent::new(cf),
                &clause,
                &SliceRange::all().into(),
            )
            .map_err(|e| e.to_string())?;
        Ok(self.rows_lines(&def, &rows))
    }
}
