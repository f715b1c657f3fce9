//! supercolumn through the CQL native protocol (`--engine server`, cargo feature `server`): a
//! server on a loopback port over the database, driven by the Rust `scylla` driver with the
//! same tables and prepared statements as `--engine cql`. Each client thread has a session of
//! its own on a single-threaded runtime (its requests leave and return on that thread, with no
//! wake-up of another), so `--threads` is both the requests in flight and the connections.
//! Set beside `--engine cql` it prices the protocol and the loopback.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use scylla::statement::batch::{Batch, BatchStatement, BatchType};
use scylla::statement::prepared::PreparedStatement;
use supercolumn::Database;
use supercolumn_server::{Config, Server};
use tokio::sync::watch;

use super::supercolumn::options;
use super::{Engine, EngineConfig};

const KS: &str = "stress";

pub struct SupercolumnServer {
    db: Arc<Database>,
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    server: Option<std::thread::JoinHandle<()>>,
}

/// One client thread's session, its runtime and its prepared statements.
struct Client {
    addr: SocketAddr,
    rt: tokio::runtime::Runtime,
    session: Session,
    insert_point: PreparedStatement,
    insert_wide: PreparedStatement,
    get: PreparedStatement,
    slice: PreparedStatement,
    slice_reversed: PreparedStatement,
    scan: PreparedStatement,
}

thread_local! {
    static CLIENT: RefCell<Option<Client>> = const { RefCell::new(None) };
}

impl Client {
    fn connect(addr: SocketAddr) -> anyhow::Result<Client> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let session = rt.block_on(
            SessionBuilder::new()
                .known_node(addr.to_string())
                .pool_size(PoolSize::PerHost(std::num::NonZeroUsize::MIN))
                .fetch_schema_metadata(false)
                .build(),
        )?;
        let prepare = |q: String| rt.block_on(session.prepare(q));
        Ok(Client {
            insert_point: prepare(format!("INSERT INTO {KS}.point (k, c, v) VALUES (?, ?, ?)"))?,
            insert_wide: prepare(format!("INSERT INTO {KS}.wide (k, c, v) VALUES (?, ?, ?)"))?,
            get: prepare(format!("SELECT v FROM {KS}.point WHERE k = ? AND c = ?"))?,
            slice: prepare(format!("SELECT c, v FROM {KS}.wide WHERE k = ? LIMIT ?"))?,
            slice_reversed: prepare(format!(
                "SELECT c, v FROM {KS}.wide WHERE k = ? ORDER BY c DESC LIMIT ?"
            ))?,
            scan: prepare(format!(
                "SELECT c, v FROM {KS}.point WHERE token(k) >= token(?) LIMIT ?"
            ))?,
            addr,
            rt,
            session,
        })
    }

    fn rows(
        &self,
        p: &PreparedStatement,
        values: impl scylla::serialize::row::SerializeRow,
    ) -> anyhow::Result<usize> {
        let r = self.rt.block_on(self.session.execute_unpaged(p, values))?;
        Ok(r.into_rows_result()?.rows_num())
    }
}

impl SupercolumnServer {
    pub fn open(dir: &Path, config: EngineConfig) -> anyhow::Result<SupercolumnServer> {
        let db = Arc::new(
            Database::open(dir, options(config))
                .with_context(|| format!("opening {}", dir.display()))?,
        );
        let (stop, stopped) = watch::channel(false);
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let served = db.clone();
        let server = std::thread::Builder::new()
            .name("server".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_multi_thread()
                    .thread_name("server")
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => return drop(addr_tx.send(Err(anyhow::Error::from(e)))),
                };
                rt.block_on(async move {
                    let cfg = Config {
                        listen: ([127, 0, 0, 1], 0).into(),
                        max_connections: 4096,
                        ..Config::default()
                    };
                    match Server::bind(served, cfg).await {
                        Ok(s) => {
                            let _ = addr_tx.send(s.local_addr().map_err(Into::into));
                            s.run(stopped).await;
                        }
                        Err(e) => drop(addr_tx.send(Err(e.into()))),
                    }
                });
            })?;
        let addr = addr_rx.recv().context("the server thread")??;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        rt.block_on(async {
            let session = SessionBuilder::new()
                .known_node(addr.to_string())
                .build()
                .await?;
            for ddl in [
                format!("CREATE KEYSPACE IF NOT EXISTS {KS} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"),
                format!("CREATE TABLE IF NOT EXISTS {KS}.point (k blob, c blob, v blob, PRIMARY KEY (k, c))"),
                format!("CREATE TABLE IF NOT EXISTS {KS}.wide (k blob, c bigint, v blob, PRIMARY KEY (k, c))"),
            ] {
                session.query_unpaged(ddl, ()).await?;
            }
            anyhow::Ok(())
        })?;
        Ok(SupercolumnServer {
            db,
            addr,
            stop,
            server: Some(server),
        })
    }

    /// Runs `f` with this thread's client, connecting it on first use.
    fn with<T>(&self, f: impl FnOnce(&Client) -> anyhow::Result<T>) -> anyhow::Result<T> {
        CLIENT.with(|c| {
            let mut c = c.borrow_mut();
            if c.as_ref().is_none_or(|c| c.addr != self.addr) {
                *c = Some(Client::connect(self.addr)?);
            }
            match c.as_ref() {
                Some(client) => f(client),
                None => anyhow::bail!("no client"),
            }
        })
    }
}

fn limit(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

impl Engine for SupercolumnServer {
    fn put(&self, row: &[u8], column: &[u8], value: &[u8]) -> anyhow::Result<()> {
        self.with(|c| {
            c.rt.block_on(
                c.session
                    .execute_unpaged(&c.insert_point, (row, column, value)),
            )?;
            Ok(())
        })
    }

    fn put_wide(&self, row: &[u8], cells: &[([u8; 8], Vec<u8>)]) -> anyhow::Result<()> {
        self.with(|c| {
            let batch = Batch::new_with_statements(
                BatchType::Unlogged,
                vec![BatchStatement::PreparedStatement(c.insert_wide.clone()); cells.len()],
            );
            let values: Vec<(&[u8], i64, &[u8])> = cells
                .iter()
                .map(|(name, v)| (row, i64::from_be_bytes(*name), v.as_slice()))
                .collect();
            c.rt.block_on(c.session.batch(&batch, values))?;
            Ok(())
        })
    }

    fn get(&self, row: &[u8], column: &[u8]) -> anyhow::Result<bool> {
        self.with(|c| Ok(c.rows(&c.get, (row, column))? > 0))
    }

    fn slice(&self, row: &[u8], count: usize, reversed: bool) -> anyhow::Result<usize> {
        self.with(|c| {
            let p = if reversed {
                &c.slice_reversed
            } else {
                &c.slice
            };
            c.rows(p, (row, limit(count)))
        })
    }

    fn scan(&self, start: &[u8], rows: usize) -> anyhow::Result<usize> {
        self.with(|c| c.rows(&c.scan, (start, limit(rows))))
    }

    cql_tables_maintenance!();

    fn close(mut self: Box<Self>) -> anyhow::Result<()> {
        CLIENT.with(|c| c.borrow_mut().take());
        let _ = self.stop.send(true);
        if let Some(t) = self.server.take() {
            t.join()
                .map_err(|_| anyhow::anyhow!("the server thread panicked"))?;
        }
        let SupercolumnServer { db, .. } = *self;
        let db = Arc::try_unwrap(db).map_err(|_| {
            anyhow::anyhow!("the database is still shared after the server stopped")
        })?;
        Ok(db.close()?)
    }
}
