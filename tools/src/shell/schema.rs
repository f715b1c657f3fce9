//! The shell's schema statements: `create column family` with its properties, and `describe
//! keyspace` (column families, their comparators, settings and indexed columns, the
//! database's settings in force). Statement parsing is the parser's; this file only runs them.

use super::*;

impl Shell {
    pub(super) fn create_cf(&self, name: &str, props: &[(String, String)]) -> Out {
        let reg = &self.db.options().comparators;
        let resolve = |v: &str| reg.resolve(v).map_err(|e| e.to_string());
        let super_cf = props
            .iter()
            .any(|(k, v)| k == "column_type" && v.eq_ignore_ascii_case("super"));
        let mut def = if super_cf {
            ColumnFamilyDef::super_family(name)
        } else {
            ColumnFamilyDef::standard(name)
        };
        for (k, v) in props {
            match k.as_str() {
                "column_type"
                    if v.eq_ignore_ascii_case("standard") || v.eq_ignore_ascii_case("super") => {}
                "column_type" => {
                    return Err(format!("column_type is Standard or Super, not '{v}'"))
                }
                "comparator" => def.comparator = resolve(v)?,
                "subcomparator" if super_cf => def.subcomparator = Some(resolve(v)?),
                "subcomparator" => {
                    return Err("subcomparator is only for column_type = Super".into())
                }
                "default_validation_class" => def.default_validation_class = resolve(v)?,
                "comment" => def.comment = Some(v.clone()),
                "gc_grace" | "gc_grace_seconds" => {
                    def.gc_grace_seconds = Some(
                        v.parse()
                            .map_err(|_| format!("gc_grace '{v}' is not a number"))?,
                    )
                }
                "min_compaction_threshold" => {
                    def.min_compaction_threshold =
                        Some(v.parse().map_err(|_| format!("'{v}' is not a number"))?)
                }
                "max_compaction_threshold" => {
                    def.max_compaction_threshold =
                        Some(v.parse().map_err(|_| format!("'{v}' is not a number"))?)
                }
                "keys_cached" => def.keys_cached = Some(KeysCached::parse(v)?),
                other => return Err(format!("unknown column family property '{other}'")),
            }
        }
        self.db
            .create_column_family(self.ks()?, def)
            .map_err(|e| e.to_string())?;
        Ok(vec![format!("Column family {name} created.")])
    }

    pub(super) fn describe(&self, ks: &str) -> Out {
        let d = self.db.describe_keyspace(ks).map_err(|e| e.to_string())?;
        let full = |c: &Arc<dyn Comparator>| {
            let n = c.name();
            if n.contains('.') {
                n
            } else {
                format!("org.apache.cassandra.db.marshal.{n}")
            }
        };
        let mut lines = vec![
            format!("Keyspace: {}:", d.name),
            format!("  Replication Strategy: {}", d.replica_placement_strategy),
            format!("    Replication Factor: {}", d.replication_factor),
            format!("  Endpoint Snitch: {}", d.endpoint_snitch),
            format!("  Keys Cached Fraction: {}", d.keys_cached_fraction),
            "  Column Families:".into(),
        ];
        for cf in &d.column_families {
            lines.push(format!(
                "    ColumnFamily: {}{}",
                cf.name,
                if cf.column_type == ColumnType::Super {
                    " (Super)"
                } else {
                    ""
                }
            ));
            if let Some(c) = &cf.comment {
                lines.push(format!("    \"{c}\""));
            }
            lines.push(format!("      Columns sorted by: {}", full(&cf.comparator)));
            if cf.column_type == ColumnType::Super {
                lines.push(format!(
                    "      Subcolumns sorted by: {}",
                    full(&cf.subcomparator())
                ));
            }
            lines.push(format!(
                "      Default column value validator: {}",
                full(&cf.default_validation_class)
            ));
            let stats = self
                .db
                .column_family_stats(ks, &cf.name)
                .map_err(|e| e.to_string())?;
            lines.push(format!(
                "      Key cache capacity: {}",
                stats.key_cache_capacity
            ));
            lines.extend(column_metadata(cf, &full(&cf.default_validation_class)));
            if let Some(g) = cf.gc_grace_seconds {
                lines.push(format!("      GC grace seconds: {g}"));
            }
            if cf.min_compaction_threshold.is_some() || cf.max_compaction_threshold.is_some() {
                lines.push(format!(
                    "      Compaction min/max thresholds: {}/{}",
                    cf.min_compaction_threshold
                        .map_or("default".into(), |v| v.to_string()),
                    cf.max_compaction_threshold
                        .map_or("default".into(), |v| v.to_string())
                ));
            }
        }
        lines.push("  Database settings in force:".into());
        lines.extend(
            self.db
                .options()
                .settings_lines()
                .into_iter()
                .map(|l| format!("    {l}")),
        );
        Ok(lines)
    }
}

/// `describe keyspace`'s lines for a column family's indexed columns, as cassandra-cli 0.7
/// prints its column metadata.
fn column_metadata(cf: &ColumnFamilyDef, validator: &str) -> Vec<String> {
    let mut lines = Vec::new();
    if !cf.indexes.is_empty() {
        lines.push("      Column Metadata:".into());
    }
    for idx in &cf.indexes {
        lines.push(format!(
            "        Column Name: {}",
            cf.comparator.to_text(&idx.column)
        ));
        lines.push(format!("          Validation Class: {validator}"));
        lines.push(format!("          Index Name: {}", idx.name));
        lines.push("          Index Type: KEYS".into());
    }
    lines
}
