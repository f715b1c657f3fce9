//! What a parsed CQL statement says, before it meets a schema. Names are already folded (lower
//! case unless they were double-quoted).
//!
//! Long because every statement's shape is here, one enum beside the next.

pub use super::types::Op;
use super::types::{CqlType, Literal};

mod condition;

pub use condition::{ColumnCondition, Condition, Subscript};

/// An arithmetic operator of a selector: `+ - * / %`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
}

/// What an `ALTER TYPE` changes.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeChange {
    /// `ADD field type`
    Add(String, CqlType),
    /// `RENAME a TO b [AND c TO d …]`
    Rename(Vec<(String, String)>),
}

/// `[keyspace.]table`.
#[derive(Debug, Clone, PartialEq)]
pub struct TableName {
    /// The keyspace, when the statement names one.
    pub keyspace: Option<String>,
    /// The table.
    pub table: String,
}

/// A value in a statement: a literal or a bind marker.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    /// A literal.
    Literal(Literal),
    /// `?` or `:name`.
    Bind(Bind),
}

impl Term {
    /// The term as CQL writes it (Cassandra's messages quote a statement's terms so).
    pub fn text(&self) -> String {
        match self {
            Term::Literal(l) => l.text(),
            Term::Bind(Bind::Positional(_)) => "?".into(),
            Term::Bind(Bind::Named(_, n)) => format!(":{n}"),
        }
    }
}

/// A bind marker. Markers of both kinds are numbered together in the order they are parsed
/// (Cassandra's): a value is bound by that position, or, for `:name`, by its name to every
/// marker of that name.
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    /// `?`, the n-th marker (0-based).
    Positional(usize),
    /// `:name`, the n-th marker.
    Named(usize, String),
}

impl Bind {
    /// The marker's position among the statement's markers.
    pub fn index(&self) -> usize {
        match self {
            Bind::Positional(i) | Bind::Named(i, _) => *i,
        }
    }
}

/// `USING TTL n AND TIMESTAMP t`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Using {
    /// Seconds to live.
    pub ttl: Option<Term>,
    /// Microseconds.
    pub timestamp: Option<Term>,
}

/// One restriction of a `WHERE` clause.
/// The value side of a multi-column relation: one term for the whole tuple (a literal tuple,
/// or a marker bound to a tuple), or a term per column, as `(?, ?)` gives them.
#[derive(Debug, Clone, PartialEq)]
pub enum TupleTerm {
    /// The tuple as one term.
    Whole(Term),
    /// A term per column, in order.
    Each(Vec<Term>),
}

impl TupleTerm {
    /// Its terms, in order.
    pub fn terms(&self) -> &[Term] {
        match self {
            TupleTerm::Whole(t) => std::slice::from_ref(t),
            TupleTerm::Each(ts) => ts,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Relation {
    /// `column op value`
    Compare(String, Op, Term),
    /// `column IN (v, …)`
    In(String, Vec<Term>),
    /// `column IN ?`: a list bound to one marker (the session expands it into `In` before
    /// the statement runs).
    InMarker(String, Bind),
    /// `(c1, c2, …) op (v1, v2, …)` on clustering columns.
    Multi(Vec<String>, Op, TupleTerm),
    /// `(c1, c2, …) IN ((v1, v2, …), …)` on clustering columns.
    MultiIn(Vec<String>, Vec<TupleTerm>),
    /// `token(columns…) op token(key)` (true: the term is a partition key) or `op token`.
    Token(Vec<String>, Op, Vec<Term>, bool),
    /// `column[key] op value`: a map's entry (Cassandra takes only `=`, on a non-frozen map).
    Entry(String, Term, Op, Term),
}

/// What a `SELECT` returns per row.
#[derive(Debug, Clone, PartialEq)]
pub enum Selector {
    /// A column's value.
    Column(String),
    /// `WRITETIME(c)`, and Cassandra 5's `MAXWRITETIME(c)` and `MINWRITETIME(c)` (the
    /// function's name second; of a column of one cell, the three are its write time).
    WriteTime(String, &'static str),
    /// `TTL(c)`
    Ttl(String),
    /// `WRITETIME`, `MAXWRITETIME`, `MINWRITETIME` or `TTL` (the function's name second) of
    /// a part of a column: an element `s[x]`, a slice `m[a..b]`, a field `u.f` (Cassandra 5).
    TimeOf(Box<Selector>, &'static str),
    /// `COUNT(*)` / `COUNT(1)`
    Count,
    /// `name(args…)`: a native function or aggregate.
    Call(String, Vec<Selector>),
    /// `CAST(x AS type)`
    Cast(Box<Selector>, CqlType),
    /// A literal operand or argument.
    Literal(Literal),
    /// `l op r`
    Arith(Arith, Box<Selector>, Box<Selector>),
    /// `-x`
    Negate(Box<Selector>),
    /// `c[key]`: a map's value or a set's element.
    Element(Box<Selector>, Literal),
    /// `c[from..to]`: the part of a map or set whose keys lie in the range (an end left out
    /// is open).
    Slice(Box<Selector>, Option<Literal>, Option<Literal>),
    /// `u.f`: a field of a user type's value.
    Field(Box<Selector>, String),
}

impl Selector {
    /// The text Cassandra names its result column by: the selector as written, functions
    /// under their `system.` names.
    pub fn text(&self) -> String {
        match self {
            Selector::Column(c) => c.clone(),
            Selector::WriteTime(c, f) => format!("{f}({c})"),
            Selector::Ttl(c) => format!("ttl({c})"),
            Selector::TimeOf(x, f) => format!("{f}({})", x.text()),
            Selector::Count => "count".into(),
            Selector::Call(f, args) => {
                let args: Vec<String> = args.iter().map(Selector::text).collect();
                format!("system.{}({})", f.to_ascii_lowercase(), args.join(", "))
            }
            Selector::Cast(x, t) => format!("cast({} as {t})", x.text()),
            Selector::Literal(l) => l.selection_text(),
            Selector::Arith(op, l, r) => {
                let sym = match op {
                    Arith::Add => "+",
                    Arith::Sub => "-",
                    Arith::Mul => "*",
                    Arith::Div => "/",
                    Arith::Rem => "%",
                };
                // Parentheses where the statement needed them: around an operand that binds
                // less tightly (on the right, as tightly: `a - (b - c)`).
                let tight = |o: &Arith| u8::from(matches!(o, Arith::Mul | Arith::Div | Arith::Rem));
                let wrap = |s: &Selector, right: bool| match s {
                    Selector::Arith(o, ..)
                        if (right && tight(o) <= tight(op)) || tight(o) < tight(op) =>
                    {
                        format!("({})", s.text())
                    }
                    _ => s.text(),
                };
                format!("{} {sym} {}", wrap(l, false), wrap(r, true))
            }
            Selector::Negate(x) if matches!(**x, Selector::Arith(..)) => format!("-({})", x.text()),
            Selector::Negate(x) => format!("-{}", x.text()),
            Selector::Element(x, k) => format!("{}[{}]", x.text(), k.text()),
            Selector::Field(x, f) => format!("{}.{}", x.text(), crate::types::quote_name(f)),
            Selector::Slice(x, a, b) => {
                let end = |l: &Option<Literal>| l.as_ref().map_or(String::new(), Literal::text);
                format!("{}[{}..{}]", x.text(), end(a), end(b))
            }
        }
    }
}

/// An assignment of `UPDATE … SET`.
#[derive(Debug, Clone, PartialEq)]
pub enum Assignment {
    /// `c = value`
    Set(String, Term),
    /// `c = c + value`: a list appends, a set or a map adds.
    Add(String, Term),
    /// `c = value + c`: a list prepends.
    Prepend(String, Term),
    /// `c = c - value`: a set's elements, a map's keys or a list's occurrences go.
    Discard(String, Term),
    /// `c[k] = value`: a map's entry, a list's element at an index.
    SetElement(String, Term, Term),
    /// `u.f = value`: a field of a non-frozen user type's value.
    SetField(String, String, Term),
}

impl Assignment {
    /// The column assigned.
    pub fn column(&self) -> &str {
        match self {
            Assignment::Set(c, _)
            | Assignment::Add(c, _)
            | Assignment::Prepend(c, _)
            | Assignment::Discard(c, _)
            | Assignment::SetElement(c, _, _)
            | Assignment::SetField(c, _, _) => c,
        }
    }

    /// Its terms, in statement order.
    pub fn terms(&self) -> Vec<&Term> {
        match self {
            Assignment::Set(_, t)
            | Assignment::Add(_, t)
            | Assignment::Prepend(_, t)
            | Assignment::Discard(_, t)
            | Assignment::SetField(_, _, t) => vec![t],
            Assignment::SetElement(_, k, v) => vec![k, v],
        }
    }
}

/// What of a column an index covers: `CREATE INDEX ON t (keys(m))` and the like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexOn {
    /// The column's value (a collection's values).
    Values,
    /// A map's keys.
    Keys,
    /// A map's entries.
    Entries,
    /// A frozen collection whole.
    Full,
}

/// An index's target: a column and what of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexTarget {
    /// The column.
    pub column: String,
    /// What of it.
    pub on: IndexOn,
    /// Whether the statement named `on` (`values(l)`) rather than the column alone.
    pub explicit: bool,
}

/// A CQL statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// `CREATE KEYSPACE`
    CreateKeyspace {
        /// Its name.
        name: String,
        /// `IF NOT EXISTS`
        if_not_exists: bool,
        /// `WITH replication = {…}` entries.
        replication: Vec<(String, String)>,
        /// `AND durable_writes = …` (default true).
        durable_writes: bool,
    },
    /// `ALTER KEYSPACE ks WITH …`
    AlterKeyspace {
        /// Its name.
        name: String,
        /// `replication = {…}` entries (empty: unchanged).
        replication: Vec<(String, String)>,
        /// `durable_writes = …` (`None`: unchanged).
        durable_writes: Option<bool>,
    },
    /// `USE ks`
    Use(String),
    /// `DROP KEYSPACE`
    DropKeyspace {
        /// Its name.
        name: String,
        /// `IF EXISTS`
        if_exists: bool,
    },
    /// `CREATE TABLE`
    CreateTable {
        /// Its name.
        table: TableName,
        /// `IF NOT EXISTS`
        if_not_exists: bool,
        /// Columns in the order declared.
        columns: Vec<(String, CqlType)>,
        /// Partition key columns.
        partition_key: Vec<String>,
        /// Clustering columns.
        clustering: Vec<String>,
        /// The columns declared `static`: one value per partition.
        statics: Vec<String>,
        /// `CLUSTERING ORDER BY`: (column, descending).
        order: Vec<(String, bool)>,
        /// The other `WITH` options: (name, value).
        options: Vec<(String, Literal)>,
    },
    /// `ALTER TABLE … ADD`: regular columns added to a table.
    AlterTableAdd {
        /// The table.
        table: TableName,
        /// The columns, in the order given.
        columns: Vec<(String, CqlType)>,
        /// Those declared `static`.
        statics: Vec<String>,
    },
    /// `ALTER TABLE … DROP c` (or `DROP (c1, c2)`) `[USING TIMESTAMP t]`: regular columns
    /// dropped, their data older than `t` (the statement's time when not given) hidden for good.
    AlterTableDrop {
        /// The table.
        table: TableName,
        /// The columns, in the order given.
        columns: Vec<String>,
        /// `USING TIMESTAMP t`.
        timestamp: Option<i64>,
    },
    /// `ALTER TABLE … WITH name = value [AND …]`: table options changed.
    AlterTableWith {
        /// The table.
        table: TableName,
        /// (name, value), in the order given.
        options: Vec<(String, Literal)>,
    },
    /// `ALTER TABLE … RENAME a TO b [AND c TO d …]`: primary key columns renamed.
    AlterTableRename {
        /// The table.
        table: TableName,
        /// (old name, new name), in the order given.
        renames: Vec<(String, String)>,
    },
    /// `DROP TABLE`
    DropTable {
        /// Its name.
        table: TableName,
        /// `IF EXISTS`
        if_exists: bool,
    },
    /// `TRUNCATE`
    Truncate(TableName),
    /// `CREATE [CUSTOM] INDEX [IF NOT EXISTS] [name] ON t (target) [USING 'class' [WITH
    /// OPTIONS = {…}]]`
    CreateIndex {
        /// Its name (`None`: Cassandra's default, `<table>_<column>_idx`).
        name: Option<String>,
        /// The table.
        table: TableName,
        /// The column, and what of it is indexed.
        target: IndexTarget,
        /// `IF NOT EXISTS`
        if_not_exists: bool,
        /// `USING 'class'`, for a `CUSTOM` index.
        class: Option<String>,
        /// `WITH OPTIONS = {…}`.
        options: Vec<(String, Literal)>,
    },
    /// `CREATE TYPE [IF NOT EXISTS] [ks.]name (field type, …)`
    CreateType {
        /// The type (its keyspace, if named).
        name: TableName,
        /// `IF NOT EXISTS`
        if_not_exists: bool,
        /// (name, type) of each field, in order.
        fields: Vec<(String, CqlType)>,
    },
    /// `ALTER TYPE [ks.]name ADD … | RENAME …`
    AlterType {
        /// The type (its keyspace, if named).
        name: TableName,
        /// What changes.
        change: TypeChange,
    },
    /// `DROP TYPE [IF EXISTS] [ks.]name`
    DropType {
        /// The type (its keyspace, if named).
        name: TableName,
        /// `IF EXISTS`
        if_exists: bool,
    },
    /// `DROP INDEX [IF EXISTS] [ks.]name`
    DropIndex {
        /// The index (its keyspace, if named).
        index: TableName,
        /// `IF EXISTS`
        if_exists: bool,
    },
    /// `INSERT INTO`
    Insert {
        /// Target.
        table: TableName,
        /// Columns named.
        columns: Vec<String>,
        /// Their values.
        values: Vec<Term>,
        /// `USING`
        using: Using,
        /// `IF NOT EXISTS`
        condition: Option<Condition>,
    },
    /// `INSERT INTO t JSON '…' [DEFAULT NULL | DEFAULT UNSET]`: the columns and values of one
    /// JSON object (the session turns it into an `Insert` before it runs).
    InsertJson {
        /// Target.
        table: TableName,
        /// The JSON text: a string literal or a marker.
        json: Term,
        /// `DEFAULT UNSET`: a column the object leaves out is left as it is (the default,
        /// `DEFAULT NULL`, deletes it).
        default_unset: bool,
        /// `USING`
        using: Using,
        /// `IF NOT EXISTS`
        condition: Option<Condition>,
    },
    /// `UPDATE`
    Update {
        /// Target.
        table: TableName,
        /// `USING`
        using: Using,
        /// `SET`
        assignments: Vec<Assignment>,
        /// `WHERE`
        relations: Vec<Relation>,
        /// `IF EXISTS` or `IF c op v AND …`
        condition: Option<Condition>,
    },
    /// `DELETE`
    Delete {
        /// Columns named (empty: the whole row), each with its subscript if it names one
        /// element of a collection (`m['k']`, `l[0]`) or one field of a user type (`u.f`).
        columns: Vec<(String, Option<Subscript>)>,
        /// Target.
        table: TableName,
        /// `USING TIMESTAMP`
        using: Using,
        /// `WHERE`
        relations: Vec<Relation>,
        /// `IF EXISTS` or `IF c op v AND …`
        condition: Option<Condition>,
    },
    /// `SELECT`
    Select(Box<Select>),
    /// `BEGIN [UNLOGGED | COUNTER] BATCH … APPLY BATCH`
    Batch {
        /// The statements (inserts, updates, deletes).
        statements: Vec<Statement>,
        /// `USING` of the batch.
        using: Using,
        /// Logged, unlogged or of counters.
        kind: BatchKind,
    },
}

/// The kind of a `BATCH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchKind {
    /// `BEGIN BATCH`
    Logged,
    /// `BEGIN UNLOGGED BATCH`
    Unlogged,
    /// `BEGIN COUNTER BATCH`: counter updates only
    Counter,
}

/// A `SELECT` statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    /// Source.
    pub table: TableName,
    /// `DISTINCT`
    pub distinct: bool,
    /// `SELECT JSON`: each row one JSON object, in one text column `[json]`.
    pub json: bool,
    /// Selectors; empty for `*`.
    pub selectors: Vec<Selector>,
    /// Each selector's `AS` name, if it has one.
    pub aliases: Vec<Option<String>>,
    /// `WHERE`
    pub relations: Vec<Relation>,
    /// `GROUP BY` columns, in order.
    pub group_by: Vec<String>,
    /// `ORDER BY` (column, descending).
    pub order_by: Vec<(String, bool)>,
    /// `PER PARTITION LIMIT`
    pub per_partition_limit: Option<Term>,
    /// `LIMIT`
    pub limit: Option<Term>,
    /// `ALLOW FILTERING`
    pub allow_filtering: bool,
}

/// The table a statement reads or writes, if it names one row-level table.
pub fn table_of(s: &Statement) -> Option<&TableName> {
    match s {
        Statement::Insert { table, .. }
        | Statement::InsertJson { table, .. }
        | Statement::Update { table, .. }
        | Statement::Delete { table, .. } => Some(table),
        Statement::Select(sel) => Some(&sel.table),
        _ => None,
    }
}

/// How many bind markers a statement has (they are numbered in order as parsed).
// Long because it is one match over the statements that hold markers.
pub fn markers(s: &Statement) -> usize {
    fn term(t: &Term, n: &mut usize) {
        match t {
            Term::Bind(b) => *n = (*n).max(b.index() + 1),
            Term::Literal(l) => l.markers(&mut |i| *n = (*n).max(i + 1)),
        }
    }
    fn using(u: &Using, n: &mut usize) {
        u.ttl.iter().chain(&u.timestamp).for_each(|t| term(t, n));
    }
    fn relations(rs: &[Relation], n: &mut usize) {
        for r in rs {
            match r {
                Relation::Compare(_, _, t) => term(t, n),
                Relation::Token(_, _, ts, _) => ts.iter().for_each(|t| term(t, n)),
                Relation::Entry(_, k, _, v) => [k, v].into_iter().for_each(|t| term(t, n)),
                Relation::In(_, ts) => ts.iter().for_each(|t| term(t, n)),
                Relation::InMarker(_, b) => *n = (*n).max(b.index() + 1),
                Relation::Multi(_, _, t) => t.terms().iter().for_each(|t| term(t, n)),
                Relation::MultiIn(_, ts) => ts
                    .iter()
                    .flat_map(TupleTerm::terms)
                    .for_each(|t| term(t, n)),
            }
        }
    }
    let mut n = 0;
    if let Statement::Update {
        condition: Some(c), ..
    }
    | Statement::Delete {
        condition: Some(c), ..
    } = s
    {
        c.terms().for_each(|(_, t)| term(t, &mut n));
    }
    match s {
        Statement::Insert {
            values, using: u, ..
        } => {
            values.iter().for_each(|t| term(t, &mut n));
            using(u, &mut n);
        }
        Statement::InsertJson { json, using: u, .. } => {
            term(json, &mut n);
            using(u, &mut n);
        }
        Statement::Update {
            using: u,
            assignments,
            relations: r,
            ..
        } => {
            using(u, &mut n);
            for a in assignments {
                a.terms().into_iter().for_each(|t| term(t, &mut n));
            }
            relations(r, &mut n);
        }
        Statement::Delete {
            columns,
            using: u,
            relations: r,
            ..
        } => {
            columns
                .iter()
                .filter_map(|(_, e)| e.as_ref()?.term())
                .for_each(|t| term(t, &mut n));
            using(u, &mut n);
            relations(r, &mut n);
        }
        Statement::Select(sel) => {
            relations(&sel.relations, &mut n);
            sel.per_partition_limit
                .iter()
                .chain(&sel.limit)
                .for_each(|t| term(t, &mut n));
        }
        Statement::Batch {
            statements,
            using: u,
            ..
        } => {
            using(u, &mut n);
            n = statements.iter().map(markers).fold(n, usize::max);
        }
        _ => {}
    }
    n
}
