//! One client connection: frames read with their limits and timeouts, the handshake (OPTIONS,
//! STARTUP, REGISTER) answered in order, every other request run on a blocking thread while
//! the next is read (many streams in flight, bounded per connection and for the server: when
//! the bound is reached the connection is not read until a request finishes), and answers
//! written by one writer task as they complete. A bad frame closes this connection only.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use cassandra_protocol::frame::message_error::ErrorType;
use cassandra_protocol::frame::message_supported::BodyResSupported;
use cassandra_protocol::frame::{Opcode, Serialize, Version};
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch, Semaphore};

use crate::dispatch::{Answer, Shared};
use crate::frame::{self, HEADER_LEN};
use crate::request::Request;
use crate::{results, Config};

/// What the handshake settled.
struct State {
    ready: bool,
    lz4: bool,
    /// Authenticated, or no authentication asked for.
    authenticated: bool,
}

/// An answer frame ready to write.
type Out = Vec<u8>;

fn protocol_error(version: Version, stream: i16, message: &str) -> Out {
    let body = results::error(ErrorType::Protocol, message, version);
    frame::response(version, stream, Opcode::Error, &body, false)
}

/// Serves one connection until the client closes it, it breaks the protocol beyond repair, it
/// idles past the timeout, or the server shuts down (then the requests in flight finish).
pub async fn serve(
    stream: TcpStream,
    shared: Arc<Shared>,
    config: Arc<Config>,
    engine: Arc<Semaphore>,
    bytes: Arc<Semaphore>,
    mut shutdown: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let (rd, wr) = stream.into_split();
    // Buffered: a driver pipelines many small frames, and one read takes them all.
    let mut rd = tokio::io::BufReader::with_capacity(64 * 1024, rd);
    let (tx, rx) = mpsc::channel::<Out>(1024);
    let mut writer = tokio::spawn(write_loop(wr, rx, config.frame_timeout * 3));
    let in_flight = Arc::new(Semaphore::new(config.max_in_flight_per_connection));
    let keyspace = Arc::new(Mutex::new(None::<String>));
    let mut state = State {
        ready: false,
        lz4: false,
        authenticated: config.auth.is_none(),
    };
    loop {
        if tx.is_closed() {
            break; // the writer gave up on a client that does not read
        }
        let mut h = [0u8; HEADER_LEN];
        let read = tokio::select! {
            r = tokio::time::timeout(config.idle_timeout, rd.read_exact(&mut h)) => r,
            _ = shutdown.changed() => break,
        };
        match read {
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(_) => break, // closed, or idle past the timeout
        }
        let header = match frame::parse_header(&h, config.max_frame) {
            Ok(header) => header,
            Err(e) => {
                let stream = i16::from_be_bytes([h[2], h[3]]);
                let _ = tx
                    .send(protocol_error(Version::V4, stream, &e.to_string()))
                    .await;
                break;
            }
        };
        // The permits first: at the bounds, the next body is not even read (back-pressure
        // before any of it is buffered or decoded).
        let (Ok(conn), Ok(all)) = (
            in_flight.clone().acquire_owned().await,
            engine.clone().acquire_owned().await,
        ) else {
            break;
        };
        // And the bytes: a body, then what it decompresses to, count against the server's
        // budget for requests in flight until the engine is done with them.
        let budget = |n: usize| n.min(config.max_request_bytes).min(u32::MAX as usize) as u32;
        let Ok(mut held) = bytes
            .clone()
            .acquire_many_owned(budget(header.length))
            .await
        else {
            break;
        };
        let mut body = vec![0u8; header.length];
        match tokio::time::timeout(config.frame_timeout, rd.read_exact(&mut body)).await {
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(_) => break, // a half-sent frame
        }
        if let Some(claimed) = frame::claimed_uncompressed(&header, &body, state.lz4) {
            let Ok(more) = bytes
                .clone()
                .acquire_many_owned(budget(claimed.min(config.max_frame)))
                .await
            else {
                break;
            };
            held.merge(more);
        }
        let request = match frame::decode_request(&header, body, state.lz4, config.max_frame) {
            Ok(r) => r,
            Err(e) => {
                let out = protocol_error(header.version, header.stream, &e.to_string());
                if tx.send(out).await.is_err() || !e.recoverable() {
                    break;
                }
                continue;
            }
        };
        let version = header.version;
        let stream = header.stream;
        let answer =
            move |(op, body): Answer, lz4: bool| frame::response(version, stream, op, &body, lz4);
        match request {
            Request::Options => {
                let _ = tx.send(answer(supported(version), false)).await;
            }
            Request::Startup(map) => {
                let out = match map.get("COMPRESSION").map(String::as_str) {
                    None => Ok(false),
                    Some(c) if c.eq_ignore_ascii_case("lz4") => Ok(true),
                    Some(c) => Err(format!(
                        "unsupported compression '{c}' (this server has lz4)"
                    )),
                };
                let out = match out {
                    Ok(lz4) => {
                        state.ready = true;
                        state.lz4 = lz4;
                        if state.authenticated {
                            answer((Opcode::Ready, Vec::new()), false)
                        } else {
                            let mut body = Vec::new();
                            let class = crate::auth::AUTHENTICATOR.as_bytes();
                            body.extend_from_slice(&(class.len() as u16).to_be_bytes());
                            body.extend_from_slice(class);
                            answer((Opcode::Authenticate, body), false)
                        }
                    }
                    Err(m) => protocol_error(version, header.stream, &m),
                };
                let _ = tx.send(out).await;
            }
            _ if !state.ready => {
                let out = protocol_error(version, header.stream, "send STARTUP first");
                let _ = tx.send(out).await;
            }
            Request::AuthResponse(token) => {
                let out = match (&config.auth, state.authenticated) {
                    (Some(creds), false) => {
                        let creds = creds.clone();
                        let token = token.unwrap_or_default();
                        // bcrypt takes milliseconds on purpose: not on the reactor.
                        let who = tokio::task::spawn_blocking(move || creds.check(&token))
                            .await
                            .ok()
                            .flatten();
                        match who {
                            Some(_) => {
                                state.authenticated = true;
                                // AUTH_SUCCESS with a null token.
                                (Opcode::AuthSuccess, (-1i32).to_be_bytes().to_vec())
                            }
                            None => (
                                Opcode::Error,
                                results::error(
                                    ErrorType::Authentication,
                                    "Provided username and/or password are incorrect",
                                    version,
                                ),
                            ),
                        }
                    }
                    _ => (
                        Opcode::Error,
                        results::error(
                            ErrorType::Protocol,
                            "no authentication is in progress on this connection",
                            version,
                        ),
                    ),
                };
                let _ = tx.send(answer(out, state.lz4)).await;
            }
            _ if !state.authenticated => {
                let out =
                    protocol_error(version, header.stream, "authenticate first (AUTH_RESPONSE)");
                let _ = tx.send(out).await;
            }
            Request::Register(_) => {
                let _ = tx
                    .send(answer((Opcode::Ready, Vec::new()), state.lz4))
                    .await;
            }
            request => {
                let (shared, keyspace, tx) = (shared.clone(), keyspace.clone(), tx.clone());
                let lz4 = state.lz4;
                tokio::spawn(async move {
                    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        if shared.runs_inline(&request) {
                            // A prepared write that does not wait for an fsync, or a read of
                            // one partition: on this task, without a thread handoff
                            // (measured: a third more requests/s).
                            run(&shared, &keyspace, request, version)
                        } else {
                            // Anything that may take long (a scan, a schema change, an fsync
                            // in batch mode): the worker's other tasks move to another thread.
                            tokio::task::block_in_place(|| {
                                run(&shared, &keyspace, request, version)
                            })
                        }
                    }));
                    // The engine is done with it: a client slow to read its answers holds
                    // only its own connection's permits.
                    drop((all, held));
                    let out = match run {
                        Ok(a) => answer(a, lz4),
                        Err(_) => {
                            let body = results::error(
                                ErrorType::Server,
                                "the request failed on the server",
                                version,
                            );
                            answer((Opcode::Error, body), lz4)
                        }
                    };
                    let _ = tx.send(out).await;
                    drop(conn);
                });
                continue;
            }
        }
    }
    // Let the requests in flight finish and their answers go out, for a while: a client that
    // does not read them does not hold the shutdown up.
    let deadline = config.frame_timeout * 3;
    let _ = tokio::time::timeout(
        deadline,
        in_flight.acquire_many(config.max_in_flight_per_connection as u32),
    )
    .await;
    drop(tx);
    if tokio::time::timeout(deadline, &mut writer).await.is_err() {
        writer.abort();
    }
}

fn supported(version: Version) -> Answer {
    let data: HashMap<String, Vec<String>> = [
        ("CQL_VERSION", vec![crate::CQL_VERSION.to_string()]),
        ("COMPRESSION", vec!["lz4".to_string()]),
        ("PROTOCOL_VERSIONS", vec!["3/v3".into(), "4/v4".into()]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    (
        Opcode::Supported,
        BodyResSupported { data }.serialize_to_vec(version),
    )
}

fn run(
    shared: &Shared,
    keyspace: &Mutex<Option<String>>,
    request: Request,
    version: Version,
) -> Answer {
    match request {
        Request::Query(text, params) => shared.query(keyspace, &text, &params, version),
        Request::Prepare(text) => shared.prepare(keyspace, &text, version),
        Request::Execute(id, params) => shared.execute(keyspace, &id, &params, version),
        Request::Batch(items, timestamp) => shared.batch(keyspace, &items, timestamp, version),
        _ => (
            Opcode::Error,
            results::error(ErrorType::Protocol, "unexpected request", version),
        ),
    }
}

/// Writes answers as they come; a client that takes none for `timeout` is given up on (the
/// receiver closes, the reader stops, the requests waiting to answer it end).
async fn write_loop(wr: OwnedWriteHalf, mut rx: mpsc::Receiver<Out>, timeout: Duration) {
    let mut w = BufWriter::with_capacity(64 * 1024, wr);
    while let Some(out) = rx.recv().await {
        let wrote = tokio::time::timeout(timeout, async {
            w.write_all(&out).await?;
            // Answers that are already waiting go out in the same write.
            while let Ok(more) = rx.try_recv() {
                w.write_all(&more).await?;
            }
            w.flush().await
        })
        .await;
        if !matches!(wrote, Ok(Ok(()))) {
            rx.close();
            return;
        }
    }
    let _ = w.shutdown().await;
}
