//! Traced requests: a frame with the protocol's tracing flag (cqlsh's `TRACING ON`, a driver's
//! `trace=True`) runs with the engine's trace collection on for its thread (`supercolumn::trace`);
//! its session — the request, its parameters, its duration and the events the engine noted —
//! is kept in the database's trace store, which `system_traces.sessions` and `.events` show,
//! and its id goes back in the answer's header, as Cassandra sends it. Untraced requests pass
//! through untouched.

use std::sync::OnceLock;

use supercolumn::clock::Clock;
use supercolumn::model::timeuuid::TimeUuidGenerator;
use supercolumn::trace::{self, TraceSession};

use crate::dispatch::{Answer, Shared};
use crate::request::Request;

/// The protocol header's tracing flag.
pub const FLAG_TRACING: u8 = 0x02;

/// The longest request text a session keeps.
const MAX_QUERY_TEXT: usize = 4096;

/// What a traced request was, in the words `system_traces.sessions` uses.
fn described(request: &Request) -> (&'static str, &'static str, Vec<(String, String)>) {
    let text = |t: &str| {
        let mut t = t.to_string();
        if t.len() > MAX_QUERY_TEXT {
            let mut end = MAX_QUERY_TEXT;
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            t.truncate(end);
        }
        t
    };
    match request {
        Request::Query(q, _) => (
            "QUERY",
            "Execute CQL3 query",
            vec![("query".into(), text(q))],
        ),
        Request::Execute(id, _) => (
            "EXECUTE",
            "Execute CQL3 prepared query",
            vec![("prepared_id".into(), hex::encode(id))],
        ),
        Request::Prepare(q) => (
            "PREPARE",
            "Preparing CQL3 query",
            vec![("query".into(), text(q))],
        ),
        Request::Batch(items, _) => (
            "BATCH",
            "Execute batch of CQL3 queries",
            vec![("statements".into(), items.len().to_string())],
        ),
        _ => ("OTHER", "Execute request", Vec::new()),
    }
}

/// Runs `request` by `run`, traced: its session is kept, and its id answered.
pub fn run(
    shared: &Shared,
    client: &str,
    request: Request,
    run: impl FnOnce(Request) -> Answer,
) -> (Answer, [u8; 16]) {
    static IDS: OnceLock<TimeUuidGenerator> = OnceLock::new();
    let started_at_ms = supercolumn::clock::SystemClock.now_micros() / 1000;
    let id = *IDS
        .get_or_init(TimeUuidGenerator::for_process)
        .next(started_at_ms * 1000)
        .as_bytes();
    let (command, what, parameters) = described(&request);
    trace::begin();
    trace::event(|| format!("{what}: started"));
    let answer = run(request);
    trace::event(|| "Request complete".to_string());
    let (events, duration_micros) = trace::end();
    shared.db.traces().keep(TraceSession {
        id,
        client: client.to_string(),
        command: command.into(),
        request: what.into(),
        parameters,
        started_at_ms,
        duration_micros,
        events,
    });
    (answer, id)
}
