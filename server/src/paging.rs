//! Paging of a SELECT's rows: a page of the size the client asked for, and a paging state that
//! says where the next page starts, which statement it belongs to (a state handed to another
//! statement is refused), and which kept result it pages through. A result with more pages is
//! kept (up to `MAX_KEPT_ROWS` rows; the `MAX_KEPT` most recent results over all connections,
//! `MAX_KEPT_BYTES` of values in all), so the next pages are sliced from it instead of running
//! the statement again; when it has been dropped, the statement runs again and the rows before
//! the page are skipped. Either way a page is correct for a result that does not change between
//! pages, as Cassandra's.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use supercolumn::cql::Rows;

use crate::request::Params;

const STATE_VERSION: u8 = 2;
const STATE_LEN: usize = 21;
/// Results kept for their next pages, over all connections.
const MAX_KEPT: usize = 64;
/// A result longer than this is not kept (its pages run the statement again).
const MAX_KEPT_ROWS: usize = 200_000;
/// The bytes of values all kept results may hold together; the least recently paged go first.
const MAX_KEPT_BYTES: usize = 128 << 20;

fn fingerprint(statement: &[u8]) -> u32 {
    crc32fast::hash(statement)
}

/// A fresh, unguessable id for a kept result (ids restart with the process, so a counter
/// would name another result after a restart).
fn random_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.finish().max(1)
}

/// A result kept for its next pages.
pub struct Kept {
    /// Its keyspace and table, for the rows' metadata.
    pub ks: String,
    /// Its table.
    pub table: String,
    /// Every row.
    pub rows: Rows,
}

/// Where a page starts, from a paging state.
pub struct State {
    /// Rows before the page.
    pub offset: usize,
    /// The kept result, if one was.
    pub id: u64,
}

/// The results kept for their next pages.
pub struct Cache {
    /// The results, and the bytes of values they hold together.
    kept: Mutex<(lru::LruCache<u64, Arc<Kept>>, usize)>,
}

fn bytes_of(rows: &Rows) -> usize {
    rows.value_bytes() + 8 * rows.len() * rows.width()
}

impl Default for Cache {
    fn default() -> Self {
        Cache {
            kept: Mutex::new((
                lru::LruCache::new(NonZeroUsize::new(MAX_KEPT).unwrap_or(NonZeroUsize::MIN)),
                0,
            )),
        }
    }
}

/// The page size asked for, if paging.
fn page_size(params: &Params) -> Option<usize> {
    params.page_size.filter(|&n| n > 0).map(|n| n as usize)
}

/// Decodes the paging state of `params` (`None`: the first page).
pub fn state(params: &Params, statement: &[u8]) -> Result<Option<State>, String> {
    let Some(s) = params.paging_state.as_deref() else {
        return Ok(None);
    };
    let s: &[u8; STATE_LEN] = s
        .try_into()
        .map_err(|_| format!("invalid paging state of {} bytes", s.len()))?;
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&s[i..i + 8]);
        u64::from_be_bytes(b)
    };
    if s[0] != STATE_VERSION || s[9..13] != fingerprint(statement).to_be_bytes() {
        return Err("the paging state belongs to another statement".into());
    }
    let offset =
        usize::try_from(u64_at(1)).map_err(|_| "invalid paging state offset".to_string())?;
    Ok(Some(State {
        offset,
        id: u64_at(13),
    }))
}

fn encode(offset: usize, statement: &[u8], id: u64) -> Vec<u8> {
    let mut s = Vec::with_capacity(STATE_LEN);
    s.push(STATE_VERSION);
    s.extend_from_slice(&(offset as u64).to_be_bytes());
    s.extend_from_slice(&fingerprint(statement).to_be_bytes());
    s.extend_from_slice(&id.to_be_bytes());
    s
}

/// The rows `start..start + size` of `all`, and the state of the next page.
fn slice(
    all: &Rows,
    start: usize,
    size: usize,
    statement: &[u8],
    id: u64,
) -> (Rows, Option<Vec<u8>>) {
    let total = all.len();
    let end = start.saturating_add(size).min(total);
    let page = all.page(start.min(total)..end);
    (page, (end < total).then(|| encode(end, statement, id)))
}

impl Cache {
    /// The page a state asks for from a kept result, if that result is still kept.
    pub fn kept_page(
        &self,
        params: &Params,
        statement: &[u8],
    ) -> Option<(Arc<Kept>, Rows, Option<Vec<u8>>)> {
        let size = page_size(params)?;
        let st = state(params, statement).ok()??;
        let kept = self.kept.lock().0.get(&st.id).cloned()?;
        let (page, next) = slice(&kept.rows, st.offset, size, statement, st.id);
        if next.is_none() {
            let mut k = self.kept.lock();
            if let Some(gone) = k.0.pop(&st.id) {
                k.1 -= bytes_of(&gone.rows);
            }
        }
        Some((kept, page, next))
    }

    /// The page `params` asks for of a result just computed, and the state of the next one
    /// if more rows follow (the result is kept for it when it is not too long).
    pub fn page(
        &self,
        kept: Kept,
        params: &Params,
        statement: &[u8],
    ) -> Result<(Rows, Option<Vec<u8>>), String> {
        let Some(size) = page_size(params) else {
            return Ok((kept.rows, None));
        };
        let start = state(params, statement)?.map_or(0, |s| s.offset);
        let total = kept.rows.len();
        let bytes = bytes_of(&kept.rows);
        if start.saturating_add(size) >= total
            || total > MAX_KEPT_ROWS
            || bytes > MAX_KEPT_BYTES / 4
        {
            return Ok(slice(&kept.rows, start, size, statement, 0));
        }
        let id = random_id();
        let kept = Arc::new(kept);
        let out = slice(&kept.rows, start, size, statement, id);
        let mut k = self.kept.lock();
        while k.1 + bytes > MAX_KEPT_BYTES || k.0.len() == MAX_KEPT {
            match k.0.pop_lru() {
                Some((_, gone)) => k.1 -= bytes_of(&gone.rows),
                None => break,
            }
        }
        k.0.put(id, kept);
        k.1 += bytes;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use supercolumn::cql::CqlType;

    fn kept(n: u8) -> Kept {
        Kept {
            ks: "ks".into(),
            table: "t".into(),
            rows: Rows::from_vecs(
                vec![("k".into(), CqlType::Blob)],
                (0..n).map(|i| vec![Some(vec![i])]),
            ),
        }
    }

    /// Pages through a result of 8 rows, 3 at a time, running the statement (building the
    /// result) only when the cache does not hold it.
    fn page_through(cache: &Cache, evict: bool) -> (Vec<u8>, usize) {
        let mut params = Params {
            page_size: Some(3),
            ..Default::default()
        };
        let (mut seen, mut runs) = (Vec::new(), 0);
        loop {
            if evict {
                *cache.kept.lock() = Cache::default().kept.into_inner();
            }
            let (rows, next) = match cache.kept_page(&params, b"q") {
                Some((_, rows, next)) => (rows, next),
                None => {
                    runs += 1;
                    cache.page(kept(8), &params, b"q").unwrap()
                }
            };
            seen.extend(rows.iter().map(|r| r.get(0).unwrap()[0]));
            match next {
                Some(s) => params.paging_state = Some(s),
                None => break,
            }
        }
        (seen, runs)
    }

    #[test]
    fn pages_cover_every_row_once_kept_or_not() {
        let cache = Cache::default();
        assert_eq!(page_through(&cache, false), ((0..8).collect(), 1));
        assert!(
            cache.kept.lock().0.is_empty(),
            "the last page drops the result"
        );
        assert_eq!(cache.kept.lock().1, 0, "and its bytes");
        assert_eq!(page_through(&cache, true), ((0..8).collect(), 3));
    }

    #[test]
    fn a_state_of_another_statement_or_malformed_is_refused() {
        let cache = Cache::default();
        let mut params = Params {
            page_size: Some(3),
            ..Default::default()
        };
        let (_, next) = cache.page(kept(8), &params, b"q").unwrap();
        params.paging_state = next;
        assert!(cache.page(kept(8), &params, b"other").is_err());
        assert!(cache.kept_page(&params, b"other").is_none());
        params.paging_state = Some(vec![2, 0, 1]);
        assert!(cache.page(kept(8), &params, b"q").is_err());
    }
}
