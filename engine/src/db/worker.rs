//! The engine's background threads — the flusher and the compactor — as one kind of thing: a
//! named thread fed jobs through a channel, optionally woken on a tick when no job comes, and
//! stopped by closing the channel and joining it. What a job means is the caller's.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;

use crate::error::{Error, Result};

/// What woke the worker.
pub(super) enum Event<J> {
    /// A job arrived.
    Job(J),
    /// The tick passed without one.
    Tick,
}

/// A background thread and the channel that feeds it.
#[derive(Debug)]
pub(super) struct Worker<J> {
    tx: Mutex<Option<mpsc::Sender<J>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl<J: Send + 'static> Worker<J> {
    /// Starts a thread named `name` that hands each job (and, every `tick` without one, a
    /// [`Event::Tick`]) to `handle`, in order, until the worker is stopped.
    pub(super) fn start(
        name: &str,
        tick: Option<Duration>,
        mut handle: impl FnMut(Event<J>) + Send + 'static,
    ) -> Result<Worker<J>> {
        let (tx, rx) = mpsc::channel::<J>();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || loop {
                let event = match tick {
                    None => match rx.recv() {
                        Ok(j) => Event::Job(j),
                        Err(_) => break,
                    },
                    Some(t) => match rx.recv_timeout(t) {
                        Ok(j) => Event::Job(j),
                        Err(RecvTimeoutError::Timeout) => Event::Tick,
                        Err(RecvTimeoutError::Disconnected) => break,
                    },
                };
                handle(event);
            })
            .map_err(|source| Error::Thread {
                name: name.to_string(),
                source,
            })?;
        Ok(Worker {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Queues a job; a stopped worker drops it.
    pub(super) fn send(&self, job: J) {
        if let Some(tx) = self.tx.lock().as_ref() {
            let _ = tx.send(job);
        }
    }

    /// Lets the worker finish the jobs queued so far, and stops its thread.
    pub(super) fn stop(&self) {
        self.tx.lock().take();
        if let Some(t) = self.thread.lock().take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn jobs_run_in_order_ticks_come_when_idle_and_stop_finishes_the_queue() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let w = Worker::start("test-worker", Some(Duration::from_millis(1)), move |e| {
            s.lock().push(match e {
                Event::Job(j) => j,
                Event::Tick => 0,
            })
        })
        .unwrap();
        for j in 1..=100 {
            w.send(j);
        }
        w.stop();
        let jobs: Vec<u32> = seen.lock().iter().copied().filter(|j| *j != 0).collect();
        assert_eq!(jobs, (1..=100).collect::<Vec<_>>());
        w.send(1000);
        assert!(
            !seen.lock().contains(&1000),
            "a stopped worker takes no jobs"
        );
    }
}
