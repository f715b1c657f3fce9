//! The partitions a `SELECT` covers by token: the bounds its `token(k)` restrictions set, with
//! the keys a strict `>` or `<` excludes. A scan reads the span; a read through an index keeps
//! the rows whose keys fall in it. Nothing here reads.

use supercolumn::query::RangeBound;
use supercolumn::Partitioner;

/// The partitions a scan covers: token-ordered bounds, with the keys a strict `>` or `<`
/// excludes.
#[derive(Clone, Debug)]
pub(super) struct KeySpan {
    pub start: RangeBound,
    pub end: RangeBound,
    pub skip_start: Option<Vec<u8>>,
    pub skip_end: Option<Vec<u8>>,
    /// No token can be in it (`token(k) > <the highest token>`).
    pub empty: bool,
}

impl Default for KeySpan {
    fn default() -> Self {
        KeySpan {
            start: RangeBound::Unbounded,
            end: RangeBound::Unbounded,
            skip_start: None,
            skip_end: None,
            empty: false,
        }
    }
}

impl KeySpan {
    /// Whether the span is every partition (no token range restricts it).
    pub(super) fn is_whole(&self) -> bool {
        !self.empty
            && matches!(self.start, RangeBound::Unbounded)
            && matches!(self.end, RangeBound::Unbounded)
    }

    /// Whether partition `key` lies in the span: its token between the bounds (both
    /// inclusive, a key bound standing for its token), and not a key a strict bound excludes.
    pub(super) fn contains(&self, p: Partitioner, key: &[u8]) -> bool {
        if self.is_whole() {
            return true; // no token to compute
        }
        if self.empty
            || self.skip_start.as_deref() == Some(key)
            || self.skip_end.as_deref() == Some(key)
        {
            return false;
        }
        let token = Partitioner::token_bytes(&p.token(key));
        let bound = |b: &RangeBound| match b {
            RangeBound::Key(k) => Some(Partitioner::token_bytes(&p.token(k))),
            // A bound the partitioner cannot read was refused when the query was planned.
            RangeBound::Token(t) => p.parse_token(t).ok().map(|t| Partitioner::token_bytes(&t)),
            _ => None,
        };
        bound(&self.start).is_none_or(|s| s <= token) && bound(&self.end).is_none_or(|e| token <= e)
    }
}
