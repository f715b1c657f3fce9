//! The admin address of `supercolumn serve` (`--admin`, loopback only): HTTP with JSON answers
//! for `nodetool` (`status`, `info`, `tablestats`, `compactionstats`, `tpstats`,
//! `clientstats`, `flush`, `compact`, `import`,
//! `snapshot`, `listsnapshots`, `clearsnapshot`, `getlogginglevels`, `setlogginglevel`) and
//! `GET /metrics` for Prometheus, served by `axum` on the server's runtime. The answers are
//! built by `report.rs` and `metrics.rs`; this file only routes. It holds no state of its own
//! beyond the database, the CQL server's view of its clients and when the server started.

pub mod metrics;
pub mod report;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Query, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::Value;
use supercolumn::Database;
use supercolumn_cql::ServerState;
use supercolumn_server::auth::Credentials;

/// What the handlers share.
#[derive(Clone)]
struct Admin {
    db: Arc<Database>,
    /// The CQL server's clients and request pool.
    server: Arc<dyn ServerState>,
    /// The CQL address, as `status` and `info` show it.
    native: String,
    started: Instant,
    drain: Drain,
}

impl Admin {
    /// The CQL address, while CQL is served (not after a drain).
    fn serving(&self) -> Option<&str> {
        (!*self.drain.stop_cql.borrow()).then_some(self.native.as_str())
    }
}

/// How `drain` stops the CQL server and learns its flush is done.
#[derive(Clone)]
pub struct Drain {
    /// Set to stop serving CQL.
    pub stop_cql: tokio::sync::watch::Sender<bool>,
    /// Becomes true once the memtables are flushed after the stop.
    pub drained: tokio::sync::watch::Receiver<bool>,
}

/// How long `drain` waits for the connections to finish and the flush.
const DRAIN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(3600);

/// The tables a request names: `?targets=ks,ks2.table` (none: every table).
#[derive(serde::Deserialize, Default)]
struct Targets {
    #[serde(default)]
    targets: String,
}

impl Targets {
    fn list(&self) -> Vec<String> {
        self.targets
            .split(',')
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect()
    }
}

/// A snapshot request: `?tag=t&targets=ks1,ks2` (no tag: one made of the time; for
/// `clearsnapshot`, no tag: every snapshot).
#[derive(serde::Deserialize, Default)]
struct Snap {
    #[serde(default)]
    tag: Option<String>,
    #[serde(default)]
    targets: String,
    /// `clearsnapshot --all`: without it and a tag, nothing is cleared.
    #[serde(default)]
    all: bool,
}

impl Snap {
    fn keyspaces(&self) -> Vec<String> {
        Targets {
            targets: self.targets.clone(),
        }
        .list()
    }
}

/// A trace probability to set: `?value=0.1`.
#[derive(serde::Deserialize)]
struct Probability {
    value: f64,
}

/// A log level to set: `?target=supercolumn::db&level=DEBUG` (both empty: reset).
#[derive(serde::Deserialize, Default)]
struct Level {
    #[serde(default)]
    target: String,
    #[serde(default)]
    level: String,
}

/// An import to run (`supercolumn import` against a running server): the file, on this
/// machine, and the CSV options (no table: an export file's statements).
#[derive(serde::Deserialize)]
struct Import {
    file: std::path::PathBuf,
    table: Option<String>,
    #[serde(default)]
    header: bool,
    delimiter: Option<u8>,
    #[serde(default)]
    null: String,
    /// Comma-separated.
    columns: Option<String>,
}

impl Import {
    fn run(self, db: &Database) -> anyhow::Result<Value> {
        let o = crate::import::CsvOptions {
            header: self.header,
            delimiter: self.delimiter.unwrap_or(b','),
            null: self.null,
            columns: self
                .columns
                .map(|c| c.split(',').map(str::to_string).collect()),
            progress: false,
            keep_rejected: crate::import::REJECTED_SENT,
        };
        let summary = crate::import::summary(db, &self.file, self.table.as_deref(), &o)?;
        Ok(serde_json::to_value(summary)?)
    }
}

/// An error as the answer: 400 with its one line.
fn refused(e: anyhow::Error) -> Response {
    (StatusCode::BAD_REQUEST, format!("{e:#}")).into_response()
}

fn answer(v: anyhow::Result<Value>) -> Response {
    match v {
        Ok(v) => Json(v).into_response(),
        Err(e) => refused(e),
    }
}

/// The admin routes over `db`.
/// With `credentials` (the server's `--auth`), every request must carry one of their users'
/// name and password (HTTP basic authentication), as `nodetool -u NAME --password P` sends
/// them; a request without is answered 401.
pub fn router(
    (db, server): (Arc<Database>, Arc<dyn ServerState>),
    native: SocketAddr,
    drain: Drain,
    credentials: Option<Arc<Credentials>>,
) -> Router {
    let routes = routes(db, server, native, drain);
    match credentials {
        None => routes,
        Some(c) => routes.layer(axum::middleware::from_fn(
            move |req: Request, next: Next| {
                let c = c.clone();
                let given = req
                    .headers()
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                async move {
                    if authorized(c, given).await {
                        next.run(req).await
                    } else {
                        (
                            StatusCode::UNAUTHORIZED,
                            [(header::WWW_AUTHENTICATE, "Basic realm=\"supercolumn\"")],
                            "a user name and password are needed: nodetool -u NAME --password P",
                        )
                            .into_response()
                    }
                }
            },
        )),
    }
}

/// Whether a request's `Authorization` header names a user of `credentials` with the right
/// password (the check, a bcrypt, runs on a blocking thread).
async fn authorized(credentials: Arc<Credentials>, given: Option<String>) -> bool {
    use base64::Engine;
    let Some(basic) = given.as_deref().and_then(|v| v.strip_prefix("Basic ")) else {
        return false;
    };
    // A header is bounded by the HTTP server; a name and password fit in far less.
    if basic.len() > 1024 {
        return false;
    }
    let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(basic.trim()) else {
        return false;
    };
    let Some(colon) = decoded.iter().position(|&b| b == b':') else {
        return false;
    };
    // The SASL PLAIN token the CQL server checks: authzid, user, password.
    let mut token = vec![0];
    token.extend_from_slice(&decoded[..colon]);
    token.push(0);
    token.extend_from_slice(&decoded[colon + 1..]);
    tokio::task::spawn_blocking(move || credentials.check(&token).is_some())
        .await
        .unwrap_or(false)
}

// Long because it is the table of routes, one short handler per nodetool command.
fn routes(
    db: Arc<Database>,
    server: Arc<dyn ServerState>,
    native: SocketAddr,
    drain: Drain,
) -> Router {
    let state = Admin {
        db,
        server,
        native: native.to_string(),
        started: Instant::now(),
        drain,
    };
    Router::new()
        .route(
            "/status",
            get(|State(a): State<Admin>| async move { answer(report::status(&a.db, a.serving())) }),
        )
        .route(
            "/info",
            get(|State(a): State<Admin>| async move {
                answer(report::info(
                    &a.db,
                    a.serving(),
                    a.started.elapsed().as_secs(),
                ))
            }),
        )
        .route(
            "/tablestats",
            get(
                |State(a): State<Admin>, Query(t): Query<Targets>| async move {
                    answer(report::tablestats(&a.db, &t.list()))
                },
            ),
        )
        .route(
            "/compactionstats",
            get(|State(a): State<Admin>| async move { answer(report::compactionstats(&a.db)) }),
        )
        .route(
            "/tpstats",
            get(|State(a): State<Admin>| async move {
                Json(report::tpstats(&a.db, Some(a.server.as_ref())))
            }),
        )
        .route(
            "/clientstats",
            get(|State(a): State<Admin>| async move { Json(report::clientstats(a.server.as_ref())) }),
        )
        .route(
            "/flush",
            post(
                |State(a): State<Admin>, Query(t): Query<Targets>| async move {
                    maintain(a.db, t.list(), Database::flush).await
                },
            ),
        )
        .route(
            "/compact",
            post(
                |State(a): State<Admin>, Query(t): Query<Targets>| async move {
                    maintain(a.db, t.list(), Database::compact).await
                },
            ),
        )
        .route(
            "/snapshot",
            post(|State(a): State<Admin>, Query(s): Query<Snap>| async move {
                blocking(move || report::snapshot(&a.db, s.tag.as_deref(), &s.keyspaces())).await
            }),
        )
        .route(
            "/import",
            post(|State(a): State<Admin>, Query(i): Query<Import>| async move {
                blocking(move || i.run(&a.db)).await
            }),
        )
        .route(
            "/listsnapshots",
            get(|State(a): State<Admin>| async move { answer(report::listsnapshots(&a.db)) }),
        )
        .route(
            "/clearsnapshot",
            post(|State(a): State<Admin>, Query(s): Query<Snap>| async move {
                if s.tag.is_none() && !s.all {
                    return refused(anyhow::anyhow!("Specify snapshot name or --all"));
                }
                answer(report::clearsnapshot(
                    &a.db,
                    s.tag.as_deref(),
                    &s.keyspaces(),
                ))
            }),
        )
        .route(
            "/drain",
            post(|State(a): State<Admin>| async move {
                let _ = a.drain.stop_cql.send(true);
                let mut drained = a.drain.drained.clone();
                let done = tokio::time::timeout(DRAIN_DEADLINE, async move {
                    drained.wait_for(|d| *d).await.is_ok()
                })
                .await;
                match done {
                    Ok(true) => answer(Ok(Value::Null)),
                    Ok(false) => {
                        refused(anyhow::anyhow!("the server stopped before the drain ended"))
                    }
                    Err(_) => refused(anyhow::anyhow!("the drain took over an hour")),
                }
            }),
        )
        .route(
            "/traceprobability",
            get(|State(a): State<Admin>| async move {
                answer(Ok(serde_json::json!(a.db.traces().probability())))
            })
            .post(
                |State(a): State<Admin>, Query(p): Query<Probability>| async move {
                    let set = a.db.traces().set_probability(p.value);
                    answer(set.map(|()| Value::Null).map_err(anyhow::Error::msg))
                },
            ),
        )
        .route(
            "/logginglevels",
            get(|| async {
                let levels = crate::logging::levels();
                Json(Value::Array(
                    levels
                        .into_iter()
                        .map(|(t, l)| serde_json::json!({ "target": t, "level": l }))
                        .collect(),
                ))
                .into_response()
            }),
        )
        .route(
            "/logginglevel",
            post(|Query(l): Query<Level>| async move {
                answer(crate::logging::set_level(&l.target, &l.level).map(|()| Value::Null))
            }),
        )
        .route(
            "/metrics",
            get(|State(a): State<Admin>| async move {
                let uptime = a.started.elapsed().as_secs();
                match metrics::scrape(&a.db, uptime, Some(a.server.as_ref())) {
                    Ok(text) => (
                        // What prometheus-client writes (counters' samples in `_total`,
                        // a closing `# EOF`) is OpenMetrics text, and says so.
                        [(
                            header::CONTENT_TYPE,
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        )],
                        text,
                    )
                        .into_response(),
                    Err(e) => refused(e),
                }
            }),
        )
        .with_state(state)
}

/// Flushes or compacts the tables named (every table without names) on a blocking thread, as
/// both wait for files to be written.
async fn maintain(
    db: Arc<Database>,
    targets: Vec<String>,
    op: fn(&Database, &str, Option<&str>) -> supercolumn::Result<()>,
) -> Response {
    blocking(move || {
        for (ks, cf) in report::tables(&db, &targets)? {
            op(&db, &ks, Some(&cf))?;
        }
        Ok(Value::Null)
    })
    .await
}

/// `work`'s answer, run on a blocking thread (it flushes, compacts or links files).
async fn blocking(work: impl FnOnce() -> anyhow::Result<Value> + Send + 'static) -> Response {
    match tokio::task::spawn_blocking(work).await {
        Ok(v) => answer(v),
        Err(e) => refused(anyhow::anyhow!("the request stopped: {e}")),
    }
}
