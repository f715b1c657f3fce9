//! What a server knows that the database does not — the clients connected to it and its request
//! pool — handed to the system views through [`Node`](super::Node). The server implements
//! [`ServerState`]; an embedded session has none, and its views show no clients.

use std::collections::BTreeMap;
use std::net::IpAddr;

use supercolumn::ThreadPoolStats;

/// One connected client, as `system_views.clients` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectedClient {
    /// Its address.
    pub address: IpAddr,
    /// Its port.
    pub port: u16,
    /// The user logged in, under authentication.
    pub username: Option<String>,
    /// `established`, `authenticating` or `ready`.
    pub stage: &'static str,
    /// The protocol version of its frames.
    pub protocol_version: i32,
    /// The options its STARTUP sent (`DRIVER_NAME`, `CQL_VERSION`, …).
    pub options: BTreeMap<String, String>,
    /// Requests it sent.
    pub requests: u64,
}

/// A server's view of itself, read on each query of the views that show it.
pub trait ServerState: Send + Sync + std::fmt::Debug {
    /// The clients connected now.
    fn clients(&self) -> Vec<ConnectedClient>;
    /// The server's own pools (Cassandra's `Native-Transport-Requests`).
    fn thread_pools(&self) -> Vec<ThreadPoolStats>;
    /// What crossed its connections (a server that does not count: nothing).
    fn traffic(&self) -> ServerTraffic {
        ServerTraffic::default()
    }
}

/// What crossed a server's connections since it started, for its metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerTraffic {
    /// Connections open now.
    pub connections: u64,
    /// Connections accepted since the start.
    pub connections_total: u64,
    /// Bytes of frames read from clients.
    pub bytes_in: u64,
    /// Bytes of frames written to clients.
    pub bytes_out: u64,
    /// Requests by their opcode's name (`QUERY`, `EXECUTE`, …), those sent at least once.
    pub requests: Vec<(&'static str, u64)>,
    /// Error answers by their code's name (`SYNTAX_ERROR`, `INVALID`, …), those sent at least
    /// once.
    pub errors: Vec<(&'static str, u64)>,
}
