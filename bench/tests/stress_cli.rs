//! `stress` as a user runs it: `--graph` writes one page with a chart per phase and figure,
//! every engine of every run named and every sample drawn, and later runs are added beside the
//! earlier ones; Ctrl-C ends the running phase and still prints the table of what ran.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use supercolumn_bench::graph::runs_in;

const SMALL: &[&str] = &[
    "--rows",
    "3000",
    "--wide-rows",
    "1",
    "--columns-per-row",
    "200",
    "--workloads",
    "fillseq,readrandom,compact",
    "--interval-ms",
    "5",
];

fn stress(args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_stress"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("run stress");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// The SVG of each chart on the page, by (phase, figure).
fn charts(html: &str) -> Vec<(String, String, String)> {
    html.split("<div class=\"chart\" ")
        .skip(1)
        .map(|part| {
            let attr = |name: &str| {
                let from = part.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                part[from..from + part[from..].find('"').unwrap()].to_string()
            };
            let svg = part[..part.find("</svg>").unwrap()].to_string();
            (attr("data-phase"), attr("data-figure"), svg)
        })
        .collect()
}

fn graph(path: &Path, title: &str) {
    let mut args = SMALL.to_vec();
    let p = path.to_str().unwrap();
    args.extend(["--graph", p, "--title", title]);
    stress(&args);
}

#[test]
fn graph_page_has_a_chart_per_phase_and_figure_and_runs_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("g.html");
    graph(&page, "first <run>");
    graph(&page, "second");
    let html = std::fs::read_to_string(&page).unwrap();
    let runs = runs_in(&html).unwrap();
    assert_eq!(
        runs.iter().map(|r| r.title.as_str()).collect::<Vec<_>>(),
        ["first <run>", "second"]
    );
    // Titles are text, never markup.
    assert!(html.contains("first &lt;run&gt;") && !html.contains("first <run>"));
    let charts = charts(&html);
    let want: Vec<(String, String)> = ["fillseq", "readrandom", "compact"]
        .iter()
        .flat_map(|p| ["throughput", "p50", "p99", "p99.9"].map(|f| (p.to_string(), f.to_string())))
        .collect();
    let got: Vec<(String, String)> = charts
        .iter()
        .map(|(p, f, _)| (p.clone(), f.clone()))
        .collect();
    assert_eq!(got, want);
    for (phase, figure, svg) in &charts {
        // Every run's engine is in the legend, and every sample of the phase is a point.
        assert!(
            svg.contains("first &lt;run&gt; · supercolumn"),
            "{phase} {figure}"
        );
        assert!(svg.contains("second · supercolumn"), "{phase} {figure}");
        let samples: usize = runs
            .iter()
            .flat_map(|r| &r.results)
            .filter(|r| &r.phase == phase)
            .map(|r| r.samples.len())
            .sum();
        assert!(samples >= 2, "{phase}: {samples} samples");
        assert_eq!(svg.matches("<circle").count(), samples, "{phase} {figure}");
        assert!(svg.contains("<polyline"), "{phase} {figure}");
    }
    // Every operation of a phase is in its samples.
    for run in &runs {
        for r in &run.results {
            if r.phase != "close" {
                assert_eq!(
                    r.samples.iter().map(|s| s.ops).sum::<u64>(),
                    r.ops,
                    "{}",
                    r.phase
                );
            }
        }
    }
    // Both summary tables.
    assert_eq!(html.matches("<table class=\"summary\">").count(), 2);
}

#[test]
fn graph_refuses_to_overwrite_a_page_it_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("notes.html");
    std::fs::write(&page, "<p>my notes</p>").unwrap();
    let mut args = SMALL.to_vec();
    args.extend(["--graph", page.to_str().unwrap()]);
    let o = Command::new(env!("CARGO_BIN_EXE_stress"))
        .args(&args)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("notes.html") && err.contains("not a stress --graph page"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&page).unwrap(), "<p>my notes</p>");
}

/// Regression: a `--graph` path that could not be written was found out only after the whole
/// run; now it is refused before the first phase.
#[test]
fn an_unwritable_graph_path_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("no-such-folder").join("page.html");
    let mut args = SMALL.to_vec();
    args.extend(["--graph", page.to_str().unwrap()]);
    let o = Command::new(env!("CARGO_BIN_EXE_stress"))
        .args(&args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("page.html") && err.contains("does not take a new file"),
        "{err}"
    );
}

#[test]
fn ctrl_c_stops_the_phase_and_prints_what_ran() {
    // Far more rows than the test waits for: only the interrupt ends this run.
    let data = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_stress"))
        .args(["--rows", "20000000", "--workloads", "fillseq,readrandom"])
        .arg("--data")
        .arg(data.path())
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, as a terminal's foreground job: Ctrl-C signals the group.
        .process_group(0)
        .spawn()
        .unwrap();
    // Interrupt once fillseq is writing: its commit log holds a few thousand rows (far past
    // a new segment's header). Segments grow a step of zeros at a time: count what is written.
    let log = data.path().join("supercolumn/round-0/commit-log");
    let logged = || -> u64 {
        std::fs::read_dir(&log).map_or(0, |d| {
            d.flatten()
                .filter_map(|e| std::fs::read(e.path()).ok())
                .map(|b| b.iter().rposition(|&x| x != 0).map_or(0, |p| p as u64 + 1))
                .sum()
        })
    };
    let started = Instant::now();
    while logged() < 256 << 10 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "fillseq never started writing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let group = format!("-{}", child.id());
    let sent = Command::new("kill")
        .args(["-INT", "--", &group])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("stress did not stop within a minute of Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("fillseq*"))
        .unwrap_or_else(|| panic!("no stopped fillseq line in:\n{out}"));
    let ops: u64 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(ops > 0 && ops < 20_000_000, "{line}");
    assert!(
        !out.contains("readrandom"),
        "a phase started after Ctrl-C:\n{out}"
    );
    assert!(out.contains("stopped early (Ctrl-C)"), "{out}");
}
