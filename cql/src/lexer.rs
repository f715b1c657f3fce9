//! CQL text to tokens, each with the line and column it starts at (1-based), so a syntax error
//! names its place. Keywords are not told apart here: a word is an identifier until the parser
//! asks for a keyword (keywords are case-insensitive, identifiers fold to lower case unless
//! double-quoted). This file must not know what statements mean.

use super::error::CqlError;

/// A token and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// What it is.
    pub kind: Tok,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub col: usize,
}

/// The kinds of token.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A bare word (keyword or identifier), as typed.
    Word(String),
    /// A `"quoted"` identifier, case kept.
    Quoted(String),
    /// A `'string'` literal (`''` inside is one quote).
    Str(String),
    /// An integer or decimal literal (with sign, exponent), as typed.
    Number(String),
    /// A duration literal in its standard form (`1h30m`), as typed.
    Duration(String),
    /// `0x…` blob literal, as hex digits.
    Hex(String),
    /// A UUID literal.
    Uuid(String),
    /// `?` bind marker.
    Question,
    /// `:name` bind marker.
    Named(String),
    /// Punctuation or an operator: `( ) , ; . = < > <= >= != { } [ ] : + - *`.
    Sym(&'static str),
}

impl Tok {
    /// A short description for error messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Word(w) => format!("'{w}'"),
            Tok::Quoted(w) => format!("\"{w}\""),
            Tok::Str(s) => format!("string '{s}'"),
            Tok::Number(n) => format!("number {n}"),
            Tok::Duration(d) => format!("duration {d}"),
            Tok::Hex(h) => format!("blob 0x{h}"),
            Tok::Uuid(u) => format!("uuid {u}"),
            Tok::Question => "'?'".into(),
            Tok::Named(n) => format!("':{n}'"),
            Tok::Sym(s) => format!("'{s}'"),
        }
    }
}

/// Whether `run` (letters and digits, starting with a digit) is a duration in its standard
/// form: quantities each followed by a unit (`1h30m`, `2d`, `3mo`), units in any case.
fn is_duration(run: &str) -> bool {
    const UNITS: [&str; 10] = ["y", "mo", "w", "d", "h", "m", "s", "ms", "us", "ns"];
    let mut rest = run;
    let mut any = false;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit_len = rest[digits..]
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len() - digits);
        let unit = rest[digits..digits + unit_len].to_ascii_lowercase();
        if digits == 0 || !UNITS.contains(&unit.as_str()) {
            return false;
        }
        any = true;
        rest = &rest[digits + unit_len..];
    }
    any
}

const SYMBOLS: [&str; 21] = [
    "<=", ">=", "!=", "(", ")", ",", ";", ".", "=", "<", ">", "{", "}", "[", "]", ":", "+", "-",
    "*", "/", "%",
];

/// Longest statement text accepted, so a hostile input cannot make the lexer allocate without end.
pub const MAX_TEXT: usize = 16 << 20;

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// Splits `text` into tokens; comments (`--`, `//`, `/* */`) and whitespace are skipped.
// Long because it is one loop over the text with an arm per kind of token; split, the arms would
// pass the cursor and the token list back and forth.
pub fn tokenize(text: &str) -> Result<Vec<Token>, CqlError> {
    if text.len() > MAX_TEXT {
        return Err(CqlError::syntax(1, 1, "statement text longer than 16 MiB"));
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1usize, 1usize);
    let advance = |i: &mut usize, line: &mut usize, col: &mut usize, n: usize| {
        for _ in 0..n {
            if chars.get(*i) == Some(&'\n') {
                *line += 1;
                *col = 1;
            } else {
                *col += 1;
            }
            *i += 1;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let (tl, tc) = (line, col);
        if c.is_whitespace() {
            advance(&mut i, &mut line, &mut col, 1);
            continue;
        }
        if (c == '-' && next == Some('-')) || (c == '/' && next == Some('/')) {
            while i < chars.len() && chars[i] != '\n' {
                advance(&mut i, &mut line, &mut col, 1);
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            advance(&mut i, &mut line, &mut col, 2);
            loop {
                if i >= chars.len() {
                    return Err(CqlError::syntax(tl, tc, "unterminated comment"));
                }
                if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    advance(&mut i, &mut line, &mut col, 2);
                    break;
                }
                advance(&mut i, &mut line, &mut col, 1);
            }
            continue;
        }
        let token = |kind| Token {
            kind,
            line: tl,
            col: tc,
        };
        if c == '\'' || c == '"' {
            let mut s = String::new();
            advance(&mut i, &mut line, &mut col, 1);
            loop {
                match chars.get(i) {
                    None => {
                        let what = if c == '\'' { "string" } else { "quoted name" };
                        return Err(CqlError::syntax(tl, tc, format!("unterminated {what}")));
                    }
                    Some(&q) if q == c => {
                        if chars.get(i + 1) == Some(&c) {
                            s.push(c);
                            advance(&mut i, &mut line, &mut col, 2);
                        } else {
                            advance(&mut i, &mut line, &mut col, 1);
                            break;
                        }
                    }
                    Some(&ch) => {
                        s.push(ch);
                        advance(&mut i, &mut line, &mut col, 1);
                    }
                }
            }
            // A quoted name holds at least one character (Cassandra's grammar).
            if c == '"' && s.is_empty() {
                return Err(CqlError::syntax(tl, tc, "an empty quoted name"));
            }
            out.push(token(if c == '\'' {
                Tok::Str(s)
            } else {
                Tok::Quoted(s)
            }));
            continue;
        }
        if c == '0' && matches!(next, Some('x' | 'X')) {
            let mut j = i + 2;
            while j < chars.len() && chars[j].is_ascii_hexdigit() {
                j += 1;
            }
            let hex: String = chars[i + 2..j].iter().collect();
            let n = j - i;
            advance(&mut i, &mut line, &mut col, n);
            out.push(token(Tok::Hex(hex)));
            continue;
        }
        if c == '_' {
            // A CQL identifier starts with a letter; quoted, a name may start with anything.
            return Err(CqlError::syntax(
                line,
                col,
                "no viable alternative at character '_' (quote a name that starts with '_')",
            ));
        }
        if c.is_ascii_alphanumeric() {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            // A UUID starts like a word or a number: take it whole when 36 characters match.
            let maybe: String = chars[i..(i + 36).min(chars.len())].iter().collect();
            if is_uuid(&maybe) {
                advance(&mut i, &mut line, &mut col, 36);
                out.push(token(Tok::Uuid(maybe)));
                continue;
            }
            // A quantity followed by a unit, and more of them: a duration (`1h30m`).
            let run: String = chars[i..j].iter().collect();
            if c.is_ascii_digit() && is_duration(&run) {
                let n = j - i;
                advance(&mut i, &mut line, &mut col, n);
                out.push(token(Tok::Duration(run)));
                continue;
            }
            if c.is_ascii_digit() {
                let mut j = i;
                let mut seen_dot = false;
                while j < chars.len() {
                    let d = chars[j];
                    if d.is_ascii_digit() {
                        j += 1;
                    } else if d == '.'
                        && !seen_dot
                        && chars.get(j + 1).is_some_and(char::is_ascii_digit)
                    {
                        seen_dot = true;
                        j += 1;
                    } else if matches!(d, 'e' | 'E')
                        && (chars.get(j + 1).is_some_and(char::is_ascii_digit)
                            || (matches!(chars.get(j + 1), Some('+' | '-'))
                                && chars.get(j + 2).is_some_and(char::is_ascii_digit)))
                    {
                        j += 2;
                    } else {
                        break;
                    }
                }
                let number: String = chars[i..j].iter().collect();
                let n = j - i;
                advance(&mut i, &mut line, &mut col, n);
                out.push(token(Tok::Number(number)));
                continue;
            }
            let w: String = chars[i..j].iter().collect();
            let n = j - i;
            advance(&mut i, &mut line, &mut col, n);
            out.push(token(Tok::Word(w)));
            continue;
        }
        if c == '?' {
            advance(&mut i, &mut line, &mut col, 1);
            out.push(token(Tok::Question));
            continue;
        }
        if c == ':' && next.is_some_and(|n| n.is_ascii_alphabetic() || n == '_') {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            let name: String = chars[i + 1..j].iter().collect();
            let n = j - i;
            advance(&mut i, &mut line, &mut col, n);
            out.push(token(Tok::Named(name.to_lowercase())));
            continue;
        }
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        let sym = SYMBOLS
            .iter()
            .find(|s| s.len() == 2 && two == **s)
            .or_else(|| SYMBOLS.iter().find(|s| s.len() == 1 && s.starts_with(c)));
        if let Some(sym) = sym {
            advance(&mut i, &mut line, &mut col, sym.chars().count());
            out.push(token(Tok::Sym(sym)));
            continue;
        }
        return Err(CqlError::syntax(
            tl,
            tc,
            format!("unexpected character '{c}'"),
        ));
    }
    Ok(out)
}

/// Splits text into the statements it completes (each up to, not including, its `;`) and what
/// remains after the last `;`. A `;` inside a string, a quoted name or a comment does not end a
/// statement; text that does not lex (an unterminated string) stays in the remainder, so the
/// statements before it still run.
pub fn split_statements(text: &str) -> (Vec<String>, String) {
    #[derive(PartialEq)]
    enum In {
        Code,
        Quote(char),
        LineComment,
        BlockComment,
    }
    let mut state = In::Code;
    // Whether the statement being read opens a batch (asked once, at its first `;`).
    let mut batch: Option<bool> = None;
    let mut done = Vec::new();
    let mut start = 0;
    let b: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < b.len() {
        let (at, c) = b[i];
        let next = b.get(i + 1).map(|x| x.1);
        match state {
            In::Code => match c {
                '\'' | '"' => state = In::Quote(c),
                '-' if next == Some('-') => state = In::LineComment,
                '/' if next == Some('/') => state = In::LineComment,
                '/' if next == Some('*') => {
                    state = In::BlockComment;
                    i += 1;
                }
                // A batch's statements end in `;` too: it ends at `APPLY BATCH;`.
                ';' if !*batch.get_or_insert_with(|| opens_batch(&text[start..at]))
                    || closes_batch(&text[start..at]) =>
                {
                    done.push(text[start..at].to_string());
                    start = at + 1;
                    batch = None;
                }
                _ => {}
            },
            In::Quote(q) if c == q => {
                if next == Some(q) {
                    i += 1;
                } else {
                    state = In::Code;
                }
            }
            In::LineComment if c == '\n' => state = In::Code,
            In::BlockComment if c == '*' && next == Some('/') => {
                state = In::Code;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    (done, text[start..].to_string())
}

/// Whether `statement` opens a `BEGIN [UNLOGGED | LOGGED | COUNTER] BATCH`: its `;`s then end
/// the batch's statements, not the batch, until [`closes_batch`], as cqlsh reads it.
fn opens_batch(statement: &str) -> bool {
    let Ok(tokens) = tokenize(statement) else {
        return false;
    };
    let word = |i: usize, w: &str| matches!(tokens.get(i).map(|t| &t.kind), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w));
    word(0, "begin")
        && (word(1, "batch")
            || (word(2, "batch") && ["unlogged", "logged", "counter"].iter().any(|k| word(1, k))))
}

/// Whether text up to a `;` ends with `APPLY BATCH` (read from its end only, so a batch of
/// many statements is not read again at each of them).
fn closes_batch(statement: &str) -> bool {
    let mut words = statement.split_whitespace().rev();
    matches!(
        (words.next(), words.next()),
        (Some(b), Some(a)) if b.eq_ignore_ascii_case("batch") && a.eq_ignore_ascii_case("apply")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_ends_at_apply_batch() {
        let (done, rest) = split_statements(
            "BEGIN UNLOGGED BATCH INSERT INTO t (k) VALUES (1); UPDATE t SET v = ';' WHERE k = 2;\n\
             APPLY BATCH; SELECT * FROM t; begin batch insert into t (k) values (3);",
        );
        assert_eq!(done.len(), 2, "{done:?}");
        assert!(done[0].trim_end().ends_with("APPLY BATCH"), "{done:?}");
        assert_eq!(done[1].trim(), "SELECT * FROM t");
        assert_eq!(rest.trim(), "begin batch insert into t (k) values (3);");
    }

    #[test]
    fn statements_split_at_semicolons_outside_quotes_and_comments() {
        let (done, rest) = split_statements("a ';' \"x;y\"; -- c;\nb /* ; */; c 'open;");
        assert_eq!(done, ["a ';' \"x;y\"", " -- c;\nb /* ; */"]);
        assert_eq!(rest, " c 'open;");
    }

    fn kinds(s: &str) -> Vec<Tok> {
        tokenize(s).unwrap().into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn words_literals_and_symbols() {
        assert_eq!(
            kinds("SELECT \"Mixed\" FROM t WHERE a >= -1.5e3 AND b = 'it''s' -- c\n;"),
            [
                Tok::Word("SELECT".into()),
                Tok::Quoted("Mixed".into()),
                Tok::Word("FROM".into()),
                Tok::Word("t".into()),
                Tok::Word("WHERE".into()),
                Tok::Word("a".into()),
                Tok::Sym(">="),
                Tok::Sym("-"),
                Tok::Number("1.5e3".into()),
                Tok::Word("AND".into()),
                Tok::Word("b".into()),
                Tok::Sym("="),
                Tok::Str("it's".into()),
                Tok::Sym(";"),
            ]
        );
        assert_eq!(
            kinds("0xCAFE 5f0d6a10-f487-11e2-801f-df9895e5d0f8 ? :id"),
            [
                Tok::Hex("CAFE".into()),
                Tok::Uuid("5f0d6a10-f487-11e2-801f-df9895e5d0f8".into()),
                Tok::Question,
                Tok::Named("id".into()),
            ]
        );
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = tokenize("SELECT *\nFROM t WHERE a = 'open").unwrap_err();
        assert_eq!(
            e.to_string(),
            "SyntaxException: line 2:18 unterminated string"
        );
        assert!(tokenize("a # b").is_err());
        assert!(tokenize("/* never closed").is_err());
    }

    #[test]
    fn a_quoted_name_holds_a_character() {
        assert!(matches!(
            tokenize("CREATE TYPE \"\" (a int)"),
            Err(CqlError::Syntax { .. })
        ));
        assert_eq!(kinds("\"\"\"\""), [Tok::Quoted("\"".into())]);
    }
}
