//! What crosses one connection, counted for the server's metrics: bytes in and out, requests
//! by opcode and error answers by code. Each connection counts into its own [`Traffic`] (one
//! task reads its frames, one writes its answers, so no counter is shared between cores on the
//! request path); the registry sums the open connections' and those that closed. Nothing here
//! reads or writes a socket.

use std::sync::atomic::{AtomicU64, Ordering};

use cassandra_protocol::frame::Opcode;
use supercolumn_cql::ServerTraffic;

/// The request opcodes of protocol v3–v5, by their byte, named as the spec names them.
const REQUESTS: [(u8, &str); 8] = [
    (0x01, "STARTUP"),
    (0x05, "OPTIONS"),
    (0x07, "QUERY"),
    (0x09, "PREPARE"),
    (0x0A, "EXECUTE"),
    (0x0B, "REGISTER"),
    (0x0D, "BATCH"),
    (0x0F, "AUTH_RESPONSE"),
];

/// The error codes of protocol v4–v5, named as the spec names them; any other code counts as
/// the last, `OTHER`.
const ERRORS: [(i32, &str); 19] = [
    (0x0000, "SERVER_ERROR"),
    (0x000A, "PROTOCOL_ERROR"),
    (0x0100, "AUTHENTICATION_ERROR"),
    (0x1000, "UNAVAILABLE"),
    (0x1001, "OVERLOADED"),
    (0x1002, "IS_BOOTSTRAPPING"),
    (0x1003, "TRUNCATE_ERROR"),
    (0x1100, "WRITE_TIMEOUT"),
    (0x1200, "READ_TIMEOUT"),
    (0x1300, "READ_FAILURE"),
    (0x1400, "FUNCTION_FAILURE"),
    (0x1500, "WRITE_FAILURE"),
    (0x2000, "SYNTAX_ERROR"),
    (0x2100, "UNAUTHORIZED"),
    (0x2200, "INVALID"),
    (0x2300, "CONFIG_ERROR"),
    (0x2400, "ALREADY_EXISTS"),
    (0x2500, "UNPREPARED"),
    (-1, "OTHER"),
];

/// One connection's counts (or, in the registry, those of the connections that closed).
#[derive(Debug, Default)]
pub struct Traffic {
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    /// By position in `REQUESTS`, then one for an opcode that is not a request's.
    requests: [AtomicU64; REQUESTS.len() + 1],
    errors: [AtomicU64; ERRORS.len()],
}

impl Traffic {
    /// A frame of `bytes` bytes, header included, with this opcode byte was read.
    pub fn frame_in(&self, opcode: u8, bytes: usize) {
        add(&self.bytes_in, bytes as u64);
        let at = REQUESTS
            .iter()
            .position(|(o, _)| *o == opcode)
            .unwrap_or(REQUESTS.len());
        add(&self.requests[at], 1);
    }

    /// `bytes` bytes of answers were written.
    pub fn bytes_out(&self, bytes: usize) {
        add(&self.bytes_out, bytes as u64);
    }

    /// An answer (its opcode and unframed body) is about to be sent: an error's code counts.
    pub fn answered(&self, opcode: Opcode, body: &[u8]) {
        if opcode != Opcode::Error {
            return;
        }
        let code = body
            .get(..4)
            .map_or(-1, |b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let at = ERRORS
            .iter()
            .position(|(c, _)| *c == code)
            .unwrap_or(ERRORS.len() - 1);
        add(&self.errors[at], 1);
    }

    /// Adds these counts to `other`'s (a closing connection's into the registry's).
    pub fn add_to(&self, other: &Traffic) {
        add(&other.bytes_in, self.bytes_in.load(Ordering::Relaxed));
        add(&other.bytes_out, self.bytes_out.load(Ordering::Relaxed));
        for (mine, theirs) in self.requests.iter().zip(&other.requests) {
            add(theirs, mine.load(Ordering::Relaxed));
        }
        for (mine, theirs) in self.errors.iter().zip(&other.errors) {
            add(theirs, mine.load(Ordering::Relaxed));
        }
    }

    /// Adds these counts to a shown total (names with no count yet are left out).
    pub fn show_into(&self, shown: &mut ServerTraffic) {
        shown.bytes_in += self.bytes_in.load(Ordering::Relaxed);
        shown.bytes_out += self.bytes_out.load(Ordering::Relaxed);
        let names = REQUESTS.iter().map(|(_, n)| *n).chain(["OTHER"]);
        named_into(&mut shown.requests, names.zip(&self.requests));
        let names = ERRORS.iter().map(|(_, n)| *n);
        named_into(&mut shown.errors, names.zip(&self.errors));
    }
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

/// Adds each non-zero count to its name's entry in `into`.
fn named_into<'a>(
    into: &mut Vec<(&'static str, u64)>,
    counts: impl Iterator<Item = (&'static str, &'a AtomicU64)>,
) {
    for (name, count) in counts {
        let n = count.load(Ordering::Relaxed);
        if n == 0 {
            continue;
        }
        match into.iter_mut().find(|(k, _)| *k == name) {
            Some((_, v)) => *v += n,
            None => into.push((name, n)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_errors_are_counted_by_name_and_summed() {
        let a = Traffic::default();
        a.frame_in(0x07, 100);
        a.frame_in(0x07, 50);
        a.frame_in(0x0A, 20);
        a.frame_in(0x42, 9);
        a.answered(Opcode::Error, &[0, 0, 0x20, 0, 1]);
        a.answered(Opcode::Error, &[0x7F, 0, 0, 0]);
        a.answered(Opcode::Error, &[0]);
        a.answered(Opcode::Result, &[0, 0, 0x20, 0]);
        a.bytes_out(30);
        let closed = Traffic::default();
        a.add_to(&closed);
        let mut shown = ServerTraffic::default();
        a.show_into(&mut shown);
        closed.show_into(&mut shown);
        assert_eq!((shown.bytes_in, shown.bytes_out), (358, 60));
        assert_eq!(shown.requests, [("QUERY", 4), ("EXECUTE", 2), ("OTHER", 2)]);
        assert_eq!(shown.errors, [("SYNTAX_ERROR", 2), ("OTHER", 4)]);
    }
}
