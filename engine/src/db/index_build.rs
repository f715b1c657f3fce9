//! Index builds in the background: each on a thread of its own, started by `CREATE INDEX` or
//! by an open that finds an index unbuilt, while reads and writes go on. This file owns the
//! threads, what is known of each build (running, or failed and why) and the waits on them;
//! what a build does is `index.rs`'s.
//!
//! A build holds the database open (its own handle to the shared state), so the last handle a
//! caller drops first stops the builds and joins their threads: the database then closes on
//! that caller's thread, as it would without a build, and an index left unbuilt is built again
//! at the next open.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};

/// A build, by keyspace and index name.
type BuildKey = (String, String);

/// The builds of one database.
#[derive(Debug, Default)]
pub(super) struct IndexBuilds {
    state: Mutex<Builds>,
    /// Signalled whenever a build ends.
    ended: Condvar,
    /// Set when the database closes: builds stop before their next batch of rows.
    stop: AtomicBool,
}

#[derive(Debug, Default)]
struct Builds {
    /// How many builds of each index run now: more than one only while the build of an
    /// index dropped and created again under its name notices and stops.
    running: BTreeMap<BuildKey, usize>,
    /// Why the last build of an index failed, until another starts.
    failed: BTreeMap<BuildKey, String>,
    threads: Vec<JoinHandle<()>>,
}

impl IndexBuilds {
    /// Runs `run` (the build of `keyspace`.`index`, which calls [`Self::ended`] last) on a
    /// thread of its own.
    pub(super) fn start(
        &self,
        keyspace: &str,
        index: &str,
        run: impl FnOnce() + Send + 'static,
    ) -> Result<()> {
        let key = (keyspace.to_string(), index.to_string());
        // Held across the spawn, so the thread's `ended` comes after `running` has its key.
        let mut s = self.state.lock();
        s.threads.retain(|t| !t.is_finished());
        let name = "index-build";
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(run)
            .map_err(|source| Error::Thread {
                name: name.into(),
                source,
            })?;
        s.failed.remove(&key);
        *s.running.entry(key).or_default() += 1;
        s.threads.push(thread);
        Ok(())
    }

    /// Whether builds must stop (the database is closing).
    pub(super) fn stopping(&self) -> &AtomicBool {
        &self.stop
    }

    /// Records the end of the build of `key`, and wakes its waiters.
    pub(super) fn ended(&self, keyspace: &str, index: &str, result: &Result<()>) {
        let key = (keyspace.to_string(), index.to_string());
        let mut s = self.state.lock();
        if let Some(n) = s.running.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                s.running.remove(&key);
            }
        }
        match result {
            Ok(()) => {
                s.failed.remove(&key);
            }
            Err(e) => {
                s.failed.insert(key, e.to_string());
            }
        }
        self.ended.notify_all();
    }

    /// Waits until no build of `keyspace`.`index` runs (true), or `timeout` passes (false).
    pub(super) fn wait(&self, keyspace: &str, index: &str, timeout: Duration) -> bool {
        let key = (keyspace.to_string(), index.to_string());
        let now = Instant::now();
        // A timeout past what an instant can hold waits a year: long enough for any build.
        let year = Duration::from_secs(365 * 24 * 3600);
        let deadline = now.checked_add(timeout).unwrap_or(now + year);
        let mut s = self.state.lock();
        while s.running.contains_key(&key) {
            if self.ended.wait_until(&mut s, deadline).timed_out() {
                return false;
            }
        }
        true
    }

    /// Why the last build of `keyspace`.`index` failed, if it did.
    pub(super) fn failure(&self, keyspace: &str, index: &str) -> Option<String> {
        let key = (keyspace.to_string(), index.to_string());
        self.state.lock().failed.get(&key).cloned()
    }

    /// Stops every build and joins its thread.
    pub(super) fn stop_all(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let threads = std::mem::take(&mut self.state.lock().threads);
        for t in threads {
            let _ = t.join();
        }
    }
}
