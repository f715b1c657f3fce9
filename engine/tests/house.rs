//! The shape of the code, checked: every module of the engine imports only what sits below it in
//! the pipeline (the table in `engine/src/lib.rs`), each crate of the workspace depends only on
//! the crates below it (engine ← cql ← server ← tools; the benchmarks and tests above), and no
//! source file passes 500 lines nor function 80 without a reason written beside it (nor any
//! file 650). A change that breaks any of them fails here, naming the file and the import,
//! dependency or function.

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
    ("trace", &[]),
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
            "trace",
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
    // Above the stages: one column family's live state, then the database, then the read-only
    // tools' door and the fuzz targets' bodies. None of them names the one above it.
    (
        "store",
        &[
            "error",
            "codec",
            "clock",
            "file_names",
            "stats",
            "trace",
            "model",
            "io",
            "schema",
            "merge",
            "query",
            "mutation",
            "cache",
            "commitlog",
            "memtable",
            "sstable",
            "compaction",
        ],
    ),
    (
        "db",
        &[
            "error",
            "codec",
            "file_names",
            "stats",
            "trace",
            "model",
            "io",
            "schema",
            "options",
            "query",
            "mutation",
            "commitlog",
            "memtable",
            "sstable",
            "store",
        ],
    ),
    (
        "inspect",
        &[
            "error",
            "file_names",
            "stats",
            "model",
            "comparator",
            "io",
            "schema",
            "merge",
            "mutation",
            "cache",
            "sstable",
        ],
    ),
    (
        "fuzz",
        &[
            "stats",
            "model",
            "options",
            "merge",
            "cache",
            "commitlog",
            "sstable",
        ],
    ),
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
            let Some(allowed) = rules.get(module.as_str()) else {
                broken.push(format!(
                    "{}: module '{module}' has no place in the house's table",
                    f.display()
                ));
                break;
            };
            let ok = allowed.contains(&used.as_str());
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

/// The sources the size rules cover: the engine's, CQL's, the server's, the tools', the
/// benchmarks' and the oracle's.
fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for src in [
        "src",
        "../cql/src",
        "../server/src",
        "../tools/src",
        "../bench/src",
        "../oracle/src",
    ] {
        rust_files(&root.join(src), &mut files);
    }
    files
}

/// The phrase that says why a file (in its `//!` doc) or a function (in the comments above
/// it) is longer than the house's rule.
const REASON: &str = "Long because";

/// A file's lines that count: those before its unit-test module. (Unit-test files, `tests.rs`
/// and `*_tests.rs`, are lists of cases: none count.)
fn code_lines<'a>(file: &Path, text: &'a str) -> Vec<&'a str> {
    let name = file.file_name().unwrap().to_string_lossy();
    if name == "tests.rs" || name.ends_with("_tests.rs") {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0] == "#[cfg(test)]" && w[1].starts_with("mod tests {"))
        .unwrap_or(lines.len());
    lines[..end].to_vec()
}

/// The indentation and name of the function a line declares, if it declares one.
fn fn_head(line: &str) -> Option<(&str, &str)> {
    let code = line.trim_start();
    let indent = &line[..line.len() - code.len()];
    let mut rest = code;
    for word in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        rest = rest.strip_prefix(word).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let name = rest
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()?;
    Some((indent, name))
}

/// Each function of `lines` longer than `max` lines (signature to closing brace) whose
/// comments above do not say why: `(first line, name, length)`.
fn unexplained_long_functions(lines: &[&str], max: usize) -> Vec<(usize, String, usize)> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((indent, name)) = fn_head(line) else {
            continue;
        };
        // The body opens on the first line ending in `{`; a declaration or a one-line body
        // ends first.
        let Some(open) = (i..lines.len()).find(|&j| {
            let l = lines[j].trim_end();
            l.ends_with('{') || l.ends_with(';') || l.ends_with('}')
        }) else {
            continue;
        };
        if !lines[open].trim_end().ends_with('{') {
            continue;
        }
        let close = format!("{indent}}}");
        let Some(end) = (open + 1..lines.len()).find(|&j| lines[j] == close) else {
            continue;
        };
        let len = end - i + 1;
        let above = lines[..i]
            .iter()
            .rev()
            .map(|l| l.trim_start())
            .take_while(|l| l.starts_with("//") || l.starts_with("#["));
        let explained = above.clone().any(|l| l.contains(REASON));
        if len > max && !explained {
            out.push((i + 1, name.to_string(), len));
        }
    }
    out
}

/// Whether a file's `//!` doc says why it is long.
fn explained_file(lines: &[&str]) -> bool {
    lines
        .iter()
        .take_while(|l| l.starts_with("//!") || l.is_empty())
        .any(|l| l.contains(REASON))
}

#[test]
fn no_file_passes_500_lines_nor_function_80_without_a_reason() {
    let mut broken = Vec::new();
    for f in sources() {
        let text = std::fs::read_to_string(&f).unwrap();
        let lines = code_lines(&f, &text);
        let n = text.lines().count();
        // Past 650 lines, no reason is enough.
        if n > 650 || (lines.len() > 500 && !explained_file(&lines)) {
            broken.push(format!("{}: {n} lines", f.display()));
        }
        for (line, name, len) in unexplained_long_functions(&lines, 80) {
            broken.push(format!("{}:{line}: fn {name} is {len} lines", f.display()));
        }
    }
    assert!(
        broken.is_empty(),
        "over the size rules (a file over 500 lines or a function over 80 says \"{REASON} …\" \
         beside it; no file passes 650):\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_size_rules_catch_a_long_function_and_a_long_file() {
    let body = "    let x = 1;\n".repeat(85);
    let bare = format!("/// Adds.\npub fn add() {{\n{body}}}\n");
    let lines: Vec<&str> = bare.lines().collect();
    assert_eq!(
        unexplained_long_functions(&lines, 80),
        [(2, "add".to_string(), 87)]
    );
    let explained = format!("/// Adds. {REASON} it is a test.\npub fn add() {{\n{body}}}\n");
    let lines: Vec<&str> = explained.lines().collect();
    assert!(unexplained_long_functions(&lines, 80).is_empty());
    // A declaration and a one-line body are not bodies to measure.
    let short = "    fn f(&self);\n    fn g() -> u8 { 1 }\n";
    assert!(unexplained_long_functions(&short.lines().collect::<Vec<_>>(), 0).is_empty());
    let file = format!("//! A file.\n\n{body}");
    assert!(!explained_file(&file.lines().collect::<Vec<_>>()));
    let file = format!("//! A file.\n//! {REASON} it is a test.\n\n{body}");
    assert!(explained_file(&file.lines().collect::<Vec<_>>()));
}

#[test]
fn the_table_catches_an_import_against_the_flow() {
    let uses = imports("use crate::commitlog::record::decode_entry; // crate::query\n");
    assert_eq!(uses, [(1, "commitlog".to_string())]);
    let sstable = RULES.iter().find(|(m, _)| *m == "sstable").unwrap().1;
    assert!(!sstable.contains(&"commitlog") && !sstable.contains(&"query"));
}

/// For each crate of the workspace (its folder), the workspace crates its `[dependencies]` may
/// name, and those its `[dev-dependencies]` may name besides: the engine at the bottom, CQL on
/// its public API, the protocol and the tools above CQL, the benchmarks above all.
const CRATES: &[(&str, &[&str], &[&str])] = &[
    // A crate may name itself among its dev-dependencies: that turns its `testing` feature on
    // for its own integration tests.
    ("engine", &[], &["supercolumn-oracle", "supercolumn"]),
    ("oracle", &["supercolumn"], &[]),
    ("cql", &["supercolumn"], &["supercolumn-cql"]),
    ("server", &["supercolumn", "supercolumn-cql"], &[]),
    (
        "tools",
        &["supercolumn", "supercolumn-cql", "supercolumn-server"],
        &[],
    ),
    ("scylla-tests", &[], &["supercolumn", "supercolumn-server"]),
    (
        "bench",
        &[
            "supercolumn",
            "supercolumn-cql",
            "supercolumn-server",
            "supercolumn-tools",
        ],
        &[],
    ),
];

/// The workspace crates (names starting `supercolumn`) each dependency section of a manifest
/// names: `(section, crate)` pairs.
fn workspace_dependencies(manifest: &str) -> Vec<(String, String)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_string();
            continue;
        }
        let name = line
            .split(|c: char| c == '=' || c == '.' || c.is_whitespace())
            .next()
            .unwrap_or("");
        if name.starts_with("supercolumn") && section.ends_with("dependencies") {
            out.push((section.clone(), name.to_string()));
        }
    }
    out
}

/// What breaks the crate table in the manifests under `root`, one line each.
fn crate_rule_breaks(root: &Path, manifest_of: impl Fn(&Path) -> String) -> Vec<String> {
    let mut broken = Vec::new();
    for (dir, normal, dev) in CRATES {
        let manifest = manifest_of(&root.join(dir).join("Cargo.toml"));
        for (section, name) in workspace_dependencies(&manifest) {
            let ok = match section.as_str() {
                "dependencies" => normal.contains(&name.as_str()),
                "dev-dependencies" => {
                    normal.contains(&name.as_str()) || dev.contains(&name.as_str())
                }
                _ => false,
            };
            if !ok {
                broken.push(format!("{dir}/Cargo.toml [{section}] names {name}"));
            }
        }
    }
    broken
}

#[test]
fn every_crate_depends_only_on_the_crates_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    // Every member has a row: a new crate must take its place in the table.
    for member in [
        "engine",
        "cql",
        "server",
        "tools",
        "bench",
        "scylla-tests",
        "oracle",
    ] {
        assert!(
            workspace.contains(&format!("\"{member}\"")),
            "{member} left the workspace"
        );
        assert!(
            CRATES.iter().any(|(d, ..)| *d == member),
            "{member} has no row in CRATES"
        );
    }
    let broken = crate_rule_breaks(&root, |p| std::fs::read_to_string(p).unwrap());
    assert!(
        broken.is_empty(),
        "dependencies against the house:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_crate_table_catches_a_dependency_against_the_flow() {
    // The engine depending on CQL, or CQL on the server, is caught.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let real = |p: &Path| std::fs::read_to_string(p).unwrap();
    let broken = crate_rule_breaks(&root, |p| {
        let text = real(p);
        if p.ends_with("engine/Cargo.toml") {
            text.replace(
                "[dependencies]\n",
                "[dependencies]\nsupercolumn-cql.workspace = true\n",
            )
        } else if p.ends_with("cql/Cargo.toml") {
            text.replace(
                "[dependencies]\n",
                "[dependencies]\nsupercolumn-server = { path = \"../server\" }\n",
            )
        } else {
            text
        }
    });
    assert_eq!(
        broken,
        [
            "engine/Cargo.toml [dependencies] names supercolumn-cql",
            "cql/Cargo.toml [dependencies] names supercolumn-server",
        ]
    );
}
