#!/usr/bin/env python3
"""Drives `supercolumn serve` with the real `cqlsh` executable (cqlsh 6.2), as a user would.

Usage: python3 cqlsh_suite.py PORT

In fresh keyspaces cq_<hex> and cq_<hex>_c (both dropped at the end) it runs seed 002's
statements, typed as the seed writes them (the text tools/tests/cql.rs uses), with `cqlsh -f`,
and checks on cqlsh's output:
  * the SELECTs print the seed's rows (example: 3 rows; example2: the compound-key row; a
    WHERE on the whole partition key and a clustering column);
  * the seed's collections example (map/list/set; in its own keyspace, since it reuses the
    table name `example`) reads back as the seed wrote it;
  * DESCRIBE KEYSPACE prints CREATE KEYSPACE and a CREATE TABLE for each of the seed's tables,
    with their columns, types and primary keys; DESCRIBE TABLES lists them;
  * COPY ks.example2 TO a CSV file, then COPY ks.copy_target FROM it (same schema, another
    table): the CSV holds the row and a SELECT of copy_target prints the same rows; the same
    for `example` (3 partitions, with HEADER) and for the collections table;
  * every cqlsh run exits 0 and prints no error: stderr holds nothing but the known
    "WARNING: cqlsh was built against ..." line, and no output line mentions an error or a
    Traceback.
Each check prints one line; a failure prints what cqlsh printed, the others still run, and
the exit status is 1. All passing prints `OK`.
"""

import csv
import os
import re
import secrets
import subprocess
import sys
import tempfile

PORT = sys.argv[1] if len(sys.argv) > 1 else "9142"
KS = "cq_" + secrets.token_hex(6)
KS_C = KS + "_c"
REPLICATION = "{'class': 'SimpleStrategy', 'replication_factor': 1}"

# Seed 002's statements, the files the Rust tests read too.
SEEDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "cql", "tests", "data", "seed_002")


def seed(name):
    with open(os.path.join(SEEDS, name), encoding="utf-8") as f:
        return f.read()


SIMPLE = seed("simple.cql")

COMPOUND = seed("compound.cql")

COLLECTIONS = seed("collections.cql")

# COPY targets: the same schemas under other names.
TARGETS = """CREATE TABLE copy_target (
    partitionKey1 text, partitionKey2 text, clusterKey1 text, clusterKey2 text,
    normalField1 text, normalField2 text,
    PRIMARY KEY ((partitionKey1, partitionKey2), clusterKey1, clusterKey2));
CREATE TABLE copy_example (field1 int PRIMARY KEY, field2 int, field3 int);
"""

ALL_TABLES = ["copy_example", "copy_target", "example", "example2"]
EXAMPLE_HEADER = ["field1", "field2", "field3"]
EXAMPLE_ROWS = [["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"]]
EXAMPLE2_HEADER = ["partitionkey1", "partitionkey2", "clusterkey1", "clusterkey2",
                   "normalfield1", "normalfield2"]
EXAMPLE2_ROW = ["partitionVal1", "partitionVal2", "clusterVal1", "clusterVal2",
                "normalVal1", "normalVal2"]
COLLECTIONS_ROW = {"key1": "john", "list1": "['doug', 'scott']",
                   "map1": "{'doug': '555-1579', 'patricia': '555-4326'}",
                   "set1": "{'patricia', 'scott'}"}

KNOWN_WARNING = re.compile(r"^WARNING: cqlsh was built against \S+, but this server is \S+\.\s+"
                           r"All features may not work!$")
from checks import check, fail, finish  # noqa: E402 -- beside this file


def cqlsh(*args, keyspace=None):
    """Runs cqlsh; asserts it exited 0 and printed no error. Returns its standard output."""
    cmd = [sys.executable, "-m", "cqlshlib", "127.0.0.1", PORT, *(["-k", keyspace] if keyspace else []), *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    shown = f"$ {' '.join(cmd)}\n--- stdout:\n{p.stdout}\n--- stderr:\n{p.stderr}"
    assert p.returncode == 0, f"cqlsh exited {p.returncode}\n{shown}"
    noise = [l for l in p.stderr.splitlines() if l.strip() and not KNOWN_WARNING.match(l.strip())]
    assert not noise, f"cqlsh printed on stderr: {noise}\n{shown}"
    # cqlsh prints its version WARNING on stdout when that is not a terminal: drop it.
    out = "\n".join(l for l in p.stdout.splitlines() if not KNOWN_WARNING.match(l.strip()))
    bad = [l for l in out.splitlines() if re.search(r"error|traceback|exception", l, re.I)]
    assert not bad, f"cqlsh printed error lines: {bad}\n{shown}"
    return out


def tables(out):
    """The result tables cqlsh printed, in order: (header, rows, the '(N rows)' count)."""
    lines = out.splitlines()
    found = []
    for i, line in enumerate(lines):
        if i and re.fullmatch(r"-+(\+-+)*", line.strip()):
            header = [c.strip() for c in lines[i - 1].split("|")]
            rows, j = [], i + 1
            while j < len(lines) and lines[j].strip():
                rows.append([c.strip() for c in lines[j].split("|")])
                j += 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            m = re.fullmatch(r"\((\d+) rows\)", lines[j].strip()) if j < len(lines) else None
            found.append((header, rows, int(m.group(1)) if m else None))
    return found


def create_table_block(out, table):
    """The text of `CREATE TABLE <table> (...` up to its closing `;`."""
    m = re.search(r"CREATE TABLE " + re.escape(table) + r" \((.*?)\)(?: WITH .*?)?;", out, re.S)
    assert m, f"no CREATE TABLE {table} in:\n{out}"
    return " ".join(m.group(0).split())


def read_csv(path):
    assert os.path.exists(path), f"COPY TO wrote no {path}"
    with open(path, newline="") as f:
        return list(csv.reader(f))


with tempfile.TemporaryDirectory() as tmp:
    setup = os.path.join(tmp, "seed_002.cql")
    with open(setup, "w") as f:
        f.write(f"CREATE KEYSPACE {KS} WITH replication = {REPLICATION};\nUSE {KS};\n")
        f.write(SIMPLE + "\n" + COMPOUND + "\n" + TARGETS)
        f.write("SELECT * FROM example;\nSELECT * FROM example WHERE field1 = 4;\n"
                "SELECT * FROM example2;\n"
                "SELECT normalField1, normalField2 FROM example2 WHERE partitionKey1 = 'partitionVal1'"
                " AND partitionKey2 = 'partitionVal2' AND clusterKey1 = 'clusterVal1';\n")
        f.write(f"CREATE KEYSPACE {KS_C} WITH replication = {REPLICATION};\nUSE {KS_C};\n")
        f.write(COLLECTIONS + "SELECT * FROM example;\n")
        f.write("CREATE TABLE copy_target (key1 text PRIMARY KEY, map1 map<text,text>,"
                " list1 list<text>, set1 set<text>);\n")
    try:
        out = {}

        @check("cqlsh -f: seed 002 statements run, exit 0, no errors")
        def _():
            out["seed"] = cqlsh("-f", setup)

        @check("SELECT * FROM example prints the seed's 3 rows")
        def _():
            t = tables(out["seed"])
            assert len(t) == 5, f"expected 5 result tables, got {len(t)}:\n{out['seed']}"
            header, rows, n = t[0]
            assert header == EXAMPLE_HEADER, f"header {header}"
            assert sorted(rows) == EXAMPLE_ROWS and n == 3, f"rows {rows}, count {n}"

        @check("SELECT * FROM example WHERE field1 = 4 prints (4, 5, 6)")
        def _():
            header, rows, n = tables(out["seed"])[1]
            assert (header, rows, n) == (EXAMPLE_HEADER, [["4", "5", "6"]], 1), f"{header} {rows} {n}"

        @check("SELECT * FROM example2 prints the compound-key row")
        def _():
            header, rows, n = tables(out["seed"])[2]
            assert header == EXAMPLE2_HEADER, f"header {header}"
            assert (rows, n) == ([EXAMPLE2_ROW], 1), f"rows {rows}, count {n}"

        @check("SELECT ... WHERE partition key and clustering column prints the row")
        def _():
            header, rows, n = tables(out["seed"])[3]
            assert header == ["normalfield1", "normalfield2"], f"header {header}"
            assert (rows, n) == ([["normalVal1", "normalVal2"]], 1), f"rows {rows}, count {n}"

        @check("collections example: SELECT * prints the seed's map, list and set")
        def _():
            header, rows, n = tables(out["seed"])[4]
            assert n == 1 and len(rows) == 1, f"rows {rows}, count {n}"
            got = dict(zip(header, rows[0]))
            assert got == COLLECTIONS_ROW, f"got {got}, want {COLLECTIONS_ROW}"

        @check(f"DESCRIBE KEYSPACE {KS} prints CREATE KEYSPACE and both CREATE TABLEs")
        def _():
            desc = cqlsh("-e", f"DESCRIBE KEYSPACE {KS}")
            ks = re.search(r"CREATE KEYSPACE " + KS + r" WITH replication = \{(.*?)\}", desc)
            assert ks, f"no CREATE KEYSPACE {KS}:\n{desc}"
            assert "'class': 'org.apache.cassandra.locator.SimpleStrategy'" in ks.group(0) or \
                "'class': 'SimpleStrategy'" in ks.group(0), ks.group(0)
            assert re.search(r"'replication_factor': '?1'?", ks.group(0)), ks.group(0)
            ex = create_table_block(desc, f"{KS}.example")
            for col in ("field1 int", "field2 int", "field3 int"):
                assert col in ex, f"{col!r} missing from {ex}"
            assert "field1 int PRIMARY KEY" in ex or "PRIMARY KEY (field1)" in ex, ex
            ex2 = create_table_block(desc, f"{KS}.example2")
            for col in EXAMPLE2_HEADER:
                assert f"{col} text" in ex2, f"{col} text missing from {ex2}"
            assert "PRIMARY KEY ((partitionkey1, partitionkey2), clusterkey1, clusterkey2)" in ex2, ex2
            # The statements cqlsh prints run: recreate the tables in a scratch keyspace.
            scratch = desc.replace(f"{KS}.", f"{KS}_d.").replace(f"KEYSPACE {KS} ", f"KEYSPACE {KS}_d ")
            path = os.path.join(tmp, "describe.cql")
            with open(path, "w") as f:
                f.write(scratch + f"\nUSE {KS}_d;\nDESCRIBE TABLES;\nDROP KEYSPACE {KS}_d;\n")
            listed = cqlsh("-f", path)
            assert sorted(listed.split()) == ALL_TABLES, f"replayed DESCRIBE:\n{listed}"

        @check("DESCRIBE TABLES lists the seed's tables")
        def _():
            listed = cqlsh("-e", "DESCRIBE TABLES", keyspace=KS).split()
            assert sorted(listed) == ALL_TABLES, listed
            listed = cqlsh("-e", f"USE {KS_C}; DESCRIBE TABLES").split()
            assert sorted(listed) == ["copy_target", "example"], listed

        @check("SELECT from system.local (cqlsh checks the system keyspace exists)")
        def _():
            out = cqlsh("-e", "SELECT key, cql_version FROM system.local")
            assert "local" in out and "3.4.5" in out and "(1 rows)" in out, out

        @check("DESCRIBE TABLE example2 prints its CREATE TABLE")
        def _():
            desc = cqlsh("-e", "DESCRIBE TABLE example2", keyspace=KS)
            assert "PRIMARY KEY ((partitionkey1, partitionkey2), clusterkey1, clusterkey2)" in \
                create_table_block(desc, f"{KS}.example2"), desc

        def copy_round_trip(ks, src, dst, header=False):
            path = os.path.join(tmp, f"{ks}.{src}.csv")
            opt = " WITH HEADER = true" if header else ""
            exported = cqlsh("-e", f"COPY {ks}.{src} TO '{path}'{opt}")
            assert re.search(r"\d+ rows exported to 1 files", exported), exported
            imported = cqlsh("-e", f"COPY {ks}.{dst} FROM '{path}'{opt}")
            assert re.search(r"\d+ rows imported from 1 files .*\(0 skipped\)", imported), imported
            before = tables(cqlsh("-e", f"SELECT * FROM {ks}.{src}"))
            after = tables(cqlsh("-e", f"SELECT * FROM {ks}.{dst}"))
            assert len(before) == len(after) == 1, f"{before} / {after}"
            assert before[0][0] == after[0][0], f"headers {before[0][0]} / {after[0][0]}"
            assert sorted(before[0][1]) == sorted(after[0][1]), f"{src}: {before[0][1]}\n{dst}: {after[0][1]}"
            assert before[0][2] == after[0][2], f"row counts {before[0][2]} / {after[0][2]}"
            return read_csv(path), after[0]

        @check("COPY example2 TO csv, COPY copy_target FROM it: same rows")
        def _():
            csv_rows, (header, rows, n) = copy_round_trip(KS, "example2", "copy_target")
            assert csv_rows == [EXAMPLE2_ROW], f"CSV holds {csv_rows}"
            assert (header, rows, n) == (EXAMPLE2_HEADER, [EXAMPLE2_ROW], 1), f"{header} {rows} {n}"

        @check("COPY example TO csv WITH HEADER, COPY copy_example FROM it: same 3 rows")
        def _():
            csv_rows, (header, rows, n) = copy_round_trip(KS, "example", "copy_example", header=True)
            assert csv_rows[0] == EXAMPLE_HEADER and sorted(csv_rows[1:]) == EXAMPLE_ROWS, csv_rows
            assert sorted(rows) == EXAMPLE_ROWS and n == 3, f"{rows} {n}"

        @check("COPY of the collections table round-trips map, list and set")
        def _():
            csv_rows, (header, rows, n) = copy_round_trip(KS_C, "example", "copy_target")
            assert len(csv_rows) == 1 and csv_rows[0][0] == "john", f"CSV holds {csv_rows}"
            assert n == 1 and dict(zip(header, rows[0])) == COLLECTIONS_ROW, f"{header} {rows}"

        @check("TRACING ON: cqlsh prints the session's events after the rows")
        def _():
            out = cqlsh("-e", "TRACING ON; SELECT * FROM example WHERE field1 = 4;", keyspace=KS)
            assert "Tracing session:" in out and "Request complete" in out, out
            assert "Merging memtable contents" in out or "sstable" in out, out

        @check("user types: cqlsh prints values, DESCRIBE TYPE, COPY round-trips a frozen type")
        def _():
            cqlsh("-e", "CREATE TYPE addr (street text, zip int); CREATE TYPE pers (name text, "
                  "home frozen<addr>); CREATE TABLE ut (k int PRIMARY KEY, p frozen<pers>); "
                  "CREATE TABLE ut2 (k int PRIMARY KEY, p frozen<pers>); INSERT INTO ut (k, p) "
                  "VALUES (1, {name: 'Ann', home: {street: '1 Main', zip: 5}})", keyspace=KS)
            header, rows, n = tables(cqlsh("-e", "SELECT k, p, p.home.zip FROM ut", keyspace=KS))[0]
            want = ["1", "{name: 'Ann', home: {street: '1 Main', zip: 5}}", "5"]
            assert (header[:2], rows, n) == (["k", "p"], [want], 1), f"{header} {rows}"
            desc = cqlsh("-e", "DESCRIBE TYPE pers", keyspace=KS)
            assert f"CREATE TYPE {KS}.pers" in desc and "home frozen<addr>" in desc, desc
            csv_rows, (header, rows, n) = copy_round_trip(KS, "ut", "ut2")
            assert (rows, n) == ([want[:2]], 1), f"COPY: {csv_rows} then {rows}"

    finally:
        try:
            cqlsh("-e", f"DROP KEYSPACE IF EXISTS {KS}; DROP KEYSPACE IF EXISTS {KS_C}")
            left = cqlsh("-e", "DESCRIBE KEYSPACES").split()
            assert KS not in left and KS_C not in left, f"still listed: {left}"
            print(f"ok    keyspaces {KS}, {KS_C} dropped")
        except Exception as e:  # noqa: BLE001
            print(f"FAIL  dropping keyspaces: {type(e).__name__}: {e}")
            fail("drop keyspaces", e)

finish()
