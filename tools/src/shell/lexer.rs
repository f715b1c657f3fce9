//! Splits shell input into tokens, each with the line and column it starts at, so a bad
//! statement can be reported where it is.

use std::fmt;

/// A token of the shell language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// A bare word: a keyword, a name, or an unquoted literal such as `-5` or a UUID.
    Word(String),
    /// A quoted string (`'…'`, with `\'` and `''` for a quote).
    Str(String),
    /// Punctuation: `[ ] : = ; ( ) , { } < >`.
    Punct(char),
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) => write!(f, "'{w}'"),
            Tok::Str(s) => write!(f, "string '{s}'"),
            Tok::Punct(c) => write!(f, "'{c}'"),
        }
    }
}

/// Where in the input something is (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Pos {
    /// Line.
    pub line: usize,
    /// Column.
    pub col: usize,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.col)
    }
}

/// A problem in the input, with where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Where.
    pub pos: Pos,
    /// What.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.message, self.pos)
    }
}

/// The byte offset just past the first `;` of `input` that ends a statement (one outside
/// strings and `--` comments), or `None` while `input` holds no complete statement: more input
/// may still finish it (a string or statement left open at the end).
pub fn statement_end(input: &str) -> Option<usize> {
    let mut it = input.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        match c {
            ';' => return Some(i + 1),
            '-' if it.peek().is_some_and(|(_, n)| *n == '-') => {
                for (_, c) in it.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '\'' | '"' => loop {
                match it.next() {
                    None => return None,
                    Some((_, '\\')) => {
                        it.next();
                    }
                    Some((_, q)) if q == c => {
                        if it.peek().is_some_and(|(_, n)| *n == c) {
                            it.next();
                        } else {
                            break;
                        }
                    }
                    Some(_) => {}
                }
            },
            _ => {}
        }
    }
    None
}

/// The position just after `text`, which starts at `start`.
pub fn advance_over(text: &str, start: Pos) -> Pos {
    let mut p = start;
    for c in text.chars() {
        if c == '\n' {
            p.line += 1;
            p.col = 1;
        } else {
            p.col += 1;
        }
    }
    p
}

/// Tokenizes `input`.
pub fn lex(input: &str) -> Result<Vec<(Tok, Pos)>, SyntaxError> {
    lex_at(input, Pos { line: 1, col: 1 })
}

/// Tokenizes `input`, which starts at `start` of a longer text.
// Long because it is one loop over the text with an arm per kind of token.
pub fn lex_at(input: &str, start: Pos) -> Result<Vec<(Tok, Pos)>, SyntaxError> {
    let mut out = Vec::new();
    let mut chars = input.chars().peekable();
    let (mut line, mut col) = (start.line, start.col);
    let advance = |c: char, line: &mut usize, col: &mut usize| {
        if c == '\n' {
            *line += 1;
            *col = 1;
        } else {
            *col += 1;
        }
    };
    while let Some(&c) = chars.peek() {
        let pos = Pos { line, col };
        if c.is_whitespace() {
            chars.next();
            advance(c, &mut line, &mut col);
            continue;
        }
        if c == '-' {
            // `--` comments run to the end of the line.
            let mut it = chars.clone();
            it.next();
            if it.peek() == Some(&'-') {
                for c in chars.by_ref() {
                    advance(c, &mut line, &mut col);
                    if c == '\n' {
                        break;
                    }
                }
                continue;
            }
        }
        match c {
            '[' | ']' | ':' | '=' | ';' | '(' | ')' | ',' | '{' | '}' | '<' | '>' => {
                chars.next();
                advance(c, &mut line, &mut col);
                out.push((Tok::Punct(c), pos));
            }
            '\'' | '"' => {
                let quote = c;
                chars.next();
                advance(c, &mut line, &mut col);
                let mut s = String::new();
                loop {
                    let Some(c) = chars.next() else {
                        return Err(SyntaxError {
                            pos,
                            message: "unterminated string".into(),
                        });
                    };
                    advance(c, &mut line, &mut col);
                    if c == '\\' {
                        if let Some(n) = chars.next() {
                            advance(n, &mut line, &mut col);
                            s.push(match n {
                                'n' => '\n',
                                't' => '\t',
                                other => other,
                            });
                        }
                    } else if c == quote {
                        if chars.peek() == Some(&quote) {
                            chars.next();
                            advance(quote, &mut line, &mut col);
                            s.push(quote);
                        } else {
                            break;
                        }
                    } else {
                        s.push(c);
                    }
                }
                out.push((Tok::Str(s), pos));
            }
            _ => {
                let mut w = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || "[]:=;(),{}<>'\"".contains(c) {
                        break;
                    }
                    w.push(c);
                    chars.next();
                    advance(c, &mut line, &mut col);
                }
                out.push((Tok::Word(w), pos));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_positions() {
        let t = lex("set Standard2['jsmith']['first'] = 'John';\n-- a comment\nget x;").unwrap();
        assert_eq!(t[0], (Tok::Word("set".into()), Pos { line: 1, col: 1 }));
        assert_eq!(t[3].0, Tok::Str("jsmith".into()));
        assert_eq!(t[3].1, Pos { line: 1, col: 15 });
        let last = t.last().unwrap();
        assert_eq!(last, &(Tok::Punct(';'), Pos { line: 3, col: 6 }));
        assert_eq!(lex("'it''s'").unwrap()[0].0, Tok::Str("it's".into()));
        assert!(lex("'open").is_err());
    }

    #[test]
    fn statements_end_at_semicolons_outside_strings_and_comments() {
        assert_eq!(statement_end("use K; get x;"), Some(6));
        assert_eq!(statement_end("set a['b;c'] = 'd'; x"), Some(19));
        assert_eq!(statement_end("-- a; comment\nuse K;"), Some(20));
        assert_eq!(statement_end("set a['it''s;'] = 'v'"), None);
        assert_eq!(statement_end("set a['open;"), None);
        assert_eq!(statement_end("use K"), None);
        assert_eq!(statement_end("'a\\';' ;"), Some(8));
    }
}
