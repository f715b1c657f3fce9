//! The table options that tune Cassandra's machinery (`compaction`, `compression`,
//! `bloom_filter_fp_chance`, index intervals, …): each value checked as Cassandra checks it,
//! with its words, and written back as CQL. `mod.rs` keeps them; this file only
//! judges and prints a value.

use super::TableOptions;
use crate::error::CqlError;
use crate::types::Literal;
use supercolumn::schema::ColumnFamilyDef;

const COMPACTION_PREFIX: &str = "org.apache.cassandra.db.compaction.";
const COMPRESSION_PREFIX: &str = "org.apache.cassandra.io.compress.";

/// A literal as CQL text (`'a''b'`, `0.01`, `{'class': 'LZ4Compressor'}`).
pub fn cql(value: &Literal) -> String {
    value.text()
}

/// A map option's entries as text (`{}` is an empty map).
fn entries(name: &str, value: &Literal) -> Result<Vec<(String, String)>, CqlError> {
    let text = |l: &Literal| match l {
        Literal::Str(s) | Literal::Number(s) => Some(s.clone()),
        Literal::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    let pairs: &[(Literal, Literal)] = match value {
        Literal::Map(p) => p,
        Literal::Set(s) if s.is_empty() => &[],
        _ => return Err(CqlError::invalid(format!("{name} must be a map"))),
    };
    pairs
        .iter()
        .map(|(k, v)| match (text(k), text(v)) {
            (Some(k), Some(v)) => Ok((k, v)),
            _ => Err(CqlError::invalid(format!("invalid {name} option value"))),
        })
        .collect()
}

fn number(name: &str, value: &Literal) -> Result<f64, CqlError> {
    match value {
        Literal::Number(n) => n.parse::<f64>().ok(),
        Literal::Str(n) => n.parse::<f64>().ok(),
        _ => None,
    }
    .ok_or_else(|| CqlError::invalid(format!("{name} must be a number")))
}

/// Checks one tuning option's value.
pub fn check(name: &str, value: &Literal) -> Result<(), CqlError> {
    match name {
        "bloom_filter_fp_chance" => {
            let v = number(name, value)?;
            if !(v > 0.0 && v <= 1.0) {
                return Err(CqlError::invalid(format!(
                    "bloom_filter_fp_chance must be larger than 0.0 and less than or equal to 1.0 (got {v})"
                )));
            }
        }
        "crc_check_chance" | "read_repair_chance" | "dclocal_read_repair_chance" => {
            let v = number(name, value)?;
            if !(0.0..=1.0).contains(&v) {
                return Err(CqlError::invalid(format!(
                    "{name} must be between 0.0 and 1.0"
                )));
            }
        }
        "min_index_interval" | "max_index_interval" | "memtable_flush_period_in_ms" => {
            let v = number(name, value)?;
            let least = if name == "memtable_flush_period_in_ms" {
                0.0
            } else {
                1.0
            };
            if v.fract() != 0.0 || v < least || v > f64::from(i32::MAX) {
                return Err(CqlError::invalid(if least > 0.0 {
                    format!("{name} must be greater than 0")
                } else {
                    format!("{name} must be a whole number, 0 or more")
                }));
            }
        }
        "compaction" => compaction(&entries(name, value)?)?,
        "compression" => compression(&entries(name, value)?)?,
        "caching" | "extensions" | "memtable" => {
            entries(name, value)?;
        }
        _ => {} // text options: kept as given
    }
    Ok(())
}

/// `max_index_interval` is at least `min_index_interval` (128 and 2048 when unset).
pub fn check_intervals(o: &TableOptions) -> Result<(), CqlError> {
    let get = |n: &str, default: f64| o.tuning(n).map_or(Ok(default), |v| number(n, v));
    if get("max_index_interval", 2048.0)? < get("min_index_interval", 128.0)? {
        return Err(CqlError::invalid(
            "max_index_interval must be greater than or equal to min_index_interval",
        ));
    }
    Ok(())
}

fn compaction(options: &[(String, String)]) -> Result<(), CqlError> {
    let class = options
        .iter()
        .find(|(k, _)| k == "class")
        .map(|(_, v)| v.strip_prefix(COMPACTION_PREFIX).unwrap_or(v))
        .ok_or_else(|| {
            CqlError::invalid("Missing sub-option 'class' for the 'compaction' option.")
        })?;
    let own: &[&str] = match class {
        "SizeTieredCompactionStrategy" => &["bucket_high", "bucket_low", "min_sstable_size"],
        "LeveledCompactionStrategy" => &[
            "sstable_size_in_mb",
            "fanout_size",
            "single_sstable_uplevel",
        ],
        "TimeWindowCompactionStrategy" => &[
            "compaction_window_unit",
            "compaction_window_size",
            "timestamp_resolution",
            "unsafe_aggressive_sstable_expiration",
        ],
        "UnifiedCompactionStrategy" => &[
            "scaling_parameters",
            "target_sstable_size",
            "base_shard_count",
        ],
        other => {
            return Err(CqlError::invalid(format!(
                "Unable to find compaction strategy class '{other}'"
            )))
        }
    };
    const COMMON: &[&str] = &[
        "class",
        "enabled",
        "min_threshold",
        "max_threshold",
        "tombstone_threshold",
        "tombstone_compaction_interval",
        "unchecked_tombstone_compaction",
        "only_purge_repaired_tombstones",
        "log_all",
        "provide_overlapping_tombstones",
    ];
    let unknown: Vec<&str> = options
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !COMMON.contains(k) && !own.contains(k))
        .collect();
    if !unknown.is_empty() {
        return Err(CqlError::invalid(format!(
            "Properties specified [{}] are not understood by {class}",
            unknown.join(", ")
        )));
    }
    let (min, max) = thresholds(options)?;
    if min < 2 {
        return Err(CqlError::invalid(format!(
            "Disabling compaction by setting compaction thresholds to 0 has been removed, set the compaction option 'enabled' to false instead (min_threshold must be greater than 1, got {min})"
        )));
    }
    if max < min {
        return Err(CqlError::invalid(format!(
            "max_threshold cannot be less than min_threshold ({max} < {min})"
        )));
    }
    Ok(())
}

/// A compaction map's `min_threshold` and `max_threshold` (4 and 32 when unset).
fn thresholds(options: &[(String, String)]) -> Result<(u32, u32), CqlError> {
    let get = |name: &str, default: u32| -> Result<u32, CqlError> {
        match options.iter().find(|(k, _)| k == name) {
            None => Ok(default),
            Some((_, v)) => v
                .parse::<u32>()
                .map_err(|_| CqlError::invalid(format!("{name} must be an integer, not {v}"))),
        }
    };
    Ok((get("min_threshold", 4)?, get("max_threshold", 32)?))
}

fn compression(options: &[(String, String)]) -> Result<(), CqlError> {
    for (k, v) in options {
        match k.as_str() {
            "class" | "sstable_compression" => {
                let short = v.strip_prefix(COMPRESSION_PREFIX).unwrap_or(v);
                let known = matches!(
                    short,
                    "LZ4Compressor"
                        | "SnappyCompressor"
                        | "DeflateCompressor"
                        | "ZstdCompressor"
                        | "NoopCompressor"
                ) || v.is_empty();
                if !known {
                    return Err(CqlError::invalid(format!(
                        "Could not create Compression for type {v}"
                    )));
                }
            }
            "chunk_length_in_kb" | "chunk_length_kb" => {
                let n: i64 = v.parse().map_err(|_| {
                    CqlError::invalid(format!("Invalid value for chunk_length_in_kb: {v}"))
                })?;
                if n <= 0 {
                    return Err(CqlError::invalid(format!(
                        "Invalid negative or null chunk_length_in_kb ({n})"
                    )));
                }
                if n & (n - 1) != 0 {
                    return Err(CqlError::invalid(format!(
                        "chunk_length_in_kb must be a power of 2 (got {n})"
                    )));
                }
            }
            "enabled" => {
                if !matches!(v.to_ascii_lowercase().as_str(), "true" | "false") {
                    return Err(CqlError::invalid(format!("Invalid value for enabled: {v}")));
                }
            }
            "crc_check_chance"
            | "min_compress_ratio"
            | "max_compressed_length"
            | "compression_level" => {}
            other => {
                return Err(CqlError::invalid(format!(
                    "Unknown compression options: ([{other}])"
                )))
            }
        }
    }
    Ok(())
}

/// A boolean property (`durable_writes`), taken as Cassandra takes it: `true`/`false`, or the
/// text `'true'`, `'yes'`, `'1'` and `'false'`, `'no'`, `'0'`; `Err` holds Cassandra's words.
pub fn boolean(name: &str, value: &Literal) -> Result<bool, String> {
    let text = match value {
        Literal::Bool(b) => return Ok(*b),
        Literal::Str(s) | Literal::Number(s) => s.to_ascii_lowercase(),
        other => cql(other),
    };
    match text.as_str() {
        "true" | "yes" | "1" => Ok(true),
        "false" | "no" | "0" => Ok(false),
        _ => Err(format!(
            "Invalid boolean value {text} for '{name}'. Positive values can be 'true', 'yes' or '1'. Negative values can be 'false', 'no' or '0'."
        )),
    }
}

/// Puts the options that mean something to the engine into the column family that stores the
/// table: the compression chunk length as its block size, compression on or off, the bloom
/// filter's rate and the compaction thresholds (`'enabled': false` stops minor compactions, as
/// a minimum threshold of 0 does in the engine). Options left unset leave the database's.
pub fn apply(o: &TableOptions, def: &mut ColumnFamilyDef) -> Result<(), CqlError> {
    let map = |name: &str| o.tuning(name).map(|v| entries(name, v)).transpose();
    let get = |pairs: &[(String, String)], key: &str| {
        pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    };
    def.block_size_kb = None;
    def.compression = None;
    if let Some(c) = map("compression")? {
        let chunk = get(&c, "chunk_length_in_kb").or_else(|| get(&c, "chunk_length_kb"));
        def.block_size_kb = chunk.and_then(|v| v.parse::<u32>().ok());
        let class = get(&c, "class").or_else(|| get(&c, "sstable_compression"));
        let off = get(&c, "enabled").is_some_and(|v| v.eq_ignore_ascii_case("false"))
            || class.as_deref().is_some_and(|c| {
                c.is_empty() || c.strip_prefix(COMPRESSION_PREFIX).unwrap_or(c) == "NoopCompressor"
            });
        def.compression = Some(!off);
    }
    if let Some(kb) = def.block_size_kb {
        if kb > supercolumn::schema::MAX_BLOCK_SIZE_KB {
            return Err(CqlError::invalid(format!(
                "chunk_length_in_kb must be at most {} (got {kb})",
                supercolumn::schema::MAX_BLOCK_SIZE_KB
            )));
        }
    }
    def.bloom_filter_fp_chance = o
        .tuning("bloom_filter_fp_chance")
        .map(|v| number("bloom_filter_fp_chance", v))
        .transpose()?;
    def.min_compaction_threshold = None;
    def.max_compaction_threshold = None;
    if let Some(c) = map("compaction")? {
        let (min, max) = thresholds(&c)?;
        let enabled = !get(&c, "enabled").is_some_and(|v| v.eq_ignore_ascii_case("false"));
        def.min_compaction_threshold = Some(if enabled { min } else { 0 });
        def.max_compaction_threshold = Some(max);
    }
    Ok(())
}

/// A map option as `system_schema` shows it: every value text, a strategy's class by its full
/// name; `default` when the table does not set it.
pub fn shown_map(o: &TableOptions, name: &str, default: &[(&str, &str)]) -> Literal {
    let text = |s: &str| Literal::Str(s.to_string());
    let Some(pairs) = o.tuning(name).and_then(|v| entries(name, v).ok()) else {
        return Literal::Map(default.iter().map(|(k, v)| (text(k), text(v))).collect());
    };
    let prefix = if name == "compaction" {
        COMPACTION_PREFIX
    } else {
        COMPRESSION_PREFIX
    };
    Literal::Map(
        pairs
            .into_iter()
            .map(|(k, v)| {
                let v = if k == "class" && !v.contains('.') && !v.is_empty() {
                    format!("{prefix}{v}")
                } else {
                    v
                };
                (text(&k), text(&v))
            })
            .collect(),
    )
}
