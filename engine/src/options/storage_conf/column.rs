//! The `<Column>` children of a `<ColumnFamily>`: Cassandra 0.7's `column_metadata` in
//! `storage-conf.xml`'s form, each naming one column and, with `IndexType="KEYS"`, declaring a
//! secondary index on it. This file only turns the element into an [`IndexDef`] on the column
//! family's definition; the database builds the index when it opens.

use roxmltree::Node;

use super::Parser;
use crate::error::ConfError;
use crate::schema::{ColumnFamilyDef, ColumnType, IndexDef};

/// The attributes a `<Column>` may have.
const KNOWN: &[&str] = &["Name", "ValidationClass", "IndexType", "IndexName"];

impl Parser<'_, '_> {
    /// Reads one `<Column>` of `cf` (whose comparator and default validation class are already
    /// read), adding the KEYS index it declares, if any.
    pub(super) fn column(&mut self, n: Node, cf: &mut ColumnFamilyDef) -> Result<(), ConfError> {
        for a in n.attributes() {
            if !KNOWN.contains(&a.name()) {
                let what = format!(
                    "attribute {} of <Column> in <ColumnFamily Name=\"{}\">",
                    a.name(),
                    cf.name
                );
                self.warn(n, what);
            }
        }
        let name = n
            .attribute("Name")
            .ok_or_else(|| self.err(n, Some("Name"), "the Name attribute is missing"))?;
        let column = cf.comparator.parse_text(name).map_err(|e| {
            let message = format!(
                "'{name}' is not a name {} accepts: {e}",
                cf.comparator.name()
            );
            self.err(n, Some("Name"), message)
        })?;
        self.validation_class(n, cf)?;
        match n.attribute("IndexType") {
            None => {
                if n.attribute("IndexName").is_some() {
                    return Err(self.err(n, Some("IndexName"), "IndexName without IndexType"));
                }
                return Ok(());
            }
            Some("KEYS") => {}
            Some(other) => {
                return Err(self.err(
                    n,
                    Some("IndexType"),
                    format!("'{other}' is not an index type (KEYS is)"),
                ))
            }
        }
        if cf.column_type == ColumnType::Super {
            return Err(self.err(
                n,
                Some("IndexType"),
                format!(
                    "column family '{}' is Super: its columns cannot be indexed",
                    cf.name
                ),
            ));
        }
        if cf.indexes.iter().any(|i| i.column == column) {
            return Err(self.err(
                n,
                Some("Name"),
                format!("column '{name}' of '{}' is indexed twice", cf.name),
            ));
        }
        let index = match n.attribute("IndexName") {
            Some(i) => i.to_string(),
            // Cassandra 0.7's default: the column family and column, stripped to a word.
            None => format!("{}_{name}_idx", cf.name)
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect(),
        };
        crate::schema::validate_identifier(&index, "index")
            .map_err(|e| self.err(n, Some("IndexName"), e.to_string()))?;
        cf.indexes.push(IndexDef::new(index, column, 0));
        Ok(())
    }

    /// Checks a `<Column>`'s `ValidationClass`: a column family's values are checked by its one
    /// validator, so only that one is accepted.
    fn validation_class(&self, n: Node, cf: &ColumnFamilyDef) -> Result<(), ConfError> {
        match self.comparator(n, "ValidationClass")? {
            Some(given) if given.name() != cf.default_validation_class.name() => Err(self.err(
                n,
                Some("ValidationClass"),
                format!(
                    "a validation class of its own ({}) is not supported; the column family's \
                     DefaultValidationClass ({}) applies",
                    given.name(),
                    cf.default_validation_class.name()
                ),
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::error::ConfError;
    use crate::model::comparator::ComparatorRegistry;
    use crate::options::StorageConf;
    use crate::schema::KeyspaceDef;

    fn parse(columns: &str) -> Result<KeyspaceDef, ConfError> {
        let text = format!(
            "<Keyspace Name=\"K\">\n<ColumnFamily Name=\"Users\" CompareWith=\"UTF8Type\" \
             DefaultValidationClass=\"UTF8Type\">\n{columns}\n</ColumnFamily>\n</Keyspace>"
        );
        let c = StorageConf::parse(&text, &ComparatorRegistry::default())?;
        Ok(c.options.keyspaces.unwrap().remove(0))
    }

    #[test]
    fn keys_columns_declare_indexes_named_as_cassandra_names_them() {
        let ks = parse(
            "<Column Name=\"state\" IndexType=\"KEYS\"/>\n\
             <Column Name=\"birth-year\" ValidationClass=\"UTF8Type\" IndexType=\"KEYS\" \
             IndexName=\"by_year\"/>\n<Column Name=\"plain\"/>",
        )
        .unwrap();
        let idx = &ks.column_families[0].indexes;
        let got: Vec<(&str, &[u8], bool)> = idx
            .iter()
            .map(|i| (i.name.as_str(), i.column.as_slice(), i.built))
            .collect();
        assert_eq!(
            got,
            [
                ("Users_state_idx", &b"state"[..], false),
                ("by_year", &b"birth-year"[..], false)
            ]
        );
    }

    #[test]
    fn mistakes_name_their_line_and_attribute() {
        let cases = [
            ("<Column IndexType=\"KEYS\"/>", "Name", "missing"),
            ("<Column Name=\"a\" IndexType=\"keys\"/>", "IndexType", "not an index type"),
            ("<Column Name=\"a\" IndexName=\"i\"/>", "IndexName", "without IndexType"),
            (
                "<Column Name=\"a\" ValidationClass=\"LongType\" IndexType=\"KEYS\"/>",
                "ValidationClass",
                "DefaultValidationClass (UTF8Type) applies",
            ),
            (
                "<Column Name=\"a\" IndexType=\"KEYS\"/><Column Name=\"a\" IndexType=\"KEYS\" IndexName=\"j\"/>",
                "Name",
                "indexed twice",
            ),
            (
                "<Column Name=\"a\" IndexType=\"KEYS\" IndexName=\"no-dash\"/>",
                "IndexName",
                "index",
            ),
        ];
        for (columns, attribute, says) in cases {
            let e = parse(columns).unwrap_err();
            assert_eq!(e.line, 3, "{columns}: {e}");
            assert_eq!(e.attribute.as_deref(), Some(attribute), "{columns}: {e}");
            assert!(e.to_string().contains(says), "{columns}: {e}");
        }
    }

    #[test]
    fn a_super_column_family_or_a_name_used_twice_in_the_keyspace_is_refused() {
        let text = "<Keyspace Name=\"K\"><ColumnFamily Name=\"S\" ColumnType=\"Super\">\
                    <Column Name=\"0a\" IndexType=\"KEYS\"/></ColumnFamily></Keyspace>";
        let e = StorageConf::parse(text, &ComparatorRegistry::default()).unwrap_err();
        assert!(e.to_string().contains("is Super"), "{e}");
        let text = "<Keyspace Name=\"K\">\
                    <ColumnFamily Name=\"A\"><Column Name=\"0a\" IndexType=\"KEYS\" IndexName=\"i\"/></ColumnFamily>\
                    <ColumnFamily Name=\"B\"><Column Name=\"0b\" IndexType=\"KEYS\" IndexName=\"i\"/></ColumnFamily>\
                    </Keyspace>";
        let e = StorageConf::parse(text, &ComparatorRegistry::default()).unwrap_err();
        assert!(e.to_string().contains("two indexes named 'i'"), "{e}");
    }
}
