//! The engine's background threads — the flusher and the compactor — as one kind of thing: a
//! named thread fed jobs through a channel, optionally woken on a tick when no job comes, and
//! stopped by closing the channel and joining it. What a job means is the caller's.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::stats::{TaskCounts, ThreadPoolStats};

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
    /// Each job, and whether it counts as one of the pool's tasks.
    tx: Mutex<Option<mpsc::Sender<(J, bool)>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    counts: Arc<TaskCounts>,
}

impl<J: Send + 'static> Worker<J> {
    /// Starts a thread named `name` that hands each job (and, every `tick` without one, a
    /// [`Event::Tick`]) to `handle`, in order, until the worker is stopped.
    pub(super) fn start(
        name: &str,
        tick: Option<Duration>,
        mut handle: impl FnMut(Event<J>) + Send + 'static,
    ) -> Result<Worker<J>> {
        let (tx, rx) = mpsc::channel::<(J, bool)>();
        let counts = Arc::new(TaskCounts::default());
        let c = counts.clone();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || loop {
                let job = match tick {
                    None => match rx.recv() {
                        Ok(j) => Some(j),
                        Err(_) => break,
                    },
                    Some(t) => match rx.recv_timeout(t) {
                        Ok(j) => Some(j),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => break,
                    },
                };
                match job {
                    Some((j, true)) => {
                        c.started();
                        handle(Event::Job(j));
                        c.finished();
                    }
                    Some((j, false)) => handle(Event::Job(j)),
                    None => handle(Event::Tick),
                }
            })
            .map_err(|source| Error::Thread {
                name: name.to_string(),
                source,
            })?;
        Ok(Worker {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
            counts,
        })
    }

    /// Queues a job, one of the pool's tasks; a stopped worker drops it.
    pub(super) fn send(&self, job: J) {
        self.counts.queued();
        if !self.queue(job, true) {
            self.counts.dropped();
        }
    }

    /// Queues a job that is not one of the pool's tasks (bookkeeping the thread does).
    pub(super) fn send_uncounted(&self, job: J) {
        self.queue(job, false);
    }

    fn queue(&self, job: J, counted: bool) -> bool {
        match self.tx.lock().as_ref() {
            Some(tx) => tx.send((job, counted)).is_ok(),
            None => false,
        }
    }

    /// The pool's counts, under Cassandra's name for it; one thread runs its tasks.
    pub(super) fn stats(&self, name: &str) -> ThreadPoolStats {
        self.counts.snapshot(name, 1)
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
        w.send_uncounted(101);
        w.stop();
        let jobs: Vec<u32> = seen.lock().iter().copied().filter(|j| *j != 0).collect();
        assert_eq!(jobs, (1..=101).collect::<Vec<_>>());
        let stats = w.stats("TestPool");
        assert_eq!(
            (
                stats.active,
                stats.pending,
                stats.completed,
                stats.active_limit
            ),
            (0, 0, 100, 1),
            "the 100 counted jobs, not the bookkeeping one"
        );
        w.send(1000);
        assert!(
            !seen.lock().contains(&1000),
            "a stopped worker takes no jobs"
        );
        assert_eq!(w.stats("TestPool").pending, 0, "nor counts one as queued");
    }
}
