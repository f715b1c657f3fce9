//! One client connection: frames read with their limits and deadlines, the handshake
//! (`handshake.rs`) answered in order, every other request run on the engine while the next is
//! read, and answers written by one writer task (`writer.rs`) as they complete. Every wait has a
//! deadline: a frame's bytes are taken from the request budgets at once or refused with Overloaded
//! (never part held while waiting for more), a request runs only while its connection's unwritten
//! answers are under their share (`outbox.rs`), and a client that stops reading is closed. A bad
//! frame closes this connection only.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use cassandra_protocol::frame::message_error::ErrorType;
use cassandra_protocol::frame::{Opcode, Version};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch, Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::admission::Ticket;
use crate::clients::{Entry, Stage};
use crate::dispatch::{Answer, Client, Shared};
use crate::frame::{self, Header, HEADER_LEN};
use crate::handshake::{self, Handshake};
use crate::login::Throttle;
use crate::outbox::{Charged, Outbox, Pending, Wait};
use crate::request::Request;
use crate::traffic::Traffic;
use crate::{results, writer, Config};

/// What every connection shares.
pub struct Context {
    /// The database and what the server keeps for it.
    pub shared: Arc<Shared>,
    /// The limits.
    pub config: Arc<Config>,
    /// Requests running on the engine, over all connections.
    pub engine: Arc<Semaphore>,
    /// Bytes of requests in flight, over all connections.
    pub bytes: Arc<Semaphore>,
    /// Answers not yet written, over all connections.
    pub answers: Arc<Pending>,
    /// Failed logins.
    pub throttle: Arc<Throttle>,
}

/// One connection's view of what it holds.
struct Conn {
    cx: Arc<Context>,
    tx: mpsc::Sender<Charged>,
    outbox: Arc<Outbox>,
    /// Bytes of this connection's requests in flight.
    bytes: Arc<Semaphore>,
    /// Set by a request that found the client no longer reads its answers.
    stalled: Arc<Notify>,
    client: Arc<Client>,
    /// Its entry among the server's clients (what it sent, its traffic).
    entry: Arc<Entry>,
}

/// The largest frame a connection may send before its handshake is done.
const HANDSHAKE_FRAME: usize = 64 << 10;

/// The budgets one admitted frame holds until the engine is done with it.
struct Held {
    mine: OwnedSemaphorePermit,
    all: OwnedSemaphorePermit,
}

/// An error answer, counted in `traffic`.
fn error_frame(
    traffic: &Traffic,
    (version, stream): (Version, i16),
    ty: ErrorType,
    message: &str,
    lz4: bool,
) -> Vec<u8> {
    let body = results::error(ty, message, version);
    traffic.answered(Opcode::Error, &body);
    frame::response(version, stream, Opcode::Error, &body, lz4)
}

impl Conn {
    /// Queues a small frame the connection itself answers (an error, the handshake's).
    async fn send(&self, frame: Vec<u8>) -> bool {
        let charged = self.outbox.charge(frame);
        self.tx.send(charged).await.is_ok()
    }

    /// The bytes a frame of `len` body bytes needs, from this connection's share and then the
    /// server's, each within the admission deadline (`None`: answer Overloaded).
    async fn take_bytes(&self, len: usize) -> Option<Held> {
        let c = &self.cx.config;
        let n = len.min(c.max_request_bytes).min(u32::MAX as usize) as u32;
        let deadline = Instant::now() + c.admission_timeout;
        let mine = self.bytes.clone().acquire_many_owned(n.min(self.share()));
        let mine = tokio::time::timeout_at(deadline, mine).await.ok()?.ok()?;
        let all = self.cx.bytes.clone().acquire_many_owned(n);
        let all = tokio::time::timeout_at(deadline, all).await.ok()?.ok()?;
        Some(Held { mine, all })
    }

    fn share(&self) -> u32 {
        let c = &self.cx.config;
        c.max_request_bytes_per_connection
            .clamp(1, u32::MAX as usize) as u32
    }

    /// More bytes for what a compressed body decompresses to: at once, or not at all.
    fn more_bytes(&self, held: &mut Held, n: usize) -> bool {
        let n = n.min(self.cx.config.max_frame).min(u32::MAX as usize) as u32;
        let mine = self
            .bytes
            .clone()
            .try_acquire_many_owned(n.min(self.share()));
        let all = self.cx.bytes.clone().try_acquire_many_owned(n);
        match (mine, all) {
            (Ok(m), Ok(a)) => {
                held.mine.merge(m);
                held.all.merge(a);
                true
            }
            _ => false,
        }
    }
}

/// Serves one connection until the client closes it, it breaks the protocol beyond repair, it
/// idles past the timeout, its handshake passes its deadline, it stops reading its answers, or
/// the server shuts down (then the requests in flight finish, within a deadline).
// Long because it is the connection's one select loop: reading frames, answering them, the idle and
// handshake deadlines and shutdown all act on its state.
pub async fn serve(
    stream: TcpStream,
    peer: SocketAddr,
    mut ticket: Ticket,
    cx: Arc<Context>,
    mut shutdown: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let (rd, wr) = stream.into_split();
    // Buffered: a driver pipelines many small frames, and one read takes them all.
    let mut rd = tokio::io::BufReader::with_capacity(64 * 1024, rd);
    let config = cx.config.clone();
    let (tx, rx) = mpsc::channel::<Charged>(1024);
    let registered = cx.shared.clients.register(peer);
    let entry = registered.entry.clone();
    let mut writer = tokio::spawn(writer::write_loop(
        wr,
        rx,
        config.write_timeout,
        entry.clone(),
    ));
    let conn = Conn {
        outbox: Arc::new(Outbox::new(
            cx.answers.clone(),
            config.max_answer_bytes_per_connection,
            config.max_answer_bytes,
            config.max_running_per_connection,
        )),
        bytes: Arc::new(Semaphore::new(
            config.max_request_bytes_per_connection.max(1),
        )),
        stalled: Arc::new(Notify::new()),
        client: Arc::default(),
        tx,
        cx,
        entry,
    };
    let in_flight = Arc::new(Semaphore::new(config.max_in_flight_per_connection));
    let mut hs = Handshake::new(config.auth.is_none(), peer);
    let entry = &registered.entry;
    let handshake_deadline = Instant::now() + config.handshake_timeout;
    loop {
        if conn.tx.is_closed() {
            break; // the writer gave up on a client that does not read
        }
        // Until the handshake is done, its deadline bounds every wait.
        let deadline = if ticket.handshaking() {
            handshake_deadline.min(Instant::now() + config.idle_timeout)
        } else {
            Instant::now() + config.idle_timeout
        };
        let mut h = [0u8; HEADER_LEN];
        tokio::select! {
            r = tokio::time::timeout_at(deadline, rd.read_exact(&mut h)) => match r {
                Ok(Ok(_)) => {}
                Ok(Err(_)) | Err(_) => break, // closed, idle, or a handshake too slow
            },
            _ = shutdown.changed() => break,
            _ = ticket.evicted() => break,
            _ = conn.stalled.notified() => break,
            _ = conn.tx.closed() => break, // the writer gave up
        }
        // Before the handshake is done only small frames are taken (STARTUP, OPTIONS, a
        // login): a client that has not logged in holds no more than that.
        let limit = if ticket.handshaking() {
            HANDSHAKE_FRAME.min(config.max_frame)
        } else {
            config.max_frame
        };
        let header = match frame::parse_header(&h, limit) {
            Ok(header) => header,
            Err(e) => {
                let stream = i16::from_be_bytes([h[2], h[3]]);
                let f = error_frame(
                    &entry.traffic,
                    (Version::V4, stream),
                    ErrorType::Protocol,
                    &e.to_string(),
                    false,
                );
                conn.send(f).await;
                break;
            }
        };
        let Ok(Ok(slot)) =
            tokio::time::timeout(config.write_timeout, in_flight.clone().acquire_owned()).await
        else {
            break; // its requests do not finish: their answers are not being read
        };
        let Some(mut held) = conn.take_bytes(header.length).await else {
            if !overloaded(&conn, &mut rd, &header, hs.lz4, config.frame_timeout).await {
                break;
            }
            continue;
        };
        let mut body = vec![0u8; header.length];
        let body_deadline = if ticket.handshaking() {
            handshake_deadline.min(Instant::now() + config.frame_timeout)
        } else {
            Instant::now() + config.frame_timeout
        };
        match tokio::time::timeout_at(body_deadline, rd.read_exact(&mut body)).await {
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(_) => break, // a half-sent frame
        }
        entry
            .traffic
            .frame_in(header.opcode, HEADER_LEN + header.length);
        if let Some(claimed) = frame::claimed_uncompressed(&header, &body, hs.lz4) {
            if !conn.more_bytes(&mut held, claimed) {
                drop((body, held));
                let f = overloaded_frame(&entry.traffic, &header, hs.lz4);
                if !conn.send(f).await {
                    break;
                }
                continue;
            }
        }
        let request = match frame::decode_request(&header, body, hs.lz4, config.max_frame) {
            Ok(r) => r,
            Err(e) => {
                let f = error_frame(
                    &entry.traffic,
                    (header.version, header.stream),
                    ErrorType::Protocol,
                    &e.to_string(),
                    false,
                );
                if !conn.send(f).await || !e.recoverable() {
                    break;
                }
                continue;
            }
        };
        let (version, stream) = (header.version, header.stream);
        entry.request(i32::from(u8::from(version)));
        if let Request::Startup(options) = &request {
            entry.started(options);
        }
        let request = match hs
            .answer(request, version, &config, &conn.cx.throttle)
            .await
        {
            handshake::Step::Answer(answer, lz4) => {
                entry.traffic.answered(answer.0, &answer.1);
                let f = frame::response(version, stream, answer.0, &answer.1, lz4);
                if !conn.send(f).await {
                    break;
                }
                if hs.done() {
                    ticket.handshake_done();
                    entry.set_stage(Stage::Ready);
                    if let Some(user) = hs.user.take() {
                        entry.logged_in(&user);
                        let _ = conn.client.user.set(user);
                    }
                } else if hs.started() {
                    entry.set_stage(Stage::Authenticating);
                }
                continue;
            }
            handshake::Step::Run(request) => request,
        };
        // Traced when the client asks, or by `nodetool settraceprobability`'s draw (then
        // without telling the client, as Cassandra does).
        let asked = header.flags & crate::traced::FLAG_TRACING != 0;
        let traced = (asked || conn.cx.shared.db.traces().sample()).then_some((peer, asked));
        spawn_request(
            &conn,
            request,
            (version, stream, hs.lz4),
            traced,
            held,
            slot,
        );
    }
    // Let the requests in flight finish and their answers go out, for a while: a client that
    // does not read them does not hold the shutdown up.
    let deadline = config.write_timeout;
    let _ = tokio::time::timeout(
        deadline,
        in_flight.acquire_many(config.max_in_flight_per_connection as u32),
    )
    .await;
    drop(conn);
    if tokio::time::timeout(deadline, &mut writer).await.is_err() {
        writer.abort();
    }
}

fn overloaded_frame(traffic: &Traffic, header: &Header, lz4: bool) -> Vec<u8> {
    error_frame(
        traffic,
        (header.version, header.stream),
        ErrorType::Overloaded,
        "the server is at its bound of request bytes in flight: try again",
        lz4,
    )
}

/// A frame whose bytes could not be had: its body is read and dropped (in small pieces, so it
/// takes no memory) and it is answered Overloaded. `false`: the connection cannot go on.
async fn overloaded(
    conn: &Conn,
    rd: &mut (impl AsyncRead + Unpin),
    header: &Header,
    lz4: bool,
    timeout: Duration,
) -> bool {
    let (mut body, mut sink) = (rd.take(header.length as u64), tokio::io::sink());
    match tokio::time::timeout(timeout, tokio::io::copy(&mut body, &mut sink)).await {
        Ok(Ok(n)) if n == header.length as u64 => {
            conn.entry
                .traffic
                .frame_in(header.opcode, HEADER_LEN + header.length);
            conn.send(overloaded_frame(&conn.entry.traffic, header, lz4))
                .await
        }
        _ => false,
    }
}

/// Runs a request on the engine once its connection may run one, and queues its answer;
/// `traced`: the client's address and whether it asked, when the request is traced.
fn spawn_request(
    conn: &Conn,
    request: Request,
    (version, stream, lz4): (Version, i16, bool),
    traced: Option<(SocketAddr, bool)>,
    held: Held,
    slot: OwnedSemaphorePermit,
) {
    let (cx, client, tx) = (conn.cx.clone(), conn.client.clone(), conn.tx.clone());
    let (outbox, stalled) = (conn.outbox.clone(), conn.stalled.clone());
    let entry = conn.entry.clone();
    cx.shared.clients.requests.queued();
    tokio::spawn(async move {
        let pool = &cx.shared.clients.requests;
        let deadline = Instant::now() + cx.config.write_timeout;
        let admitted = tokio::time::timeout_at(deadline, async {
            let running = outbox.admit(deadline).await?;
            let engine = cx.engine.clone().acquire_owned().await;
            Ok::<_, Wait>((running, engine.map_err(|_| Wait::Overloaded)?))
        })
        .await
        .unwrap_or(Err(Wait::Overloaded));
        let frame = match admitted {
            Ok((running, engine)) => {
                pool.started();
                let run = |r| run_guarded(&cx.shared, &client, r, version);
                let (answer, session) = match traced {
                    Some((peer, asked)) => {
                        let (a, id) =
                            crate::traced::run(&cx.shared, &peer.ip().to_string(), request, run);
                        (a, asked.then_some(id))
                    }
                    None => (run(request), None),
                };
                // The engine is done with it: a client slow to read its answers holds only
                // its own connection's share.
                drop((engine, held));
                pool.finished();
                entry.traffic.answered(answer.0, &answer.1);
                let f = match &session {
                    Some(id) => {
                        frame::traced_response(version, stream, answer.0, &answer.1, lz4, id)
                    }
                    None => frame::response(version, stream, answer.0, &answer.1, lz4),
                };
                let charged = outbox.charge(f);
                drop(running);
                charged
            }
            Err(Wait::Stalled) => {
                pool.dropped();
                stalled.notify_one();
                return;
            }
            Err(Wait::Overloaded) => {
                pool.turned_away();
                drop(held);
                let f = error_frame(
                    &entry.traffic,
                    (version, stream),
                    ErrorType::Overloaded,
                    "the server is at its bound of answers waiting to be written: try again",
                    lz4,
                );
                outbox.charge(f)
            }
        };
        let _ = tx.send(frame).await;
        drop(slot);
    });
}

/// Runs a request, a panic answered as a server error.
fn run_guarded(shared: &Shared, client: &Client, request: Request, version: Version) -> Answer {
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if shared.runs_inline(&request) {
            // A prepared write that does not wait for an fsync, or a read of one partition:
            // on this task, without a thread handoff (measured: a third more requests/s).
            run(shared, client, request, version)
        } else {
            // Anything that may take long (a scan, a schema change, an fsync in batch mode):
            // the worker's other tasks move to another thread.
            tokio::task::block_in_place(|| run(shared, client, request, version))
        }
    }));
    run.unwrap_or_else(|_| {
        tracing::error!("a request panicked on the server");
        let body = results::error(
            ErrorType::Server,
            "the request failed on the server",
            version,
        );
        (Opcode::Error, body)
    })
}

fn run(shared: &Shared, client: &Client, request: Request, version: Version) -> Answer {
    match request {
        Request::Query(text, params) => shared.query(client, &text, &params, version),
        Request::Prepare(text) => shared.prepare(client, &text, version),
        Request::Execute(id, params) => shared.execute(client, &id, &params, version),
        Request::Batch(items, timestamp) => shared.batch(client, &items, timestamp, version),
        _ => (
            Opcode::Error,
            results::error(ErrorType::Protocol, "unexpected request", version),
        ),
    }
}
