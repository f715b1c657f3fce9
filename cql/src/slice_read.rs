//! Running a planned slice (`slice_plan.rs` plans it): the live cells of one partition, met
//! in read order through the engine's visitor, grouped back into CQL rows by their names'
//! clustering prefix and written straight into the result. Names are taken as sort keys; the
//! common cell (a known column of the open row) is told by one comparison, the rest split
//! component by component. A name or value the plan cannot read hands the statement back to
//! `select.rs`, which owns every answer to damage. This file reads; it never plans.

use std::ops::Range;
use std::sync::atomic::Ordering;

use smallvec::SmallVec;

use super::error::CqlError;
use super::plan_values::{checked, push_ttl, push_write_time, resolve};
use super::rows::Rows;
use super::session::Session;
use super::slice_plan::{Out, SlicePlan};
use supercolumn::model::sort_key::{escaped_len, unescape_into};
use supercolumn::model::{CellIn, CellValueRef};
use supercolumn::query::SlicePredicate;
use supercolumn::ColumnFamilyHandle;

/// A live cell kept for the row being assembled: where its value is in the row's buffer, its
/// timestamp and its expiry (seconds).
type Held = (Range<usize>, i64, Option<i64>);

/// Where a cell belongs: its row's clustering prefix length, and its regular column's slot
/// (`None` for the row marker, a column dropped since or a collection's element: such a cell
/// only says its row is live).
type Place = (usize, Option<usize>);

impl Session<'_> {
    /// Runs a planned slice; `Ok(None)` when its values (or the data) need the general path.
    pub(super) fn run_slice_plan(
        &self,
        store: &ColumnFamilyHandle,
        p: &SlicePlan,
        values: &[Option<&[u8]>],
    ) -> Result<Option<Rows>, CqlError> {
        checked(&p.checks, values)?;
        let Some((key, predicate, limit)) = p.request(values) else {
            return Ok(None);
        };
        // A LIMIT's rows at once (up to a page's worth): no regrowth on the way.
        let mut out = Rows::with_capacity(p.columns.clone(), limit.min(256));
        let Some(predicate) = predicate else {
            return Ok(Some(out));
        };
        // The rows are mostly the size of the last result's.
        let guess = p.row_bytes.load(Ordering::Relaxed);
        out.reserve_values(limit.min(256).saturating_mul(guess));
        // The thread's buffers of the last slice: fresh ones would grow from empty each time.
        let mut scratch = SLICE_SCRATCH.take().unwrap_or_default();
        let read = self.slice_into(
            store,
            p,
            values,
            (&key, &predicate, limit),
            &mut scratch,
            &mut out,
        );
        if scratch.capacity() <= KEPT_SLICE_SCRATCH {
            SLICE_SCRATCH.set(Some(scratch));
        }
        let read = read?;
        if read && !out.is_empty() {
            p.row_bytes
                .store(out.value_bytes() / out.len(), Ordering::Relaxed);
        }
        Ok(read.then_some(out))
    }

    /// Reads a planned slice's rows into `out`; `Ok(false)` when the data needs the general
    /// path (a damaged name, a clustering value that does not decode).
    fn slice_into(
        &self,
        store: &ColumnFamilyHandle,
        p: &SlicePlan,
        values: &[Option<&[u8]>],
        (key, predicate, limit): (&[u8], &SlicePredicate, usize),
        scratch: &mut SliceScratch,
        out: &mut Rows,
    ) -> Result<bool, CqlError> {
        // TTL() counts down as the general path's does (see `select`); read only if asked.
        let now_seconds = if p.outputs.iter().any(|o| matches!(o, Out::Ttl(_))) {
            self.db.options().clock.now_micros().div_euclid(1_000_000)
        } else {
            0
        };
        let mut rows = Assembly {
            p,
            values,
            limit,
            now_seconds,
            s: scratch,
            cells: SmallVec::from_elem(None, p.regular.len()),
            open: false,
            next: 0,
            readable: true,
        };
        rows.s.prefix.clear();
        self.db
            .visit_slice(store, key, &p.parent, predicate, |name, cell| {
                Ok(rows.cell(name, cell, out))
            })?;
        Ok(rows.readable && (!rows.open || rows.close(out)))
    }
}

/// The rows of a planned slice being assembled, one open at a time.
struct Assembly<'a> {
    p: &'a SlicePlan,
    values: &'a [Option<&'a [u8]>],
    limit: usize,
    now_seconds: i64,
    s: &'a mut SliceScratch,
    /// Kept cells of the open row, by slot (when its values are not written as they come).
    cells: SmallVec<[Option<Held>; 4]>,
    open: bool,
    /// The open row's next output, when values are written as their cells come.
    next: usize,
    /// Cleared at the first name or value the plan cannot read.
    readable: bool,
}

impl Assembly<'_> {
    /// Takes one live cell; `false` to stop (the limit's rows are read, or damage).
    fn cell(&mut self, name: &[u8], cell: CellIn<'_>, out: &mut Rows) -> bool {
        if !self.open && out.len() >= self.limit {
            // A visitor that went on after `false`: the limit stands.
            return false;
        }
        let n_ck = self.p.table.clustering.len();
        // A row's cells after its first share its prefix.
        let known = match name.get(..self.s.prefix.len()) {
            Some(start) if self.open && same(start, &self.s.prefix) => start.len(),
            _ => 0,
        };
        let (prefix_len, slot) = match self.p.place(name, n_ck, known) {
            Ok(Some(place)) => place,
            Ok(None) => return true,
            Err(()) => {
                self.readable = false;
                return false;
            }
        };
        if known == 0 {
            if self.open {
                if !self.close(out) {
                    self.readable = false;
                    return false;
                }
                if out.len() >= self.limit {
                    return false;
                }
            }
            if !self.open_row(&name[..prefix_len], out) {
                return false;
            }
        }
        self.take(slot, cell, out)
    }

    /// Opens the row of this prefix; `false` when its clustering values do not decode.
    fn open_row(&mut self, prefix: &[u8], out: &mut Rows) -> bool {
        self.s.prefix.clear();
        self.s.prefix.extend_from_slice(prefix);
        self.open = true;
        match self.p.lead {
            Some(lead) => {
                self.next = lead;
                for o in &self.p.outputs[..lead] {
                    let pushed = match *o {
                        Out::Key(k) => {
                            out.push_opt(resolve(&self.p.key[k], self.values));
                            true
                        }
                        Out::Clustering(k) => self.p.clustering_value(prefix, k, out).is_some(),
                        _ => true,
                    };
                    if !pushed {
                        out.abandon_row();
                        self.readable = false;
                        return false;
                    }
                }
            }
            None => {
                self.cells.fill(None);
                self.s.held.clear();
            }
        }
        true
    }

    /// Keeps (or writes) the open row's cell of this slot.
    fn take(&mut self, slot: Option<usize>, cell: CellIn<'_>, out: &mut Rows) -> bool {
        let Some(slot) = slot else {
            return true;
        };
        let c = cell.as_ref();
        let CellValueRef::Live { value, ttl } = c.value else {
            return true;
        };
        if self.p.lead.is_some() {
            // Outputs before this slot's whose cells did not come are null (a reversed read
            // meets them last: it never writes ahead).
            while let Some(&Out::Value(t)) = self.p.outputs.get(self.next) {
                if t == slot {
                    out.push_value(value);
                    self.next += 1;
                    break;
                }
                if self.p.reversed || t > slot {
                    break;
                }
                out.push_null();
                self.next += 1;
            }
            return true;
        }
        let held = &mut self.s.held;
        let at = held.len();
        held.extend_from_slice(value);
        let expires = ttl.map(|t| t.local_expiration_time);
        self.cells[slot] = Some((at..held.len(), c.timestamp, expires));
        true
    }

    /// Ends the open row; `false` when its clustering values do not decode.
    fn close(&mut self, out: &mut Rows) -> bool {
        self.open = false;
        if self.p.lead.is_some() {
            for _ in self.next..self.p.outputs.len() {
                out.push_null();
            }
            out.end_row();
            return true;
        }
        let row = (&self.cells[..], &self.s.held[..]);
        self.p
            .push_row(self.values, &self.s.prefix, row, self.now_seconds, out)
    }
}

impl SlicePlan {
    /// Where the cell named `name` belongs; `known` as for [`split`]; `Err` for damage,
    /// `Ok(None)` for a name of another shape (the general path skips it too).
    fn place(&self, name: &[u8], n_ck: usize, known: usize) -> Result<Option<Place>, ()> {
        if known > 0 {
            let rest = &name[known..];
            if let Some(j) = self.suffixes.iter().position(|s| same(s, rest)) {
                return Ok(Some((known, j.checked_sub(1))));
            }
        }
        let Some((prefix_len, column, element)) = split(name, n_ck, known)? else {
            return Ok(None);
        };
        if element {
            return Ok(Some((prefix_len, None)));
        }
        let mut nul = Vec::new();
        let column = if column.contains(&0) {
            // A quoted column name holding a NUL: rare enough to allocate for.
            unescape_into(column, &mut nul);
            &nul[..]
        } else {
            column
        };
        let slot = self.regular.iter().position(|r| r[..] == *column);
        Ok(Some((prefix_len, slot)))
    }

    /// Appends to `out` the output row of the CQL row whose cells' names begin with the sort
    /// key `prefix` and whose kept cells are `cells` (values in `held`); `false` (and nothing
    /// appended) when a clustering value does not decode.
    fn push_row(
        &self,
        values: &[Option<&[u8]>],
        prefix: &[u8],
        (cells, held): (&[Option<Held>], &[u8]),
        now_seconds: i64,
        out: &mut Rows,
    ) -> bool {
        for o in &self.outputs {
            let value = match *o {
                Out::Key(k) => resolve(&self.key[k], values),
                Out::Clustering(k) => {
                    if self.clustering_value(prefix, k, out).is_none() {
                        out.abandon_row();
                        return false;
                    }
                    continue;
                }
                Out::Value(n) => cells[n].as_ref().map(|c| &held[c.0.clone()]),
                Out::WriteTime(n) => {
                    push_write_time(out, cells[n].as_ref().map(|c| c.1));
                    continue;
                }
                Out::Ttl(n) => {
                    push_ttl(out, cells[n].as_ref().and_then(|c| c.2), now_seconds);
                    continue;
                }
            };
            out.push_opt(value);
        }
        out.end_row();
        true
    }

    /// Appends clustering column `k`'s value, decoded from a row's sort key prefix (its
    /// clustering components, each terminated), to `out`.
    fn clustering_value(&self, prefix: &[u8], k: usize, out: &mut Rows) -> Option<()> {
        let mut rest = prefix;
        for _ in 0..k {
            rest = &rest[escaped_len(rest)?..];
        }
        // The last component ends where the prefix does.
        let n = if k + 1 == self.clustering_cmp.len() {
            rest.len()
        } else {
            escaped_len(rest)?
        };
        let part = rest.get(..n.checked_sub(2)?)?;
        self.clustering_cmp[k]
            .decode_escaped_sort_key(part, out.value_buf())
            .ok()?;
        out.end_value();
        Some(())
    }
}

/// Whether `a == b`, for the short strings names are made of: up to 16 bytes, two word
/// compares (overlapping when shorter) in place of a call to `memcmp`, twice a cell.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| {
        let mut w = [0; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_ne_bytes(w)
    };
    match n {
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        0..8 => a.iter().zip(b).all(|(x, y)| x == y),
        _ => a == b,
    }
}

/// A cell name's clustering prefix length, column name, and whether an element follows.
type NameParts<'a> = (usize, &'a [u8], bool);

/// Where a cell's sort key splits: its clustering prefix's length, its column's name (as
/// stored, escaped), and whether a collection element follows; `Err` for a key that does not
/// split into terminated components (damage: the general path reports it), `Ok(None)` for one
/// of another shape (the general path skips it). The first `known` bytes, when not 0, are
/// known to hold the clustering components (the row's prefix, met again).
fn split(key: &[u8], n_ck: usize, known: usize) -> Result<Option<NameParts<'_>>, ()> {
    // Only the two ends a caller needs are kept: where the clustering prefix ends and where
    // the column's component does; every component is still checked to be terminated.
    let mut parts = if known > 0 { n_ck } else { 0 };
    let mut prefix = if n_ck == 0 { 0 } else { known };
    let mut column_end = 0;
    let mut at = known;
    while at < key.len() {
        let n = escaped_len(&key[at..]).ok_or(())?;
        if !(1..=3).contains(&key[at + n - 1]) {
            return Err(());
        }
        at += n;
        parts += 1;
        if parts == n_ck && known == 0 {
            prefix = at;
        }
        if parts == n_ck + 1 {
            column_end = at - 2;
        }
    }
    if parts < n_ck + 1 || parts > n_ck + 2 {
        return Ok(None);
    }
    Ok(Some((prefix, &key[prefix..column_end], parts == n_ck + 2)))
}

/// Buffers a planned slice fills on its way, kept by the thread from one slice to the next.
#[derive(Default)]
struct SliceScratch {
    /// The open row's clustering prefix.
    prefix: Vec<u8>,
    /// The open row's kept values.
    held: Vec<u8>,
}

impl SliceScratch {
    fn capacity(&self) -> usize {
        self.prefix.capacity() + self.held.capacity()
    }
}

thread_local! {
    static SLICE_SCRATCH: std::cell::Cell<Option<SliceScratch>> =
        const { std::cell::Cell::new(None) };
}

/// Room a thread keeps for its next planned slice.
const KEPT_SLICE_SCRATCH: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::{same, split};
    use supercolumn::model::sort_key::escape_into;

    /// A composite sort key of these components (each at end of component 0).
    fn key(parts: &[&[u8]]) -> Vec<u8> {
        let mut k = Vec::new();
        for p in parts {
            escape_into(p, &mut k);
            k.extend_from_slice(&[0, 2]);
        }
        k
    }

    #[test]
    fn short_names_compare_as_bytes_do() {
        let bytes: Vec<u8> = (0..40).map(|i| (i * 37 % 7) as u8).collect();
        for n in 0..40usize {
            for m in [n, n.saturating_sub(1)] {
                let (a, mut b) = (&bytes[..n], bytes[..m].to_vec());
                assert_eq!(same(a, &b), a == &b[..], "{n} {m}");
                if let Some(last) = b.last_mut() {
                    *last ^= 1;
                    assert_eq!(same(a, &b), a == &b[..], "{n} {m} changed");
                }
                if let Some(first) = b.first_mut() {
                    *first ^= 1;
                    assert!(!same(a, &b) || a == &b[..]);
                }
            }
        }
    }

    #[test]
    fn a_sort_key_splits_alike_with_or_without_its_known_prefix() {
        let ck: &[u8] = b"a\0b";
        let prefix = key(&[ck]).len();
        for (parts, want) in [
            (vec![ck, b"" as &[u8]], Some((prefix, &b""[..], false))),
            (vec![ck, b"v"], Some((prefix, &b"v"[..], false))),
            (vec![ck, b"m", b"e"], Some((prefix, &b"m"[..], true))),
            (vec![ck, b"m", b"e", b"x"], None),
        ] {
            let k = key(&parts);
            assert_eq!(split(&k, 1, 0), Ok(want), "{parts:?}");
            assert_eq!(
                split(&k, 1, prefix),
                Ok(want),
                "{parts:?} with its prefix known"
            );
        }
        // The clustering component alone is no cell of a column.
        assert_eq!(split(&key(&[ck]), 1, 0), Ok(None));
        // Damage: an unterminated or badly terminated component.
        assert_eq!(split(b"ab", 1, 0), Err(()));
        assert_eq!(split(&[b'a', 0, 9], 1, 0), Err(()));
        // A table without clustering columns: the column is the first component.
        assert_eq!(split(&key(&[b"v"]), 0, 0), Ok(Some((0, &b"v"[..], false))));
    }
}
