//! The CQL native protocol (v3 and v4) over a supercolumn [`Database`]: what `supercolumn
//! serve` runs, so that cqlsh and the standard drivers connect. Frames are checked and bounded
//! (`frame.rs`), each connection is served by its own task (`connection.rs`), requests run on
//! the engine through the CQL layer (`dispatch.rs`), the system tables drivers read are built
//! from the catalog (`system/`). The engine knows nothing of this crate.

mod admission;
pub mod auth;
mod clients;
mod connection;
mod dispatch;
mod frame;
mod handshake;
mod login;
mod outbox;
mod paging;
mod prepared_cache;
mod request;
mod results;
mod traced;
mod traffic;
mod writer;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use supercolumn::Database;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

pub use frame::FrameError;

pub use supercolumn_cql::{CQL_VERSION, RELEASE_VERSION};

/// The server's limits. Every buffer a client can grow is bounded here in bytes, and every
/// wait has a deadline (the README's safety list says what a client sees at each).
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen (loopback unless told otherwise).
    pub listen: SocketAddr,
    /// The largest frame body accepted; a longer one is refused before it is read.
    pub max_frame: usize,
    /// Connections served at once; one over is closed as soon as it is accepted.
    pub max_connections: usize,
    /// Connections from one peer address.
    pub max_connections_per_address: usize,
    /// Connections still in their handshake; when full, the oldest of them is closed to make
    /// room for a new one.
    pub max_handshaking: usize,
    /// A connection must finish STARTUP (and its login under `--auth`) within this.
    pub handshake_timeout: Duration,
    /// Requests in flight on one connection before it is no longer read.
    pub max_in_flight_per_connection: usize,
    /// Requests of one connection running on the engine at once.
    pub max_running_per_connection: usize,
    /// Requests running on the engine at once, over all connections.
    pub max_in_flight: usize,
    /// Bytes of requests (bodies, and what compressed ones decompress to) in flight at once,
    /// over all connections.
    pub max_request_bytes: usize,
    /// The same, for one connection.
    pub max_request_bytes_per_connection: usize,
    /// How long a frame may wait for its bytes or a request for the engine before it is
    /// answered Overloaded.
    pub admission_timeout: Duration,
    /// Bytes of answers not yet written, over all connections.
    pub max_answer_bytes: usize,
    /// The same, for one connection: at its share, the connection's requests wait.
    pub max_answer_bytes_per_connection: usize,
    /// A client that takes no answer bytes for this long is closed.
    pub write_timeout: Duration,
    /// A connection that sends nothing for this long is closed (drivers send a heartbeat
    /// every 30 seconds).
    pub idle_timeout: Duration,
    /// A frame whose body does not arrive within this is dropped with its connection.
    pub frame_timeout: Duration,
    /// After shutdown is asked for, connections still open past this are cut.
    pub shutdown_timeout: Duration,
    /// The users to authenticate (PasswordAuthenticator); `None`: no authentication.
    pub auth: Option<Arc<auth::Credentials>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 9042)),
            max_frame: 16 << 20,
            max_connections: 2048,
            max_connections_per_address: 1024,
            max_handshaking: 256,
            handshake_timeout: Duration::from_secs(5),
            max_in_flight_per_connection: 1024,
            max_running_per_connection: 8,
            max_in_flight: 4096,
            max_request_bytes: 256 << 20,
            max_request_bytes_per_connection: 64 << 20,
            admission_timeout: Duration::from_secs(2),
            max_answer_bytes: 256 << 20,
            max_answer_bytes_per_connection: 16 << 20,
            write_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            frame_timeout: Duration::from_secs(10),
            shutdown_timeout: Duration::from_secs(15),
            auth: None,
        }
    }
}

/// A bound server, not yet serving.
pub struct Server {
    listener: TcpListener,
    config: Arc<Config>,
    shared: Arc<dispatch::Shared>,
}

impl Server {
    /// Binds `config.listen` for `db`.
    pub async fn bind(db: Arc<Database>, config: Config) -> std::io::Result<Server> {
        let listener = TcpListener::bind(config.listen).await?;
        let local = listener.local_addr()?;
        let clients = Arc::new(clients::Registry::new(config.max_in_flight));
        let shared = Arc::new(dispatch::Shared {
            db,
            clients: clients.clone(),
            prepared: prepared_cache::Cache::new(prepared_cache::MAX_PREPARED_BYTES),
            node: supercolumn_cql::Node {
                address: local.ip().to_string(),
                port: local.port(),
                server: Some(clients),
            },
            pages: paging::Sealer::new()?,
        });
        Ok(Server {
            listener,
            config: Arc::new(config),
            shared,
        })
    }

    /// Its view of its clients and request pool (what `system_views.clients` and
    /// `thread_pools` show), for an admin interface beside it.
    pub fn state(&self) -> Arc<dyn supercolumn_cql::ServerState> {
        self.shared.clients.clone()
    }

    /// The address it listens on (the port chosen when `listen` asked for port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` turns true: then it stops accepting, lets the requests in
    /// flight finish and their answers go out, and returns; connections still open after
    /// `shutdown_timeout` are cut.
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) {
        let c = &self.config;
        let cx = Arc::new(connection::Context {
            shared: self.shared.clone(),
            config: self.config.clone(),
            engine: Arc::new(Semaphore::new(c.max_in_flight)),
            bytes: Arc::new(Semaphore::new(c.max_request_bytes)),
            answers: Arc::default(),
            throttle: Arc::default(),
        });
        let admission = admission::Admission::new(admission::Limits {
            total: c.max_connections,
            per_address: c.max_connections_per_address,
            handshaking: c.max_handshaking,
        });
        let mut tasks = JoinSet::new();
        loop {
            let accepted = tokio::select! {
                a = self.listener.accept() => a,
                _ = shutdown.changed() => break,
            };
            // Reap finished connections so the set stays the size of the live ones.
            while tasks.try_join_next().is_some() {}
            let Ok((stream, peer)) = accepted else {
                // Out of file descriptors, say: wait a little rather than spin.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let Some(ticket) = admission.admit(peer.ip()) else {
                drop(stream);
                continue;
            };
            let (cx, rx) = (cx.clone(), shutdown.clone());
            tasks.spawn(connection::serve(stream, peer, ticket, cx, rx));
        }
        let all_closed = async { while tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(c.shutdown_timeout, all_closed)
            .await
            .is_err()
        {
            tracing::warn!(
                open = tasks.len(),
                "connections still open at the shutdown deadline are cut"
            );
            tasks.shutdown().await;
        }
    }
}

/// Frame decoding as a connection does it, for the `native_frame` fuzz target and the tests
/// that run its body: every frame in `data` (headers, bodies, LZ4 when `lz4`) is checked and
/// decoded, as far as the bytes go; nothing may panic. Returns how many decoded.
pub fn fuzz_frames(data: &[u8], lz4: bool) -> usize {
    let mut decoded = 0;
    let mut rest = data;
    while let Some((h, tail)) = rest.split_first_chunk::<{ frame::HEADER_LEN }>() {
        let Ok(header) = frame::parse_header(h, 1 << 20) else {
            break;
        };
        let Some(body) = tail.get(..header.length) else {
            break;
        };
        decoded += usize::from(frame::decode_request(&header, body.to_vec(), lz4, 1 << 20).is_ok());
        rest = &tail[header.length..];
    }
    decoded
}
