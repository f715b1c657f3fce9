//! `stress`'s results: one [`PhaseResult`] per phase, engine and round; JSON lines in and out
//! (children report to the parent that way); medians over rounds; and the tables — one per
//! engine run, or, with peers, one table with every engine and the ratio supercolumn ÷ peer.

use comfy_table::{presets, CellAlignment, ContentArrangement, Table};
use serde::{Deserialize, Serialize};

use crate::timing::Sample;

/// The figures of one phase of one round on one engine.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    pub engine: String,
    pub round: usize,
    pub phase: String,
    pub ops: u64,
    pub secs: f64,
    pub ops_per_sec: f64,
    pub p50_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
    /// Bytes the process passed to `write(2)` during the phase.
    pub bytes_written: u64,
    /// Row key + column name + value of every write of the phase.
    pub user_bytes: u64,
    /// `bytes_written / user_bytes` (0 for phases that write nothing).
    pub write_amplification: f64,
    /// Bytes in the data directory at the end of the phase.
    pub disk_bytes: u64,
    /// Tables (SSTables) on disk at the end of the phase.
    pub tables: usize,
    /// Peak resident memory of the process so far.
    pub peak_memory: u64,
    /// The phase's figures over time, one per sampling interval.
    #[serde(default)]
    pub samples: Vec<Sample>,
    /// Whether a stop request (Ctrl-C) cut the phase short.
    #[serde(default)]
    pub stopped: bool,
}

impl PhaseResult {
    /// One JSON line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses one JSON line.
    pub fn from_json(line: &str) -> anyhow::Result<PhaseResult> {
        Ok(serde_json::from_str(line)?)
    }
}

/// The round with the median throughput (the upper median for an even count).
pub fn median(results: &[PhaseResult]) -> Option<PhaseResult> {
    let mut v = results.to_vec();
    v.sort_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec));
    v.get(v.len() / 2).cloned()
}

/// The medians of `results` per (phase, engine), phases in first-seen order and engines in
/// `engines` order.
pub fn medians(results: &[PhaseResult], engines: &[String]) -> Vec<(String, Vec<PhaseResult>)> {
    let mut phases: Vec<String> = Vec::new();
    for r in results {
        if !phases.contains(&r.phase) {
            phases.push(r.phase.clone());
        }
    }
    phases
        .into_iter()
        .map(|phase| {
            let per_engine = engines
                .iter()
                .filter_map(|e| {
                    let runs: Vec<PhaseResult> = results
                        .iter()
                        .filter(|r| &r.engine == e && r.phase == phase)
                        .cloned()
                        .collect();
                    median(&runs)
                })
                .collect();
            (phase, per_engine)
        })
        .collect()
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

/// A table without borders, its first `left` columns aligned left and the others right, as
/// `comfy-table` lays it out: each column as wide as its widest cell.
fn aligned(header: Vec<String>, rows: Vec<Vec<String>>, left: usize) -> String {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    for row in rows {
        t.add_row(row);
    }
    // One space between columns, none before the first.
    for (i, c) in t.column_iter_mut().enumerate() {
        c.set_padding((0, 1));
        if i >= left {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = String::new();
    for line in t.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The table: a line per phase and engine, every figure, and with more than one engine the
/// ratio of supercolumn's figure to each peer's (throughput for timed phases, disk bytes for
/// `compact`).
pub fn table(results: &[PhaseResult], engines: &[String]) -> String {
    let base = engines.first().cloned().unwrap_or_default();
    let peers = engines.len() > 1;
    let mut header: Vec<String> = [
        "phase",
        "engine",
        "ops",
        "ops/s",
        "p50 us",
        "p99 us",
        "p99.9 us",
        "max us",
        "written MiB",
        "WA",
        "disk MiB",
        "SSTs",
        "peak MiB",
    ]
    .map(String::from)
    .to_vec();
    if peers {
        header.push(format!("{base}÷"));
    }
    let mut rows = Vec::new();
    let mut stopped = false;
    for (phase, per_engine) in medians(results, engines) {
        let reference = per_engine.iter().find(|r| r.engine == base);
        for r in &per_engine {
            stopped |= r.stopped;
            let mut row = vec![
                if r.stopped {
                    format!("{phase}*")
                } else {
                    phase.clone()
                },
                r.engine.clone(),
                r.ops.to_string(),
                format!("{:.0}", r.ops_per_sec),
                r.p50_us.to_string(),
                r.p99_us.to_string(),
                r.p999_us.to_string(),
                r.max_us.to_string(),
                format!("{:.1}", mib(r.bytes_written)),
                format!("{:.2}", r.write_amplification),
                format!("{:.1}", mib(r.disk_bytes)),
                r.tables.to_string(),
                format!("{:.1}", mib(r.peak_memory)),
            ];
            if let (true, Some(b)) = (peers && r.engine != base, reference) {
                row.push(ratio(phase.as_str(), b, r));
            }
            rows.push(row);
        }
    }
    let mut out = aligned(header, rows, 2);
    if stopped {
        out.push_str("* stopped early (Ctrl-C): the figures cover the operations that ran\n");
    }
    out
}

/// The race by thread count: a line per phase and engine, its median ops/s at each count
/// (`by_threads` in the order run), and the last count's figure over the first's.
pub fn scaling(by_threads: &[(usize, Vec<PhaseResult>)], engines: &[String]) -> String {
    let mut header = vec!["phase".to_string(), "engine".to_string()];
    header.extend(by_threads.iter().map(|(t, _)| format!("{t} thr ops/s")));
    if by_threads.len() > 1 {
        header.push("scaling".into());
    }
    let Some((_, first)) = by_threads.first() else {
        return aligned(header, Vec::new(), 2);
    };
    let per_count: Vec<Vec<(String, Vec<PhaseResult>)>> = by_threads
        .iter()
        .map(|(_, results)| medians(results, engines))
        .collect();
    let mut rows = Vec::new();
    for (phase, _) in medians(first, engines) {
        if phase == "compact" || phase == "close" {
            continue;
        }
        for engine in engines {
            let figures: Vec<Option<f64>> = per_count
                .iter()
                .map(|m| {
                    m.iter()
                        .find(|(p, _)| *p == phase)
                        .and_then(|(_, rs)| rs.iter().find(|r| &r.engine == engine))
                        .map(|r| r.ops_per_sec)
                })
                .collect();
            let mut row = vec![phase.clone(), engine.clone()];
            row.extend(
                figures
                    .iter()
                    .map(|f| f.map_or("-".into(), |v| format!("{v:.0}"))),
            );
            if let (Some(Some(a)), Some(Some(b)), true) =
                (figures.first(), figures.last(), figures.len() > 1)
            {
                if *a > 0.0 {
                    row.push(format!("{:.2}x", b / a));
                }
            }
            rows.push(row);
        }
    }
    aligned(header, rows, 2)
}

/// supercolumn ÷ peer: throughput, or for `compact` disk bytes (lower is better there).
pub fn ratio(phase: &str, base: &PhaseResult, peer: &PhaseResult) -> String {
    let (num, den, what) = if phase == "compact" {
        (base.disk_bytes as f64, peer.disk_bytes as f64, " disk")
    } else {
        (base.ops_per_sec, peer.ops_per_sec, "")
    };
    if den > 0.0 {
        format!("{:.2}{what}", num / den)
    } else {
        "-".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(engine: &str, round: usize, phase: &str, ops_per_sec: f64, disk: u64) -> PhaseResult {
        PhaseResult {
            engine: engine.into(),
            round,
            phase: phase.into(),
            ops_per_sec,
            disk_bytes: disk,
            ..Default::default()
        }
    }

    #[test]
    fn json_round_trips() {
        let r = run("rocksdb", 3, "fillseq", 1234.5, 99);
        assert_eq!(PhaseResult::from_json(&r.to_json()).unwrap(), r);
        assert!(PhaseResult::from_json("{\"engine\":").is_err());
    }

    #[test]
    fn medians_are_per_engine_and_phase() {
        let engines = vec!["supercolumn".to_string(), "rocksdb".to_string()];
        let results = vec![
            run("supercolumn", 0, "fillseq", 100.0, 0),
            run("rocksdb", 0, "fillseq", 50.0, 0),
            run("supercolumn", 1, "fillseq", 300.0, 0),
            run("rocksdb", 1, "fillseq", 10.0, 0),
            run("supercolumn", 2, "fillseq", 200.0, 0),
            run("rocksdb", 2, "fillseq", 40.0, 0),
        ];
        let m = medians(&results, &engines);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].1[0].ops_per_sec, 200.0);
        assert_eq!(m[0].1[1].ops_per_sec, 40.0);
        let t = table(&results, &engines);
        assert!(t
            .lines()
            .any(|l| l.starts_with("fillseq") && l.ends_with("5.00")));
    }

    #[test]
    fn scaling_shows_each_thread_count_and_last_over_first() {
        let engines = vec!["supercolumn".to_string(), "rocksdb".to_string()];
        let one = vec![
            run("supercolumn", 0, "readrandom", 100.0, 0),
            run("rocksdb", 0, "readrandom", 80.0, 0),
        ];
        let four = vec![
            run("supercolumn", 0, "readrandom", 350.0, 0),
            run("rocksdb", 0, "readrandom", 320.0, 0),
        ];
        let t = scaling(&[(1, one), (4, four)], &engines);
        let line = t
            .lines()
            .find(|l| l.starts_with("readrandom") && l.contains("supercolumn"));
        let line = line.unwrap_or_default();
        assert!(
            line.contains("100") && line.contains("350") && line.ends_with("3.50x"),
            "{t}"
        );
        assert!(
            t.lines()
                .any(|l| l.contains("rocksdb") && l.ends_with("4.00x")),
            "{t}"
        );
    }

    /// Regression: the phase column was 10 wide, so `settledmissing` (and `written MiB`, 11)
    /// pushed their lines out of line with the rest.
    #[test]
    fn every_line_of_the_table_lines_up_whatever_the_phase_names() {
        let engines = vec!["supercolumn".to_string(), "rocksdb".to_string()];
        let mut results = Vec::new();
        for phase in ["fillseq", "settledmissing", "compact"] {
            results.push(run("supercolumn", 0, phase, 123_456.0, 7));
            results.push(run("rocksdb", 0, phase, 98_765.0, 9));
        }
        let t = table(&results, &engines);
        let lines: Vec<&str> = t.lines().collect();
        let (header, body) = (lines[0], &lines[1..]);
        // The engine column starts, and the last common column ends, at the same place on
        // every line.
        let engine_at = header.find("engine").unwrap();
        let end = header.find("peak MiB").unwrap() + "peak MiB".len();
        for l in body {
            let chars: Vec<char> = l.chars().collect();
            let name = if l.contains("supercolumn") {
                "supercolumn"
            } else {
                "rocksdb"
            };
            assert_eq!(l.find(name), Some(engine_at), "{t}");
            assert!(
                chars[end - 1] != ' ' && chars.get(end).is_none_or(|c| *c == ' '),
                "{t}"
            );
        }
    }

    #[test]
    fn compaction_ratio_is_of_disk_bytes() {
        let engines = vec!["supercolumn".to_string(), "fjall".to_string()];
        let results = vec![
            run("supercolumn", 0, "compact", 1.0, 110),
            run("fjall", 0, "compact", 1.0, 100),
        ];
        let t = table(&results, &engines);
        assert!(t
            .lines()
            .any(|l| l.contains("fjall") && l.ends_with("1.10 disk")));
    }
}
