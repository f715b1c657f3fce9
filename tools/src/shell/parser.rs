//! Parses shell statements (cassandra-cli 0.7's language, SPEC §8) into [`Stmt`]s.
//!
//! Long because it holds the whole language: every statement's grammar and their tests.

use super::lexer::{advance_over, lex_at, statement_end, Pos, SyntaxError, Tok};

/// A literal as typed: its meaning (text, integer, UUID, bytes) depends on the comparator or
/// validator it is read by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lit {
    /// `'text'`.
    Str(String),
    /// A bare word: an integer, a UUID, a name.
    Word(String),
    /// `0x…`: raw bytes.
    Hex(String),
    /// `timeuuid()`: a fresh version-1 UUID.
    TimeUuid,
}

/// One `[…]` of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// `['name']`.
    Name(Lit),
    /// `['start':'finish']` (either side may be empty).
    Range(Option<Lit>, Option<Lit>),
}

/// `CF['key'][…][…]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// The column family.
    pub cf: String,
    /// The row key.
    pub key: Lit,
    /// What follows the key.
    pub parts: Vec<Part>,
}

/// One column of a `column_metadata` list: its properties, lower-cased names.
pub type ColumnMeta = Vec<(String, String)>;

/// A column family's `with` properties, and its `column_metadata` entries.
type CfProps = (Vec<(String, String)>, Vec<ColumnMeta>);

/// A shell statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// `use KS;`
    Use(String),
    /// `set CF['key']['col'] = value [with ttl = N];`
    Set {
        path: Path,
        value: Lit,
        ttl: Option<u32>,
    },
    /// `get CF['key'][…] [limit N] [reversed];`
    Get {
        path: Path,
        limit: Option<usize>,
        reversed: bool,
    },
    /// `get CF where col op value [and col op value]… [limit N];` (a secondary index query:
    /// one `=` at least on an indexed column; op is `=`, `>`, `>=`, `<` or `<=`).
    GetWhere {
        cf: String,
        exprs: Vec<(String, String, Lit)>,
        limit: Option<usize>,
    },
    /// `count CF['key'][['sc']];`
    Count(Path),
    /// `del CF['key'][…];`
    Del(Path),
    /// `list CF[['start':'end']] [limit N];`
    List {
        cf: String,
        range: Option<(Option<Lit>, Option<Lit>)>,
        limit: Option<usize>,
    },
    /// `create keyspace KS;`
    CreateKeyspace(String),
    /// `create column family CF [with p = v [and p = v]…];`, where `column_metadata = [{…},
    /// …]` lists columns as `{column_name: c, validation_class: T, index_type: KEYS,
    /// index_name: n}`.
    CreateColumnFamily {
        name: String,
        props: Vec<(String, String)>,
        columns: Vec<ColumnMeta>,
    },
    /// `update column family CF with column_metadata = [{…}, …];`: indexes added.
    UpdateColumnFamily {
        name: String,
        columns: Vec<ColumnMeta>,
    },
    /// `describe keyspace [KS];`
    Describe(Option<String>),
    /// `show keyspaces;`
    ShowKeyspaces,
    /// `drop column family CF;`
    DropColumnFamily(String),
    /// `drop keyspace KS;`
    DropKeyspace(String),
    /// `help [statement];`
    Help(Option<String>),
    /// `flush [CF];`
    Flush(Option<String>),
    /// `compact [CF];`
    Compact(Option<String>),
    /// `quit;` or `exit;`: the statements after it do not run.
    Quit,
}

struct P {
    toks: Vec<(Tok, Pos)>,
    at: usize,
    end: Pos,
}

impl P {
    fn pos(&self) -> Pos {
        self.toks.get(self.at).map_or(self.end, |t| t.1)
    }

    fn err<T>(&self, message: impl Into<String>) -> Result<T, SyntaxError> {
        Err(SyntaxError {
            pos: self.pos(),
            message: message.into(),
        })
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.0)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w))
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let yes = self.is_word(w);
        if yes {
            self.at += 1;
        }
        yes
    }

    fn expect_word(&mut self, w: &str) -> Result<(), SyntaxError> {
        if self.eat_word(w) {
            Ok(())
        } else {
            self.found(&format!("'{w}'"))
        }
    }

    fn found<T>(&self, wanted: &str) -> Result<T, SyntaxError> {
        match self.peek() {
            Some(t) => self.err(format!(
                "expected {wanted}, found {}",
                quoted(&t.to_string())
            )),
            None => self.err(format!("expected {wanted}, found the end of the statement")),
        }
    }

    fn punct(&mut self, c: char) -> Result<(), SyntaxError> {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.at += 1;
            Ok(())
        } else {
            self.found(&format!("'{c}'"))
        }
    }

    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }

    fn ident(&mut self, what: &str) -> Result<String, SyntaxError> {
        match self.peek() {
            Some(Tok::Word(w)) => {
                let w = w.clone();
                self.at += 1;
                Ok(w)
            }
            Some(Tok::Str(s)) => {
                let s = s.clone();
                self.at += 1;
                Ok(s)
            }
            _ => self.found(what),
        }
    }

    fn number(&mut self, what: &str) -> Result<u64, SyntaxError> {
        match self.peek() {
            Some(Tok::Word(w)) => match w.parse() {
                Ok(n) => {
                    self.at += 1;
                    Ok(n)
                }
                Err(_) => self.err(format!("{what} must be a whole number, not '{w}'")),
            },
            _ => self.found(what),
        }
    }

    fn lit(&mut self) -> Result<Lit, SyntaxError> {
        match self.peek().cloned() {
            Some(Tok::Str(s)) => {
                self.at += 1;
                Ok(Lit::Str(s))
            }
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("timeuuid") => {
                self.at += 1;
                self.punct('(')?;
                self.punct(')')?;
                Ok(Lit::TimeUuid)
            }
            Some(Tok::Word(w)) => {
                self.at += 1;
                match w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
                    Some(h) => Ok(Lit::Hex(h.to_string())),
                    None => Ok(Lit::Word(w)),
                }
            }
            _ => self.found("a value"),
        }
    }

    fn path(&mut self) -> Result<Path, SyntaxError> {
        let cf = self.ident("a column family")?;
        self.punct('[')?;
        let key = self.lit()?;
        self.punct(']')?;
        let mut parts = Vec::new();
        while self.is_punct('[') {
            self.at += 1;
            let first = if self.is_punct(':') {
                None
            } else {
                Some(self.lit()?)
            };
            if self.is_punct(':') {
                self.at += 1;
                let second = if self.is_punct(']') {
                    None
                } else {
                    Some(self.lit()?)
                };
                parts.push(Part::Range(first, second));
            } else {
                match first {
                    Some(l) => parts.push(Part::Name(l)),
                    None => return self.found("a name or ':'"),
                }
            }
            self.punct(']')?;
        }
        Ok(Path { cf, key, parts })
    }

    /// `p = v [and p = v]…`, with `column_metadata = [{k: v, …}, …]` taken apart.
    fn cf_props(&mut self) -> Result<CfProps, SyntaxError> {
        let (mut props, mut columns) = (Vec::new(), Vec::new());
        loop {
            let k = self.ident("a property")?.to_ascii_lowercase();
            self.punct('=')?;
            if k == "column_metadata" {
                self.punct('[')?;
                while !self.is_punct(']') {
                    self.punct('{')?;
                    let mut column = Vec::new();
                    while !self.is_punct('}') {
                        let name = self.ident("a column property")?.to_ascii_lowercase();
                        self.punct(':')?;
                        column.push((name, self.ident("a column property value")?));
                        if !self.is_punct('}') {
                            self.punct(',')?;
                        }
                    }
                    self.punct('}')?;
                    columns.push(column);
                    if !self.is_punct(']') {
                        self.punct(',')?;
                    }
                }
                self.punct(']')?;
            } else {
                props.push((k, self.ident("a property value")?));
            }
            if !self.eat_word("and") {
                return Ok((props, columns));
            }
        }
    }

    /// The rest of `get CF where …`.
    fn get_where(&mut self) -> Result<Stmt, SyntaxError> {
        let cf = self.ident("a column family")?;
        self.expect_word("where")?;
        let mut exprs = Vec::new();
        loop {
            let column = self.ident("a column name")?;
            let op = match self.peek() {
                Some(Tok::Punct('=')) => "=",
                Some(Tok::Punct('>')) => ">",
                Some(Tok::Punct('<')) => "<",
                _ => return self.found("=, >, >=, < or <="),
            };
            self.at += 1;
            let op = if op != "=" && self.is_punct('=') {
                self.at += 1;
                if op == ">" {
                    ">="
                } else {
                    "<="
                }
            } else {
                op
            };
            exprs.push((column, op.to_string(), self.lit()?));
            if !self.eat_word("and") {
                break;
            }
        }
        let limit = if self.eat_word("limit") {
            Some(self.number("a limit")? as usize)
        } else {
            None
        };
        Ok(Stmt::GetWhere { cf, exprs, limit })
    }

    // Long because it is one match with an arm per shell command.
    fn statement(&mut self) -> Result<Stmt, SyntaxError> {
        let Some(Tok::Word(w)) = self.peek().cloned() else {
            return self.found("a statement");
        };
        self.at += 1;
        let stmt = match w.to_ascii_lowercase().as_str() {
            "use" => Stmt::Use(self.ident("a keyspace")?),
            "set" => {
                let path = self.path()?;
                self.punct('=')?;
                let value = self.lit()?;
                let ttl = if self.eat_word("with") {
                    self.expect_word("ttl")?;
                    self.punct('=')?;
                    let n = self.number("a TTL")?;
                    match u32::try_from(n) {
                        Ok(t) if t > 0 => Some(t),
                        _ => return self.err(format!("a TTL must be from 1 to {}", u32::MAX)),
                    }
                } else {
                    None
                };
                Stmt::Set { path, value, ttl }
            }
            "get" if matches!(self.toks.get(self.at + 1), Some((Tok::Word(w), _)) if w.eq_ignore_ascii_case("where")) => {
                self.get_where()?
            }
            "get" => {
                let path = self.path()?;
                let (mut limit, mut reversed) = (None, false);
                loop {
                    if self.eat_word("limit") {
                        limit = Some(self.number("a limit")? as usize);
                    } else if self.eat_word("reversed") {
                        reversed = true;
                    } else {
                        break;
                    }
                }
                Stmt::Get {
                    path,
                    limit,
                    reversed,
                }
            }
            "count" => Stmt::Count(self.path()?),
            "del" | "delete" => Stmt::Del(self.path()?),
            "list" => {
                let cf = self.ident("a column family")?;
                let mut range = None;
                if self.is_punct('[') {
                    self.at += 1;
                    let a = if self.is_punct(':') {
                        None
                    } else {
                        Some(self.lit()?)
                    };
                    self.punct(':')?;
                    let b = if self.is_punct(']') {
                        None
                    } else {
                        Some(self.lit()?)
                    };
                    self.punct(']')?;
                    range = Some((a, b));
                }
                let limit = if self.eat_word("limit") {
                    Some(self.number("a limit")? as usize)
                } else {
                    None
                };
                Stmt::List { cf, range, limit }
            }
            "update" => {
                self.expect_word("column")?;
                self.expect_word("family")?;
                let name = self.ident("a column family name")?;
                self.expect_word("with")?;
                let (props, columns) = self.cf_props()?;
                if let Some((k, _)) = props.first() {
                    return self.err(format!(
                        "update column family changes column_metadata only, not '{k}'"
                    ));
                }
                Stmt::UpdateColumnFamily { name, columns }
            }
            "create" => {
                if self.eat_word("keyspace") {
                    Stmt::CreateKeyspace(self.ident("a keyspace name")?)
                } else {
                    self.expect_word("column")?;
                    self.expect_word("family")?;
                    let name = self.ident("a column family name")?;
                    let (props, columns) = if self.eat_word("with") {
                        self.cf_props()?
                    } else {
                        (Vec::new(), Vec::new())
                    };
                    Stmt::CreateColumnFamily {
                        name,
                        props,
                        columns,
                    }
                }
            }
            "describe" => {
                self.expect_word("keyspace")?;
                let ks = if self.peek().is_some() {
                    Some(self.ident("a keyspace")?)
                } else {
                    None
                };
                Stmt::Describe(ks)
            }
            "show" => {
                self.expect_word("keyspaces")?;
                Stmt::ShowKeyspaces
            }
            "drop" => {
                if self.eat_word("keyspace") {
                    Stmt::DropKeyspace(self.ident("a keyspace")?)
                } else {
                    self.expect_word("column")?;
                    self.expect_word("family")?;
                    Stmt::DropColumnFamily(self.ident("a column family")?)
                }
            }
            "quit" | "exit" => Stmt::Quit,
            "help" | "?" => Stmt::Help(
                self.peek()
                    .is_some()
                    .then(|| self.ident("a statement"))
                    .transpose()?,
            ),
            "flush" => Stmt::Flush(
                self.peek()
                    .is_some()
                    .then(|| self.ident("a column family"))
                    .transpose()?,
            ),
            "compact" => Stmt::Compact(
                self.peek()
                    .is_some()
                    .then(|| self.ident("a column family"))
                    .transpose()?,
            ),
            other => {
                return Err(SyntaxError {
                    pos: self.toks[self.at - 1].1,
                    message: format!("unknown statement '{}'", quoted(other)),
                })
            }
        };
        if self.peek().is_some() {
            return self.found("the end of the statement (';')");
        }
        Ok(stmt)
    }
}

/// One statement of the input: where it starts, and the statement or what is wrong with it.
pub type Parsed = (Pos, Result<Stmt, SyntaxError>);

/// Parses one statement's text, which starts at `start` and ends with its `;`: `None` for an
/// empty statement (a lone `;`).
pub fn parse_statement(text: &str, start: Pos) -> Option<Parsed> {
    let toks = match lex_at(text, start) {
        Ok(t) => t,
        Err(e) => return Some((e.pos, Err(e))),
    };
    let (end, toks) = match toks.split_last() {
        Some(((Tok::Punct(';'), end), rest)) => (*end, rest.to_vec()),
        _ => (advance_over(text, start), toks),
    };
    let first = toks.first()?.1;
    let mut p = P { toks, at: 0, end };
    Some((first, p.statement()))
}

/// Splits input into statements at `;` (outside strings and comments) and parses each. Each
/// item is the statement's position and either the statement or what is wrong with it (a bad
/// statement does not keep the others from parsing). The flag says whether text after the last
/// `;` holds an unfinished statement.
pub fn parse(input: &str) -> (Vec<Parsed>, bool) {
    let mut out = Vec::new();
    let (mut rest, mut pos) = (input, Pos { line: 1, col: 1 });
    while let Some(end) = statement_end(rest) {
        out.extend(parse_statement(&rest[..end], pos));
        pos = advance_over(&rest[..end], pos);
        rest = &rest[end..];
    }
    let unfinished = lex_at(rest, pos).map_or(true, |t| !t.is_empty());
    (out, unfinished)
}

/// Shortens a piece of user input quoted in a message.
pub fn quoted(s: &str) -> String {
    const MAX: usize = 40;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> Result<Stmt, SyntaxError> {
        let (mut v, rest) = parse(s);
        assert!(!rest);
        v.remove(0).1
    }

    #[test]
    fn statements_of_spec_section_8() {
        assert_eq!(
            one("use Keyspace1;").unwrap(),
            Stmt::Use("Keyspace1".into())
        );
        let s = one("set Super1['phatduckk']['homeAddress']['city'] = 'san francisco';").unwrap();
        assert!(matches!(s, Stmt::Set { ref path, .. } if path.parts.len() == 2));
        let g = one("get Standard2['jsmith'][:] limit 10 reversed;").unwrap();
        assert!(
            matches!(g, Stmt::Get { limit: Some(10), reversed: true, ref path } if path.parts == [Part::Range(None, None)])
        );
        let g = one("get Standard2['jsmith']['a':'m'] limit 5;").unwrap();
        assert!(matches!(g, Stmt::Get { limit: Some(5), .. }));
        assert!(matches!(
            one("list Standard2['a':'z'] limit 20;").unwrap(),
            Stmt::List {
                limit: Some(20),
                range: Some(_),
                ..
            }
        ));
        let c = one("create column family Comments with column_type = Super and comparator = TimeUUIDType and subcomparator = BytesType;").unwrap();
        assert!(matches!(c, Stmt::CreateColumnFamily { ref props, .. } if props.len() == 3));
        assert!(matches!(
            one("set Timeline['u'][timeuuid()] = 0x1f with ttl = 30;").unwrap(),
            Stmt::Set {
                ttl: Some(30),
                value: Lit::Hex(_),
                ..
            }
        ));
        assert_eq!(one("flush;").unwrap(), Stmt::Flush(None));
        assert_eq!(one("help set;").unwrap(), Stmt::Help(Some("set".into())));
    }

    #[test]
    fn errors_say_what_and_where() {
        let e = one("get Standard2['jsmith' limit 5;").unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (1, 24));
        assert!(e.message.contains("expected ']'"), "{e}");
        let e = one("frobnicate x;").unwrap_err();
        assert!(e.message.contains("unknown statement"));
        let e = one("set S['k']['c'] = 'v' with ttl = 0;").unwrap_err();
        assert!(e.message.contains("TTL"));
    }
}
