//! Paging of a SELECT's rows: a page of the size the client asked for, and a paging state
//! that says where the next page starts and which statement it belongs to (a state handed to
//! another statement is refused). The statement runs again for each page and the pages before
//! are skipped: simple, and correct for a result that does not change between pages.

use crate::request::Params;
use supercolumn::cql::Rows;

const STATE_VERSION: u8 = 1;
const STATE_LEN: usize = 13;

fn fingerprint(statement: &[u8]) -> u32 {
    crc32fast::hash(statement)
}

/// The page `params` asks for, and the state of the next one if more rows follow; `statement`
/// (its text, or its prepared id) ties the state to the statement.
pub fn page(
    mut rows: Rows,
    params: &Params,
    statement: &[u8],
) -> Result<(Rows, Option<Vec<u8>>), String> {
    let size = match params.page_size {
        Some(n) if n > 0 => n as usize,
        _ => return Ok((rows, None)),
    };
    let start = match params.paging_state.as_deref() {
        None => 0,
        Some(s) => {
            let s: &[u8; STATE_LEN] = s
                .try_into()
                .map_err(|_| format!("invalid paging state of {} bytes", s.len()))?;
            let offset = u64::from_be_bytes([s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]]);
            if s[0] != STATE_VERSION || s[9..] != fingerprint(statement).to_be_bytes() {
                return Err("the paging state belongs to another statement".into());
            }
            usize::try_from(offset).map_err(|_| "invalid paging state offset".to_string())?
        }
    };
    let total = rows.rows.len();
    let end = start.saturating_add(size).min(total);
    rows.rows = rows.rows.drain(start.min(total)..end).collect();
    let next = (end < total).then(|| {
        let mut s = Vec::with_capacity(STATE_LEN);
        s.push(STATE_VERSION);
        s.extend_from_slice(&(end as u64).to_be_bytes());
        s.extend_from_slice(&fingerprint(statement).to_be_bytes());
        s
    });
    Ok((rows, next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use supercolumn::cql::CqlType;

    fn rows(n: u8) -> Rows {
        Rows {
            columns: vec![("k".into(), CqlType::Blob)],
            rows: (0..n).map(|i| vec![Some(vec![i])]).collect(),
        }
    }

    #[test]
    fn pages_cover_every_row_once() {
        let mut params = Params {
            page_size: Some(3),
            ..Default::default()
        };
        let mut seen = Vec::new();
        loop {
            let (r, next) = page(rows(8), &params, b"q").unwrap();
            seen.extend(r.rows.into_iter().map(|r| r[0].clone().unwrap()[0]));
            match next {
                Some(s) => params.paging_state = Some(s),
                None => break,
            }
        }
        assert_eq!(seen, (0..8).collect::<Vec<u8>>());
        assert!(page(rows(8), &params, b"other").is_err());
        params.paging_state = Some(vec![1, 2]);
        assert!(page(rows(8), &params, b"q").is_err());
    }
}
