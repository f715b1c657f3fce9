//! `SELECT`: turns the `WHERE` clause into partitions and composite slice bounds (SPEC §9, the
//! EOC rules of `CompositeType`), reads the cells page by page through the engine's slices,
//! and groups them back into CQL rows (a row exists when its marker or any cell is live).

use super::assemble::{cell_parts, project, resolve, Row};
use super::ast::{Op, Relation, Select, Selector, Term};
use super::bounds::{clustering_slices, Bounds};
use super::error::CqlError;
use super::table::{Kind, Table};
use super::types::Literal;
use super::types::{add_element, matches_filter, CqlType};
use super::{Rows, Session};
use supercolumn::clock::Clock;
use supercolumn::query::{
    Column, ColumnOrSuperColumn, ColumnParent, KeyRange, RangeBound, SlicePredicate, SliceRange,
};

use super::page::{resume_slices, PageRequest, Position};
use super::pages::PAGE;
use super::select_shape::merged;
pub(super) use super::select_shape::{output_columns, read_reversed, validate};

/// The rows a scan covers: token-ordered bounds, with keys excluded by a strict `>` or `<`.
struct KeySpan {
    start: RangeBound,
    end: RangeBound,
    skip_start: Option<Vec<u8>>,
    skip_end: Option<Vec<u8>>,
}

impl Default for KeySpan {
    fn default() -> Self {
        KeySpan {
            start: RangeBound::Unbounded,
            end: RangeBound::Unbounded,
            skip_start: None,
            skip_end: None,
        }
    }
}

impl Session<'_> {
    /// Every row of `s`.
    pub(super) fn select(&self, s: &Select) -> Result<Rows, CqlError> {
        Ok(self.select_page(s, None)?.0)
    }

    /// The rows of `s`, or one page of them and where it ended when more may follow. (A
    /// `COUNT(*)` is one row, never paged.) Long for a reason: one pass from the restrictions
    /// to the rows; the house issue splits it into a plan and its executor.
    pub(super) fn select_page(
        &self,
        s: &Select,
        page: Option<&PageRequest>,
    ) -> Result<(Rows, Option<Position>), CqlError> {
        let t = self.table(&s.table)?;
        validate(&t, s)?;
        let n = t.columns.len();
        let mut eq: Vec<Option<Vec<Vec<u8>>>> = vec![None; n];
        let mut lower: Vec<Option<(Vec<u8>, bool)>> = vec![None; n];
        let mut upper: Vec<Option<(Vec<u8>, bool)>> = vec![None; n];
        let mut filters: Vec<(usize, Op, Vec<u8>)> = Vec::new();
        let mut span = KeySpan::default();
        for r in &s.relations {
            match r {
                Relation::Token(cols, op, term, of_key) => {
                    self.token_restriction(&t, cols, *op, term, *of_key, &mut span)?
                }
                Relation::In(c, terms) => {
                    let (i, def) = t.column(c)?;
                    if def.kind == Kind::Regular {
                        return Err(CqlError::invalid(format!(
                            "IN on the regular column {c} is not supported"
                        )));
                    }
                    let mut vals: Vec<Vec<u8>> = Vec::new();
                    for term in terms {
                        let v = self.value(&def.ty, term, c)?.ok_or_else(|| {
                            CqlError::invalid(format!("invalid null value for {c}"))
                        })?;
                        // IN (1, 1) names one row once.
                        if !vals.contains(&v) {
                            vals.push(v);
                        }
                    }
                    if eq[i].replace(vals).is_some() {
                        return Err(restricted_twice(c));
                    }
                }
                Relation::Compare(c, op, term) => {
                    let (i, def) = t.column(c)?;
                    let v = self
                        .value(&def.ty, term, c)?
                        .ok_or_else(|| CqlError::invalid(format!("invalid null value for {c}")))?;
                    match (def.kind, op) {
                        (Kind::Regular, _) => {
                            if def.ty.comparator().is_none() {
                                return Err(CqlError::invalid(format!(
                                    "filtering on {c} of type {} is not supported yet",
                                    def.ty
                                )));
                            }
                            filters.push((i, *op, v))
                        }
                        (_, Op::Eq) => {
                            if eq[i].replace(vec![v]).is_some() {
                                return Err(restricted_twice(c));
                            }
                        }
                        (Kind::PartitionKey(_), _) => {
                            return Err(CqlError::invalid(format!(
                                "only = and IN can restrict the partition key column {c}"
                            )))
                        }
                        (Kind::Clustering(_), Op::Gt | Op::Ge) => {
                            if lower[i].replace((v, *op == Op::Ge)).is_some() {
                                return Err(restricted_twice(c));
                            }
                        }
                        (Kind::Clustering(_), Op::Lt | Op::Le) => {
                            if upper[i].replace((v, *op == Op::Le)).is_some() {
                                return Err(restricted_twice(c));
                            }
                        }
                    }
                }
            }
        }
        if !filters.is_empty() && !s.allow_filtering {
            return Err(CqlError::invalid(
                "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING",
            ));
        }
        let reversed = read_reversed(&t, &s.order_by)?;
        // TTL() counts down from the database's clock in whole seconds, as expiry does
        // (Cassandra's: TTL() right after a write is the TTL given).
        let now_seconds = self.db.options().clock.now_micros().div_euclid(1_000_000);
        let mut slices = clustering_slices(&t, &eq, &lower, &upper)?;
        if reversed {
            // The slices are in clustering order; a reversed read takes them last first.
            slices.reverse();
        }
        let (columns, selectors) = output_columns(&t, s)?;
        let limit = s
            .limit
            .as_ref()
            .map(|l| self.integer(l, "LIMIT"))
            .transpose()?;
        let per_partition = s
            .per_partition_limit
            .as_ref()
            .map(|l| self.integer(l, "PER PARTITION LIMIT"))
            .transpose()?;
        for (l, what) in [(limit, "LIMIT"), (per_partition, "PER PARTITION LIMIT")] {
            if l.is_some_and(|l| l <= 0) {
                return Err(CqlError::invalid(format!(
                    "{what} must be strictly positive"
                )));
            }
        }
        let counting = matches!(s.selectors.first(), Some(Selector::Count));
        let page = page.filter(|_| !counting);
        let resume = page.and_then(|p| p.after.as_ref());
        // LIMIT counts the rows of every page; this call returns at most a page of them.
        let limit_left = limit.map_or(usize::MAX, |l| l as usize).saturating_sub(
            resume.map_or(0, |r| usize::try_from(r.returned).unwrap_or(usize::MAX)),
        );
        let limit = page.map_or(limit_left, |p| p.size.clamp(1, limit_left.max(1)));
        if limit_left == 0 {
            return Ok((Rows::new(output_columns(&t, s)?.0), None));
        }
        let per_partition = per_partition.map_or(usize::MAX, |l| l as usize);

        let pk_set = t.partition_key.iter().filter(|&&i| eq[i].is_some()).count();
        let keys: Option<Vec<Vec<u8>>> = match pk_set {
            0 => None,
            k if k == t.partition_key.len() => {
                let mut combos: Vec<Vec<Vec<u8>>> = vec![Vec::new()];
                for &i in &t.partition_key {
                    let mut next = Vec::new();
                    for p in &combos {
                        for v in eq[i].iter().flatten() {
                            let mut q = p.clone();
                            q.push(v.clone());
                            next.push(q);
                        }
                    }
                    combos = next;
                }
                let mut keys = Vec::new();
                for c in combos {
                    let parts: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
                    keys.push(t.row_key(&parts)?);
                }
                // Partitions in the order of their keys' types, whatever order IN gave them
                // (Cassandra's), each once.
                if keys.len() > 1 {
                    let cmp = t.key_comparator();
                    keys.sort_by(|a, b| cmp.compare(a, b));
                    keys.dedup();
                }
                Some(keys)
            }
            _ => {
                return Err(CqlError::invalid(
                    "a partition key must be restricted on all its columns, or not at all",
                ))
            }
        };
        if keys.is_none()
            && t.clustering
                .iter()
                .any(|&i| eq[i].is_some() || lower[i].is_some() || upper[i].is_some())
            && !s.allow_filtering
        {
            return Err(CqlError::invalid(
                "restricting clustering columns without the partition key needs ALLOW FILTERING",
            ));
        }

        // ORDER BY over several partitions: each is read in that order, then their rows are
        // merged by it, and LIMIT applies to the merge (Cassandra's post-query ordering).
        let post_order =
            !counting && !s.order_by.is_empty() && keys.as_ref().is_some_and(|k| k.len() > 1);
        if post_order && page.is_some_and(|p| limit_left > p.size) {
            return Err(CqlError::invalid(
                "Cannot page queries with both ORDER BY and a IN restriction on the partition key; you must either remove the ORDER BY or the IN and sort client side, or disable paging for this query",
            ));
        }
        let (limit, per_partition) = if post_order {
            (usize::MAX, per_partition.min(limit))
        } else {
            (limit, per_partition)
        };
        // The clustering prefix of each row returned, for that merge.
        let mut merge_keys: Vec<Vec<u8>> = Vec::new();
        let mut out = Rows::new(columns);
        let mut count = 0usize;
        // The last row returned: its key, clustering prefix, and rows of its partition.
        let mut last: Option<(Vec<u8>, Vec<u8>, usize)> = None;
        // `in_partition` counts the partition's rows across all its slices (IN on clustering).
        let resolved = resolve(&t, &selectors);
        let n_ck = t.clustering.len();
        let mut partition = |key: &[u8],
                             cells: &mut dyn Iterator<Item = Result<Column, CqlError>>,
                             in_partition: &mut usize|
         -> Result<bool, CqlError> {
            if *in_partition >= per_partition || (s.distinct && *in_partition > 0) {
                return Ok(count < limit);
            }
            let pk = t.split_row_key(key);
            // The row being assembled: its clustering prefix (the name bytes its cells share)
            // and its columns.
            // The row being assembled: the name of its first cell (whose first `len` bytes are
            // the clustering prefix every cell of the row shares) and its columns.
            let mut current: Option<(Vec<u8>, usize, Row)> = None;
            let mut emit = |prefix: &[u8],
                            row: Row,
                            out: &mut Rows,
                            count: &mut usize,
                            in_partition: &mut usize|
             -> bool {
                if filters.iter().all(|(i, op, v)| {
                    matches_filter(
                        &t.columns[*i].ty,
                        row[*i].as_ref().map(|x| x.0.as_slice()),
                        *op,
                        v,
                    )
                }) {
                    *in_partition += 1;
                    *count += 1;
                    if page.is_some() {
                        last = Some((key.to_vec(), prefix.to_vec(), *in_partition));
                    }
                    if post_order {
                        merge_keys.push(prefix.to_vec());
                    }
                    if !matches!(selectors.first(), Some(Selector::Count)) {
                        let row = project(&resolved, &pk, prefix, row, now_seconds);
                        out.push_row(row.iter().map(Option::as_deref));
                    }
                }
                *count < limit && *in_partition < per_partition && !s.distinct
            };
            for cell in cells {
                let cell = cell?;
                let Some((prefix_len, col, element)) = cell_parts(&cell.name, n_ck) else {
                    continue;
                };
                let prefix = &cell.name[..prefix_len];
                if current
                    .as_ref()
                    .is_some_and(|(name, len, _)| name[..*len] != *prefix)
                {
                    if let Some((name, len, row)) = current.take() {
                        if !emit(&name[..len], row, &mut out, &mut count, in_partition) {
                            return Ok(count < limit);
                        }
                    }
                }
                let Some(i) = t
                    .columns
                    .iter()
                    .position(|c| c.kind == Kind::Regular && c.name.as_bytes() == col)
                else {
                    // The marker (or a column dropped since): the row is live, nothing to keep.
                    if current.is_none() {
                        current = Some((cell.name, prefix_len, vec![None; t.columns.len()]));
                    }
                    continue;
                };
                let (element, ty) = (element.map(<[u8]>::to_vec), &t.columns[i].ty);
                let entry = current
                    .get_or_insert_with(|| (cell.name, prefix_len, vec![None; t.columns.len()]));
                match (ty, element) {
                    (CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..), Some(e)) => {
                        let value = entry.2[i]
                            .get_or_insert_with(|| (vec![0; 4], cell.timestamp, cell.expires_at));
                        // A reversed read meets the elements last first; the value keeps the
                        // collection's own order.
                        add_element(&mut value.0, ty, &e, &cell.value, reversed);
                    }
                    (ty, None) if !ty.is_collection() => {
                        entry.2[i] = Some((cell.value, cell.timestamp, cell.expires_at));
                    }
                    _ => {}
                }
            }
            if let Some((name, len, row)) = current.take() {
                emit(&name[..len], row, &mut out, &mut count, in_partition);
            }
            Ok(count < limit)
        };
        let cf = ColumnParent::new(&t.name);
        // Cells a page must hold for the rows the query may return: a marker and each regular
        // column per row (filters may need more; the pages go on as needed).
        let per_row = 1 + t.columns.len() - t.partition_key.len() - t.clustering.len();
        // A slice that fixes every clustering column holds one CQL row at most.
        let one_row = t
            .clustering
            .iter()
            .all(|&i| eq[i].as_ref().is_some_and(|v| v.len() == 1));
        let rows_wanted = if one_row { 1 } else { limit.min(per_partition) };
        let want = rows_wanted
            .saturating_mul(per_row)
            .saturating_add(1)
            .clamp(2, PAGE);
        let rows_per_page = limit.saturating_add(1).clamp(2, PAGE);
        // One CQL row of a table without collections has a known set of cells: its marker and
        // one per regular column. Read by name, as `get` reads, a source stops being asked once
        // what was found is newer than all it holds (a slice asks every SSTable).
        let by_name = (one_row && !t.columns.iter().any(|c| c.ty.is_collection()))
            .then(|| {
                let ck: Vec<&[u8]> = t
                    .clustering
                    .iter()
                    .filter_map(|&i| eq[i].as_ref().and_then(|v| v.first()))
                    .map(Vec::as_slice)
                    .collect();
                std::iter::once("")
                    .chain(
                        t.regular_sorted()
                            .into_iter()
                            .map(|i| t.columns[i].name.as_str()),
                    )
                    .map(|n| t.cell_name(&ck, n))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?;
        match keys {
            Some(keys) => {
                let mut resume = resume;
                'keys: for key in keys {
                    let mut in_partition = 0;
                    let mut resumed = None;
                    if let Some(r) = resume {
                        if key != r.key {
                            continue; // returned by an earlier page
                        }
                        resume = None;
                        let Some(prefix) = &r.clustering else {
                            continue;
                        };
                        if by_name.is_some() {
                            continue; // its one row was returned
                        }
                        in_partition = usize::try_from(r.in_partition).unwrap_or(usize::MAX);
                        resumed = Some(resume_slices(&t, &slices, prefix, reversed));
                    }
                    if let Some(names) = &by_name {
                        let found = self.db.get_slice(
                            &t.keyspace,
                            &key,
                            &cf,
                            &SlicePredicate::Names(names.clone()),
                        )?;
                        let mut cells = found.into_iter().filter_map(|c| match c {
                            ColumnOrSuperColumn::Column(c) => Some(Ok(c)),
                            ColumnOrSuperColumn::SuperColumn(_) => None,
                        });
                        if !partition(&key, &mut cells, &mut in_partition)? {
                            break 'keys;
                        }
                        continue;
                    }
                    for b in resumed.as_ref().unwrap_or(&slices) {
                        let mut cells = self.cells(&t.keyspace, &cf, &key, b, reversed, want, None);
                        if !partition(&key, &mut cells, &mut in_partition)? {
                            break 'keys;
                        }
                    }
                }
            }
            None => {
                let mut start = span.start.clone();
                // The previous page's last row (a page starts at it again), or an exclusive start.
                let mut seen: Option<Vec<u8>> = span.skip_start.clone();
                // A client's page resumes in its last row's partition, or after it.
                let mut resumed: Option<(Vec<u8>, Vec<Bounds>, usize)> = None;
                if let Some(r) = resume {
                    start = RangeBound::Key(r.key.clone());
                    match &r.clustering {
                        None => seen = Some(r.key.clone()),
                        Some(prefix) => {
                            seen = None;
                            let b = resume_slices(&t, &slices, prefix, reversed);
                            let n = usize::try_from(r.in_partition).unwrap_or(usize::MAX);
                            resumed = Some((r.key.clone(), b, n));
                        }
                    }
                }
                'scan: loop {
                    let range = KeyRange {
                        start: start.clone(),
                        end: span.end.clone(),
                        count: rows_per_page,
                    };
                    // With one slice per partition, the range read brings each row's first page.
                    let first = match slices.as_slice() {
                        [b] => {
                            let (from, to) = if reversed {
                                (&b.finish, &b.start)
                            } else {
                                (&b.start, &b.finish)
                            };
                            SliceRange {
                                start: from.clone(),
                                finish: to.clone(),
                                reversed,
                                count: want,
                            }
                        }
                        _ => SliceRange::all().count(1),
                    };
                    let prefetch = slices.len() == 1;
                    let found = self.db.get_range_slices(
                        &t.keyspace,
                        &cf,
                        &SlicePredicate::Range(first),
                        &range,
                    )?;
                    let full = found.len() == rows_per_page;
                    for ks in found {
                        let repeat = seen.as_deref() == Some(ks.key.as_slice());
                        seen = Some(ks.key.clone());
                        if repeat
                            || ks.columns.is_empty()
                            || span.skip_end.as_deref() == Some(ks.key.as_slice())
                        {
                            continue;
                        }
                        let mut prefetched = prefetch.then_some(ks.columns);
                        let mut in_partition = 0;
                        let mut these = &slices;
                        if let Some((_, b, n)) = resumed.as_ref().filter(|r| r.0 == ks.key) {
                            (these, in_partition, prefetched) = (b, *n, None);
                        }
                        for b in these {
                            let mut cells = self.cells(
                                &t.keyspace,
                                &cf,
                                &ks.key,
                                b,
                                reversed,
                                want,
                                prefetched.take(),
                            );
                            if !partition(&ks.key, &mut cells, &mut in_partition)? {
                                break 'scan;
                            }
                        }
                    }
                    match (&seen, full) {
                        (Some(k), true) => start = RangeBound::Key(k.clone()),
                        _ => break,
                    }
                }
            }
        }
        if matches!(selectors.first(), Some(Selector::Count)) {
            out.push_row([Some(&(count as i64).to_be_bytes()[..])]);
        }
        if post_order {
            out = merged(&t, out, &merge_keys, reversed, limit_left);
        }
        // A full page, short of the LIMIT: more rows may follow.
        let end = last.filter(|_| !post_order && count == limit && limit < limit_left);
        let end = end.map(|(key, prefix, n)| Position {
            key,
            clustering: (!prefix.is_empty() && !s.distinct && n < per_partition).then_some(prefix),
            in_partition: n as u64,
            returned: resume.map_or(0, |r| r.returned) + count as u64,
        });
        Ok((out, end))
    }

    /// Narrows a scan by `token(pk) op token(key)` or `token(pk) op <token>`.
    fn token_restriction(
        &self,
        t: &Table,
        cols: &[String],
        op: Op,
        term: &Term,
        of_key: bool,
        span: &mut KeySpan,
    ) -> Result<(), CqlError> {
        let pk: Vec<&str> = t
            .partition_key
            .iter()
            .map(|&i| t.columns[i].name.as_str())
            .collect();
        if cols.iter().map(String::as_str).ne(pk.iter().copied()) {
            return Err(CqlError::invalid(format!(
                "token() takes the partition key columns in order: token({})",
                pk.join(", ")
            )));
        }
        let (bound, key) = if of_key {
            let [one] = t.partition_key.as_slice() else {
                return Err(CqlError::invalid(
                    "token(?) of a composite partition key is not supported yet",
                ));
            };
            let c = &t.columns[*one];
            let k = self
                .value(&c.ty, term, &c.name)?
                .ok_or_else(|| CqlError::invalid("token() of null"))?;
            (RangeBound::Key(k.clone()), Some(k))
        } else {
            let text = match term {
                Term::Literal(Literal::Number(n)) => n.clone(),
                _ => self.integer(term, "a token")?.to_string(),
            };
            if matches!(op, Op::Gt | Op::Lt) {
                return Err(CqlError::invalid(
                    "a raw token bound is inclusive here: use >= or <=, or token(key)",
                ));
            }
            (RangeBound::Token(text), None)
        };
        match op {
            Op::Gt | Op::Ge => {
                span.start = bound;
                span.skip_start = if op == Op::Gt { key } else { None };
            }
            Op::Lt | Op::Le => {
                span.end = bound;
                span.skip_end = if op == Op::Lt { key } else { None };
            }
            Op::Eq => {
                span.start = bound.clone();
                span.end = bound;
            }
        }
        Ok(())
    }
}

fn restricted_twice(c: &str) -> CqlError {
    CqlError::invalid(format!(
        "{c} cannot be restricted by more than one relation of this kind"
    ))
}
