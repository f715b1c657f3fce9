//! `supercolumn serve`: the CQL native protocol on a database until SIGINT or SIGTERM, then a
//! clean stop (no new connections, requests in flight finished, memtables flushed, the
//! database closed). `nodetool drain` does the first half early: the server stops serving CQL
//! and flushes, and the process waits, its admin address still answering, for the signal.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use supercolumn::Database;
use supercolumn_server::auth::Credentials;
use supercolumn_server::{Config, Server};

/// Serves `db` on `listen` with the default limits, the connection limit given, and password
/// authentication when `auth`; with `admin`, `nodetool`'s and Prometheus's HTTP answers there.
// Long because it is the server's life in order: listen, take the signals, start the admin
// address, serve, drain if asked, then stop, flush and close.
pub fn serve(
    db: Database,
    listen: SocketAddr,
    max_connections: usize,
    auth: bool,
    admin: Option<SocketAddr>,
) -> anyhow::Result<()> {
    let auth = if auth { Some(credentials(&db)?) } else { None };
    if let Some(a) = admin {
        // Without --auth it asks for no password: only this machine may reach it then.
        anyhow::ensure!(
            a.ip().is_loopback() || auth.is_some(),
            "--admin {a}: without --auth the admin address must be a loopback address (it then takes no password)"
        );
    }
    let admin_auth = auth.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("serve")
        .build()
        .context("starting the runtime")?;
    let db = Arc::new(db);
    let config_auth = auth.is_some();
    let config = Config {
        listen,
        max_connections,
        auth,
        ..Config::default()
    };
    runtime.block_on(async {
        let server = Server::bind(db.clone(), config)
            .await
            .with_context(|| format!("listening on {listen}"))?;
        let local = server.local_addr()?;
        // Listened for before the server says it is up, so a stop sent once it has is never
        // taken with the default action (an exit without the flush and close).
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).context("listening for SIGTERM")?;
        let mut int = signal(SignalKind::interrupt()).context("listening for SIGINT")?;
        // `tx` stops the CQL server (a signal, or a drain); `admin_tx` the admin address (a
        // signal only); `drained_tx` says a drain's flush is done.
        let (tx, rx) = tokio::sync::watch::channel(false);
        let (admin_tx, admin_rx) = tokio::sync::watch::channel(false);
        let (drained_tx, drained_rx) = tokio::sync::watch::channel(false);
        let drain = crate::admin::Drain {
            stop_cql: tx.clone(),
            drained: drained_rx,
        };
        if let Some(addr) = admin {
            let app = crate::admin::router((db.clone(), server.state()), local, drain, admin_auth);
            start_admin(addr, app, admin_rx.clone()).await?;
        }
        // Scripts wait for this line (and read the port from it); the log says the same.
        eprintln!("supercolumn: serving CQL (native protocol v3/v4) on {local}");
        tracing::info!(
            "serving CQL on {local}: data in {}, at most {max_connections} connections, {}",
            db.path().display(),
            if config_auth {
                "password authentication"
            } else {
                "no authentication"
            }
        );
        let stop = tokio::spawn(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            tracing::info!("stop requested: closing connections, finishing requests in flight");
            let _ = tx.send(true);
            let _ = admin_tx.send(true);
        });
        server.run(rx).await;
        if !*admin_rx.borrow() {
            // Drained, not stopped: flush now, then wait for the signal.
            tracing::info!("drained: no longer serving CQL; flushing the memtables");
            let flushing = db.clone();
            tokio::task::spawn_blocking(move || flushing.flush_all())
                .await
                .context("the drain's flush stopped")?
                .context("flushing")?;
            tracing::info!("drained; waiting for SIGTERM or SIGINT to close the database");
            let _ = drained_tx.send(true);
            let mut stopped = admin_rx.clone();
            let _ = stopped.wait_for(|s| *s).await;
        }
        stop.abort();
        anyhow::Ok(())
    })?;
    // A request still running on a blocking thread (a long scan) is not waited for forever.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    tracing::info!("stopped serving; flushing the memtables");
    db.flush_all().context("flushing")?;
    let db = Arc::try_unwrap(db)
        .map_err(|_| anyhow::anyhow!("the database is still in use after the server stopped"))?;
    db.close().context("closing the database")?;
    tracing::info!("closed the database");
    Ok(())
}

/// The users `--auth` checks passwords against; there must be one.
fn credentials(db: &Database) -> anyhow::Result<Arc<Credentials>> {
    let creds = Credentials::load(db.path())?;
    anyhow::ensure!(
        !creds.is_empty(),
        "--auth, but no user exists: add one with `supercolumn add-user NAME`"
    );
    Ok(Arc::new(creds))
}

/// Serves the admin address (`nodetool`, `/metrics`) until `stop` changes.
async fn start_admin(
    addr: SocketAddr,
    app: axum::Router,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("--admin {addr}"))?;
    let bound = listener.local_addr()?;
    tokio::spawn(async move {
        let stopped = async move {
            let _ = stop.changed().await;
        };
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(stopped)
            .await
        {
            tracing::error!("the admin address stopped: {e}");
        }
    });
    // Scripts read the admin port from this line, printed before the CQL one.
    eprintln!("supercolumn: admin (nodetool, /metrics) on {bound}");
    tracing::info!("admin (nodetool, /metrics) on {bound}");
    Ok(())
}
