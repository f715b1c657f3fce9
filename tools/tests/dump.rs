//! `sstable-dump` run as a user runs it: after `flush`, the dump of the new file prints the same
//! rows as `list`; a missing file or one that is not an SSTable is one error line; `--verify`
//! catches a flipped byte in each part of an SSTable.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .output()
        .expect("run the binary")
}

fn shell(dir: &Path, script: &str) -> Output {
    run(
        env!("CARGO_BIN_EXE_supercolumn"),
        &["--data", dir.to_str().unwrap(), "shell", "-e", script],
    )
}

fn dump(args: &[&str]) -> Output {
    run(env!("CARGO_BIN_EXE_sstable-dump"), args)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Writes some Keyspace1 data, flushes, and returns Standard2's SSTable.
fn flushed(dir: &Path) -> (PathBuf, String) {
    let o = shell(
        dir,
        "use Keyspace1;
set Standard2['jsmith']['first'] = 'John';
set Standard2['jsmith']['last'] = 'Smith';
set Standard2['ericflo']['first'] = 'Eric';
set Super1['phatduckk']['homeAddress']['city'] = 'san francisco';
list Standard2;
flush;",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let listed = text(&o.stdout);
    let file = std::fs::read_dir(dir.join("Keyspace1"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("Standard2-")
        })
        .unwrap();
    (file, listed)
}

#[test]
fn the_dump_of_a_flushed_sstable_prints_the_same_rows_as_list() {
    let dir = tempfile::tempdir().unwrap();
    let (file, listed) = flushed(dir.path());
    let o = dump(&[file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // `list`'s output follows its acknowledgements; compare from the first row on.
    let from = listed.find("-------------------").unwrap();
    let to = listed.find("Flushed").unwrap();
    assert_eq!(text(&o.stdout), &listed[from..to]);
    let keys = dump(&["--keys", file.to_str().unwrap()]);
    let mut k: Vec<String> = text(&keys.stdout).lines().map(str::to_string).collect();
    k.sort();
    assert_eq!(k, ["ericflo", "jsmith"]);
    let one = dump(&[
        "--key",
        "jsmith",
        "--format",
        "json",
        file.to_str().unwrap(),
    ]);
    // A column family without a CQL schema: each column a row clustered by its name.
    let parsed: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    let partitions = parsed.as_array().unwrap();
    assert_eq!(partitions.len(), 1);
    assert_eq!(
        partitions[0]["partition"]["key"],
        serde_json::json!(["jsmith"])
    );
    let rows = partitions[0]["rows"].as_array().unwrap();
    let shown: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["clustering"][0].as_str().unwrap().to_string(),
                r["cells"][0]["value"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("first".to_string(), "4a6f686e".to_string()),
            ("last".to_string(), "536d697468".to_string())
        ]
    );
}

#[test]
fn the_json_dump_of_a_cql_table_is_sstabledump_s_with_typed_values() {
    let dir = tempfile::tempdir().unwrap();
    let cql = |statements: &str| {
        let o = run(
            env!("CARGO_BIN_EXE_supercolumn"),
            &[
                "--data",
                dir.path().to_str().unwrap(),
                "cql",
                "-e",
                statements,
            ],
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
    };
    cql("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
         CREATE TYPE ks.pt (x int, y text);
         CREATE TABLE ks.t (k int, c text, n bigint, s text, m map<text, int>, b boolean,
                            st text static, u pt, PRIMARY KEY (k, c));
         UPDATE ks.t USING TIMESTAMP 2500 SET u.y = 'q' WHERE k = 1 AND c = 'a';
         UPDATE ks.t USING TIMESTAMP 1500 SET st = 'shared' WHERE k = 1;
         INSERT INTO ks.t (k, c, n, s, b) VALUES (1, 'a', -10, 'x y', true) USING TIMESTAMP 1000;
         UPDATE ks.t USING TIMESTAMP 2000 AND TTL 600 SET m['q'] = 5 WHERE k = 1 AND c = 'a';
         DELETE s FROM ks.t USING TIMESTAMP 3000 WHERE k = 1 AND c = 'b';
         DELETE FROM ks.t USING TIMESTAMP 4000 WHERE k = 1 AND c = 'z';
         DELETE FROM ks.t USING TIMESTAMP 6000 WHERE k = 1 AND c > 'c' AND c <= 'y';
         DELETE FROM ks.t USING TIMESTAMP 5000 WHERE k = 2;");
    let o = run(
        env!("CARGO_BIN_EXE_supercolumn"),
        &["--data", dir.path().to_str().unwrap(), "flush", "ks"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let file = std::fs::read_dir(dir.path().join("ks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-Data.db"))
        .unwrap();
    let o = dump(&["--format", "json", "-t", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut got: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Deletion and expiry times are the wall clock's: checked for presence, then dropped.
    let mut local_times = 0;
    strip(&mut got, &mut local_times);
    assert_eq!(local_times, 6, "{got:#}");
    let want = serde_json::json!([
      { "partition": { "key": ["1"] },
        "rows": [
          // A range deletion's two bounds, where the partition stores them: at its head.
          { "type": "range_tombstone_bound", "start": { "type": "exclusive", "clustering": ["c"],
            "deletion_info": { "marked_deleted": 6000 } } },
          { "type": "range_tombstone_bound", "end": { "type": "inclusive", "clustering": ["y"],
            "deletion_info": { "marked_deleted": 6000 } } },
          { "type": "static_block",
            "cells": [ { "name": "st", "value": "shared", "tstamp": 1500 } ] },
          { "type": "row", "clustering": ["a"], "liveness_info": { "tstamp": 1000 },
            "cells": [
              { "name": "b", "value": true, "tstamp": 1000 },
              { "name": "m", "path": ["q"], "value": 5, "tstamp": 2000, "ttl": 600 },
              { "name": "n", "value": -10, "tstamp": 1000 },
              { "name": "s", "value": "x y", "tstamp": 1000 },
              { "name": "u", "path": ["y"], "value": "q", "tstamp": 2500 } ] },
          { "type": "row", "clustering": ["b"],
            "cells": [ { "name": "s", "deletion_info": {}, "tstamp": 3000 } ] },
          { "type": "row", "clustering": ["z"], "deletion_info": { "marked_deleted": 4000 },
            "cells": [] } ] },
      { "partition": { "key": ["2"], "deletion_info": { "marked_deleted": 5000 } },
        "rows": [] }
    ]);
    assert_eq!(got, want, "{got:#}");
    // --key takes the key as the dump prints it: here an int, as text or as hex.
    for key in ["2", "0x00000002"] {
        let o = dump(&["--format", "json", "--key", key, file.to_str().unwrap()]);
        let one: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            one[0]["partition"]["key"],
            serde_json::json!(["2"]),
            "{key}"
        );
        assert_eq!(one.as_array().unwrap().len(), 1);
    }
}

/// Removes every `local_delete_time` and `expires_at` from `v`, counting them.
fn strip(v: &mut serde_json::Value, n: &mut usize) {
    match v {
        serde_json::Value::Object(m) => {
            for k in ["local_delete_time", "expires_at"] {
                *n += usize::from(m.shift_remove(k).is_some());
            }
            m.values_mut().for_each(|x| strip(x, n));
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| strip(x, n)),
        _ => {}
    }
}

#[test]
fn missing_files_and_non_sstables_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let o = dump(&[dir.path().join("nope-1-Data.db").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("no such file") && text(&o.stderr).lines().count() == 1);
    let junk = dir.path().join("junk");
    std::fs::write(
        &junk,
        b"this is not an sstable at all, not even close to one",
    )
    .unwrap();
    let o = dump(&[junk.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("junk") && text(&o.stderr).contains("not a supercolumn SSTable"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn verify_catches_a_flipped_byte_in_each_part() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = flushed(dir.path());
    let good = std::fs::read(&file).unwrap();
    let ok = dump(&["--verify", file.to_str().unwrap()]);
    assert!(
        ok.status.success() && text(&ok.stdout).contains("OK"),
        "{}",
        text(&ok.stderr)
    );
    let f = &good[good.len() - 82..]; // the format 3 footer
    let at = |i: usize| u64::from_be_bytes(f[i * 8..i * 8 + 8].try_into().unwrap()) as usize;
    let (index, bloom) = (at(0), at(2));
    for (part, offset) in [
        ("data block", 12 + 15),
        ("index", index + 15),
        ("bloom filter", bloom + 15),
        ("footer", good.len() - 20),
        ("header", 2),
    ] {
        let mut bad = good.clone();
        bad[offset] ^= 0x04;
        let victim = dir.path().join("Keyspace1").join("Standard2-99-Data.db");
        std::fs::write(&victim, &bad).unwrap();
        let o = dump(&["--verify", victim.to_str().unwrap()]);
        assert!(!o.status.success(), "{part}: verify passed a damaged file");
        let err = text(&o.stderr);
        assert!(err.contains("Standard2-99-Data.db"), "{part}: {err}");
        assert_eq!(err.lines().count(), 1, "{part}: {err}");
        std::fs::remove_file(&victim).unwrap();
    }
}
