//! The parser's statements that read and write rows: `INSERT`, `UPDATE`, `DELETE`, `SELECT`
//! and `BATCH`, with their `USING`, `WHERE` and `IF` clauses.

use super::super::ast::{
    BatchKind, ColumnCondition, Condition, Op, Relation, Select, Statement, Subscript, Term,
    TupleTerm, Using,
};
use super::super::error::CqlError;
use super::super::lexer::Tok;
use super::super::types::Literal;
use super::Parser;

/// The most combinations of `IN` values one statement may name.
pub const MAX_IN_COMBINATIONS: usize = 10_000;
impl Parser {
    fn using(&mut self) -> Result<Using, CqlError> {
        let mut u = Using::default();
        if self.eat_word("using") {
            loop {
                if self.eat_word("ttl") {
                    u.ttl = Some(self.term()?);
                } else if self.eat_word("timestamp") {
                    u.timestamp = Some(self.term()?);
                } else {
                    return Err(self.unexpected("TTL or TIMESTAMP"));
                }
                if !self.eat_word("and") {
                    break;
                }
            }
        }
        Ok(u)
    }

    pub(super) fn insert(&mut self) -> Result<Statement, CqlError> {
        self.word("into")?;
        let table = self.table_name()?;
        if self.eat_word("json") {
            let json = self.term()?;
            let mut default_unset = false;
            if self.eat_word("default") {
                default_unset = if self.eat_word("unset") {
                    true
                } else {
                    self.word("null")?;
                    false
                };
            }
            let condition = self.if_not_exists()?.then_some(Condition::NotExists);
            let using = self.using()?;
            return Ok(Statement::InsertJson {
                table,
                json,
                default_unset,
                using,
                condition,
            });
        }
        self.sym("(")?;
        let columns = self.ident_list()?;
        self.sym(")")?;
        self.word("values")?;
        self.sym("(")?;
        let mut values = vec![self.term()?];
        while self.eat_sym(",") {
            values.push(self.term()?);
        }
        self.sym(")")?;
        let condition = self.if_not_exists()?.then_some(Condition::NotExists);
        let using = self.using()?;
        Ok(Statement::Insert {
            table,
            columns,
            values,
            using,
            condition,
        })
    }

    fn relations(&mut self) -> Result<Vec<Relation>, CqlError> {
        let mut out = Vec::new();
        loop {
            if self.eat_word("token") {
                self.sym("(")?;
                let cols = self.ident_list()?;
                self.sym(")")?;
                let op = self.op()?;
                let of_key = self.eat_word("token");
                // `token(k1, k2) op token(v1, v2)`: a value per key column.
                let value = if of_key {
                    self.value_list()?
                } else {
                    vec![self.term()?]
                };
                out.push(Relation::Token(cols, op, value, of_key));
            } else if self.eat_sym("(") {
                let cols = self.ident_list()?;
                self.sym(")")?;
                if self.eat_word("in") {
                    let tuples = self.list_of(Self::tuple_term)?;
                    out.push(Relation::MultiIn(cols, tuples));
                } else {
                    let op = self.op()?;
                    out.push(Relation::Multi(cols, op, self.tuple_term()?));
                }
            } else {
                out.push(self.column_relation()?);
            }
            if !self.eat_word("and") {
                break;
            }
        }
        // Each combination of IN values is a key or a slice read (or written) on its own: the
        // product is bounded before anything is built from it.
        let product = out.iter().fold(1usize, |n, r| match r {
            Relation::In(_, vs) => n.saturating_mul(vs.len()),
            Relation::MultiIn(_, vs) => n.saturating_mul(vs.len()),
            _ => n,
        });
        if product > MAX_IN_COMBINATIONS {
            return Err(self.unexpected(&format!(
                "at most {MAX_IN_COMBINATIONS} combinations of IN values (these make {product})"
            )));
        }
        Ok(out)
    }

    /// `c op v`, `c[k] op v`, `c IN (…)`, `c IN ?` (and `c IS NOT NULL` and `c LIKE v`, refused).
    fn column_relation(&mut self) -> Result<Relation, CqlError> {
        let col = self.ident()?;
        if self.eat_sym("[") {
            let key = self.term()?;
            self.sym("]")?;
            let op = self.op()?;
            return Ok(Relation::Entry(col, key, op, self.term()?));
        }
        if self.is_word("is")
            && matches!(self.peek_at(1), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("not"))
        {
            // Cassandra takes it only in a materialized view's definition.
            return Err(CqlError::invalid(format!(
                "Unsupported restriction: {col} IS NOT NULL"
            )));
        }
        if self.eat_word("like") {
            // Cassandra answers LIKE only through a SASI index, which this has not.
            let pattern = self.term()?;
            return Err(CqlError::invalid(format!(
                "LIKE restriction is only supported on properly indexed columns. {col} LIKE {} is not valid.",
                pattern.text()
            )));
        }
        if !self.eat_word("in") {
            let op = self.op()?;
            return Ok(Relation::Compare(col, op, self.term()?));
        }
        if matches!(self.peek(), Some(Tok::Question | Tok::Named(_))) {
            let Term::Bind(b) = self.term()? else {
                return Err(self.unexpected("a bind marker"));
            };
            return Ok(Relation::InMarker(col, b));
        }
        Ok(Relation::In(col, self.value_list()?))
    }

    /// `(v, …)` after `IN`; `()` names nothing (Cassandra's answer: no rows, no writes).
    /// A multi-column relation's value: `(t1, t2, …)` whose items are all literals is one tuple
    /// literal; with a marker among them, a term per column; anything else (a marker for the
    /// whole tuple) one term.
    fn tuple_term(&mut self) -> Result<TupleTerm, CqlError> {
        if !self.eat_sym("(") {
            return Ok(TupleTerm::Whole(self.term()?));
        }
        let mut items = vec![self.term()?];
        while self.eat_sym(",") {
            items.push(self.term()?);
        }
        self.sym(")")?;
        let literals: Option<Vec<Literal>> = items
            .iter()
            .map(|t| match t {
                Term::Literal(l) => Some(l.clone()),
                Term::Bind(_) => None,
            })
            .collect();
        Ok(match literals {
            Some(l) => TupleTerm::Whole(Term::Literal(Literal::Tuple(l))),
            None => TupleTerm::Each(items),
        })
    }

    fn value_list(&mut self) -> Result<Vec<Term>, CqlError> {
        self.list_of(Self::term)
    }

    /// `(item, item, …)`, maybe empty, each item as `item` parses it.
    fn list_of<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T, CqlError>,
    ) -> Result<Vec<T>, CqlError> {
        self.sym("(")?;
        let mut vs = Vec::new();
        if !self.eat_sym(")") {
            vs.push(item(self)?);
            while self.eat_sym(",") {
                vs.push(item(self)?);
            }
            self.sym(")")?;
        }
        Ok(vs)
    }

    fn op(&mut self) -> Result<Op, CqlError> {
        let op = match self.peek() {
            Some(Tok::Sym("=")) => Op::Eq,
            Some(Tok::Sym("<")) => Op::Lt,
            Some(Tok::Sym("<=")) => Op::Le,
            Some(Tok::Sym(">")) => Op::Gt,
            Some(Tok::Sym(">=")) => Op::Ge,
            Some(Tok::Sym("!=")) => Op::Ne,
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("contains") => {
                self.pos += 1;
                return Ok(if self.eat_word("key") {
                    Op::ContainsKey
                } else {
                    Op::Contains
                });
            }
            _ => return Err(self.unexpected("a comparison (=, <, <=, >, >=, !=, CONTAINS)")),
        };
        self.pos += 1;
        Ok(op)
    }

    fn if_clause(&mut self) -> Result<Option<Condition>, CqlError> {
        if !self.eat_word("if") {
            return Ok(None);
        }
        if self.eat_word("exists") {
            return Ok(Some(Condition::Exists));
        }
        let mut conditions = Vec::new();
        loop {
            conditions.push(self.column_condition()?);
            if !self.eat_word("and") {
                break;
            }
        }
        Ok(Some(Condition::Columns(conditions)))
    }

    /// `c op v`, `m['k'] op v`, `u.f op v`, or any of them `IN (v, …)`.
    fn column_condition(&mut self) -> Result<ColumnCondition, CqlError> {
        let column = self.ident()?;
        let subscript = if self.eat_sym("[") {
            let element = self.term()?;
            self.sym("]")?;
            Some(Subscript::Element(element))
        } else if self.eat_sym(".") {
            Some(Subscript::Field(self.ident()?))
        } else {
            None
        };
        if self.eat_word("in") {
            let list_marker = matches!(self.peek(), Some(Tok::Question | Tok::Named(_)));
            let values = if list_marker {
                vec![self.term()?]
            } else {
                self.value_list()?
            };
            return Ok(ColumnCondition {
                column,
                subscript,
                op: Op::Eq,
                values,
                is_in: true,
                list_marker,
            });
        }
        let op = self.op()?;
        Ok(ColumnCondition {
            column,
            subscript,
            op,
            values: vec![self.term()?],
            is_in: false,
            list_marker: false,
        })
    }

    pub(super) fn update(&mut self) -> Result<Statement, CqlError> {
        let table = self.table_name()?;
        let using = self.using()?;
        self.word("set")?;
        let assignments = self.set_clause()?;
        self.word("where")?;
        let relations = self.relations()?;
        let condition = self.if_clause()?;
        Ok(Statement::Update {
            table,
            using,
            assignments,
            relations,
            condition,
        })
    }

    pub(super) fn delete(&mut self) -> Result<Statement, CqlError> {
        let mut columns = Vec::new();
        if !self.is_word("from") {
            loop {
                let c = self.ident()?;
                let mut subscript = None;
                if self.eat_sym("[") {
                    subscript = Some(Subscript::Element(self.term()?));
                    self.sym("]")?;
                } else if self.eat_sym(".") {
                    subscript = Some(Subscript::Field(self.ident()?));
                }
                columns.push((c, subscript));
                if !self.eat_sym(",") {
                    break;
                }
            }
        }
        self.word("from")?;
        let table = self.table_name()?;
        let using = self.using()?;
        self.word("where")?;
        let relations = self.relations()?;
        let condition = self.if_clause()?;
        Ok(Statement::Delete {
            columns,
            table,
            using,
            relations,
            condition,
        })
    }

    pub(super) fn select(&mut self) -> Result<Select, CqlError> {
        // `JSON` and `DISTINCT` are columns' names when a comma, FROM or AS follows them.
        let keyword = |p: &Self, w: &str| {
            p.is_word(w)
                && !matches!(p.peek_at(1), Some(Tok::Sym(",")))
                && !matches!(p.peek_at(1), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("from") || w.eq_ignore_ascii_case("as"))
        };
        let json = keyword(self, "json");
        if json {
            self.pos += 1;
        }
        let distinct = keyword(self, "distinct");
        if distinct {
            self.pos += 1;
        }
        let mut selectors = Vec::new();
        let mut aliases = Vec::new();
        if !self.eat_sym("*") {
            loop {
                let (s, alias) = self.aliased_selector()?;
                selectors.push(s);
                aliases.push(alias);
                if !self.eat_sym(",") {
                    break;
                }
            }
        }
        self.word("from")?;
        let table = self.table_name()?;
        let relations = if self.eat_word("where") {
            self.relations()?
        } else {
            Vec::new()
        };
        let mut s = Select {
            table,
            distinct,
            json,
            selectors,
            aliases,
            relations,
            group_by: Vec::new(),
            order_by: Vec::new(),
            per_partition_limit: None,
            limit: None,
            allow_filtering: false,
        };
        if self.eat_word("group") {
            self.word("by")?;
            s.group_by = self.ident_list()?;
        }
        if self.eat_word("order") {
            self.word("by")?;
            s.order_by = self.order_list()?;
        }
        if self.eat_word("per") {
            self.word("partition")?;
            self.word("limit")?;
            s.per_partition_limit = Some(self.term()?);
        }
        if self.eat_word("limit") {
            s.limit = Some(self.term()?);
        }
        if self.eat_word("allow") {
            self.word("filtering")?;
            s.allow_filtering = true;
        }
        Ok(s)
    }

    pub(super) fn batch(&mut self) -> Result<Statement, CqlError> {
        let kind = if self.eat_word("unlogged") {
            BatchKind::Unlogged
        } else if self.eat_word("counter") {
            BatchKind::Counter
        } else {
            BatchKind::Logged
        };
        self.word("batch")?;
        let using = self.using()?;
        let mut statements = Vec::new();
        loop {
            while self.eat_sym(";") {}
            if self.eat_word("apply") {
                self.word("batch")?;
                return Ok(Statement::Batch {
                    statements,
                    using,
                    kind,
                });
            }
            let s = if self.eat_word("insert") {
                self.insert()?
            } else if self.eat_word("update") {
                self.update()?
            } else if self.eat_word("delete") {
                self.delete()?
            } else {
                return Err(self.unexpected("INSERT, UPDATE, DELETE or APPLY BATCH"));
            };
            statements.push(s);
        }
    }
}
