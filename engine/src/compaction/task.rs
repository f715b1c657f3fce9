//! One compaction: merges the rows of some SSTables of a column family into one new SSTable,
//! reconciling versions (SPEC §3), dropping what deletions shadow, turning expired TTL cells
//! into tombstones, and purging tombstones past `GCGraceSeconds` — but only when the compaction
//! is major, or can show (bloom filters of the other SSTables, and the memtables) that the row is
//! nowhere else, so a purge can never let older data reappear.
//!
//! This file merges and writes; choosing inputs is [`super::size_tiered`], making the result live
//! is the store's job.

use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::cache::KeyCache;
use crate::error::{Error, Result};
use crate::io::FileSystem;
use crate::merge::{merged_deletion, merged_entries, KMerge, RowSource};
use crate::model::cell::{Cell, CellValue, DeletionTime, Entry};
use crate::model::cell_key;
use crate::model::range_deletions::RangeDeletions;
use crate::sstable::iter::SstRow;
use crate::sstable::{BlockCache, ReadContext, Sstable, SstableWriter, TableOptions};
use crate::stats::Counters;

/// Bytes of the private block cache a compaction reads through.
const COMPACTION_BLOCK_CACHE: usize = 8 << 20;

/// What a compaction needs to know beyond its inputs.
pub struct CompactionParams<'a> {
    /// Whether every SSTable of the CF is an input (then tombstones past grace always go).
    pub major: bool,
    /// "Now", in seconds, from the engine clock.
    pub now_seconds: i64,
    /// The CF's grace period.
    pub gc_grace_seconds: u32,
    /// Whether the CF is Super (entry key layout).
    pub is_super: bool,
    /// Whether row (sort key, key) may have data outside the inputs (other SSTables' bloom
    /// filters, memtables). Only consulted for rows holding purgeable tombstones.
    pub elsewhere: &'a dyn Fn(&[u8], &[u8]) -> bool,
    /// Splits a row sort key into its client key.
    pub key_of: &'a dyn Fn(&[u8]) -> Vec<u8>,
    /// Whether to stop (the database is closing): checked every [`CHECK_CANCEL_EVERY`] rows.
    pub cancelled: &'a dyn Fn() -> bool,
    /// Input rows merged so far, counted here for whoever watches the compaction.
    pub progress: &'a AtomicU64,
    /// For a secondary index's major compaction: whether an entry (its row key, its key in
    /// the row) still stands for its base row; live cells it answers `false` for are dropped.
    pub keep_entry: Option<&'a EntryTest>,
    /// For a column family with secondary indexes: told, row by row, the live cells (without a
    /// TTL) the merge discarded, so their index entries can go (see [`DiscardHook`]).
    pub on_discard: Option<&'a DiscardHook>,
}

/// A live cell a compaction discarded: its key in the row, timestamp and value.
pub type DiscardedCell = (Vec<u8>, i64, Vec<u8>);

/// Told the live cells without a TTL that a compaction discarded from one row (its key and
/// sort key): shadowed by a newer version or a deletion among the inputs. Cells with a TTL
/// are left out: their index entries expire with them.
pub type DiscardHook = dyn Fn(&[u8], &[u8], &[DiscardedCell]) + Send + Sync;

/// Whether an index entry (its row key, its key in the row) still stands for its base row.
pub type EntryTest = dyn Fn(&[u8], &[u8]) -> Result<bool> + Send + Sync;

/// Rows merged between checks of [`CompactionParams::cancelled`].
const CHECK_CANCEL_EVERY: u64 = 256;

/// What a compaction produced.
#[derive(Debug, Default)]
pub struct CompactionOutput {
    /// The new SSTable (none if everything was purged).
    pub table: Option<Arc<Sstable>>,
    /// Bytes of the inputs.
    pub bytes_in: u64,
    /// Bytes of the output.
    pub bytes_out: u64,
    /// Rows written.
    pub rows: u64,
    /// Tombstones (cells, super column and row deletions) purged.
    pub purged: u64,
    /// Index entries dropped because their base rows no longer make them.
    pub stale: u64,
}

/// The entries of an index row worth keeping: every tombstone, and each live entry `keep`
/// says still stands for its base row (the others counted in `stale`).
fn standing(
    entries: Vec<(Vec<u8>, Entry)>,
    row_key: &[u8],
    keep: &EntryTest,
    stale: &mut u64,
) -> Result<Vec<(Vec<u8>, Entry)>> {
    let mut out = Vec::with_capacity(entries.len());
    for (k, e) in entries {
        let live = matches!(&e, Entry::Cell(c) if matches!(c.value, CellValue::Live { .. }));
        if live && !keep(row_key, &k)? {
            *stale += 1;
            continue;
        }
        out.push((k, e));
    }
    Ok(out)
}

/// The live cells without a TTL of `entries`.
fn live_cells<'e>(
    entries: impl IntoIterator<Item = (&'e [u8], &'e Entry)>,
) -> impl Iterator<Item = (&'e [u8], i64, &'e [u8])> {
    entries.into_iter().filter_map(|(k, e)| match e {
        Entry::Cell(Cell {
            timestamp,
            value: CellValue::Live { value, ttl: None },
        }) => Some((k, *timestamp, value.as_slice())),
        _ => None,
    })
}

/// The live cells without a TTL that the inputs' `sources` of one row held and that the
/// cleaned `kept` entries no longer hold. `merged` is the sources' merge (one version per
/// key): with one source, it is that source's every cell.
fn discarded(
    sources: &[&dyn RowSource],
    merged: &[(Vec<u8>, Entry)],
    kept: &[(Vec<u8>, Entry)],
) -> Result<Vec<DiscardedCell>> {
    let mut before: Vec<DiscardedCell> = Vec::new();
    if sources.len() == 1 {
        before.extend(
            live_cells(merged.iter().map(|(k, e)| (k.as_slice(), e)))
                .map(|(k, t, v)| (k.to_vec(), t, v.to_vec())),
        );
    } else {
        for s in sources {
            for item in merged_entries(
                std::slice::from_ref(s),
                Bound::Unbounded,
                Bound::Unbounded,
                false,
            ) {
                let (k, e) = item?;
                before.extend(
                    live_cells([(k.as_ref(), &e)]).map(|(k, t, v)| (k.to_vec(), t, v.to_vec())),
                );
            }
        }
    }
    if before.is_empty() {
        return Ok(before);
    }
    let after: std::collections::HashSet<(&[u8], i64, &[u8])> =
        live_cells(kept.iter().map(|(k, e)| (k.as_slice(), e))).collect();
    before.retain(|(k, t, v)| !after.contains(&(k.as_slice(), *t, v.as_slice())));
    Ok(before)
}

/// Cleans one merged row in key order: drops cells shadowed by the row's, their super
/// column's, a prefix's or a range's deletion, drops the values of expired TTL cells, and (if `purge`) drops tombstones
/// and expired TTL cells whose grace period has passed. Returns the row's deletion and entries, or `None` if nothing is left.
// Long because each cleaning rule (row deletion, super column deletion, expiry, purge) applies in
// one pass over the row's entries.
pub fn clean_row(
    deletion: Option<DeletionTime>,
    entries: Vec<(Vec<u8>, Entry)>,
    is_super: bool,
    now_seconds: i64,
    gc_before: i64,
    purge: bool,
    purged: &mut u64,
) -> (Option<DeletionTime>, Vec<(Vec<u8>, Entry)>) {
    let mut out = Vec::with_capacity(entries.len());
    let mut group: Option<(Vec<u8>, Option<DeletionTime>)> = None;
    // Standard CFs: the prefix deletions enclosing the current key, outermost first (each
    // sorts just before the names it covers, so a forward walk meets it first).
    let mut prefixes: Vec<(Vec<u8>, DeletionTime)> = Vec::new();
    // Range deletions lie at the head of a row; dropped or purged below, they still hide what
    // they cover in this merge.
    let ranges = if is_super
        || !entries[..]
            .first()
            .is_some_and(|(k, _)| k.starts_with(&cell_key::RANGE_DELETIONS))
    {
        RangeDeletions::default()
    } else {
        RangeDeletions::new(
            entries
                .iter()
                .filter_map(|(k, e)| match e {
                    Entry::GroupDeletion(d) => {
                        cell_key::range_of_deletion(k).map(|(s, f)| (s, f, *d))
                    }
                    Entry::Cell(_) => None,
                })
                .collect(),
        )
    };
    for (key, entry) in entries {
        if !is_super {
            while prefixes
                .last()
                .is_some_and(|(p, _)| !(key.starts_with(p) && key.len() > p.len()))
            {
                prefixes.pop();
            }
        }
        let enclosing = prefixes.iter().fold(deletion, |acc, (_, d)| {
            DeletionTime::merge_opt(acc, Some(*d))
        });
        match entry {
            Entry::GroupDeletion(d) => {
                let d = if enclosing.is_some_and(|rd| rd.shadows(d.marked_for_delete_at)) {
                    None
                } else {
                    Some(d)
                };
                if !is_super {
                    // Dropped or purged, it still hides what it covers in this merge.
                    if let (Some(d), Some(p)) = (d, cell_key::prefix_of_deletion(&key)) {
                        prefixes.push((p.to_vec(), d));
                    }
                }
                group = Some((key.clone(), d));
                match d {
                    Some(d) if purge && d.local_deletion_time <= gc_before => *purged += 1,
                    Some(d) => out.push((key, Entry::GroupDeletion(d))),
                    None => {}
                }
            }
            Entry::Cell(cell) => {
                let mut shadow = DeletionTime::merge_opt(enclosing, ranges.covering(&key));
                if is_super {
                    if let Some(plen) = cell_key::group_prefix_len(&key) {
                        match &group {
                            Some((p, d)) if p.as_slice() == &key[..plen] => {
                                shadow = DeletionTime::merge_opt(shadow, *d);
                            }
                            _ => group = Some((key[..plen].to_vec(), None)),
                        }
                    }
                }
                if shadow.is_some_and(|d| d.shadows(cell.timestamp)) {
                    continue;
                }
                let cell = match cell.value {
                    CellValue::Live { ttl: Some(t), .. }
                        if now_seconds >= t.local_expiration_time =>
                    {
                        if purge && t.local_expiration_time <= gc_before {
                            *purged += 1;
                            continue;
                        }
                        // Expired: a deletion from now on. It stays a TTL cell, so it ranks
                        // against other versions as it did before (a tombstone would beat a
                        // same-timestamp TTL cell that expires later); nothing reads its value.
                        Cell::live(cell.timestamp, Vec::new(), Some(t))
                    }
                    _ => cell,
                };
                if let CellValue::Tombstone {
                    local_deletion_time,
                } = cell.value
                {
                    if purge && local_deletion_time <= gc_before {
                        *purged += 1;
                        continue;
                    }
                }
                out.push((key, Entry::Cell(cell)));
            }
        }
    }
    let deletion = match deletion {
        Some(d) if purge && d.local_deletion_time <= gc_before => {
            *purged += 1;
            None
        }
        d => d,
    };
    (deletion, out)
}

/// Merges `inputs` into a new SSTable at `dest`.
#[allow(clippy::too_many_arguments)]
// Long because the merge loop keeps its writer, its counters and the cleaning of each row together.
pub fn compact(
    fs: &dyn FileSystem,
    inputs: &[Arc<Sstable>],
    dest: &Path,
    generation: u64,
    options: TableOptions,
    params: &CompactionParams<'_>,
) -> Result<CompactionOutput> {
    // Compaction reads use a private block cache, not the shared one (a merge would flush it of
    // hot blocks). It only needs to hold the blocks under each input's cursor, so each block is
    // decoded once as the rows are walked in order. (With no cache each row's lookup and scan
    // decoded its block again: `cargo bench --bench compaction` measured 6.8 MiB/s merged
    // without it and 42 MiB/s with it.)
    let (blocks, keys, counters) = (
        BlockCache::new(COMPACTION_BLOCK_CACHE),
        KeyCache::default(),
        Counters::default(),
    );
    let ctx = ReadContext {
        blocks: &blocks,
        keys: &keys,
        counters: &counters,
    };
    let gc_before = params
        .now_seconds
        .saturating_sub(i64::from(params.gc_grace_seconds));
    let mut out = CompactionOutput {
        bytes_in: inputs.iter().map(|t| t.bytes()).sum(),
        ..CompactionOutput::default()
    };
    let mut writer: Option<SstableWriter<'_>> = None;
    // Rows of the output are at most the inputs' rows together; sizing the filter for that
    // keeps its false positives at the configured rate.
    let max_rows = inputs.iter().map(|t| t.footer().rows).sum();
    let streams: Vec<_> = inputs
        .iter()
        .map(|t| t.rows_from(Bound::Unbounded, ctx))
        .collect();
    // Each input is walked once, forward: a row met in a file is read where the walk stands.
    for (n, group) in KMerge::new(streams, row_key, false).enumerate() {
        // Stopping drops the writer, which removes its temporary file; the inputs stay live.
        if (n as u64).is_multiple_of(CHECK_CANCEL_EVERY) && (params.cancelled)() {
            return Err(Error::Closing);
        }
        let rows: Vec<SstRow<'_>> = group.into_iter().collect::<Result<_>>()?;
        params
            .progress
            .fetch_add(rows.len() as u64, Ordering::Relaxed);
        let Some(sort_key) = rows.first().map(|r| r.sort_key().to_vec()) else {
            continue;
        };
        let key = (params.key_of)(&sort_key);
        let sources: Vec<&dyn RowSource> = rows.iter().map(|r| r as &dyn RowSource).collect();
        let deletion = merged_deletion(&sources)?;
        let entries: Vec<(Vec<u8>, Entry)> =
            merged_entries(&sources, Bound::Unbounded, Bound::Unbounded, false)
                .map(|r| r.map(|(k, e)| (k.into_owned(), e)))
                .collect::<Result<_>>()?;
        let has_purgeable = deletion.is_some_and(|d| d.local_deletion_time <= gc_before)
            || entries.iter().any(|(_, e)| match e {
                Entry::GroupDeletion(d) => d.local_deletion_time <= gc_before,
                Entry::Cell(c) => match &c.value {
                    CellValue::Tombstone {
                        local_deletion_time,
                    } => *local_deletion_time <= gc_before,
                    CellValue::Live { ttl: Some(t), .. } => t.local_expiration_time <= gc_before,
                    CellValue::Live { ttl: None, .. } => false,
                },
            });
        let purge = has_purgeable && (params.major || !(params.elsewhere)(&sort_key, &key));
        // The merge before cleaning, for what the row's index entries lose: a row of one
        // input loses a live cell only to a deletion of a row, a prefix or a range.
        let may_discard = rows.len() > 1
            || deletion.is_some()
            || entries
                .iter()
                .any(|(_, e)| matches!(e, Entry::GroupDeletion(_)));
        let merged = params
            .on_discard
            .filter(|_| may_discard)
            .map(|_| entries.clone());
        let (deletion, entries) = clean_row(
            deletion,
            entries,
            params.is_super,
            params.now_seconds,
            gc_before,
            purge,
            &mut out.purged,
        );
        if let (Some(hook), Some(merged)) = (params.on_discard, merged) {
            let gone = discarded(&sources, &merged, &entries)?;
            if !gone.is_empty() {
                hook(&key, &sort_key, &gone);
            }
        }
        let entries = match params.keep_entry {
            Some(keep) => standing(entries, &key, keep, &mut out.stale)?,
            None => entries,
        };
        if deletion.is_none() && entries.is_empty() {
            continue;
        }
        let w = match writer.as_mut() {
            Some(w) => w,
            None => writer.insert(SstableWriter::create(fs, dest, options, max_rows)?),
        };
        w.add_row(
            &sort_key,
            &key,
            deletion,
            entries.iter().map(|(k, e)| (k.as_slice(), e.as_ref())),
        )?;
        out.rows += 1;
    }
    if let Some(w) = writer {
        let written = w.finish()?;
        out.bytes_out = written.bytes;
        out.table = Some(Arc::new(Sstable::open(
            fs,
            &written.path,
            generation,
            options.partitioner,
        )?));
    }
    Ok(out)
}

/// The merge key of a row stream item; `None` for an error, which the merge yields at once.
fn row_key<'r>(item: &'r Result<SstRow<'_>>) -> Option<&'r [u8]> {
    item.as_ref().ok().map(SstRow::sort_key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cell::Ttl;

    fn del(ts: i64, ldt: i64) -> DeletionTime {
        DeletionTime {
            marked_for_delete_at: ts,
            local_deletion_time: ldt,
        }
    }

    #[test]
    fn shadowed_cells_go_and_tombstones_go_only_past_grace_when_purging() {
        let entries = vec![
            (
                b"a".to_vec(),
                Entry::Cell(Cell::live(5, b"old".to_vec(), None)),
            ),
            (
                b"b".to_vec(),
                Entry::Cell(Cell::live(20, b"new".to_vec(), None)),
            ),
            (b"c".to_vec(), Entry::Cell(Cell::tombstone(30, 100))),
            (b"d".to_vec(), Entry::Cell(Cell::tombstone(31, 500))),
            (
                b"e".to_vec(),
                Entry::Cell(Cell::live(
                    40,
                    b"ttl".to_vec(),
                    Some(Ttl {
                        ttl: 10,
                        local_expiration_time: 150,
                    }),
                )),
            ),
        ];
        let mut purged = 0;
        // Now 1000, grace 800: gc_before = 200. The row deletion (ts 10, deleted at 50) shadows a.
        let (d, e) = clean_row(
            Some(del(10, 50)),
            entries.clone(),
            false,
            1000,
            200,
            true,
            &mut purged,
        );
        assert_eq!(d, None, "the row tombstone is past grace");
        let keys: Vec<&[u8]> = e.iter().map(|(k, _)| k.as_slice()).collect();
        assert_eq!(
            keys,
            [&b"b"[..], b"d"],
            "c and the expired e are purged; d is within grace"
        );
        assert_eq!(purged, 3);
        // Not purging: tombstones stay, the expired TTL cell stays one without its value.
        let mut purged = 0;
        let (d, e) = clean_row(
            Some(del(10, 50)),
            entries,
            false,
            1000,
            200,
            false,
            &mut purged,
        );
        assert_eq!(d, Some(del(10, 50)));
        assert_eq!(e.len(), 4);
        let ttl = Some(Ttl {
            ttl: 10,
            local_expiration_time: 150,
        });
        assert_eq!(e[3].1, Entry::Cell(Cell::live(40, Vec::new(), ttl)));
        assert_eq!(purged, 0);
    }

    #[test]
    fn super_column_deletions_shadow_their_own_sub_columns_only() {
        use crate::model::comparator::BytesType;
        let p1 = cell_key::super_column(&BytesType, b"home");
        let p2 = cell_key::super_column(&BytesType, b"work");
        let sub = |p: &[u8], n: &[u8]| cell_key::sub_column(p, &BytesType, n);
        let entries = vec![
            (p1.clone(), Entry::GroupDeletion(del(10, 900))),
            (
                sub(&p1, b"city"),
                Entry::Cell(Cell::live(5, b"x".to_vec(), None)),
            ),
            (
                sub(&p1, b"zip"),
                Entry::Cell(Cell::live(15, b"y".to_vec(), None)),
            ),
            (
                sub(&p2, b"city"),
                Entry::Cell(Cell::live(5, b"z".to_vec(), None)),
            ),
        ];
        let mut purged = 0;
        let (_, e) = clean_row(None, entries, true, 1000, 200, true, &mut purged);
        let keys: Vec<Vec<u8>> = e.into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, [p1.clone(), sub(&p1, b"zip"), sub(&p2, b"city")]);
    }

    #[test]
    fn prefix_deletions_drop_what_they_cover_even_when_purged_themselves() {
        use crate::model::comparator::{sort_key, CompositeType, Utf8Type};
        use std::sync::Arc;
        let cmp = CompositeType::new(vec![
            Arc::new(Utf8Type),
            Arc::new(Utf8Type),
            Arc::new(Utf8Type),
        ]);
        let key = |parts: &[&[u8]]| sort_key(&cmp, &CompositeType::build(parts, 0));
        let cell = |ts| Entry::Cell(Cell::live(ts, b"v".to_vec(), None));
        let entries = |outer: DeletionTime| {
            vec![
                (key(&[b"a"]), cell(1)),
                (
                    cell_key::prefix_deletion(&key(&[b"a"])),
                    Entry::GroupDeletion(outer),
                ),
                (key(&[b"a", b"x", b"1"]), cell(5)),
                (
                    cell_key::prefix_deletion(&key(&[b"a", b"y"])),
                    Entry::GroupDeletion(del(20, 900)),
                ),
                (key(&[b"a", b"y", b"1"]), cell(15)),
                (key(&[b"a", b"y", b"2"]), cell(25)),
                (key(&[b"a", b"z", b"1"]), cell(15)),
                (key(&[b"b", b"x", b"1"]), cell(5)),
            ]
        };
        // Within grace: the outer deletion (ts 10) hides a:x:1; the inner (ts 20) a:y:1; the
        // name `a` itself and b:… are not under either.
        let mut purged = 0;
        let (_, e) = clean_row(
            None,
            entries(del(10, 900)),
            false,
            1000,
            200,
            true,
            &mut purged,
        );
        let keys: Vec<Vec<u8>> = e.into_iter().map(|(k, _)| k).collect();
        let want = [
            key(&[b"a"]),
            cell_key::prefix_deletion(&key(&[b"a"])),
            cell_key::prefix_deletion(&key(&[b"a", b"y"])),
            key(&[b"a", b"y", b"2"]),
            key(&[b"a", b"z", b"1"]),
            key(&[b"b", b"x", b"1"]),
        ];
        assert_eq!(keys, want);
        assert_eq!(purged, 0);
        // Past grace the outer deletion goes, and a:x:1 with it (nothing else may hold it when
        // purging is allowed).
        let (_, e) = clean_row(
            None,
            entries(del(10, 100)),
            false,
            1000,
            200,
            true,
            &mut purged,
        );
        let keys: Vec<Vec<u8>> = e.into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, [&want[..1], &want[2..]].concat());
        assert_eq!(purged, 1);
    }
}
