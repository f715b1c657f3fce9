//! The `supercolumn` shell: cassandra-cli 0.7's statements (SPEC §8) over the engine's public
//! API. [`Shell::run`] executes statements and writes each one's output as soon as it completes.
//!
//! Long because the shell's statements each run in a few lines, and they share the session state
//! held here.

mod indexed;
pub mod lexer;
pub mod parser;
mod schema;

use std::io::Write;
use std::sync::Arc;

use supercolumn::comparator::{builtin::from_hex, Comparator};
use supercolumn::{
    ColumnFamilyDef, ColumnParent, ColumnPath, ColumnType, Database, KeyRange, KeysCached,
    KeyspaceDef, SlicePredicate, SliceRange, TimeUuidGenerator, WriteOptions,
};

use lexer::{Pos, SyntaxError};
use parser::{Lit, Part, Path, Stmt};

/// Input read but not yet run: the text after the last complete statement, and where it starts.
#[derive(Debug)]
pub struct Pending {
    /// The unfinished text.
    pub text: String,
    /// Its position in the whole input.
    pub pos: Pos,
}

impl Default for Pending {
    fn default() -> Self {
        Pending {
            text: String::new(),
            pos: Pos { line: 1, col: 1 },
        }
    }
}

/// A statement that failed: where it is, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementError {
    /// Where the statement (or the fault in it) is.
    pub pos: Pos,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for StatementError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (at {})", self.message, self.pos)
    }
}

impl From<SyntaxError> for StatementError {
    fn from(e: SyntaxError) -> Self {
        StatementError {
            pos: e.pos,
            message: e.message,
        }
    }
}

/// A shell session over one database.
pub struct Shell {
    db: Database,
    keyspace: Option<String>,
    ids: TimeUuidGenerator,
    quit: bool,
}

type Out = Result<Vec<String>, String>;

fn is_text_type(c: &dyn Comparator) -> bool {
    matches!(c.name().as_str(), "BytesType" | "AsciiType" | "UTF8Type")
}

/// Reads a literal by a comparator or validator: `'text'` is the text's bytes for the byte and
/// text types and is parsed otherwise; a bare word is parsed; `0x…` is raw bytes.
fn bytes_for(
    lit: &Lit,
    c: &dyn Comparator,
    ids: &TimeUuidGenerator,
    now_us: i64,
) -> Result<Vec<u8>, String> {
    match lit {
        Lit::Hex(h) => from_hex(h).map_err(|e| e.to_string()),
        Lit::TimeUuid => Ok(ids.next(now_us).as_bytes().to_vec()),
        Lit::Str(s) if is_text_type(c) => Ok(s.as_bytes().to_vec()),
        Lit::Word(w)
            if c.name() == "BytesType" || c.name() == "UTF8Type" || c.name() == "AsciiType" =>
        {
            Ok(w.as_bytes().to_vec())
        }
        Lit::Str(s) | Lit::Word(s) => c
            .parse_text(s)
            .map_err(|e| format!("'{s}' does not fit {}: {e}", c.name())),
    }
}

fn key_bytes(lit: &Lit) -> Result<Vec<u8>, String> {
    match lit {
        Lit::Hex(h) => from_hex(h).map_err(|e| e.to_string()),
        Lit::Str(s) | Lit::Word(s) => Ok(s.as_bytes().to_vec()),
        Lit::TimeUuid => Err("a row key cannot be timeuuid()".into()),
    }
}

const HELP: &[(&str, &str)] = &[
    ("use", "use <keyspace>;"),
    ("set", "set <cf>['<key>'][<super>]['<column>'] = <value> [with ttl = <seconds>];"),
    ("get", "get <cf>['<key>'][<super>][['<column>' | '<start>':'<finish>']] [limit <n>] [reversed]; | get <cf> where <column> = <value> [and <column> =|>|>=|<|<= <value>]… [limit <n>];"),
    ("count", "count <cf>['<key>'][<super>];"),
    ("del", "del <cf>['<key>'][<super>][['<column>']];"),
    ("list", "list <cf>[['<start key>':'<end key>']] [limit <n>];"),
    ("create", "create keyspace <name>; | create column family <name> [with comparator = <type> and column_type = Standard|Super and subcomparator = <type> and default_validation_class = <type> and comment = '<text>' and gc_grace = <seconds> and min_compaction_threshold = <n> and max_compaction_threshold = <n> and keys_cached = <n|fraction|n%> and column_metadata = [{column_name: <name>, validation_class: <type>, index_type: KEYS, index_name: <name>}, …]];"),
    ("update", "update column family <name> with column_metadata = [{column_name: <name>, index_type: KEYS[, index_name: <name>]}, …];"),
    ("describe", "describe keyspace [<keyspace>];"),
    ("show", "show keyspaces;"),
    ("drop", "drop keyspace <name>; | drop column family <name>;"),
    ("flush", "flush [<cf>];  -- writes memtables to SSTables"),
    ("compact", "compact [<cf>];  -- a major compaction"),
    ("help", "help [<statement>];"),
    ("quit", "quit; | exit;  -- the statements after it do not run"),
];

impl Shell {
    /// A session; `keyspace` is the one in use, if any.
    pub fn new(db: Database, keyspace: Option<String>) -> Shell {
        Shell {
            db,
            keyspace,
            ids: TimeUuidGenerator::for_process(),
            quit: false,
        }
    }

    /// The keyspace in use.
    pub fn keyspace(&self) -> Option<&str> {
        self.keyspace.as_deref()
    }

    /// Whether a `quit;` has run.
    pub fn has_quit(&self) -> bool {
        self.quit
    }

    /// Runs the statements of `input` in order, writing each one's output as it completes.
    /// Stops at the first statement that fails (to parse or to run; reported on `err`) and
    /// returns its error; the statements before it have run. Text after the last `;` that holds
    /// a statement is an error too.
    pub fn run(
        &mut self,
        input: &str,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Result<(), StatementError> {
        let mut pending = Pending::default();
        pending.text.push_str(input);
        self.run_complete(&mut pending, out, err)?;
        self.finish(&pending, err)
    }

    /// Runs statements from `input` as they arrive, line by line, each as soon as its `;` is
    /// read (so a statement's output is written before the next is read, and a pipeline killed
    /// half-way has seen every acknowledgement of what ran). Stops at the first failure.
    pub fn run_stream(
        &mut self,
        input: &mut dyn std::io::BufRead,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Result<(), StatementError> {
        let mut pending = Pending::default();
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = input.read_until(b'\n', &mut line).map_err(|e| {
                let e = StatementError {
                    pos: pending.pos,
                    message: format!("reading the input: {e}"),
                };
                let _ = writeln!(err, "error: {}", e.message);
                e
            })?;
            if n == 0 {
                break;
            }
            match std::str::from_utf8(&line) {
                Ok(l) => pending.text.push_str(l),
                Err(_) => {
                    let e = StatementError {
                        pos: lexer::advance_over(&pending.text, pending.pos),
                        message: "the input is not UTF-8".into(),
                    };
                    let _ = writeln!(err, "error: {e}");
                    return Err(e);
                }
            }
            self.run_complete(&mut pending, out, err)?;
        }
        self.finish(&pending, err)
    }

    /// Runs every complete statement at the front of `pending`, leaving the unfinished rest.
    pub fn run_complete(
        &mut self,
        pending: &mut Pending,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Result<(), StatementError> {
        while let Some(end) = lexer::statement_end(&pending.text).filter(|_| !self.quit) {
            let text: String = pending.text.drain(..end).collect();
            let start = pending.pos;
            pending.pos = lexer::advance_over(&text, start);
            let Some((pos, stmt)) = parser::parse_statement(&text, start) else {
                continue;
            };
            let result = match stmt {
                Ok(s) => self
                    .execute(s)
                    .map_err(|message| StatementError { pos, message }),
                Err(e) => Err(e.into()),
            };
            match result {
                Ok(lines) => {
                    for l in lines {
                        let _ = writeln!(out, "{l}");
                    }
                    let _ = out.flush();
                }
                Err(e) => {
                    let _ = writeln!(err, "error: {e}");
                    let _ = err.flush();
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Checks what is left at the end of the input: nothing but blanks and comments.
    pub fn finish(&self, pending: &Pending, err: &mut dyn Write) -> Result<(), StatementError> {
        if self.quit {
            return Ok(());
        }
        let e = match lexer::lex_at(&pending.text, pending.pos) {
            Ok(t) if t.is_empty() => return Ok(()),
            Ok(t) => StatementError {
                pos: t[0].1,
                message: "the last statement does not end with ';'".into(),
            },
            Err(e) => e.into(),
        };
        let _ = writeln!(err, "error: {e}");
        Err(e)
    }

    fn ks(&self) -> Result<&str, String> {
        self.keyspace
            .as_deref()
            .ok_or_else(|| "no keyspace in use: say 'use <keyspace>;' first".to_string())
    }

    fn def(&self, cf: &str) -> Result<ColumnFamilyDef, String> {
        self.db
            .describe_column_family(self.ks()?, cf)
            .map_err(|e| e.to_string())
    }

    fn now(&self) -> i64 {
        self.db.options().clock.now_micros()
    }

    /// Executes one statement; returns its output lines.
    // Long because it is one match with an arm per shell statement.
    pub fn execute(&mut self, stmt: Stmt) -> Out {
        match stmt {
            Stmt::Use(ks) => {
                self.db.describe_keyspace(&ks).map_err(|e| e.to_string())?;
                self.keyspace = Some(ks.clone());
                Ok(vec![format!("Authenticated to keyspace: {ks}")])
            }
            Stmt::Set { path, value, ttl } => self.set(&path, &value, ttl),
            Stmt::Get {
                path,
                limit,
                reversed,
            } => self.get(&path, limit, reversed),
            Stmt::Count(path) => self.count(&path),
            Stmt::Del(path) => self.del(&path),
            Stmt::List { cf, range, limit } => self.list(&cf, range, limit),
            Stmt::CreateKeyspace(name) => {
                self.db
                    .create_keyspace(KeyspaceDef::new(&name))
                    .map_err(|e| e.to_string())?;
                Ok(vec![format!("Keyspace {name} created.")])
            }
            Stmt::CreateColumnFamily {
                name,
                props,
                columns,
            } => {
                let mut lines = self.create_cf(&name, &props)?;
                lines.extend(self.add_indexes(&name, &columns)?);
                Ok(lines)
            }
            Stmt::UpdateColumnFamily { name, columns } => {
                let mut lines = self.add_indexes(&name, &columns)?;
                lines.push(format!("Column family {name} updated."));
                Ok(lines)
            }
            Stmt::GetWhere { cf, exprs, limit } => self.get_where(&cf, &exprs, limit),
            Stmt::Describe(ks) => {
                let ks = match ks {
                    Some(k) => k,
                    None => self.ks()?.to_string(),
                };
                self.describe(&ks)
            }
            Stmt::ShowKeyspaces => {
                let mut lines = Vec::new();
                for ks in self.db.keyspaces() {
                    lines.extend(self.describe(&ks)?);
                }
                Ok(lines)
            }
            Stmt::DropColumnFamily(cf) => {
                self.db
                    .drop_column_family(self.ks()?, &cf)
                    .map_err(|e| e.to_string())?;
                Ok(vec![format!("Column family {cf} dropped.")])
            }
            Stmt::DropKeyspace(ks) => {
                self.db.drop_keyspace(&ks).map_err(|e| e.to_string())?;
                if self.keyspace.as_deref() == Some(&ks) {
                    self.keyspace = None;
                }
                Ok(vec![format!("Keyspace {ks} dropped.")])
            }
            Stmt::Help(what) => Ok(match what {
                None => {
                    let mut v = vec!["Statements (each ends with ';'):".to_string()];
                    v.extend(HELP.iter().map(|(_, u)| format!("  {u}")));
                    v
                }
                Some(w) => match HELP.iter().find(|(k, _)| k.eq_ignore_ascii_case(&w)) {
                    Some((_, u)) => vec![u.to_string()],
                    None => return Err(format!("no help for '{w}'; 'help;' lists the statements")),
                },
            }),
            Stmt::Flush(cf) => {
                let ks = self.ks()?.to_string();
                self.db
                    .flush(&ks, cf.as_deref())
                    .map_err(|e| e.to_string())?;
                Ok(vec![format!(
                    "Flushed {}.",
                    cf.map_or(ks.clone(), |c| format!("{ks}.{c}"))
                )])
            }
            Stmt::Quit => {
                self.quit = true;
                Ok(Vec::new())
            }
            Stmt::Compact(cf) => {
                let ks = self.ks()?.to_string();
                self.db
                    .compact(&ks, cf.as_deref())
                    .map_err(|e| e.to_string())?;
                Ok(vec![format!(
                    "Compacted {}.",
                    cf.map_or(ks.clone(), |c| format!("{ks}.{c}"))
                )])
            }
        }
    }

    /// The column path of `path` and the names resolved by the CF's comparators.
    fn column_path(
        &self,
        path: &Path,
        def: &ColumnFamilyDef,
    ) -> Result<(Vec<u8>, ColumnPath), String> {
        let key = key_bytes(&path.key)?;
        let now = self.now();
        let mut p = ColumnPath::new(&path.cf);
        let sub = def.subcomparator();
        for (i, part) in path.parts.iter().enumerate() {
            let Part::Name(lit) = part else {
                return Err("a range is not allowed here".into());
            };
            let is_sc = def.column_type == ColumnType::Super && i == 0;
            let c: &dyn Comparator = if is_sc || def.column_type == ColumnType::Standard {
                def.comparator.as_ref()
            } else {
                sub.as_ref()
            };
            let name = bytes_for(lit, c, &self.ids, now)?;
            p = if is_sc {
                p.super_column(name)
            } else {
                p.column(name)
            };
        }
        Ok((key, p))
    }

    fn set(&self, path: &Path, value: &Lit, ttl: Option<u32>) -> Out {
        let def = self.def(&path.cf)?;
        let want = if def.column_type == ColumnType::Super {
            2
        } else {
            1
        };
        if path.parts.len() != want {
            return Err(format!(
                "set on {} ({}) needs {want} name(s) after the key",
                path.cf,
                def.column_type.as_str()
            ));
        }
        let (key, p) = self.column_path(path, &def)?;
        let v = bytes_for(
            value,
            def.default_validation_class.as_ref(),
            &self.ids,
            self.now(),
        )?;
        let w = ttl.map_or(WriteOptions::now(), |t| WriteOptions::now().with_ttl(t));
        self.db
            .insert(self.ks()?, key, &p, v, w)
            .map_err(|e| e.to_string())?;
        Ok(vec!["Value inserted.".into()])
    }

    fn lines_of(
        &self,
        def: &ColumnFamilyDef,
        results: &[supercolumn::ColumnOrSuperColumn],
        sub_level: bool,
    ) -> Vec<String> {
        let sub = def.subcomparator();
        let names: &dyn Comparator = if sub_level {
            sub.as_ref()
        } else {
            def.comparator.as_ref()
        };
        results
            .iter()
            .flat_map(|r| {
                crate::format::result_lines(
                    r,
                    names,
                    sub.as_ref(),
                    def.default_validation_class.as_ref(),
                )
            })
            .collect()
    }

    fn get(&self, path: &Path, limit: Option<usize>, reversed: bool) -> Out {
        let def = self.def(&path.cf)?;
        let ks = self.ks()?;
        let is_super = def.column_type == ColumnType::Super;
        let key = key_bytes(&path.key)?;
        let now = self.now();
        // A trailing range (or nothing) is a slice; names all the way down are a point get.
        let (names, range) = match path.parts.last() {
            Some(Part::Range(a, b)) => (
                &path.parts[..path.parts.len() - 1],
                Some((a.clone(), b.clone())),
            ),
            _ => (&path.parts[..], None),
        };
        let full_depth = if is_super { 2 } else { 1 };
        if names.len() > full_depth || (range.is_some() && names.len() >= full_depth) {
            return Err(format!(
                "too many names after the key for {} ({})",
                path.cf,
                def.column_type.as_str()
            ));
        }
        if names.len() == full_depth {
            let (_, p) = self.column_path(
                &Path {
                    cf: path.cf.clone(),
                    key: path.key.clone(),
                    parts: names.to_vec(),
                },
                &def,
            )?;
            return match self.db.get(ks, &key, &p).map_err(|e| e.to_string())? {
                None => Ok(vec!["Value was not found".into()]),
                Some(r) => {
                    let mut lines = self.lines_of(&def, std::slice::from_ref(&r), is_super);
                    lines.push("Returned 1 results.".into());
                    Ok(lines)
                }
            };
        }
        let mut parent = ColumnParent::new(&path.cf);
        let sub_level = !names.is_empty();
        if let Some(Part::Name(sc)) = names.first() {
            parent = parent.super_column(bytes_for(sc, def.comparator.as_ref(), &self.ids, now)?);
        }
        let c: Arc<dyn Comparator> = if sub_level {
            def.subcomparator()
        } else {
            def.comparator.clone()
        };
        let bound = |l: &Option<Lit>| -> Result<Vec<u8>, String> {
            l.as_ref()
                .map_or(Ok(Vec::new()), |l| bytes_for(l, c.as_ref(), &self.ids, now))
        };
        let (start, finish) = match &range {
            Some((a, b)) => (bound(a)?, bound(b)?),
            None => (Vec::new(), Vec::new()),
        };
        let mut r = SliceRange::between(start, finish).count(limit.unwrap_or(100));
        if reversed {
            r = r.reversed();
        }
        let results = self
            .db
            .get_slice(ks, &key, &parent, &r.into())
            .map_err(|e| e.to_string())?;
        let mut lines = self.lines_of(&def, &results, sub_level);
        lines.push(format!("Returned {} results.", results.len()));
        Ok(lines)
    }

    /// Refuses a path with more names after the key than `allowed`, or with a range where
    /// only names may stand.
    fn names_only(&self, path: &Path, def: &ColumnFamilyDef, allowed: usize) -> Result<(), String> {
        if path.parts.len() > allowed {
            return Err(format!(
                "too many names after the key for {} ({}): at most {allowed} here",
                path.cf,
                def.column_type.as_str()
            ));
        }
        if path.parts.iter().any(|p| matches!(p, Part::Range(..))) {
            return Err("a range is not allowed here".into());
        }
        Ok(())
    }

    fn count(&self, path: &Path) -> Out {
        let def = self.def(&path.cf)?;
        let depth = usize::from(def.column_type == ColumnType::Super);
        self.names_only(path, &def, depth)?;
        let key = key_bytes(&path.key)?;
        let mut parent = ColumnParent::new(&path.cf);
        match path.parts.as_slice() {
            [] => {}
            [Part::Name(sc)] if def.column_type == ColumnType::Super => {
                parent = parent.super_column(bytes_for(
                    sc,
                    def.comparator.as_ref(),
                    &self.ids,
                    self.now(),
                )?);
            }
            _ => return Err("count takes a row, or a super column of a Super CF".into()),
        }
        let n = self
            .db
            .get_count(self.ks()?, &key, &parent, &SlicePredicate::everything())
            .map_err(|e| e.to_string())?;
        Ok(vec![format!("{n} columns")])
    }

    fn del(&self, path: &Path) -> Out {
        let def = self.def(&path.cf)?;
        let depth = if def.column_type == ColumnType::Super {
            2
        } else {
            1
        };
        self.names_only(path, &def, depth)?;
        let (key, p) = self.column_path(path, &def)?;
        self.db
            .remove(self.ks()?, key, &p, None)
            .map_err(|e| e.to_string())?;
        Ok(vec![if path.parts.is_empty() {
            "row removed."
        } else {
            "column removed."
        }
        .into()])
    }

    fn list(
        &self,
        cf: &str,
        range: Option<(Option<Lit>, Option<Lit>)>,
        limit: Option<usize>,
    ) -> Out {
        let def = self.def(cf)?;
        if limit == Some(0) {
            return Ok(vec![String::new(), "0 Rows Returned.".into()]);
        }
        let (start, end) = match &range {
            Some((a, b)) => (
                a.as_ref().map(key_bytes).transpose()?.unwrap_or_default(),
                b.as_ref().map(key_bytes).transpose()?.unwrap_or_default(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        let rows = self
            .db
            .get_range_slices(
                self.ks()?,
                &ColumnParent::new(cf),
                &SliceRange::all().into(),
                &KeyRange::keys(start, end).count(limit.unwrap_or(100)),
            )
            .map_err(|e| e.to_string())?;
        Ok(self.rows_lines(&def, &rows))
    }

    /// Rows as `list` prints them: each key and its columns, then how many.
    fn rows_lines(&self, def: &ColumnFamilyDef, rows: &[supercolumn::KeySlice]) -> Vec<String> {
        let mut lines = Vec::new();
        for r in rows {
            lines.push("-------------------".into());
            lines.push(format!(
                "RowKey: {}",
                crate::format::key_text(&r.key, def.key_validation_class.as_deref())
            ));
            lines.extend(self.lines_of(def, &r.columns, false));
        }
        lines.push(String::new());
        lines.push(if rows.len() == 1 {
            "1 Row Returned.".into()
        } else {
            format!("{} Rows Returned.", rows.len())
        });
        lines
    }
}
