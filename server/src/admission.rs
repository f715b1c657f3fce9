//! Who gets a connection: at most `max_connections` in all and `max_connections_per_address`
//! from one peer address, and at most `max_handshaking` that have not finished their handshake
//! (STARTUP, and the login under `--auth`). When that last pool is full, the connection that
//! has waited longest in it, from the address holding most of the pool, is told to close:
//! clients that open connections and never log in cannot lock out one that does (a real
//! handshake takes milliseconds), nor can one address flooding the pool push out the others. The handshake's
//! own deadline is `connection.rs`'s; this file only counts.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::Notify;

/// The bounds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections in all.
    pub total: usize,
    /// Connections from one peer address.
    pub per_address: usize,
    /// Connections still in their handshake.
    pub handshaking: usize,
}

#[derive(Default)]
struct Counts {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
    /// Handshaking connections by admission order, each with its address and eviction signal.
    handshaking: BTreeMap<u64, (IpAddr, Arc<Notify>)>,
    next: u64,
}

/// The server's admission counts.
pub struct Admission {
    limits: Limits,
    counts: Mutex<Counts>,
}

/// One admitted connection's place; dropping it frees the place.
pub struct Ticket {
    admission: Arc<Admission>,
    address: IpAddr,
    seq: u64,
    handshaking: bool,
    evict: Arc<Notify>,
}

impl Admission {
    /// Counts for `limits`.
    pub fn new(limits: Limits) -> Arc<Admission> {
        Arc::new(Admission {
            limits,
            counts: Mutex::default(),
        })
    }

    /// A place for a connection from `address`, or `None` when the server or that address is
    /// at its bound. A full handshake pool makes room by evicting its oldest member.
    pub fn admit(self: &Arc<Self>, address: IpAddr) -> Option<Ticket> {
        let mut c = self.counts.lock();
        let from_here = c.by_address.get(&address).copied().unwrap_or(0);
        if c.total >= self.limits.total || from_here >= self.limits.per_address {
            return None;
        }
        if c.handshaking.len() >= self.limits.handshaking.max(1) {
            if let Some(seq) = evictee(&c.handshaking) {
                if let Some((_, oldest)) = c.handshaking.remove(&seq) {
                    // It closes when it next looks; its place is taken now.
                    oldest.notify_one();
                }
            }
        }
        c.total += 1;
        *c.by_address.entry(address).or_default() += 1;
        let seq = c.next;
        c.next += 1;
        let evict = Arc::new(Notify::new());
        c.handshaking.insert(seq, (address, evict.clone()));
        Some(Ticket {
            admission: self.clone(),
            address,
            seq,
            handshaking: true,
            evict,
        })
    }

    /// Connections admitted and not yet closed.
    #[cfg(test)]
    pub fn connections(&self) -> usize {
        self.counts.lock().total
    }
}

/// The oldest handshaking connection of the address holding the most of the pool.
fn evictee(pool: &BTreeMap<u64, (IpAddr, Arc<Notify>)>) -> Option<u64> {
    let mut per: HashMap<IpAddr, usize> = HashMap::new();
    for (address, _) in pool.values() {
        *per.entry(*address).or_default() += 1;
    }
    let busiest = per.into_iter().max_by_key(|(_, n)| *n)?.0;
    pool.iter()
        .find(|(_, (a, _))| *a == busiest)
        .map(|(seq, _)| *seq)
}

impl Ticket {
    /// The handshake is done: this connection leaves the handshake pool.
    pub fn handshake_done(&mut self) {
        if std::mem::take(&mut self.handshaking) {
            self.admission.counts.lock().handshaking.remove(&self.seq);
        }
    }

    /// Whether it is still in its handshake.
    pub fn handshaking(&self) -> bool {
        self.handshaking
    }

    /// Resolves when a newer connection took this one's place in the handshake pool.
    pub async fn evicted(&self) {
        if self.handshaking {
            self.evict.notified().await
        } else {
            std::future::pending().await
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut c = self.admission.counts.lock();
        c.total -= 1;
        if let Some(n) = c.by_address.get_mut(&self.address) {
            *n -= 1;
            if *n == 0 {
                c.by_address.remove(&self.address);
            }
        }
        if self.handshaking {
            c.handshaking.remove(&self.seq);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_bounds_hold_and_a_full_handshake_pool_evicts_its_oldest() {
        let a = Admission::new(Limits {
            total: 4,
            per_address: 3,
            handshaking: 2,
        });
        let (x, y): (IpAddr, IpAddr) = ("127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap());
        let first = a.admit(x).unwrap();
        let mut second = a.admit(x).unwrap();
        second.handshake_done();
        let third = a.admit(x).unwrap();
        assert!(a.admit(x).is_none(), "three from one address");
        let fourth = a.admit(y).unwrap();
        // The pool held `first` and `third` (both from x); `fourth` took `first`'s place.
        tokio::time::timeout(std::time::Duration::from_secs(1), first.evicted())
            .await
            .expect("the oldest is evicted");
        assert!(a.admit(y).is_none(), "four in all");
        drop((first, third));
        assert_eq!(a.connections(), 2);
        let _again = a.admit(x).unwrap();
        drop((second, fourth));
        assert_eq!(a.connections(), 1);
    }

    #[tokio::test]
    async fn a_full_pool_evicts_from_the_address_holding_most_of_it() {
        let a = Admission::new(Limits {
            total: 100,
            per_address: 100,
            handshaking: 3,
        });
        let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
        let lone = a.admit(ip("10.0.0.1")).unwrap(); // the oldest, but alone from its address
        let flood: Vec<Ticket> = (0..2).map(|_| a.admit(ip("10.0.0.2")).unwrap()).collect();
        let _new = a.admit(ip("10.0.0.3")).unwrap();
        let soon = std::time::Duration::from_millis(200);
        assert!(tokio::time::timeout(soon, flood[0].evicted()).await.is_ok());
        assert!(
            tokio::time::timeout(soon, lone.evicted()).await.is_err(),
            "kept"
        );
    }
}
