//! The shape of the CQL crate, checked: every top-level module of `cql/src` names only the
//! modules its row of [`RULES`] allows, and each row allows only modules of the rows above it,
//! so the imports run one way (language → tables → session → plans → executors; `lib.rs`, the
//! public face, above them all and named by none). A module that imports against the table
//! fails here, naming the file, the line and the module.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each top-level module of `cql/src`, in order, with the modules it may name. A module may
/// name only modules listed before it.
const RULES: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("lexer", &["error"]),
    ("types", &["error"]),
    ("functions", &["error", "types"]),
    ("ast", &["types"]),
    ("rows", &["types"]),
    ("table_options", &["error", "types"]),
    (
        "parser",
        &["error", "lexer", "types", "ast", "table_options"],
    ),
    ("user_types", &["error", "types", "ast", "parser"]),
    (
        "table",
        &[
            "error",
            "types",
            "ast",
            "table_options",
            "parser",
            "user_types",
        ],
    ),
    ("replication", &["error"]),
    ("bounds", &["error", "table"]),
    ("key_span", &[]),
    ("assemble", &["functions", "ast", "table"]),
    ("json_insert", &["error", "types", "ast", "table"]),
    (
        "binds",
        &["error", "types", "functions", "ast", "table", "json_insert"],
    ),
    ("unset", &["error", "types", "ast", "table"]),
    ("page", &["error", "table", "bounds"]),
    ("compact", &["error", "types", "ast", "rows", "table"]),
    (
        "system",
        &[
            "error",
            "types",
            "ast",
            "rows",
            "table",
            "compact",
            "user_types",
        ],
    ),
    // The state every statement runs against, which the modules below extend.
    ("session", &["functions", "rows", "table", "page", "system"]),
    ("pages", &["error", "bounds", "session"]),
    (
        "selection",
        &["error", "types", "functions", "ast", "table", "assemble"],
    ),
    (
        "select_shape",
        &["error", "types", "ast", "rows", "table", "selection"],
    ),
    (
        "multi_column",
        &["error", "types", "ast", "table", "bounds", "session"],
    ),
    ("map_entry", &["error", "types", "ast", "table", "session"]),
    ("in_filter", &["error", "types", "ast", "table", "session"]),
    (
        "token_relation",
        &[
            "error", "types", "ast", "table", "bounds", "key_span", "session",
        ],
    ),
    (
        "index_plan",
        &["error", "types", "ast", "table", "key_span"],
    ),
    ("key_filters", &["error", "types", "table"]),
    ("index_use", &["error", "types", "table", "index_plan"]),
    (
        "select_plan",
        &[
            "error",
            "types",
            "ast",
            "table",
            "bounds",
            "assemble",
            "session",
            "select_shape",
            "selection",
            "multi_column",
            "map_entry",
            "in_filter",
            "token_relation",
            "index_plan",
            "index_use",
            "key_filters",
            "key_span",
        ],
    ),
    ("plan_values", &["error", "types", "ast", "rows"]),
    (
        "slice_plan",
        &[
            "types",
            "ast",
            "rows",
            "table",
            "bounds",
            "select_shape",
            "plan_values",
        ],
    ),
    (
        "slice_read",
        &["error", "rows", "session", "plan_values", "slice_plan"],
    ),
    (
        "plan",
        &[
            "error",
            "types",
            "ast",
            "rows",
            "table",
            "session",
            "select_shape",
            "plan_values",
            "slice_plan",
        ],
    ),
    (
        "prepared",
        &["error", "types", "ast", "table", "binds", "unset", "plan"],
    ),
    (
        "write_rows",
        &["error", "ast", "table", "session", "multi_column"],
    ),
    (
        "range_delete",
        &["error", "ast", "table", "bounds", "session", "select_plan"],
    ),
    (
        "index_schema",
        &["error", "types", "ast", "table", "session"],
    ),
    (
        "type_schema",
        &["error", "types", "ast", "table", "session", "user_types"],
    ),
    (
        "counter_write",
        &["error", "types", "ast", "table", "session", "write_rows"],
    ),
    ("collection", &["error", "types", "ast", "table", "session"]),
    (
        "write",
        &[
            "error",
            "types",
            "ast",
            "table",
            "session",
            "write_rows",
            "collection",
            "counter_write",
            "range_delete",
        ],
    ),
    (
        "execute",
        &[
            "error",
            "types",
            "functions",
            "parser",
            "ast",
            "table",
            "session",
            "plan",
            "write",
            "json_insert",
            "user_types",
        ],
    ),
    (
        "conditional",
        &[
            "error",
            "types",
            "ast",
            "rows",
            "table",
            "session",
            "write_rows",
        ],
    ),
    (
        "batch",
        &["error", "ast", "session", "counter_write", "conditional"],
    ),
    (
        "schema_change",
        &[
            "error",
            "ast",
            "table",
            "replication",
            "session",
            "user_types",
        ],
    ),
    (
        "served",
        &["error", "types", "ast", "compact", "system", "session"],
    ),
    (
        "collect",
        &[
            "error",
            "types",
            "rows",
            "table",
            "assemble",
            "page",
            "pages",
            "select_shape",
            "select_plan",
            "functions",
            "selection",
        ],
    ),
    (
        "index_scan",
        &[
            "error",
            "bounds",
            "page",
            "pages",
            "session",
            "index_plan",
            "collect",
        ],
    ),
    (
        "select",
        &[
            "error",
            "types",
            "ast",
            "rows",
            "table",
            "bounds",
            "assemble",
            "page",
            "session",
            "pages",
            "select_plan",
            "plan",
            "served",
            "collect",
        ],
    ),
    ("text_value", &["error", "types", "parser"]),
    ("fuzz", &["parser", "table"]),
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

/// The names a `use` group lists at its top level: `{a, b::{c}, D}` gives `a`, `b`, `D`.
fn group_names(group: &str) -> Vec<String> {
    let Some(inner) = group.strip_prefix('{') else {
        return vec![group.to_string()];
    };
    let mut out = Vec::new();
    let (mut depth, mut item) = (0, String::new());
    for c in inner.trim_end_matches('}').chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    out.push(item);
    out.iter()
        .filter_map(|i| {
            let name: String = i
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// The crate-root names a file uses, with their lines: `crate::x`, and `super::x` where
/// `super` is the crate root (a top-level file, or a folder's `mod.rs`). A nested file's own
/// `super::` is its module's, not an import; unit tests (`mod tests { … }`) are skipped.
fn root_names(text: &str, top_level: bool) -> Vec<(usize, String)> {
    let end = text.find("#[cfg(test)]\nmod tests {").unwrap_or(text.len());
    let code: Vec<&str> = text[..end]
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect();
    let code = code.join("\n");
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = code[at..].find("::") {
        let pos = at + i;
        at = pos + 2;
        let before = &code[..pos];
        let head = before
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("");
        let root = match head {
            "crate" => true,
            "super" => top_level || before.ends_with("super::super"),
            _ => false,
        };
        if !root {
            continue;
        }
        let after = &code[at..];
        let group = if after.starts_with('{') {
            let mut depth = 0;
            let close = after
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(after.len(), |(j, _)| j + 1);
            &after[..close]
        } else {
            let len = after
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            &after[..len]
        };
        let line = before.matches('\n').count() + 1;
        for name in group_names(group) {
            if name != "self" && name != "super" {
                out.push((line, name));
            }
        }
    }
    out
}

/// What breaks the table in the sources under `src`, one line each.
fn rule_breaks(src: &Path) -> Vec<String> {
    let rules: BTreeMap<&str, &[&str]> = RULES.iter().copied().collect();
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut broken = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap();
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let module = parts[0].trim_end_matches(".rs").to_string();
        if module == "lib" || module == "tests" {
            continue; // the public face, and the unit tests
        }
        let Some(allowed) = rules.get(module.as_str()) else {
            broken.push(format!("{}: module '{module}' has no row", rel.display()));
            continue;
        };
        let top_level = parts.len() == 1 || parts.last().is_some_and(|p| p == "mod.rs");
        let text = std::fs::read_to_string(f).unwrap();
        for (line, name) in root_names(&text, top_level) {
            if name == module || allowed.contains(&name.as_str()) {
                continue;
            }
            let what = if rules.contains_key(name.as_str()) {
                format!("module '{name}'")
            } else {
                format!("'{name}' through the crate root (name its module)")
            };
            broken.push(format!("{}:{line}: '{module}' uses {what}", rel.display()));
        }
    }
    broken
}

#[test]
fn every_cql_module_imports_only_what_lies_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let broken = rule_breaks(&src);
    assert!(
        broken.is_empty(),
        "imports against the CQL crate's table:\n{}",
        broken.join("\n")
    );
}

#[test]
fn each_row_allows_only_modules_above_it() {
    for (i, (module, allowed)) in RULES.iter().enumerate() {
        for a in *allowed {
            assert!(
                RULES[..i].iter().any(|(m, _)| m == a),
                "'{module}' may use '{a}', which is not above it"
            );
        }
    }
}

#[test]
fn the_table_catches_an_import_against_it() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("lib.rs"), "mod types;\nmod session;\n").unwrap();
    std::fs::write(
        src.join("types.rs"),
        "use super::error::CqlError;\nuse super::session::{Session, CqlResult};\n",
    )
    .unwrap();
    std::fs::create_dir(src.join("system")).unwrap();
    // Inside a folder, `super::` is the folder's own module; `crate::` is the root.
    std::fs::write(
        src.join("system").join("tables.rs"),
        "use super::describe;\nuse crate::{CqlError, select};\n",
    )
    .unwrap();
    let mut broken = rule_breaks(src);
    broken.sort();
    assert_eq!(
        broken,
        [
            "system/tables.rs:2: 'system' uses 'CqlError' through the crate root (name its module)",
            "system/tables.rs:2: 'system' uses module 'select'",
            "types.rs:2: 'types' uses module 'session'",
        ]
    );
}
