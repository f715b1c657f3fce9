//! `system_traces.sessions` and `system_traces.events`, as Cassandra lays them out, answered
//! from the traced requests the database keeps (`supercolumn::trace`): cqlsh's `TRACING ON` and
//! the drivers' query traces read their session and events back from here. Built whole on each
//! read; nothing here writes.

use supercolumn::model::timeuuid::TimeUuidGenerator;
use supercolumn::trace::TraceSession;
use supercolumn::Database;

use super::tables::{Content, Node};
use crate::types::{CqlType, Literal};

fn s(v: impl Into<String>) -> Literal {
    Literal::Str(v.into())
}

fn n(v: impl ToString) -> Literal {
    Literal::Number(v.to_string())
}

fn uuid(b: &[u8; 16]) -> Literal {
    Literal::Uuid(uuid::Uuid::from_bytes(*b).to_string())
}

/// The rows of `system_traces.table`, if it is one of its two.
pub fn content(db: &Database, node: &Node, table: &str) -> Option<Content> {
    let sessions = db.traces().sessions();
    Some(match table {
        "sessions" => Content {
            columns: vec![
                ("session_id", CqlType::Uuid),
                ("client", CqlType::Inet),
                ("command", CqlType::Text),
                ("coordinator", CqlType::Inet),
                ("coordinator_port", CqlType::Int),
                ("duration", CqlType::Int),
                (
                    "parameters",
                    CqlType::Map(Box::new(CqlType::Text), Box::new(CqlType::Text)),
                ),
                ("request", CqlType::Text),
                ("started_at", CqlType::Timestamp),
            ],
            rows: sessions.iter().map(|t| session_row(node, t)).collect(),
        },
        "events" => Content {
            columns: vec![
                ("session_id", CqlType::Uuid),
                ("event_id", CqlType::Timeuuid),
                ("activity", CqlType::Text),
                ("source", CqlType::Inet),
                ("source_elapsed", CqlType::Int),
                ("source_port", CqlType::Int),
                ("thread", CqlType::Text),
            ],
            rows: sessions.iter().flat_map(|t| event_rows(node, t)).collect(),
        },
        _ => return None,
    })
}

fn micros_int(v: i64) -> Literal {
    n(v.clamp(0, i64::from(i32::MAX)))
}

fn session_row(node: &Node, t: &TraceSession) -> Vec<Literal> {
    vec![
        uuid(&t.id),
        s(&t.client),
        s(&t.command),
        s(&node.address),
        n(node.port),
        micros_int(t.duration_micros),
        Literal::Map(t.parameters.iter().map(|(k, v)| (s(k), s(v))).collect()),
        s(&t.request),
        n(t.started_at_ms),
    ]
}

/// A session's events, each with a time-based id at its own time: the same ids on every read
/// (a generator seeded by the session's id, fed the events in order).
fn event_rows(node: &Node, t: &TraceSession) -> Vec<Vec<Literal>> {
    let seed = u64::from_be_bytes(t.id[8..].try_into().unwrap_or_default());
    let ids = TimeUuidGenerator::new(seed);
    t.events
        .iter()
        .map(|e| {
            let at = t.started_at_ms * 1000 + e.elapsed_micros;
            vec![
                uuid(&t.id),
                Literal::Uuid(ids.next(at).to_string()),
                s(&e.activity),
                s(&node.address),
                micros_int(e.elapsed_micros),
                n(node.port),
                s("Native-Transport-Requests"),
            ]
        })
        .collect()
}
