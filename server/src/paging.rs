//! Paging states as a client carries them: sealed with a keyed MAC (HMAC-SHA-256 under a
//! secret drawn when the process starts) over the state and what it belongs to (the statement,
//! the keyspace in use, the bound values and the user), so a state from another statement,
//! user or a restarted server is refused instead of read. A state holds where the last page
//! ended: the CQL layer's position after its last row, or, for the rows the server builds
//! itself (system tables, DESCRIBE, Thrift-era tables), the rows before the next page. Nothing
//! is kept between pages. It seals and opens; what a page holds is `dispatch.rs`'s.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use supercolumn_cql::{PageRequest, Position, Rows};

use crate::request::Params;

const STATE_VERSION: u8 = 3;
const MAC_LEN: usize = 16;
const KIND_POSITION: u8 = 1;
const KIND_OFFSET: u8 = 2;

/// Where a page starts.
pub enum State {
    /// After this row (a CQL `SELECT`).
    After(Position),
    /// After this many rows (rows the server builds).
    Offset(usize),
}

/// The page size asked for, if paging.
pub fn page_size(params: &Params) -> Option<usize> {
    params.page_size.filter(|&n| n > 0).map(|n| n as usize)
}

/// Seals and opens paging states.
pub struct Sealer {
    key: [u8; 32],
}

impl Sealer {
    /// A sealer with a fresh secret (states sealed by another process do not open).
    pub fn new() -> std::io::Result<Sealer> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Sealer { key })
    }

    fn mac(&self, body: &[u8], belongs_to: &[u8]) -> [u8; MAC_LEN] {
        // A 32-byte key is always accepted.
        let mut m = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        m.update(&(belongs_to.len() as u64).to_be_bytes());
        m.update(belongs_to);
        m.update(body);
        let full = m.finalize().into_bytes();
        let mut out = [0u8; MAC_LEN];
        out.copy_from_slice(&full[..MAC_LEN]);
        out
    }

    /// The state a client carries to the next page.
    pub fn seal(&self, state: &State, belongs_to: &[u8]) -> Vec<u8> {
        let mut b = vec![STATE_VERSION];
        match state {
            State::After(p) => {
                b.push(KIND_POSITION);
                b.extend_from_slice(&p.to_bytes());
            }
            State::Offset(n) => {
                b.push(KIND_OFFSET);
                b.extend_from_slice(&(*n as u64).to_be_bytes());
            }
        }
        let mac = self.mac(&b, belongs_to);
        b.extend_from_slice(&mac);
        b
    }

    /// The state `params` carries (`None`: the first page), if it was sealed here for what
    /// `belongs_to` names.
    pub fn open(&self, params: &Params, belongs_to: &[u8]) -> Result<Option<State>, String> {
        let Some(s) = params.paging_state.as_deref() else {
            return Ok(None);
        };
        let refused = || {
            "invalid paging state: not one this server gave for this statement (a state is valid for the statement, keyspace, values and user it was given for, until the server restarts)".to_string()
        };
        let (body, mac) = s.split_last_chunk::<MAC_LEN>().ok_or_else(refused)?;
        // The comparison takes the same time wherever the first difference is.
        let want = self.mac(body, belongs_to);
        if want.iter().zip(mac).fold(0u8, |d, (a, b)| d | (a ^ b)) != 0 {
            return Err(refused());
        }
        match body {
            [STATE_VERSION, KIND_POSITION, rest @ ..] => Position::from_bytes(rest)
                .map(|p| Some(State::After(p)))
                .map_err(|e| e.to_string()),
            [STATE_VERSION, KIND_OFFSET, rest @ ..] => {
                let n: [u8; 8] = rest.try_into().map_err(|_| refused())?;
                Ok(Some(State::Offset(
                    usize::try_from(u64::from_be_bytes(n)).map_err(|_| refused())?,
                )))
            }
            _ => Err(refused()),
        }
    }

    /// The page a CQL `SELECT` is asked for, if paging.
    pub fn request(
        &self,
        params: &Params,
        belongs_to: &[u8],
    ) -> Result<Option<PageRequest>, String> {
        let Some(size) = page_size(params) else {
            return Ok(None);
        };
        let after = match self.open(params, belongs_to)? {
            None => None,
            Some(State::After(p)) => Some(p),
            Some(State::Offset(_)) => return Err("invalid paging state for this statement".into()),
        };
        Ok(Some(PageRequest { size, after }))
    }

    /// The page `params` asks for of rows the server built, and the state of the next one.
    pub fn slice(
        &self,
        rows: Rows,
        params: &Params,
        belongs_to: &[u8],
    ) -> Result<(Rows, Option<Vec<u8>>), String> {
        let Some(size) = page_size(params) else {
            return Ok((rows, None));
        };
        let start = match self.open(params, belongs_to)? {
            None => 0,
            Some(State::Offset(n)) => n,
            Some(State::After(_)) => return Err("invalid paging state for this statement".into()),
        };
        let total = rows.len();
        let end = start.saturating_add(size).min(total);
        let page = rows.page(start.min(total)..end);
        let next = (end < total).then(|| self.seal(&State::Offset(end), belongs_to));
        Ok((page, next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_opens_only_for_what_it_was_sealed_for() {
        let sealer = Sealer::new().unwrap();
        let p = Position {
            key: b"k".to_vec(),
            clustering: None,
            in_partition: 1,
            returned: 1,
        };
        let state = sealer.seal(&State::After(p.clone()), b"statement");
        let params = |s: Vec<u8>| Params {
            page_size: Some(10),
            paging_state: Some(s),
            ..Default::default()
        };
        let got = sealer
            .request(&params(state.clone()), b"statement")
            .unwrap();
        assert_eq!(got.unwrap().after, Some(p));
        assert!(sealer.request(&params(state.clone()), b"other").is_err());
        assert!(
            Sealer::new()
                .unwrap()
                .request(&params(state.clone()), b"statement")
                .is_err(),
            "another process"
        );
        for i in 0..state.len() {
            let mut forged = state.clone();
            forged[i] ^= 1;
            assert!(sealer.request(&params(forged), b"statement").is_err());
        }
        assert!(sealer.request(&params(vec![1, 2]), b"statement").is_err());
    }
}
