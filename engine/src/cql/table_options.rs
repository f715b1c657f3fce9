//! A table's `WITH` options. Those that change what the data does are kept and honoured:
//! `default_time_to_live` (a write without `USING TTL` expires after it, as in Cassandra),
//! `gc_grace_seconds` (how long a tombstone outlives compaction: the column family's
//! `GCGraceSeconds`) and `comment`. Those that tune Cassandra's own machinery (caching,
//! compaction and compression strategies, read repair, …) are accepted so that a schema
//! copied from a cluster runs, and not kept: the engine has its own settings for them. Any
//! other name is refused, never silently ignored. How a table is stored is `table.rs`'s.

use super::error::CqlError;
use super::types::Literal;

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
    "id",
    "max_index_interval",
    "memtable",
    "memtable_flush_period_in_ms",
    "min_index_interval",
    "read_repair",
    "read_repair_chance",
    "speculative_retry",
];

/// The options kept with a table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableOptions {
    /// Seconds a write without `USING TTL` lives (0: forever).
    pub default_ttl: u32,
    /// Seconds a tombstone outlives compaction (`None`: the database's setting).
    pub gc_grace_seconds: Option<u32>,
    /// Free text.
    pub comment: Option<String>,
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
                n if TUNING.contains(&n) => {}
                n => {
                    return Err(CqlError::invalid(format!(
                        "unknown table option {n} (kept: default_time_to_live, gc_grace_seconds, comment; accepted and not kept: {})",
                        TUNING.join(", ")
                    )))
                }
            }
        }
        Ok(o)
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
            ("compaction", Literal::Map(vec![])),
        ]))
        .unwrap();
        assert_eq!(
            o,
            TableOptions {
                default_ttl: 3600,
                gc_grace_seconds: Some(0),
                comment: Some("it's".into())
            }
        );
        assert_eq!(
            o.clauses(),
            [
                "comment = 'it''s'",
                "default_time_to_live = 3600",
                "gc_grace_seconds = 0"
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
