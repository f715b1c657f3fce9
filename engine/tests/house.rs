//! The shape of the engine's code, checked: every module imports only what sits below it in the
//! pipeline (the table in `engine/src/lib.rs`), and no source file grows past 650 lines. A
//! change that breaks either fails here, with the file and the import.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// For each top-level module of `engine/src`, the modules it may name as `crate::…`. The order
/// is the pipeline's: a module may use those listed before it, never those after.
const RULES: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("codec", &["error"]),
    ("clock", &[]),
    ("file_names", &[]),
    ("stats", &[]),
    ("model", &["error", "codec", "clock"]),
    ("io", &["error", "file_names"]),
    ("schema", &["error", "codec", "file_names", "io", "model"]),
    (
        "options",
        &["error", "codec", "clock", "io", "model", "schema"],
    ),
    ("merge", &["error", "model"]),
    ("query", &["error", "model", "schema", "merge"]),
    ("mutation", &["error", "model", "schema", "query"]),
    ("cache", &["model"]),
    (
        "commitlog",
        &[
            "error",
            "codec",
            "file_names",
            "io",
            "model",
            "options",
            "mutation",
        ],
    ),
    (
        "memtable",
        &["error", "codec", "model", "merge", "mutation"],
    ),
    (
        "sstable",
        &[
            "error",
            "codec",
            "file_names",
            "io",
            "model",
            "stats",
            "merge",
            "cache",
        ],
    ),
    (
        "compaction",
        &[
            "error", "codec", "io", "model", "stats", "merge", "cache", "sstable",
        ],
    ),
];

/// Modules above the stages: they may use everything below them.
const ORCHESTRATION: &[(&str, &[&str])] = &[
    ("store", &["db", "inspect", "fuzz"]),
    ("db", &["inspect", "fuzz"]),
    ("inspect", &["db", "fuzz"]),
    ("fuzz", &["db"]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file belongs to.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The `crate::<module>` names a file uses in code (comments skipped).
fn imports(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let name: String = rest[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.push((n + 1, name));
            rest = &rest[i + 7..];
        }
    }
    out
}

#[test]
fn every_module_imports_only_what_lies_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let rules: BTreeMap<&str, &[&str]> = RULES.iter().copied().collect();
    let forbidden: BTreeMap<&str, &[&str]> = ORCHESTRATION.iter().copied().collect();
    let mut broken = Vec::new();
    for f in &files {
        let module = module_of(&src, f);
        if module == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (line, used) in imports(&text) {
            if used == module {
                continue;
            }
            let ok = match (rules.get(module.as_str()), forbidden.get(module.as_str())) {
                (Some(allowed), _) => allowed.contains(&used.as_str()),
                (None, Some(denied)) => !denied.contains(&used.as_str()),
                (None, None) => {
                    broken.push(format!(
                        "{}: module '{module}' has no place in the house's table",
                        f.display()
                    ));
                    break;
                }
            };
            if !ok {
                broken.push(format!(
                    "{}:{line}: '{module}' uses crate::{used}",
                    f.strip_prefix(&src).unwrap().display()
                ));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "imports against the pipeline:\n{}",
        broken.join("\n")
    );
}

#[test]
fn no_source_file_passes_650_lines() {
    // The engine's, the server's, the tools', the benchmarks' and the oracle's sources alike.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for src in [
        "src",
        "../server/src",
        "../tools/src",
        "../bench/src",
        "../oracle/src",
    ] {
        rust_files(&root.join(src), &mut files);
    }
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n > 650).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "files over 650 lines: {long:?}");
}

#[test]
fn the_table_catches_an_import_against_the_flow() {
    let uses = imports("use crate::commitlog::record::decode_entry; // crate::query\n");
    assert_eq!(uses, [(1, "commitlog".to_string())]);
    let sstable = RULES.iter().find(|(m, _)| *m == "sstable").unwrap().1;
    assert!(!sstable.contains(&"commitlog") && !sstable.contains(&"query"));
}
