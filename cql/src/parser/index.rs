//! `CREATE [CUSTOM] INDEX [USING 'class']` and `DROP INDEX`: their names, target and options. `mod.rs`
//! dispatches on the statement's first words; this file only parses.

use super::super::ast::{IndexOn, IndexTarget, Statement};
use super::super::error::CqlError;
use super::super::lexer::Tok;
use super::super::types::Literal;
use super::Parser;

impl Parser {
    /// The rest of `CREATE [CUSTOM] INDEX` (`custom`: the word was there).
    pub(super) fn create_index(&mut self, custom: bool) -> Result<Statement, CqlError> {
        let if_not_exists = self.if_not_exists()?;
        let name = if self.eat_word("on") {
            None
        } else {
            let name = self.ident()?;
            if !self.eat_word("on") {
                return Err(self.unexpected("ON"));
            }
            Some(name)
        };
        let table = self.table_name()?;
        self.sym("(")?;
        let target = self.index_target()?;
        self.sym(")")?;
        let mut class = None;
        if self.eat_word("using") {
            class = Some(self.string()?);
        }
        if custom && class.is_none() {
            return Err(self.unexpected("USING 'class' (a CUSTOM index names its class)"));
        }
        // Cassandra 5 names an index's implementation after USING without CUSTOM: 'sai', or
        // 'legacy_local_table' for the index `CREATE INDEX` makes without it.
        if !custom
            && class
                .as_deref()
                .is_some_and(|c| c.eq_ignore_ascii_case("legacy_local_table"))
        {
            class = None;
        }
        let mut options = Vec::new();
        if self.eat_word("with") {
            self.word("options")?;
            self.sym("=")?;
            let Literal::Map(pairs) = self.literal()? else {
                return Err(self.unexpected("a map of options"));
            };
            for (k, v) in pairs {
                let Literal::Str(k) = k else {
                    return Err(CqlError::invalid("index option names are strings"));
                };
                options.push((k, v));
            }
        }
        Ok(Statement::CreateIndex {
            name,
            table,
            target,
            if_not_exists,
            class,
            options,
        })
    }

    /// `c`, `values(c)`, `keys(c)`, `entries(c)` or `full(c)`.
    fn index_target(&mut self) -> Result<IndexTarget, CqlError> {
        let on = [
            ("values", IndexOn::Values),
            ("keys", IndexOn::Keys),
            ("entries", IndexOn::Entries),
            ("full", IndexOn::Full),
        ]
        .into_iter()
        .find(|(w, _)| self.is_word(w) && self.peek_at(1) == Some(&Tok::Sym("(")));
        if let Some((_, on)) = on {
            self.pos += 1;
            self.sym("(")?;
            let column = self.ident()?;
            self.sym(")")?;
            return Ok(IndexTarget {
                column,
                on,
                explicit: true,
            });
        }
        Ok(IndexTarget {
            column: self.ident()?,
            on: IndexOn::Values,
            explicit: false,
        })
    }

    /// The rest of `DROP INDEX`.
    pub(super) fn drop_index(&mut self) -> Result<Statement, CqlError> {
        let if_exists = self.if_exists()?;
        Ok(Statement::DropIndex {
            if_exists,
            index: self.table_name()?,
        })
    }
}
