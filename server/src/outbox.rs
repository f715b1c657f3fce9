//! Answers waiting to be written, bounded in bytes: per connection (its share) and over the
//! whole server. A request may start running only while its connection's unwritten answers are
//! under the share and the server's are under the total, and at most `max_running` of a
//! connection's requests run at once; so a connection holds at most its share plus what its
//! running requests build. A client that does not read makes its requests wait, then its
//! connection close when the wait passes its deadline. It knows bytes and waits, not what an
//! answer says (`dispatch.rs`) nor the socket (`connection.rs` writes).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Unwritten answer bytes and the wake-up of those waiting for them to drain.
#[derive(Default)]
pub struct Pending {
    bytes: AtomicUsize,
    drained: Notify,
}

impl Pending {
    /// Bytes charged and not yet written.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    fn add(&self, n: usize) {
        self.bytes.fetch_add(n, Ordering::AcqRel);
    }

    fn sub(&self, n: usize) {
        self.bytes.fetch_sub(n, Ordering::AcqRel);
        self.drained.notify_waiters();
    }

    /// Waits until fewer than `limit` bytes are pending; `false` when `deadline` passes first.
    pub async fn wait_below(&self, limit: usize, deadline: Instant) -> bool {
        loop {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            // Registered before the check, so a drain between the check and the wait wakes it.
            drained.as_mut().enable();
            if self.bytes() < limit {
                return true;
            }
            if tokio::time::timeout_at(deadline, drained).await.is_err() {
                return self.bytes() < limit;
            }
        }
    }
}

/// One connection's outbox.
pub struct Outbox {
    /// This connection's unwritten answers.
    pub mine: Arc<Pending>,
    /// Every connection's.
    pub all: Arc<Pending>,
    /// This connection's share.
    pub share: usize,
    /// The server's total.
    pub total: usize,
    running: Arc<Semaphore>,
}

/// An answer frame charged to its outbox: the charge is returned when it is dropped (written,
/// or thrown away with its connection).
pub struct Charged {
    /// The frame (the writer may take it out; the charge stays until this is dropped).
    pub frame: Vec<u8>,
    bytes: usize,
    mine: Arc<Pending>,
    all: Arc<Pending>,
}

impl Drop for Charged {
    fn drop(&mut self) {
        self.mine.sub(self.bytes);
        self.all.sub(self.bytes);
    }
}

/// Why a request may not run now.
#[derive(Debug, PartialEq, Eq)]
pub enum Wait {
    /// This connection's answers are not being read: close it.
    Stalled,
    /// The server's answers are at their total, or this connection's requests are all
    /// running: answer Overloaded.
    Overloaded,
}

impl Outbox {
    /// An outbox with `share` bytes and `max_running` requests for this connection, under the
    /// server's `all` (of `total` bytes).
    pub fn new(all: Arc<Pending>, share: usize, total: usize, max_running: usize) -> Outbox {
        Outbox {
            mine: Arc::new(Pending::default()),
            all,
            share,
            total,
            running: Arc::new(Semaphore::new(max_running.max(1))),
        }
    }

    /// Waits for the right to run one request: a running slot of this connection, its
    /// unwritten answers under its share and the server's under the total. The slot is held
    /// until the answer is charged.
    pub async fn admit(&self, deadline: Instant) -> Result<OwnedSemaphorePermit, Wait> {
        // Waiting for a running slot is waiting for this connection's other requests to run:
        // a busy server, not a client that stopped reading.
        let slot = tokio::time::timeout_at(deadline, self.running.clone().acquire_owned())
            .await
            .map_err(|_| Wait::Overloaded)?
            .map_err(|_| Wait::Overloaded)?;
        if !self.mine.wait_below(self.share, deadline).await {
            return Err(Wait::Stalled);
        }
        if !self.all.wait_below(self.total, deadline).await {
            return Err(Wait::Overloaded);
        }
        Ok(slot)
    }

    /// Charges a built answer (it is already in memory: it is counted at once).
    pub fn charge(&self, frame: Vec<u8>) -> Charged {
        self.mine.add(frame.len());
        self.all.add(frame.len());
        Charged {
            bytes: frame.len(),
            frame,
            mine: self.mine.clone(),
            all: self.all.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_full_share_holds_requests_until_answers_are_written() {
        let all = Arc::new(Pending::default());
        let out = Outbox::new(all.clone(), 100, 1000, 2);
        let soon = || Instant::now() + Duration::from_millis(50);
        let slot = out.admit(soon()).await.unwrap();
        let big = out.charge(vec![0; 150]);
        drop(slot);
        assert_eq!((out.mine.bytes(), all.bytes()), (150, 150));
        assert_eq!(out.admit(soon()).await.unwrap_err(), Wait::Stalled);
        let waiter = {
            let deadline = Instant::now() + Duration::from_secs(5);
            let mine = out.mine.clone();
            tokio::spawn(async move { mine.wait_below(100, deadline).await })
        };
        tokio::task::yield_now().await;
        drop(big); // written
        assert!(waiter.await.unwrap());
        assert_eq!(all.bytes(), 0);
        // The server's total counts every connection's answers.
        let other = Outbox::new(all.clone(), 2000, 1000, 2);
        let held = other.charge(vec![0; 1000]);
        assert_eq!(out.admit(soon()).await.unwrap_err(), Wait::Overloaded);
        drop(held);
        // Running slots: two at once; a third waits, then is told the server is busy.
        let (a, b) = (out.admit(soon()).await, out.admit(soon()).await);
        assert!(a.is_ok() && b.is_ok());
        assert_eq!(out.admit(soon()).await.unwrap_err(), Wait::Overloaded);
    }
}
