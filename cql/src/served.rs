//! The statements a session answers with rows it builds whole rather than reads through a
//! plan: `DESCRIBE` (`system/describe.rs`), reads of the system keyspaces (`system/`), and
//! statements on Thrift-era column families seen as tables (`compact.rs`). Here only the
//! routing: which statement goes where, with what values bound. A caller that pages (the
//! server) pages these rows by offset, since no partition position resumes them.

use supercolumn::Database;

use crate::ast::{self, Select, Statement};
use crate::compact::{self, Compact};
use crate::error::CqlError;
use crate::session::{CqlResult, Session};
use crate::system::{self, describe, Node};
use crate::types::CqlType;

/// Where a statement is answered when it is not a CQL table's.
pub(crate) enum Served {
    /// A table of a system keyspace, `ks`.
    System(String),
    /// A Thrift-era column family.
    Compact(Box<Compact>),
}

/// Whether `text` is a `DESCRIBE` (or `DESC`) statement, which the parser does not take.
pub fn is_describe(text: &str) -> bool {
    describe::is_describe(text)
}

/// Where `statement` is answered, when not by a CQL table: `current` is the keyspace in use.
pub(crate) fn route(db: &Database, current: Option<&str>, statement: &Statement) -> Option<Served> {
    let table = ast::table_of(statement)?;
    let ks = table.keyspace.as_deref().or(current)?;
    if system::is_system_keyspace(ks) {
        return Some(Served::System(ks.to_string()));
    }
    // One shared definition, not a copy of the keyspace's: this runs for every statement.
    let def = db.column_family_handle(ks, &table.table).ok()?.definition();
    Compact::of(ks, &def).map(|c| Served::Compact(Box::new(c)))
}

/// The name and type of each bind marker of a served `SELECT`, in marker order.
pub(crate) fn bind_columns(
    db: &Database,
    node: &Node,
    served: &Served,
    sel: &Select,
) -> Result<Vec<(String, CqlType)>, CqlError> {
    match served {
        Served::System(ks) => system::bind_columns(db, node, ks, sel),
        // Its restrictions take literal values only.
        Served::Compact(_) => Ok(Vec::new()),
    }
}

/// What one session needs to answer a served statement.
pub(crate) struct Context<'a> {
    pub db: &'a Database,
    pub node: &'a Node,
    /// The values bound to the statement's markers, in marker order.
    pub binds: &'a [Option<Vec<u8>>],
    /// The timestamp of a write that gives none (`None`: the database clock's).
    pub default_timestamp: Option<i64>,
}

/// Answers `statement` where `served` says.
pub(crate) fn answer(
    cx: &Context<'_>,
    served: &Served,
    statement: &Statement,
) -> Result<CqlResult, CqlError> {
    match (served, statement) {
        (Served::System(ks), Statement::Select(sel)) => {
            system::select(cx.db, cx.node, ks, sel, cx.binds).map(CqlResult::Rows)
        }
        (Served::System(ks), _) => Err(CqlError::Unauthorized(format!(
            "{ks} keyspace is not user-modifiable"
        ))),
        (Served::Compact(c), Statement::Select(sel)) => {
            let now = cx.db.options().clock.now_micros();
            compact::select(cx.db, c, sel, now.div_euclid(1_000_000)).map(CqlResult::Rows)
        }
        (Served::Compact(c), _) => {
            compact::write(cx.db, c, statement, cx.default_timestamp).map(|()| CqlResult::Void)
        }
    }
}

/// Answers a `DESCRIBE`; `current` is the keyspace in use.
pub(crate) fn describe(
    db: &Database,
    current: Option<&str>,
    text: &str,
) -> Result<CqlResult, CqlError> {
    describe::describe(db, current, text).map(CqlResult::Rows)
}

impl Session<'_> {
    /// The answer to `stmt` when it is a system table's or a Thrift-era column family's, or a
    /// `DESCRIBE`; `None` for a CQL table's (which a statement prepared against a CQL table
    /// always is).
    pub(crate) fn answer_served(&self, stmt: &Statement) -> Option<Result<CqlResult, CqlError>> {
        if self.pinned.is_some() {
            return None;
        }
        let served = route(self.db, self.keyspace(), stmt)?;
        let cx = Context {
            db: self.db,
            node: &self.node,
            binds: &self.binds,
            default_timestamp: self.default_timestamp,
        };
        Some(answer(&cx, &served, stmt))
    }
}
