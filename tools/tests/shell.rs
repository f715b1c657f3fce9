//! The `supercolumn` binary run as a user runs it: a script of shell statements builds the seeds'
//! Keyspace1 data, and `get`/`list` print exactly SPEC §8's lines (timestamps aside); bad
//! statements get one line naming the problem and where it is, and a non-zero exit status.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

fn shell(dir: &Path, script: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_supercolumn"))
        .arg("--data")
        .arg(dir)
        .args(["shell", "-e", script])
        .output()
        .expect("run the supercolumn binary")
}

/// Standard output with every `timestamp=<digits>` replaced by `timestamp=T`.
fn stdout(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let mut out = String::new();
            let mut rest = l;
            while let Some(i) = rest.find("timestamp=") {
                out.push_str(&rest[..i + "timestamp=".len()]);
                rest =
                    rest[i + "timestamp=".len()..].trim_start_matches(|c: char| c.is_ascii_digit());
                out.push('T');
            }
            out.push_str(rest);
            out
        })
        .collect()
}

const SEED: &str = "use Keyspace1;
set Standard2['jsmith']['first'] = 'John';
set Standard2['jsmith']['last'] = 'Smith';
set Super1['phatduckk']['homeAddress']['city'] = 'san francisco';
set Super1['phatduckk']['homeAddress']['zip'] = '94107';";

#[test]
fn get_and_list_print_spec_section_8_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let o = shell(dir.path(), SEED);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        stdout(&o),
        [
            "Authenticated to keyspace: Keyspace1",
            "Value inserted.",
            "Value inserted.",
            "Value inserted.",
            "Value inserted."
        ]
    );
    let o = shell(
        dir.path(),
        "use Keyspace1; list Standard2; get Super1['phatduckk']; get Standard2['jsmith']['first'];",
    );
    assert_eq!(
        stdout(&o)[1..],
        [
            "-------------------",
            "RowKey: jsmith",
            "=> (column=first, value=4a6f686e, timestamp=T)",
            "=> (column=last, value=536d697468, timestamp=T)",
            "",
            "1 Row Returned.",
            "=> (super_column=homeAddress,",
            "     (column=city, value=73616e206672616e636973636f, timestamp=T)",
            "     (column=zip, value=3934313037, timestamp=T))",
            "Returned 1 results.",
            "=> (column=first, value=4a6f686e, timestamp=T)",
            "Returned 1 results.",
        ]
    );
}

#[test]
fn slices_counts_deletes_ttls_and_schema_statements() {
    let dir = tempfile::tempdir().unwrap();
    assert!(shell(dir.path(), SEED).status.success());
    let o = shell(
        dir.path(),
        "use Keyspace1;
get Standard2['jsmith'][:] limit 1 reversed;
get Standard2['jsmith']['a':'g'] limit 5;
count Standard2['jsmith'];
get Standard2['jsmith']['middle'];
del Standard2['jsmith']['first'];
count Standard2['jsmith'];
del Standard2['jsmith'];
list Standard2;
create keyspace Blog;
use Blog;
create column family Timeline with comparator = LongType and default_validation_class = UTF8Type;
set Timeline['ericflo'][1374546754] = 'hello' with ttl = 3600;
set Timeline['ericflo'][-5] = 'older';
get Timeline['ericflo'] limit 1 reversed;
flush Timeline;
compact Timeline;
drop column family Timeline;
drop keyspace Blog;",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        stdout(&o)[1..],
        [
            "=> (column=last, value=536d697468, timestamp=T)",
            "Returned 1 results.",
            "=> (column=first, value=4a6f686e, timestamp=T)",
            "Returned 1 results.",
            "2 columns",
            "Value was not found",
            "column removed.",
            "1 columns",
            "row removed.",
            "",
            "0 Rows Returned.",
            "Keyspace Blog created.",
            "Authenticated to keyspace: Blog",
            "Column family Timeline created.",
            "Value inserted.",
            "Value inserted.",
            "=> (column=1374546754, value=hello, timestamp=T, ttl=3600)",
            "Returned 1 results.",
            "Flushed Blog.Timeline.",
            "Compacted Blog.Timeline.",
            "Column family Timeline dropped.",
            "Keyspace Blog dropped.",
        ]
    );
}

fn fails_with(script: &str, wanted: &str) {
    let dir = tempfile::tempdir().unwrap();
    let o = shell(dir.path(), script);
    assert!(!o.status.success(), "{script} succeeded");
    let err = String::from_utf8_lossy(&o.stderr);
    // The run says it created the database, then the error is one line.
    let (created, err) = err.split_once('\n').unwrap();
    assert!(
        created.starts_with("created a new database at "),
        "{created}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(wanted), "{script}: {err}");
}

#[test]
fn bad_statements_get_one_line_and_a_non_zero_exit() {
    fails_with(
        "use Keyspace1; get Standard2['jsmith' limit 5;",
        "expected ']', found 'limit' (at line 1, column 39)",
    );
    fails_with("frobnicate;", "unknown statement 'frobnicate'");
    fails_with(
        "use Keyspace1; get Nope['k'];",
        "unknown column family 'Nope'",
    );
    fails_with(
        "use Keyspace1;\nset StandardByUUID1['k']['not-a-uuid'] = 'v';",
        "does not fit TimeUUIDType",
    );
    fails_with(
        "use Keyspace1; set Standard2['k']['c'] = 'v'",
        "does not end with ';'",
    );
    fails_with("get Standard2['k'];", "no keyspace in use");
}

#[test]
fn stats_flush_and_compact_commands_for_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_supercolumn"))
            .arg("--data")
            .arg(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    for i in 0..3 {
        let o = shell(
            dir.path(),
            &format!("use Keyspace1; set Standard1['k{i}']['c'] = 'v';"),
        );
        assert!(o.status.success());
        assert_eq!(
            run(&["flush", "Keyspace1.Standard1"]),
            "Flushed Keyspace1.Standard1.\n"
        );
    }
    assert_eq!(
        run(&["compact", "Keyspace1.Standard1"]),
        "Ran 0 pending compactions of Keyspace1.Standard1.\n"
    );
    assert_eq!(
        run(&["compact", "--major", "Keyspace1.Standard1"]),
        "Compacted Keyspace1.Standard1.\n"
    );
    let stats = run(&["stats", "Keyspace1.Standard1"]);
    assert!(
        stats.contains("Column Family: Standard1") && stats.contains("SSTable count: 1"),
        "{stats}"
    );
    let help = run(&["shell", "--help"]);
    assert!(help.contains("--execute"));
}

/// Regression: `del Standard1['r']['c']['d']` printed `column removed.` and removed column `d`,
/// leaving `c`; `del Super1['k']['a']['b']['c']` removed `a/c`. A path with more names than the
/// column family allows is refused by every statement, and nothing is removed.
#[test]
fn a_path_with_too_many_names_is_refused_and_removes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let setup = "use Keyspace1;
set Standard1['r']['c'] = 'x';
set Standard1['r']['d'] = 'y';
set Super1['k']['a']['b'] = 'x';
set Super1['k']['a']['c'] = 'y';";
    assert!(shell(dir.path(), setup).status.success());
    for stmt in [
        "del Standard1['r']['c']['d'];",
        "del Super1['k']['a']['b']['c'];",
        "count Standard1['r']['c'];",
        "count Super1['k']['a']['b'];",
        "get Standard1['r']['c']['d'];",
    ] {
        let o = shell(dir.path(), &format!("use Keyspace1; {stmt}"));
        assert!(!o.status.success(), "{stmt} succeeded");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("too many names"), "{stmt}: {err}");
    }
    let o = shell(
        dir.path(),
        "use Keyspace1; count Standard1['r']; count Super1['k']['a'];",
    );
    assert_eq!(stdout(&o)[1..], ["2 columns", "2 columns"]);
}

/// Regression: with `SCHEMA.db` gone, even the read-only `schema` command wrote the default
/// schema, deleted the SSTables of column families not in it, and exited 0.
#[test]
fn the_schema_command_refuses_a_folder_whose_schema_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let o = shell(
        dir.path(),
        "create keyspace Blog; use Blog; create column family Posts; set Posts['p']['c'] = 'v'; flush;",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_file(dir.path().join("SCHEMA.db")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_supercolumn"))
        .arg("--data")
        .arg(dir.path())
        .arg("schema")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("SCHEMA.db"), "{err}");
    assert!(
        !dir.path().join("SCHEMA.db").exists(),
        "nothing was written"
    );
    let posts = std::fs::read_dir(dir.path().join("Blog")).unwrap().count();
    assert_eq!(posts, 1, "the SSTable is still there");
}

#[test]
fn a_composite_slice_bound_with_an_end_of_component_covers_a_whole_clustering_row() {
    let dir = tempfile::tempdir().unwrap();
    let o = shell(
        dir.path(),
        "use Keyspace1; create column family Comp with comparator = 'CompositeType(UTF8Type,UTF8Type,UTF8Type)';
         set Comp['k']['c1:c2:'] = ''; set Comp['k']['c1:c2:v'] = 'x'; set Comp['k']['c1:c3:v'] = 'y';
         get Comp['k']['c1:c2':'c1:c2:!'];",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert_eq!(
        out[out.len() - 3..],
        [
            "=> (column=c1:c2:, value=, timestamp=T)",
            "=> (column=c1:c2:v, value=78, timestamp=T)",
            "Returned 2 results."
        ]
    );
}

#[test]
fn keys_indexes_are_declared_and_queried_as_cassandra_cli_0_7_does() {
    let dir = tempfile::tempdir().unwrap();
    let o = shell(
        dir.path(),
        "use Keyspace1;
create column family Users with comparator = UTF8Type and default_validation_class = UTF8Type
  and column_metadata = [{column_name: state, validation_class: UTF8Type, index_type: KEYS}];
set Users['jsmith']['state'] = 'UT';
set Users['jsmith']['birth'] = '1970';
set Users['ericflo']['state'] = 'TX';
set Users['phatduckk']['state'] = 'UT';
set Users['phatduckk']['birth'] = '1985';
set Users['phatduckk']['state'] = 'CA';
update column family Users with column_metadata = [{column_name: birth, index_type: KEYS, index_name: by_birth}];",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(
        out.contains(&"Index Users_state_idx on Users.state built.".to_string()),
        "{out:?}"
    );
    assert!(
        out.contains(&"Index by_birth on Users.birth built.".to_string()),
        "{out:?}"
    );
    let o = shell(dir.path(), "use Keyspace1; get Users where state = 'UT';");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        stdout(&o)[1..],
        [
            "-------------------",
            "RowKey: jsmith",
            "=> (column=birth, value=1970, timestamp=T)",
            "=> (column=state, value=UT, timestamp=T)",
            "",
            "1 Row Returned."
        ]
    );
    let o = shell(
        dir.path(),
        "use Keyspace1; get Users where birth = '1985' and state >= 'B' limit 5;",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        stdout(&o).contains(&"RowKey: phatduckk".to_string()),
        "{:?}",
        stdout(&o)
    );
    let o = shell(dir.path(), "describe keyspace Keyspace1;");
    let described = stdout(&o).join("\n");
    assert!(
        described.contains("      Column Metadata:\n        Column Name: state\n") && described.contains("        Column Name: birth\n          Validation Class: org.apache.cassandra.db.marshal.UTF8Type\n          Index Name: by_birth\n          Index Type: KEYS"),
        "{described}"
    );
    // No equality on an indexed column: refused, one line, a non-zero exit.
    let o = shell(dir.path(), "use Keyspace1; get Users where name = 'x';");
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("No indexed columns"), "{e}");
}
