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
    assert_eq!(
        text(&one.stdout)
            .trim()
            .split("\"timestamp\":")
            .next()
            .unwrap(),
        "{\"key\":\"6a736d697468\",\"columns\":[{\"name\":\"6669727374\",\"value\":\"4a6f686e\","
    );
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
