//! `stress --graph FILE.html`: one self-contained page of runs (cassandra-stress's `-graph`).
//! Per phase, a chart per figure — throughput, p50, p99 and p99.9 latency over the phase's
//! time — with a line per engine of every run on the page, and each run's summary table. The
//! charts are inline SVG, so the page opens with no network and no script; the runs' data sits
//! in the page as JSON, which is how a later run is added beside the earlier ones.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use crate::report::{medians, ratio, PhaseResult};
use crate::timing::Sample;

/// One run on the page: what it was called, how it was set up, and its medians per phase and
/// engine (with their samples).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphRun {
    pub title: String,
    pub settings: String,
    pub engines: Vec<String>,
    pub results: Vec<PhaseResult>,
}

/// The figures charted per phase.
/// A figure: its name, its unit, and how a sample gives it.
type Figure = (&'static str, &'static str, fn(&Sample) -> f64);

const FIGURES: [Figure; 4] = [
    ("throughput", "ops/s", |s| s.ops_per_sec),
    ("p50", "latency, µs", |s| s.p50_us as f64),
    ("p99", "latency, µs", |s| s.p99_us as f64),
    ("p99.9", "latency, µs", |s| s.p999_us as f64),
];

/// The element holding the runs' data.
const DATA_OPEN: &str = r#"<script type="application/json" id="stress-runs">"#;

/// Line colours, one per series (engine of a run), cycling.
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Adds `run` (its medians) to the page at `path`, creating it if needed, and rewrites the page.
pub fn append(path: &Path, mut run: GraphRun) -> anyhow::Result<()> {
    run.results = medians(&run.results, &run.engines)
        .into_iter()
        .flat_map(|(_, per_engine)| per_engine)
        .collect();
    let mut runs = match std::fs::read_to_string(path) {
        Ok(html) => runs_in(&html)
            .context("it exists but is not a stress --graph page (not overwritten)")?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    runs.push(run);
    let html = render(&runs)?;
    // Written beside it and renamed over it, so an interrupted write leaves the old page.
    let tmp = path.with_extension("html.tmp");
    std::fs::write(&tmp, html)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// Checks, before a run, that [`append`] will be able to write `path`: an existing file must
/// be a page `--graph` wrote, and the page's folder must take a new file (the one `append`
/// writes beside it), so a run of many minutes is not lost to a path it could never write.
pub fn check_writable(path: &Path) -> anyhow::Result<()> {
    match std::fs::read_to_string(path) {
        Ok(html) => {
            runs_in(&html)
                .context("it exists but is not a stress --graph page (not overwritten)")?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e.into()),
    }
    let tmp = path.with_extension("html.tmp");
    std::fs::write(&tmp, b"").context("its folder does not take a new file")?;
    std::fs::remove_file(&tmp)?;
    Ok(())
}

/// The runs a page holds.
pub fn runs_in(html: &str) -> anyhow::Result<Vec<GraphRun>> {
    let start = html.find(DATA_OPEN).context("no run data in it")? + DATA_OPEN.len();
    let len = html[start..]
        .find("</script>")
        .context("its run data is cut short")?;
    Ok(serde_json::from_str(&html[start..start + len])?)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The whole page.
pub fn render(runs: &[GraphRun]) -> anyhow::Result<String> {
    let mut html = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>stress</title><style>\
         body{font-family:sans-serif;margin:24px;color:#222}\
         table{border-collapse:collapse;font-size:13px;margin-bottom:16px}\
         td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
         td:first-child,td:nth-child(2),th{text-align:left}\
         .settings{color:#555;font-size:13px}\
         .charts{display:flex;flex-wrap:wrap;gap:8px}\
         </style></head><body>\n<h1>stress</h1>\n",
    );
    for (i, run) in runs.iter().enumerate() {
        summary(&mut html, i, run);
    }
    let mut phases: Vec<&str> = Vec::new();
    for r in runs.iter().flat_map(|run| &run.results) {
        if !r.samples.is_empty() && !phases.contains(&r.phase.as_str()) {
            phases.push(&r.phase);
        }
    }
    for phase in phases {
        let _ = writeln!(
            html,
            "<section class=\"phase\" data-phase=\"{0}\"><h2>{0}</h2><div class=\"charts\">",
            escape(phase)
        );
        for (figure, unit, value) in FIGURES {
            let svg = chart(runs, phase, figure, unit, value)?;
            let _ = writeln!(
                html,
                "<div class=\"chart\" data-phase=\"{}\" data-figure=\"{figure}\">{svg}</div>",
                escape(phase)
            );
        }
        html.push_str("</div></section>\n");
    }
    // `<` never appears raw inside the data, so no title can end the script element early.
    let data = serde_json::to_string(runs)?.replace('<', "\\u003c");
    let _ = writeln!(html, "{DATA_OPEN}{data}</script>\n</body></html>");
    Ok(html)
}

/// A run's heading, settings and table of medians.
fn summary(html: &mut String, index: usize, run: &GraphRun) {
    let _ = writeln!(
        html,
        "<section class=\"run\" data-run=\"{index}\"><h2>{}</h2><p class=\"settings\">{}</p>\
         <table class=\"summary\"><tr><th>phase</th><th>engine</th><th>ops</th><th>ops/s</th>\
         <th>p50 µs</th><th>p99 µs</th><th>p99.9 µs</th><th>max µs</th><th>WA</th>\
         <th>disk MiB</th><th>peak MiB</th>{}</tr>",
        escape(&run.title),
        escape(&run.settings),
        match run.engines.as_slice() {
            [base, _, ..] => format!("<th>{}÷</th>", escape(base)),
            _ => String::new(),
        },
    );
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    for (phase, per_engine) in medians(&run.results, &run.engines) {
        let base = per_engine
            .iter()
            .find(|r| Some(&r.engine) == run.engines.first());
        for r in &per_engine {
            let vs = match base {
                _ if run.engines.len() < 2 => String::new(),
                Some(b) if r.engine != b.engine => format!("<td>{}</td>", ratio(&phase, b, r)),
                _ => "<td></td>".to_string(),
            };
            let _ = writeln!(
                html,
                "<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{:.2}</td><td>{:.1}</td><td>{:.1}</td>{vs}</tr>",
                escape(&phase),
                if r.stopped { " (stopped)" } else { "" },
                escape(&r.engine),
                r.ops,
                r.ops_per_sec,
                r.p50_us,
                r.p99_us,
                r.p999_us,
                r.max_us,
                r.write_amplification,
                mib(r.disk_bytes),
                mib(r.peak_memory),
            );
        }
    }
    html.push_str("</table></section>\n");
}

/// One figure of one phase as SVG: a line (with its points marked) per engine of every run.
fn chart(
    runs: &[GraphRun],
    phase: &str,
    figure: &str,
    unit: &str,
    value: fn(&Sample) -> f64,
) -> anyhow::Result<String> {
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for run in runs {
        for engine in &run.engines {
            let samples = run
                .results
                .iter()
                .filter(|r| r.phase == phase && &r.engine == engine)
                .flat_map(|r| &r.samples);
            let points: Vec<(f64, f64)> = samples.map(|s| (s.at_secs, value(s))).collect();
            if !points.is_empty() {
                let label = if runs.len() > 1 {
                    format!("{} · {engine}", run.title)
                } else {
                    engine.clone()
                };
                series.push((label, points));
            }
        }
    }
    let all = series.iter().flat_map(|(_, p)| p);
    let (max_x, max_y) = all.fold((0f64, 0f64), |(x, y), p| (x.max(p.0), y.max(p.1)));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 300)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{phase}: {figure}"), ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..max_x.max(1e-3) * 1.02, 0f64..max_y.max(1.0) * 1.1)?;
        chart
            .configure_mesh()
            .x_desc("seconds into the phase")
            .y_desc(unit)
            .draw()?;
        for (i, (label, points)) in series.into_iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            chart.draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 2, color.filled())),
            )?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
        root.present()?;
    }
    Ok(svg)
}
