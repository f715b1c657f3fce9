//! What a read selects: slice predicates over the columns of a row, and key ranges over rows.

/// A range of columns: `start` to `finish` inclusive, at most `count` live columns, in comparator
/// order or, when `reversed`, backwards from `start` (the high end) down to `finish`. An empty
/// `start` or `finish` means unbounded on that side.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SliceRange {
    /// First name returned (inclusive); empty: from the beginning (the end, when reversed).
    pub start: Vec<u8>,
    /// Last name returned (inclusive); empty: to the end (the beginning, when reversed).
    pub finish: Vec<u8>,
    /// Walk backwards.
    pub reversed: bool,
    /// At most this many live columns (or super columns) (default 100).
    pub count: usize,
}

impl Default for SliceRange {
    fn default() -> Self {
        SliceRange {
            start: Vec::new(),
            finish: Vec::new(),
            reversed: false,
            count: 100,
        }
    }
}

impl SliceRange {
    /// All columns, first 100.
    pub fn all() -> Self {
        Self::default()
    }

    /// From `start` to `finish`, inclusive.
    pub fn between(start: impl AsRef<[u8]>, finish: impl AsRef<[u8]>) -> Self {
        SliceRange {
            start: start.as_ref().to_vec(),
            finish: finish.as_ref().to_vec(),
            ..Self::default()
        }
    }

    /// Walks backwards (start is then the high end).
    pub fn reversed(mut self) -> Self {
        self.reversed = true;
        self
    }

    /// Sets the maximum number of results.
    pub fn count(mut self, count: usize) -> Self {
        self.count = count;
        self
    }
}

/// Which columns of a row a read returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SlicePredicate {
    /// These names (results come back in comparator order, not request order).
    Names(Vec<Vec<u8>>),
    /// A range of names.
    Range(SliceRange),
}

impl SlicePredicate {
    /// The named columns.
    pub fn names<I, N>(names: I) -> Self
    where
        I: IntoIterator<Item = N>,
        N: AsRef<[u8]>,
    {
        SlicePredicate::Names(names.into_iter().map(|n| n.as_ref().to_vec()).collect())
    }

    /// Every column (up to `usize::MAX`): what `get_count` of a whole row uses.
    pub fn everything() -> Self {
        SlicePredicate::Range(SliceRange::all().count(usize::MAX))
    }
}

impl From<SliceRange> for SlicePredicate {
    fn from(r: SliceRange) -> Self {
        SlicePredicate::Range(r)
    }
}

/// One end of a key range.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RangeBound {
    /// No bound on this side.
    Unbounded,
    /// A row key; under a hashing partitioner it stands for its token.
    Key(Vec<u8>),
    /// A token in its text form (decimal for Random and Murmur3).
    Token(String),
}

/// A range of rows in token order, both ends inclusive, at most `count` rows.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KeyRange {
    /// Where the range starts.
    pub start: RangeBound,
    /// Where it ends.
    pub end: RangeBound,
    /// At most this many rows (default 100).
    pub count: usize,
}

impl Default for KeyRange {
    fn default() -> Self {
        KeyRange {
            start: RangeBound::Unbounded,
            end: RangeBound::Unbounded,
            count: 100,
        }
    }
}

impl KeyRange {
    /// Every row, first 100.
    pub fn all() -> Self {
        Self::default()
    }

    /// From row key `start` to row key `end` (an empty key: unbounded on that side).
    pub fn keys(start: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Self {
        let b = |k: &[u8]| {
            if k.is_empty() {
                RangeBound::Unbounded
            } else {
                RangeBound::Key(k.to_vec())
            }
        };
        KeyRange {
            start: b(start.as_ref()),
            end: b(end.as_ref()),
            count: 100,
        }
    }

    /// From token `start` to token `end` (text forms).
    pub fn tokens(start: impl Into<String>, end: impl Into<String>) -> Self {
        KeyRange {
            start: RangeBound::Token(start.into()),
            end: RangeBound::Token(end.into()),
            count: 100,
        }
    }

    /// Sets the maximum number of rows.
    pub fn count(mut self, count: usize) -> Self {
        self.count = count;
        self
    }
}
