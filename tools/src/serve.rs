//! `supercolumn serve`: the CQL native protocol on a database until SIGINT or SIGTERM, then a
//! clean stop (no new connections, requests in flight finished, memtables flushed, the
//! database closed).

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use supercolumn::Database;
use supercolumn_server::auth::Credentials;
use supercolumn_server::{Config, Server};

/// Serves `db` on `listen` with the default limits, the connection limit given, and password
/// authentication when `auth`.
pub fn serve(
    db: Database,
    listen: SocketAddr,
    max_connections: usize,
    auth: bool,
) -> anyhow::Result<()> {
    let auth = if auth {
        let creds = Credentials::load(db.path())?;
        anyhow::ensure!(
            !creds.is_empty(),
            "--auth, but no user exists: add one with `supercolumn add-user NAME`"
        );
        Some(Arc::new(creds))
    } else {
        None
    };
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
        let (tx, rx) = tokio::sync::watch::channel(false);
        let stop = tokio::spawn(async move {
            wait_for_signal().await;
            tracing::info!("stop requested: closing connections, finishing requests in flight");
            let _ = tx.send(true);
        });
        server.run(rx).await;
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

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
