//! `sstable-dump`: prints the rows of SSTables in the shell's RowKey/column format (SPEC §8) or as
//! JSON, lists their keys, looks one row up, verifies every checksum and the sort order, or
//! shows summary statistics. Names and values are rendered by the column family's comparators
//! and validator, found in the data directory that holds the file (or given by flags). Reads a
//! live data directory safely: read-only, no lock, nothing changed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::{Parser, ValueEnum};
use supercolumn::comparator::{Comparator, ComparatorRegistry};
use supercolumn::inspect::{column_family_of, keyspace_of, DumpEntry, DumpRow, SstableFile};
use supercolumn::{Column, ColumnFamilyDef, ColumnType, Partitioner};
use supercolumn_cql::UserTypes;
use supercolumn_tools::dump_json::JsonDump;
use supercolumn_tools::format::{column, key_text};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The shell's RowKey / `=> (column=…)` lines.
    Cli,
    /// Cassandra's `sstabledump` JSON: an array of partitions, typed values for CQL tables,
    /// tombstones with their deletion times, TTLs.
    Json,
}

#[derive(Parser)]
#[command(
    name = "sstable-dump",
    version,
    about = "Prints, verifies and summarizes supercolumn SSTables"
)]
struct Cli {
    /// SSTable files (`<data dir>/<Keyspace>/<CF>-<generation>-Data.db`).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "cli")]
    format: Format,
    /// Print row keys only.
    #[arg(long)]
    keys: bool,
    /// Print only this row (found through the bloom filter and the index), named as the dump
    /// prints keys: text, `0x…` hex, or a CQL table's key as its type reads it (a composite
    /// key's parts joined by `:`).
    #[arg(long)]
    key: Option<String>,
    /// Check every checksum and the sort order; exit 1 at the first fault.
    #[arg(long)]
    verify: bool,
    /// Print summary statistics.
    #[arg(long)]
    stats: bool,
    /// With --format json: timestamps as numbers (microseconds; deletion times in seconds), not
    /// ISO-8601 (`sstabledump -t`).
    #[arg(short = 't', long)]
    raw_timestamps: bool,
    /// Comparator of column (or super column) names, for a file outside a data directory.
    #[arg(long)]
    comparator: Option<String>,
    /// Comparator of sub-column names (makes the CF Super), for a file outside a data directory.
    #[arg(long)]
    subcomparator: Option<String>,
    /// Validator of values, for a file outside a data directory.
    #[arg(long)]
    validator: Option<String>,
    /// Partitioner of row keys, for a file outside a data directory.
    #[arg(long)]
    partitioner: Option<String>,
}

fn definition(cli: &Cli, path: &Path) -> anyhow::Result<(ColumnFamilyDef, Partitioner)> {
    let reg = ComparatorRegistry::default();
    let found = column_family_of(path, &reg)
        .with_context(|| format!("reading the catalog for {}", path.display()))?;
    let from_catalog = found.is_some();
    let (mut def, mut partitioner) = match found {
        Some(f) => f,
        None => (ColumnFamilyDef::standard("unknown"), Partitioner::Random),
    };
    if !from_catalog && cli.comparator.is_none() && !cli.keys && !cli.verify && !cli.stats {
        eprintln!(
            "warning: {} is not in a data directory whose schema names it, and no --comparator \
             was given: names are printed as stored, which for LongType, the UUID types and \
             composites is an order-preserving encoding, not the bytes written",
            path.display()
        );
    }
    if let Some(c) = &cli.comparator {
        def.comparator = reg
            .resolve(c)
            .map_err(|e| anyhow::anyhow!("--comparator: {e}"))?;
    }
    if let Some(c) = &cli.subcomparator {
        def.column_type = ColumnType::Super;
        def.subcomparator = Some(
            reg.resolve(c)
                .map_err(|e| anyhow::anyhow!("--subcomparator: {e}"))?,
        );
    }
    if let Some(c) = &cli.validator {
        def.default_validation_class = reg
            .resolve(c)
            .map_err(|e| anyhow::anyhow!("--validator: {e}"))?;
    }
    if let Some(p) = &cli.partitioner {
        partitioner = Partitioner::from_class_name(p)
            .with_context(|| format!("unknown partitioner '{p}'"))?;
    }
    Ok((def, partitioner))
}

// Long because it prints each kind of entry (column, super column, tombstone, expiring cell) in the
// shell's form, one arm each.
fn cli_lines(row: &DumpRow, def: &ColumnFamilyDef) -> Vec<String> {
    let (names, sub, values) = (
        def.comparator.as_ref(),
        def.subcomparator(),
        def.default_validation_class.as_ref(),
    );
    let mut lines = vec![
        "-------------------".to_string(),
        format!(
            "RowKey: {}",
            key_text(&row.key, def.key_validation_class.as_deref())
        ),
    ];
    if let Some((ts, _)) = row.deletion {
        lines.push(format!("=> (row deleted at {ts})"));
    }
    let mut group: Option<(Vec<u8>, Vec<String>)> = None;
    let flush = |group: &mut Option<(Vec<u8>, Vec<String>)>, lines: &mut Vec<String>| {
        if let Some((sc, mut subs)) = group.take() {
            if subs.is_empty() {
                return;
            }
            lines.push(format!("=> (super_column={},", names.to_text(&sc)));
            if let Some(last) = subs.last_mut() {
                last.push(')');
            }
            lines.extend(subs.into_iter().map(|s| format!("     {s}")));
        }
    };
    for e in &row.entries {
        let (sc, text) = match e {
            DumpEntry::Column {
                super_column,
                name,
                value,
                timestamp,
                ttl,
            } => {
                let c = Column {
                    name: name.clone(),
                    value: value.clone(),
                    timestamp: *timestamp,
                    ttl: ttl.map(|t| t.0),
                    expires_at: ttl.map(|t| t.1),
                };
                let n: &dyn Comparator = if super_column.is_some() {
                    sub.as_ref()
                } else {
                    names
                };
                (super_column.clone(), column(&c, n, values))
            }
            DumpEntry::Tombstone {
                super_column,
                name,
                timestamp,
                ..
            } => {
                let n: &dyn Comparator = if super_column.is_some() {
                    sub.as_ref()
                } else {
                    names
                };
                (
                    super_column.clone(),
                    format!("(column={}, deleted at {timestamp})", n.to_text(name)),
                )
            }
            DumpEntry::RangeDeletion {
                start,
                finish,
                marked_for_delete_at,
                ..
            } => {
                let open = |b: &[u8], side: &str| {
                    if b.is_empty() {
                        side.to_string()
                    } else {
                        names.to_text(b)
                    }
                };
                (
                    None,
                    format!(
                        "(columns from {} to {}, deleted at {marked_for_delete_at})",
                        open(start, "the first"),
                        open(finish, "the last")
                    ),
                )
            }
            DumpEntry::PrefixDeletion {
                prefix,
                marked_for_delete_at,
                ..
            } => (
                None,
                format!(
                    "(columns under {}, deleted at {marked_for_delete_at})",
                    names.to_text(prefix)
                ),
            ),
            DumpEntry::SuperColumnDeletion {
                name,
                marked_for_delete_at,
                ..
            } => {
                flush(&mut group, &mut lines);
                lines.push(format!(
                    "=> (super_column={}, deleted at {marked_for_delete_at})",
                    names.to_text(name)
                ));
                continue;
            }
        };
        match sc {
            None => lines.push(format!("=> {text}")),
            Some(sc) => {
                if group.as_ref().is_none_or(|(g, _)| *g != sc) {
                    flush(&mut group, &mut lines);
                    group = Some((sc, Vec::new()));
                }
                if let Some((_, subs)) = group.as_mut() {
                    subs.push(text);
                }
            }
        }
    }
    flush(&mut group, &mut lines);
    lines
}

// Long because it runs the dump's modes (verify, one key, all rows, each output format) from one
// opened file.
fn dump(cli: &Cli, path: &Path, out: &mut dyn Write) -> anyhow::Result<()> {
    if !path.is_file() {
        bail!("{}: no such file", path.display());
    }
    let (def, partitioner) = definition(cli, path)?;
    let file = SstableFile::open(path, def.clone(), partitioner)?;
    if cli.verify {
        let n = file.verify()?;
        writeln!(out, "{}: OK ({n} entries)", path.display())?;
        return Ok(());
    }
    if cli.stats {
        let s = file.stats();
        writeln!(out, "{}", path.display())?;
        writeln!(out, "  Format version: {}", s.version)?;
        writeln!(out, "  Rows: {}", s.rows)?;
        writeln!(out, "  Entries: {}", s.entries)?;
        let tombstones = file
            .rows()
            .map(|r| {
                r.map(|r| {
                    r.entries
                        .iter()
                        .filter(|e| !matches!(e, DumpEntry::Column { .. }))
                        .count()
                        + usize::from(r.deletion.is_some())
                })
            })
            .sum::<Result<usize, _>>()?;
        writeln!(out, "  Tombstones: {tombstones}")?;
        writeln!(
            out,
            "  Timestamps: {} .. {}",
            s.timestamps.0, s.timestamps.1
        )?;
        writeln!(out, "  Data blocks: {}", s.blocks)?;
        writeln!(
            out,
            "  Bloom filter: {} bits, {} hash functions, expected false-positive rate {:.4}",
            s.bloom_bits, s.bloom_hashes, s.bloom_expected_fp
        )?;
        writeln!(out, "  Compression ratio: {:.2}", s.compression_ratio)?;
        writeln!(out, "  Size: {} bytes", s.bytes)?;
        return Ok(());
    }
    file.check_partitioner()?;
    let keyspace = path
        .parent()
        .and_then(Path::file_name)
        .map_or_else(|| "unknown".into(), |k| k.to_string_lossy());
    // The keyspace's CQL types, for a table that names some (none when the catalog is not
    // beside the file).
    let types = match keyspace_of(path, &ComparatorRegistry::default())
        .ok()
        .flatten()
    {
        Some((k, _)) => UserTypes::of(&k)?,
        None => UserTypes::none(&keyspace),
    };
    let json = JsonDump::new(&keyspace, &def, &types, cli.raw_timestamps);
    let rows: Box<dyn Iterator<Item = supercolumn::Result<DumpRow>>> = match &cli.key {
        Some(k) => Box::new(file.row(&json.key_of(k)?).transpose().into_iter()),
        None => Box::new(file.rows()),
    };
    let mut n = 0;
    for row in rows {
        let row = row?;
        n += 1;
        if cli.format == Format::Json && !cli.keys {
            // An array of partitions, streamed: one partition in memory at a time.
            let text = serde_json::to_string_pretty(&json.partition(&row))?;
            let text = text.replace('\n', "\n  ");
            write!(out, "{}  {text}", if n == 1 { "[\n" } else { ",\n" })?;
            continue;
        }
        if cli.keys {
            writeln!(
                out,
                "{}",
                key_text(&row.key, def.key_validation_class.as_deref())
            )?;
        } else {
            for l in cli_lines(&row, &def) {
                writeln!(out, "{l}")?;
            }
        }
    }
    if cli.format == Format::Json && !cli.keys {
        writeln!(out, "{}]", if n == 0 { "[" } else { "\n" })?;
    }
    if cli.format == Format::Cli && !cli.keys {
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            if n == 1 {
                "1 Row Returned.".to_string()
            } else {
                format!("{n} Rows Returned.")
            }
        )?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut out = std::io::stdout().lock();
    for f in &cli.files {
        if let Err(e) = dump(&cli, f, &mut out) {
            let _ = out.flush();
            if supercolumn_tools::errors::broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {}", supercolumn_tools::errors::one_line(&e));
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
