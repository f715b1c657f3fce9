//! The clients connected to this server and its request pool, for `system_views.clients` and
//! `thread_pools` (`supercolumn_cql::ServerState`). A connection registers when it is accepted
//! and leaves when it ends (its traffic then counted among the closed ones'); its handshake
//! records what the client said. Nothing here touches a socket.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use supercolumn::stats::TaskCounts;
use supercolumn::ThreadPoolStats;
use supercolumn_cql::{ConnectedClient, ServerState, ServerTraffic};

use crate::traffic::Traffic;

/// STARTUP options kept per client: a client's handshake frame may carry 64 KiB of them, and
/// every connection's would be held; what a driver sends (its name, version, CQL version,
/// compression) fits well inside these.
const MAX_OPTIONS: usize = 16;
const MAX_OPTION_KEY: usize = 64;
const MAX_OPTION_VALUE: usize = 256;

/// Where a connection's handshake stands, as Cassandra names the stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Stage {
    /// Connected; no STARTUP yet.
    Established = 0,
    /// STARTUP done, the login not yet.
    Authenticating = 1,
    /// Serving requests.
    Ready = 2,
}

/// One connection's entry.
#[derive(Debug)]
pub struct Entry {
    peer: SocketAddr,
    stage: AtomicU8,
    version: AtomicI32,
    options: OnceLock<BTreeMap<String, String>>,
    user: OnceLock<String>,
    requests: AtomicU64,
    /// What crosses the connection, for the metrics.
    pub traffic: Traffic,
}

impl Entry {
    /// The handshake moved on.
    pub fn set_stage(&self, stage: Stage) {
        self.stage.store(stage as u8, Ordering::Relaxed);
    }

    /// STARTUP came with `options` (those past the bounds are not kept).
    pub fn started(&self, options: &HashMap<String, String>) {
        let kept = options
            .iter()
            .filter(|(k, v)| k.len() <= MAX_OPTION_KEY && v.len() <= MAX_OPTION_VALUE)
            .map(|(k, v)| (k.clone(), v.clone()))
            .take(MAX_OPTIONS)
            .collect();
        let _ = self.options.set(kept);
    }

    /// The client logged in as `user`.
    pub fn logged_in(&self, user: &str) {
        let _ = self.user.set(user.to_string());
    }

    /// One more request from it, in protocol `version`.
    pub fn request(&self, version: i32) {
        self.version.store(version, Ordering::Relaxed);
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    fn shown(&self) -> ConnectedClient {
        ConnectedClient {
            address: self.peer.ip(),
            port: self.peer.port(),
            username: self.user.get().cloned(),
            stage: match self.stage.load(Ordering::Relaxed) {
                0 => "established",
                1 => "authenticating",
                _ => "ready",
            },
            protocol_version: self.version.load(Ordering::Relaxed),
            options: self.options.get().cloned().unwrap_or_default(),
            requests: self.requests.load(Ordering::Relaxed),
        }
    }
}

/// Every connection's entry, and the request pool's counts.
#[derive(Debug)]
pub struct Registry {
    next: AtomicU64,
    /// At most the connections admitted (`max_connections`).
    entries: Mutex<HashMap<u64, Arc<Entry>>>,
    /// Requests waiting for, running on and done with the engine.
    pub requests: TaskCounts,
    /// Requests that may run on the engine at once.
    limit: u64,
    /// Connections accepted since the start.
    accepted: AtomicU64,
    /// The traffic of the connections that closed.
    closed: Traffic,
}

/// A connection's place in the registry, given up when it is dropped.
pub struct Registered {
    registry: Arc<Registry>,
    id: u64,
    /// The entry the connection updates.
    pub entry: Arc<Entry>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        // Under the lock, so a scrape counts a closing connection's traffic once.
        let mut entries = self.registry.entries.lock();
        entries.remove(&self.id);
        self.entry.traffic.add_to(&self.registry.closed);
    }
}

impl Registry {
    /// An empty one, for a server running `limit` requests on the engine at once.
    pub fn new(limit: usize) -> Registry {
        Registry {
            next: AtomicU64::new(0),
            entries: Mutex::default(),
            requests: TaskCounts::default(),
            limit: limit as u64,
            accepted: AtomicU64::new(0),
            closed: Traffic::default(),
        }
    }

    /// Registers a connection from `peer`.
    pub fn register(self: &Arc<Self>, peer: SocketAddr) -> Registered {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let entry = Arc::new(Entry {
            peer,
            stage: AtomicU8::new(Stage::Established as u8),
            version: AtomicI32::new(0),
            options: OnceLock::new(),
            user: OnceLock::new(),
            requests: AtomicU64::new(0),
            traffic: Traffic::default(),
        });
        self.accepted.fetch_add(1, Ordering::Relaxed);
        self.entries.lock().insert(id, entry.clone());
        Registered {
            registry: self.clone(),
            id,
            entry,
        }
    }
}

impl ServerState for Registry {
    fn clients(&self) -> Vec<ConnectedClient> {
        let entries: Vec<Arc<Entry>> = self.entries.lock().values().cloned().collect();
        let mut clients: Vec<ConnectedClient> = entries.iter().map(|e| e.shown()).collect();
        clients.sort_by_key(|c| (c.address, c.port));
        clients
    }

    fn thread_pools(&self) -> Vec<ThreadPoolStats> {
        vec![self
            .requests
            .snapshot("Native-Transport-Requests", self.limit)]
    }

    fn traffic(&self) -> ServerTraffic {
        let entries = self.entries.lock();
        let mut shown = ServerTraffic {
            connections: entries.len() as u64,
            connections_total: self.accepted.load(Ordering::Relaxed),
            ..ServerTraffic::default()
        };
        self.closed.show_into(&mut shown);
        for e in entries.values() {
            e.traffic.show_into(&mut shown);
        }
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_leave_with_their_connection_and_keep_bounded_options() {
        let r = Arc::new(Registry::new(8));
        let a = r.register("127.0.0.1:5000".parse().unwrap());
        let b = r.register("127.0.0.1:4000".parse().unwrap());
        let mut options: HashMap<String, String> = (0..100)
            .map(|i| (format!("OPTION_{i}"), "x".into()))
            .collect();
        options.insert("DRIVER_NAME".into(), "d".repeat(MAX_OPTION_VALUE + 1));
        a.entry.request(4);
        a.entry.started(&options);
        a.entry.set_stage(Stage::Ready);
        a.entry.logged_in("alice");
        let shown = r.clients();
        assert_eq!(
            shown.iter().map(|c| c.port).collect::<Vec<_>>(),
            [4000, 5000]
        );
        let c = &shown[1];
        assert_eq!(
            (
                c.stage,
                c.protocol_version,
                c.requests,
                c.username.as_deref()
            ),
            ("ready", 4, 1, Some("alice"))
        );
        assert_eq!(c.options.len(), MAX_OPTIONS);
        assert!(
            !c.options.contains_key("DRIVER_NAME"),
            "an overlong value is not kept"
        );
        assert_eq!(shown[0].stage, "established");
        drop(b);
        assert_eq!(r.clients().len(), 1);
        drop(a);
        assert!(r.clients().is_empty());
    }
}
