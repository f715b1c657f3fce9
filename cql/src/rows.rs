//! A `SELECT`'s result: typed columns and rows of serialized values, every value of every
//! row in one buffer (a row is a run of value ends into it), so a result of many rows costs a
//! few allocations rather than several per row; and how cqlsh prints it. It owns the layout
//! and the printing; what fills it is the planners' and `select.rs`'s business.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use super::types::CqlType;

/// A result's column names and types, in result order; shared by the results of one plan.
pub type Columns = Arc<[(String, CqlType)]>;

/// The flag of a null value's end in `Rows::ends` (its end is the previous value's).
const NULL: usize = 1 << (usize::BITS - 1);

/// A `SELECT`'s result: typed columns and rows of serialized values (`None`: null).
#[derive(Clone, PartialEq, Eq)]
pub struct Rows {
    /// Column names and types, in result order; their number is every row's width, so it is
    /// fixed when the result is made.
    columns: Columns,
    /// Complete rows.
    len: usize,
    /// Each value's end in `data`, row after row, `columns.len()` a row; `NULL` marks a null.
    ends: Vec<usize>,
    data: Vec<u8>,
}

impl Rows {
    /// No rows, of these columns.
    pub fn new(columns: impl Into<Columns>) -> Rows {
        Rows {
            columns: columns.into(),
            len: 0,
            ends: Vec::new(),
            data: Vec::new(),
        }
    }

    /// No rows yet, with room for `rows` of them (their values' bytes grow as they come).
    pub fn with_capacity(columns: impl Into<Columns>, rows: usize) -> Rows {
        let columns = columns.into();
        let ends = Vec::with_capacity(rows.saturating_mul(columns.len()));
        Rows {
            columns,
            len: 0,
            ends,
            data: Vec::new(),
        }
    }

    /// These rows of owned values.
    pub fn from_vecs(
        columns: impl Into<Columns>,
        rows: impl IntoIterator<Item = Vec<Option<Vec<u8>>>>,
    ) -> Rows {
        let mut out = Rows::new(columns);
        for r in rows {
            out.push_row(r.iter().map(Option::as_deref));
        }
        out
    }

    /// Column names and types, in result order.
    pub fn columns(&self) -> &Columns {
        &self.columns
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Values a row has: the number of columns.
    pub fn width(&self) -> usize {
        self.columns.len()
    }

    /// Row `i`; panics past the last row, as indexing a slice does.
    pub fn row(&self, i: usize) -> Row<'_> {
        assert!(i < self.len, "row {i} of {}", self.len);
        let w = self.width();
        let at = i * w;
        Row {
            data: &self.data,
            ends: &self.ends[at..at + w],
            base: if at == 0 {
                0
            } else {
                self.ends[at - 1] & !NULL
            },
        }
    }

    /// The first row, if any.
    pub fn first(&self) -> Option<Row<'_>> {
        (!self.is_empty()).then(|| self.row(0))
    }

    /// The rows, in order.
    pub fn iter(&self) -> RowsIter<'_> {
        RowsIter {
            rows: self,
            at: 0..self.len,
        }
    }

    /// Appends a row of these values: the first `width()` of them, nulls for any missing.
    pub fn push_row<'v>(&mut self, values: impl IntoIterator<Item = Option<&'v [u8]>>) {
        let mut n = 0;
        for v in values.into_iter().take(self.width()) {
            self.push_opt(v);
            n += 1;
        }
        for _ in n..self.width() {
            self.push_null();
        }
        self.end_row();
    }

    /// Appends every row of `other` (of the same columns).
    pub fn extend(&mut self, other: &Rows) {
        for r in other.iter() {
            self.push_row(r.iter());
        }
    }

    /// Rows `range` (clamped to the rows there are), as a result of their own.
    pub fn page(&self, range: Range<usize>) -> Rows {
        let end = range.end.min(self.len);
        let start = range.start.min(end);
        let mut out = Rows::with_capacity(self.columns.clone(), end - start);
        for i in start..end {
            out.push_row(self.row(i).iter());
        }
        out
    }

    /// Keeps the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        if n < self.len {
            let at = n * self.width();
            self.data.truncate(if at == 0 {
                0
            } else {
                self.ends[at - 1] & !NULL
            });
            self.ends.truncate(at);
            self.len = n;
        }
    }

    /// Bytes the rows' values take.
    pub fn value_bytes(&self) -> usize {
        self.data.len()
    }

    /// Every row as owned values.
    pub fn to_vecs(&self) -> Vec<Vec<Option<Vec<u8>>>> {
        self.iter().map(|r| r.to_vec()).collect()
    }

    /// The buffer the next value is written into, by a filler that appends it and then calls
    /// [`Rows::end_value`]: a value decoded or copied once, into its place.
    pub(crate) fn value_buf(&mut self) -> &mut Vec<u8> {
        &mut self.data
    }

    /// Ends the value written into [`Rows::value_buf`] since the last one ended.
    pub(crate) fn end_value(&mut self) {
        self.ends.push(self.data.len());
    }

    pub(crate) fn push_value(&mut self, v: &[u8]) {
        self.data.extend_from_slice(v);
        self.end_value();
    }

    pub(crate) fn push_opt(&mut self, v: Option<&[u8]>) {
        match v {
            Some(v) => self.push_value(v),
            None => self.push_null(),
        }
    }

    pub(crate) fn push_null(&mut self) {
        self.ends.push(self.data.len() | NULL);
    }

    /// Completes the row whose values were pushed since the last one ended.
    pub(crate) fn end_row(&mut self) {
        // A row of the wrong width would shift every row after it: a bug to stop at, here.
        assert_eq!(
            self.ends.len(),
            (self.len + 1) * self.width(),
            "a row's width"
        );
        self.len += 1;
    }

    /// Makes room for `bytes` more bytes of values, up to 64 KiB (a guess must not reserve
    /// what a result will never hold): the buffer grows once, not by doubling from nothing.
    pub(crate) fn reserve_values(&mut self, bytes: usize) {
        self.data.reserve(bytes.min(64 << 10));
    }

    /// Drops the values pushed since the last complete row.
    pub(crate) fn abandon_row(&mut self) {
        let at = self.len * self.width();
        self.data.truncate(if at == 0 {
            0
        } else {
            self.ends[at - 1] & !NULL
        });
        self.ends.truncate(at);
    }

    /// The rows as cqlsh prints them: a header, a separator, the rows (values right-aligned),
    /// then `(N rows)`.
    pub fn to_table(&self) -> String {
        let cells = self.displayed();
        let widths: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, (name, _))| {
                cells
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain([name.chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |vals: Vec<String>| format!(" {}", vals.join(" | "));
        let mut out = vec![line(
            self.columns
                .iter()
                .zip(&widths)
                .map(|((n, _), w)| padded(n, *w, false))
                .collect(),
        )
        .trim_end()
        .to_string()];
        out.push(
            widths
                .iter()
                .map(|w| "-".repeat(w + 2))
                .collect::<Vec<_>>()
                .join("+"),
        );
        for r in &cells {
            out.push(line(
                r.iter()
                    .zip(&widths)
                    .map(|(v, w)| padded(v, *w, true))
                    .collect(),
            ));
        }
        out.push(String::new());
        out.push(format!("({} rows)", self.len()));
        out.join("\n")
    }

    /// The rows as cqlsh prints them with `EXPAND ON`: each row as `@ Row N`, a separator, and
    /// a `name | value` line per column, then `(N rows)`.
    pub fn to_expanded(&self) -> String {
        let name_width = self
            .columns
            .iter()
            .map(|(n, _)| n.chars().count())
            .max()
            .unwrap_or(0);
        let rows = self.displayed();
        // One width for the values of every row, as cqlsh's.
        let value_width = rows
            .iter()
            .flatten()
            .map(|v| v.chars().count())
            .max()
            .unwrap_or(0);
        let mut out = Vec::new();
        for (i, values) in rows.iter().enumerate() {
            out.push(format!("@ Row {}", i + 1));
            out.push(format!(
                "{}+{}",
                "-".repeat(name_width + 2),
                "-".repeat(value_width + 2)
            ));
            for ((name, _), v) in self.columns.iter().zip(values) {
                let name = padded(name, name_width, false);
                out.push(format!(" {name} | {v}").trim_end().to_string());
            }
            out.push(String::new());
        }
        out.push(format!("({} rows)", self.len()));
        out.join("\n")
    }

    /// Each value as cqlsh shows it (`null` for a null).
    pub fn displayed(&self) -> Vec<Vec<String>> {
        self.iter()
            .map(|r| {
                r.iter()
                    .zip(self.columns.iter())
                    .map(|(v, (_, ty))| v.as_ref().map_or_else(|| "null".into(), |b| ty.display(b)))
                    .collect()
            })
            .collect()
    }
}

impl fmt::Debug for Rows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rows")
            .field("columns", &self.columns)
            .field("rows", &self.iter().collect::<Vec<_>>())
            .finish()
    }
}

impl<'a> IntoIterator for &'a Rows {
    type Item = Row<'a>;
    type IntoIter = RowsIter<'a>;

    fn into_iter(self) -> RowsIter<'a> {
        self.iter()
    }
}

/// The rows of a result, in order.
#[derive(Clone)]
pub struct RowsIter<'a> {
    rows: &'a Rows,
    at: Range<usize>,
}

impl<'a> Iterator for RowsIter<'a> {
    type Item = Row<'a>;

    fn next(&mut self) -> Option<Row<'a>> {
        self.at.next().map(|i| self.rows.row(i))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.at.size_hint()
    }
}

impl DoubleEndedIterator for RowsIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.at.next_back().map(|i| self.rows.row(i))
    }
}

impl ExactSizeIterator for RowsIter<'_> {}

/// One row of a result: its values, by column.
#[derive(Clone, Copy)]
pub struct Row<'a> {
    data: &'a [u8],
    /// The row's values' ends.
    ends: &'a [usize],
    /// Where its first value starts.
    base: usize,
}

impl<'a> Row<'a> {
    /// Column `i`'s value (`None`: null); panics past the last column.
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        let end = self.ends[i];
        if end & NULL != 0 {
            return None;
        }
        let start = match i {
            0 => self.base,
            _ => self.ends[i - 1] & !NULL,
        };
        Some(&self.data[start..end])
    }

    /// How many values.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the row has no values (a result of no columns).
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The values, by column.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Option<&'a [u8]>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The values, owned.
    pub fn to_vec(&self) -> Vec<Option<Vec<u8>>> {
        self.iter().map(|v| v.map(<[u8]>::to_vec)).collect()
    }
}

impl fmt::Debug for Row<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Row<'_> {
    fn eq(&self, other: &Row<'_>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// `text` padded with spaces to `width` characters, on the left when `right` aligned. Done by
/// hand: `format!`'s width panics past 65,535, and a value may be longer.
fn padded(text: &str, width: usize, right: bool) -> String {
    let pad = " ".repeat(width.saturating_sub(text.chars().count()));
    if right {
        pad + text
    } else {
        format!("{text}{pad}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(n: usize) -> Columns {
        (0..n).map(|i| (format!("c{i}"), CqlType::Blob)).collect()
    }

    #[test]
    fn rows_keep_values_nulls_and_empties_apart() {
        let want = vec![
            vec![Some(b"ab".to_vec()), None, Some(Vec::new())],
            vec![None, None, None],
            vec![Some(Vec::new()), Some(b"x".to_vec()), Some(b"yz".to_vec())],
        ];
        let rows = Rows::from_vecs(columns(3), want.clone());
        assert_eq!(rows.len(), 3);
        assert_eq!(rows.to_vecs(), want);
        assert_eq!(rows.row(2).get(2), Some(&b"yz"[..]));
        assert_eq!(rows.row(1).get(0), None);
        assert_eq!(rows.row(0).get(2), Some(&b""[..]));
        assert_eq!(rows.page(1..9).to_vecs(), want[1..]);
        assert_eq!(rows.page(5..9).len(), 0);
        let mut cut = rows.clone();
        cut.truncate(1);
        assert_eq!(cut.to_vecs(), want[..1]);
        assert_eq!(cut, Rows::from_vecs(columns(3), want[..1].to_vec()));
        assert_eq!(cut.value_bytes(), 2);
    }

    #[test]
    fn an_abandoned_row_leaves_nothing_behind() {
        let mut rows = Rows::from_vecs(columns(2), [vec![Some(b"a".to_vec()), None]]);
        rows.value_buf().extend_from_slice(b"half");
        rows.end_value();
        rows.abandon_row();
        rows.push_row([None, Some(&b"b"[..])]);
        assert_eq!(
            rows,
            Rows::from_vecs(
                columns(2),
                [
                    vec![Some(b"a".to_vec()), None],
                    vec![None, Some(b"b".to_vec())]
                ]
            )
        );
        // Short rows are padded with nulls, long ones cut to the columns.
        rows.push_row([Some(&b"c"[..])]);
        rows.push_row([Some(&b"d"[..]), None, Some(b"e")]);
        assert_eq!(rows.row(2).to_vec(), [Some(b"c".to_vec()), None]);
        assert_eq!(rows.row(3).to_vec(), [Some(b"d".to_vec()), None]);
    }

    #[test]
    fn a_value_longer_than_65535_characters_is_shown_whole() {
        let mut rows = Rows::new(vec![("v".to_string(), CqlType::Text)]);
        let long = "a".repeat(70_000);
        rows.push_row([Some(long.as_bytes())]);
        let table = rows.to_table();
        assert!(table.contains(&long));
        assert!(rows.to_expanded().contains(&long));
    }
}
