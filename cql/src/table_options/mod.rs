//! A table's `WITH` options: every one a user sets is validated as Cassandra validates it,
//! kept with the table and shown back (`DESCRIBE`, `system_schema.tables`). Those that change
//! what the data does are honoured: `default_time_to_live` (a write without `USING TTL` expires
//! after it), `gc_grace_seconds` (the column family's `GCGraceSeconds`) and `comment`. The
//! others tune Cassandra's own machinery (compaction, compression, caching, bloom filters, read
//! repair, index intervals, …): kept and shown, while the engine uses the database's own
//! settings for them. Any other name is refused, never silently ignored. How a table is stored
//! is `table.rs`'s.

use super::error::CqlError;
use super::types::Literal;

pub(super) mod tuning;

/// The longest TTL Cassandra takes (20 years), in seconds.
pub const MAX_TTL: u32 = 630_720_000;

/// Options Cassandra tables take that tune Cassandra's machinery, not the data's meaning.
const TUNING: &[&str] = &[
    "additional_write_policy",
    "bloom_filter_fp_chance",
    "caching",
    "cdc",
    "compaction",
    "compression",
    "crc_check_chance",
    "dclocal_read_repair_chance",
    "extensions",
    "max_index_interval",
    "memtable",
    "memtable_flush_period_in_ms",
    "min_index_interval",
    "read_repair",
    "read_repair_chance",
    "speculative_retry",
];

/// The options kept with a table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableOptions {
    /// Seconds a write without `USING TTL` lives (0: forever).
    pub default_ttl: u32,
    /// Seconds a tombstone outlives compaction (`None`: the database's setting).
    pub gc_grace_seconds: Option<u32>,
    /// Free text.
    pub comment: Option<String>,
    /// The other options set, by name (sorted), as given.
    pub tuning: Vec<(String, Literal)>,
}

impl TableOptions {
    /// The options of a `CREATE TABLE … WITH name = value AND …` (names already lower case).
    pub fn from_pairs(pairs: &[(String, Literal)]) -> Result<TableOptions, CqlError> {
        TableOptions::default().with_pairs(pairs)
    }

    /// These options with those `pairs` name changed (`ALTER TABLE … WITH`).
    pub fn with_pairs(&self, pairs: &[(String, Literal)]) -> Result<TableOptions, CqlError> {
        let mut o = self.clone();
        for (name, value) in pairs {
            match name.as_str() {
                "default_time_to_live" => o.default_ttl = seconds(name, value, MAX_TTL)?,
                "gc_grace_seconds" => {
                    o.gc_grace_seconds = Some(seconds(name, value, i32::MAX as u32)?)
                }
                "comment" => match value {
                    Literal::Str(s) => o.comment = Some(s.clone()),
                    _ => return Err(CqlError::invalid("comment must be a string")),
                },
                // A table's id is its own here (shown in system_schema): accepted, not kept.
                "id" => {}
                n if TUNING.contains(&n) => {
                    tuning::check(n, value)?;
                    o.tuning.retain(|(k, _)| k != n);
                    o.tuning.push((n.to_string(), value.clone()));
                    o.tuning.sort_by(|a, b| a.0.cmp(&b.0));
                }
                n => {
                    return Err(CqlError::invalid(format!(
                        "unknown table option {n} (kept: default_time_to_live, gc_grace_seconds, comment, {})",
                        TUNING.join(", ")
                    )))
                }
            }
        }
        tuning::check_intervals(&o)?;
        Ok(o)
    }

    /// The value set for `name`, if one was.
    pub fn tuning(&self, name: &str) -> Option<&Literal> {
        self.tuning.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// A map option (`compaction`, `compression`, `caching`) as `system_schema` shows it, or
    /// `default` when unset.
    pub fn shown_map(&self, name: &str, default: &[(&str, &str)]) -> Literal {
        tuning::shown_map(self, name, default)
    }

    /// A number option as `system_schema` shows it, or `default` when unset.
    pub fn shown_number(&self, name: &str, default: &str) -> Literal {
        match self.tuning(name) {
            Some(Literal::Number(n) | Literal::Str(n)) => Literal::Number(n.clone()),
            _ => Literal::Number(default.to_string()),
        }
    }

    /// A text option as `system_schema` shows it, or `default` when unset.
    pub fn shown_text(&self, name: &str, default: &str) -> Literal {
        match self.tuning(name) {
            Some(Literal::Str(t)) => Literal::Str(t.clone()),
            _ => Literal::Str(default.to_string()),
        }
    }

    /// The options as `name = value` clauses of a `WITH`, those that differ from the default.
    pub fn clauses(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(c) = &self.comment {
            out.push(format!("comment = '{}'", c.replace('\'', "''")));
        }
        if self.default_ttl > 0 {
            out.push(format!("default_time_to_live = {}", self.default_ttl));
        }
        if let Some(g) = self.gc_grace_seconds {
            out.push(format!("gc_grace_seconds = {g}"));
        }
        for (name, value) in &self.tuning {
            out.push(format!("{name} = {}", tuning::cql(value)));
        }
        out
    }
}

/// A whole number of seconds from 0 to `max`.
fn seconds(name: &str, value: &Literal, max: u32) -> Result<u32, CqlError> {
    match value {
        Literal::Number(n) => n.parse::<u32>().ok().filter(|v| *v <= max),
        _ => None,
    }
    .ok_or_else(|| {
        CqlError::invalid(format!(
            "{name} must be a whole number of seconds from 0 to {max}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, Literal)]) -> Vec<(String, Literal)> {
        p.iter().map(|(n, l)| (n.to_string(), l.clone())).collect()
    }

    #[test]
    fn kept_options_round_trip_and_unknown_ones_are_refused() {
        let o = TableOptions::from_pairs(&pairs(&[
            ("default_time_to_live", Literal::Number("3600".into())),
            ("gc_grace_seconds", Literal::Number("0".into())),
            ("comment", Literal::Str("it's".into())),
            (
                "compaction",
                Literal::Map(vec![(
                    Literal::Str("class".into()),
                    Literal::Str("SizeTieredCompactionStrategy".into()),
                )]),
            ),
        ]))
        .unwrap();
        assert_eq!(
            o,
            TableOptions {
                default_ttl: 3600,
                gc_grace_seconds: Some(0),
                comment: Some("it's".into()),
                tuning: vec![(
                    "compaction".into(),
                    Literal::Map(vec![(
                        Literal::Str("class".into()),
                        Literal::Str("SizeTieredCompactionStrategy".into()),
                    )])
                )],
            }
        );
        assert_eq!(
            o.clauses(),
            [
                "comment = 'it''s'",
                "default_time_to_live = 3600",
                "gc_grace_seconds = 0",
                "compaction = {'class': 'SizeTieredCompactionStrategy'}"
            ]
        );
        for bad in [
            ("default_time_to_live", Literal::Number("-1".into())),
            ("default_time_to_live", Literal::Number("630720001".into())),
            ("gc_grace_seconds", Literal::Str("1".into())),
            ("comment", Literal::Number("1".into())),
            ("default_ttl", Literal::Number("1".into())),
        ] {
            assert!(
                TableOptions::from_pairs(&pairs(std::slice::from_ref(&bad))).is_err(),
                "{bad:?}"
            );
        }
    }
}
