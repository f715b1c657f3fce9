//! What each request means once a connection is ready: QUERY, PREPARE, EXECUTE and BATCH run
//! on the engine through a CQL session holding the connection's keyspace; what the session
//! builds whole (the system tables, Thrift-era tables, DESCRIBE) is paged here by offset, any
//! other SELECT by the session's page positions.
//! It runs on a blocking thread and knows nothing of sockets or frames.
//!
//! Long because it holds one answer per request opcode (QUERY, PREPARE, EXECUTE, BATCH) with its
//! paging, each a few lines over the CQL session.

use std::sync::Arc;

use cassandra_protocol::frame::message_error::ErrorType;
use cassandra_protocol::frame::{Opcode, Version};
use md5::{Digest, Md5};
use parking_lot::Mutex;
use supercolumn::{CommitLogSync, Database};
use supercolumn_cql::{
    is_describe, parse, table_of, CqlError, CqlResult, Node, Op, Position, Prepared, Relation,
    Rows, Session, Statement,
};

use crate::paging::{self, State};
use crate::prepared_cache::{self, Entry};
use crate::request::{Params, Request, Subject, Value};
use crate::results;

/// What every connection shares: the database, the prepared statements, this node.
pub struct Shared {
    /// The database.
    pub db: Arc<Database>,
    /// Prepared statements by id (an MD5 of the keyspace and the text, as Cassandra's).
    pub prepared: prepared_cache::Cache,
    /// The node's address and port, as `system.local` shows them.
    pub node: Node,
    /// The connected clients and the request pool, as `system_views` shows them.
    pub clients: Arc<crate::clients::Registry>,
    /// Seals and opens paging states.
    pub pages: paging::Sealer,
}

/// The longest statement that can be prepared.
const MAX_PREPARED_TEXT: usize = 64 << 10;

/// An answer: the response opcode and its message body.
pub type Answer = (Opcode, Vec<u8>);

fn err(e: &CqlError, version: Version) -> Answer {
    (Opcode::Error, results::cql_error(e, version))
}

fn protocol(message: &str, version: Version) -> Answer {
    (
        Opcode::Error,
        results::error(ErrorType::Protocol, message, version),
    )
}

fn invalid(message: &str, version: Version) -> Answer {
    (
        Opcode::Error,
        results::error(ErrorType::Invalid, message, version),
    )
}

/// What a connection's requests share: the keyspace in use and the user logged in.
#[derive(Default)]
pub struct Client {
    /// The keyspace in use (`USE`).
    pub keyspace: Mutex<Option<String>>,
    /// The user, once logged in under `--auth`.
    pub user: std::sync::OnceLock<String>,
}

/// What a paging state is tied to: the statement (its text or prepared id), the keyspace in
/// use, the bound values and the user, so that a state cannot page another statement's result
/// nor be used by another user.
fn statement_key(statement: &[u8], client: &Client, params: &Params) -> Vec<u8> {
    let mut k = Vec::with_capacity(statement.len() + 64);
    for part in [
        statement,
        client.keyspace.lock().as_deref().unwrap_or("").as_bytes(),
        client.user.get().map_or(&b""[..], |u| u.as_bytes()),
    ] {
        k.extend_from_slice(&(part.len() as u64).to_be_bytes());
        k.extend_from_slice(part);
    }
    // Values bound by name are tied to their names too.
    for n in params.names.iter().filter(|_| params.named) {
        k.extend_from_slice(&(n.len() as u32).to_be_bytes());
        k.extend_from_slice(n.as_bytes());
    }
    for v in &params.values {
        match v {
            Value::Set(b) => {
                k.extend_from_slice(&(b.len() as u32).to_be_bytes());
                k.extend_from_slice(b);
            }
            Value::Null => k.extend_from_slice(&[0xff; 4]),
            Value::Unset => k.extend_from_slice(&[0xfe; 4]),
        }
    }
    k
}

/// Values bound to a statement's markers, in marker order.
struct Bound<'v> {
    /// Each value as the CQL layer takes it (`None`: null, or unset).
    values: Vec<Option<&'v [u8]>>,
    /// Which are unset (native protocol v4).
    unset: Vec<bool>,
}

impl<'v> Bound<'v> {
    fn of(vs: impl Iterator<Item = &'v Value>) -> Bound<'v> {
        let (values, unset) = vs
            .map(|v| match v {
                Value::Set(b) => (Some(b.as_slice()), false),
                Value::Null => (None, false),
                Value::Unset => (None, true),
            })
            .unzip();
        Bound { values, unset }
    }

    /// Runs `p` with these values: when some are unset, without the parts they would fill
    /// (nothing at all, when nothing is left of it).
    fn run(&self, session: &mut Session<'_>, p: &Prepared) -> Result<CqlResult, CqlError> {
        if !self.unset.contains(&true) {
            return session.execute_prepared(p, &self.values);
        }
        match p.without_unset(&self.unset)? {
            Some(q) => session.execute_prepared(&q, &self.values),
            None => Ok(CqlResult::Void),
        }
    }
}

/// A batch's statements with unset values, each without the parts they would fill (`None`: a
/// statement run as prepared), and which have nothing left of them to run.
fn without_unset(
    prepared: &[Arc<Prepared>],
    bound: &[Bound<'_>],
) -> Result<(Vec<Option<Prepared>>, Vec<bool>), CqlError> {
    let mut reduced = Vec::with_capacity(prepared.len());
    let mut skipped = vec![false; prepared.len()];
    for (i, (p, b)) in prepared.iter().zip(bound).enumerate() {
        let mut q = None;
        if b.unset.contains(&true) {
            q = p.without_unset(&b.unset)?;
            skipped[i] = q.is_none();
        }
        reduced.push(q);
    }
    Ok((reduced, skipped))
}

/// The values of `params` in marker order: by position, or, when they came with names, each
/// marker of `p` taking the value of its name (the name PREPARED reported for it).
fn bound<'v>(params: &'v Params, p: &Prepared) -> Result<Bound<'v>, CqlError> {
    if !params.named {
        return Ok(Bound::of(params.values.iter()));
    }
    let markers = p.bind_columns();
    let find = |want: &str| {
        let exact = params.names.iter().position(|n| n == want);
        exact.or_else(|| params.names.iter().position(|n| n.to_lowercase() == want))
    };
    if let Some(n) = params.names.iter().find(|n| {
        !markers
            .iter()
            .any(|(m, _)| *m == **n || *m == n.to_lowercase())
    }) {
        return Err(CqlError::invalid(format!(
            "a value is bound to {n}, which names no bind marker of the statement"
        )));
    }
    let values = markers
        .iter()
        .map(|(name, _)| {
            find(name)
                .and_then(|i| params.values.get(i))
                .ok_or_else(|| CqlError::invalid(format!("no value for bind marker :{name}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Bound::of(values.into_iter()))
}

impl Shared {
    /// Whether `request` is quick enough to run on the connection's task: the EXECUTE of a
    /// prepared write when the commit log does not wait for an fsync (periodic mode), or of a
    /// SELECT of one partition (`=` on every partition key column, no filtering). Anything else
    /// (a scan, a schema change, a batch, a write that waits for its fsync) may take long.
    pub fn runs_inline(&self, request: &Request) -> bool {
        let Request::Execute(id, _) = request else {
            return false;
        };
        let Some(Entry::Cql(p)) = self.lookup(id) else {
            return false;
        };
        match p.statement() {
            Statement::Insert { .. } | Statement::Update { .. } | Statement::Delete { .. } => {
                !matches!(
                    self.db.options().commit_log_sync,
                    CommitLogSync::Batch { .. }
                )
            }
            Statement::Select(sel) => {
                let Some(t) = p.table() else {
                    return false;
                };
                !sel.allow_filtering
                    && t.partition_key.iter().all(|&i| {
                        sel.relations.iter().any(|r| {
                            matches!(r, Relation::Compare(c, Op::Eq, _) if *c == t.columns[i].name)
                        })
                    })
            }
            _ => false,
        }
    }

    /// The id a statement prepared in `keyspace` gets.
    fn id_of(keyspace: Option<&str>, text: &str) -> [u8; 16] {
        let mut h = Md5::new();
        h.update(keyspace.unwrap_or("").as_bytes());
        h.update([0]);
        h.update(text.as_bytes());
        h.finalize().into()
    }

    /// A session for one request: the connection's keyspace, the driver's timestamp, this node.
    fn session(&self, keyspace: Option<String>, timestamp: Option<i64>) -> Session<'_> {
        let mut session = Session::new(&self.db);
        session.set_keyspace(keyspace);
        session.set_default_timestamp(timestamp);
        session.set_node(self.node.clone());
        session
    }

    /// QUERY.
    pub fn query(&self, client: &Client, text: &str, params: &Params, version: Version) -> Answer {
        let key = statement_key(text.as_bytes(), client, params);
        let current = client.keyspace.lock().clone();
        let mut session = self.session(current, params.timestamp);
        if session.builds_whole(text) {
            return self.whole(&mut session, text, params, &key, version);
        }
        let statements = match parse(text) {
            Ok(s) => s,
            Err(e) => return err(&e, version),
        };
        let [statement] = statements.as_slice() else {
            return invalid("a QUERY carries exactly one statement", version);
        };
        match self.pages.request(params, &key) {
            Ok(page) => session.set_page(page),
            Err(e) => return protocol(&e, version),
        }
        let result = if params.values.is_empty() {
            session.run(statement)
        } else {
            session
                .prepare(text)
                .and_then(|p| bound(params, &p)?.run(&mut session, &p))
        };
        let end = session.page_end();
        self.answer(client, statement, result, end, &key, version)
    }

    /// A statement whose rows the session builds whole (DESCRIBE, a system table, a
    /// Thrift-era column family): run, then paged by offset.
    fn whole(
        &self,
        session: &mut Session<'_>,
        text: &str,
        params: &Params,
        statement_key: &[u8],
        version: Version,
    ) -> Answer {
        let result = if params.values.is_empty() || is_describe(text) {
            session
                .execute(text)
                .map(|mut r| r.pop().unwrap_or(CqlResult::Void))
        } else {
            session
                .prepare(text)
                .and_then(|p| bound(params, &p)?.run(session, &p))
        };
        match result {
            Ok(CqlResult::Rows(rows)) => {
                let (ks, table) = whole_table(session, text);
                self.rows_page(&ks, &table, rows, params, statement_key, version)
            }
            Ok(_) => (Opcode::Result, results::void(version)),
            Err(e) => err(&e, version),
        }
    }

    fn answer(
        &self,
        client: &Client,
        statement: &Statement,
        result: Result<CqlResult, CqlError>,
        end: Option<Position>,
        statement_key: &[u8],
        version: Version,
    ) -> Answer {
        let keyspace = &client.keyspace;
        match result {
            Ok(CqlResult::Void) => (Opcode::Result, results::void(version)),
            Ok(CqlResult::SetKeyspace(ks)) => {
                let body = results::set_keyspace(&ks, version);
                *keyspace.lock() = Some(ks);
                (Opcode::Result, body)
            }
            Ok(CqlResult::SchemaChange(d)) => {
                if d.starts_with("DROPPED KEYSPACE") {
                    let name = d.rsplit(' ').next().unwrap_or_default();
                    let mut k = keyspace.lock();
                    if k.as_deref() == Some(name) {
                        *k = None;
                    }
                }
                (Opcode::Result, results::schema_change(&d, version))
            }
            Ok(CqlResult::Rows(rows)) => {
                let (ks, table) = match statement {
                    Statement::Select(sel) => (
                        sel.table
                            .keyspace
                            .clone()
                            .or_else(|| keyspace.lock().clone())
                            .unwrap_or_default(),
                        sel.table.table.clone(),
                    ),
                    _ => Default::default(),
                };
                let next = end.map(|p| self.pages.seal(&State::After(p), statement_key));
                (
                    Opcode::Result,
                    results::rows(&ks, &table, rows, next, version),
                )
            }
            Err(e) => err(&e, version),
        }
    }

    fn rows_page(
        &self,
        ks: &str,
        table: &str,
        rows: Rows,
        params: &Params,
        statement_key: &[u8],
        version: Version,
    ) -> Answer {
        match self.pages.slice(rows, params, statement_key) {
            Ok((rows, state)) => (
                Opcode::Result,
                results::rows(ks, table, rows, state, version),
            ),
            Err(e) => protocol(&e, version),
        }
    }

    /// PREPARE.
    pub fn prepare(&self, client: &Client, text: &str, version: Version) -> Answer {
        let current = client.keyspace.lock().clone();
        let id = Self::id_of(current.as_deref(), text);
        let mut session = self.session(current.clone(), None);
        if session.builds_whole(text) {
            if text.len() > MAX_PREPARED_TEXT {
                return invalid("a statement this long cannot be prepared", version);
            }
            // Kept as text: each EXECUTE runs it as a QUERY (its rows are paged by offset).
            let (ks, table) = whole_table(&session, text);
            let binds = if is_describe(text) {
                match session.execute(text) {
                    Ok(_) => Vec::new(),
                    Err(e) => return err(&e, version),
                }
            } else {
                match session.prepare(text) {
                    Ok(p) => p.bind_columns(),
                    Err(e) => return err(&e, version),
                }
            };
            self.prepared.put(id, Entry::Text(text.into()));
            return (
                Opcode::Result,
                results::prepared(&id, &ks, &table, &binds, Vec::new(), version),
            );
        }
        let p = match session.prepare(text) {
            Ok(p) => p,
            Err(e) => return err(&e, version),
        };
        let binds = p.bind_columns();
        let markers = p.bound_markers();
        let (ks, table, pk) = match p.table() {
            Some(t) => {
                // Each partition key column bound once by a marker, `?` or `:name`: drivers
                // route by them.
                let pk: Option<Vec<i16>> = t
                    .partition_key
                    .iter()
                    .map(|&c| {
                        let name = &t.columns[c].name;
                        let mut at = markers
                            .iter()
                            .enumerate()
                            .filter(|(_, (_, n, _))| n == name);
                        match (at.next(), at.next()) {
                            (Some((i, _)), None) => i16::try_from(i).ok(),
                            _ => None,
                        }
                    })
                    .collect();
                (t.keyspace.clone(), t.name.clone(), pk.unwrap_or_default())
            }
            None => (current.unwrap_or_default(), String::new(), Vec::new()),
        };
        if text.len() > MAX_PREPARED_TEXT {
            return invalid("a statement this long cannot be prepared", version);
        }
        if !self.prepared.put(id, Entry::Cql(Arc::new(p))) {
            return invalid("this statement holds too much to be kept prepared", version);
        }
        (
            Opcode::Result,
            results::prepared(&id, &ks, &table, &binds, pk, version),
        )
    }

    fn lookup(&self, id: &[u8]) -> Option<Entry> {
        let key: [u8; 16] = id.try_into().ok()?;
        self.prepared.get(&key)
    }

    /// EXECUTE.
    pub fn execute(&self, client: &Client, id: &[u8], params: &Params, version: Version) -> Answer {
        let Some(entry) = self.lookup(id) else {
            return (Opcode::Error, results::unprepared(id, version));
        };
        let key = statement_key(id, client, params);
        let p = match entry {
            Entry::Text(text) => return self.query(client, &text, params, version),
            Entry::Cql(p) => p,
        };
        let binds = match bound(params, &p) {
            Ok(v) => v,
            Err(e) => return err(&e, version),
        };
        let mut session = self.session(client.keyspace.lock().clone(), params.timestamp);
        match self.pages.request(params, &key) {
            Ok(page) => session.set_page(page),
            Err(e) => return protocol(&e, version),
        }
        let result = binds.run(&mut session, &p);
        let end = session.page_end();
        if let Err(CqlError::Stale(_)) = &result {
            // Its table was dropped or truncated (a new column family), or its options were
            // altered: the driver prepares it again when told it is unknown.
            if let Ok(key) = <[u8; 16]>::try_from(id) {
                self.prepared.pop(&key);
            }
            return (Opcode::Error, results::unprepared(id, version));
        }
        self.answer(client, p.statement(), result, end, &key, version)
    }

    /// BATCH: every statement prepared (or parsed) first, then all applied as one.
    pub fn batch(
        &self,
        client: &Client,
        items: &[(Subject, Vec<Value>)],
        timestamp: Option<i64>,
        version: Version,
    ) -> Answer {
        let mut session = self.session(client.keyspace.lock().clone(), timestamp);
        let mut prepared: Vec<Arc<Prepared>> = Vec::with_capacity(items.len());
        for (subject, _) in items {
            let p = match subject {
                Subject::Id(id) => match self.lookup(id) {
                    Some(Entry::Cql(p)) => p,
                    Some(Entry::Text(_)) => {
                        return invalid("only INSERT, UPDATE and DELETE can be in a BATCH", version)
                    }
                    None => return (Opcode::Error, results::unprepared(id, version)),
                },
                Subject::Text(text) => match session.prepare(text) {
                    Ok(p) => Arc::new(p),
                    Err(e) => return err(&e, version),
                },
            };
            prepared.push(p);
        }
        let bound: Vec<Bound<'_>> = items.iter().map(|(_, vs)| Bound::of(vs.iter())).collect();
        let (reduced, skipped) = match without_unset(&prepared, &bound) {
            Ok(r) => r,
            Err(e) => return err(&e, version),
        };
        let statements: Vec<(&Prepared, &[Option<&[u8]>])> = prepared
            .iter()
            .zip(&reduced)
            .zip(&bound)
            .zip(&skipped)
            .filter(|(_, skip)| !**skip)
            .map(|(((p, q), b), _)| (q.as_ref().unwrap_or(&**p), b.values.as_slice()))
            .collect();
        match session.execute_batch_of(&statements) {
            // A conditional batch's `[applied]` rows.
            Ok(CqlResult::Rows(rows)) => {
                let (ks, table) = prepared
                    .first()
                    .and_then(|p| p.table())
                    .map(|t| (t.keyspace.clone(), t.name.clone()))
                    .unwrap_or_default();
                (
                    Opcode::Result,
                    results::rows(&ks, &table, rows, None, version),
                )
            }
            Ok(_) => (Opcode::Result, results::void(version)),
            Err(CqlError::Stale(e)) => {
                // As for EXECUTE: the statement whose table changed is forgotten and reported
                // unknown, so the driver prepares it again and resends the batch.
                let stale = items.iter().zip(&prepared).find_map(|((s, _), p)| match s {
                    Subject::Id(id) if !session.is_current(p) => Some(id),
                    _ => None,
                });
                match stale {
                    Some(id) => {
                        if let Ok(key) = <[u8; 16]>::try_from(id.as_slice()) {
                            self.prepared.pop(&key);
                        }
                        (Opcode::Error, results::unprepared(id, version))
                    }
                    None => err(&CqlError::Stale(e), version),
                }
            }
            Err(e) => err(&e, version),
        }
    }
}

/// The keyspace and table a built-whole answer's rows are described with: `system.describe`
/// for a DESCRIBE, else the table the statement names (the keyspace in use if it names none).
fn whole_table(session: &Session<'_>, text: &str) -> (String, String) {
    if is_describe(text) {
        return ("system".into(), "describe".into());
    }
    let statement = parse(text).ok().and_then(|mut s| s.pop());
    match statement.as_ref().and_then(table_of) {
        Some(t) => (
            t.keyspace
                .clone()
                .or_else(|| session.keyspace().map(str::to_string))
                .unwrap_or_default(),
            t.table.clone(),
        ),
        None => ("system".into(), String::new()),
    }
}
