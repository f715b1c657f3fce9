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
    /// Punctuation: `[ ] : = ; ( ) ,`.
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

/// Tokenizes `input`.
pub fn lex(input: &str) -> Result<Vec<(Tok, Pos)>, SyntaxError> {
    let mut out = Vec::new();
    let mut chars = input.chars().peekable();
    let (mut line, mut col) = (1usize, 1usize);
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
            '[' | ']' | ':' | '=' | ';' | '(' | ')' | ',' => {
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
                    if c.is_whitespace() || "[]:=;(),'\"".contains(c) {
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
}
