//! The memtable through its own API: reads see the winning version of every key, forward and
//! backward, with deletions applied as SPEC §3 says; flushes see each row once, cleaned; a
//! reader never sees part of a row mutation while writers race it.

use std::ops::Bound;

use super::*;
use crate::model::cell::{Cell, Entry, Ttl};

fn live(ts: i64, v: &[u8]) -> Entry {
    Entry::Cell(Cell::live(ts, v.to_vec(), None))
}

fn update<'a>(entries: &'a [(&'a [u8], Entry)]) -> RowUpdate<'a> {
    RowUpdate {
        deletion: None,
        entries: entries
            .iter()
            .map(|(k, e)| (Cow::Borrowed(*k), e.as_ref()))
            .collect(),
    }
}

fn read(m: &Memtable, row: &[u8], reversed: bool) -> Vec<(Vec<u8>, Entry)> {
    let Some(r) = m.row(row) else {
        return Vec::new();
    };
    r.scan(Bound::Unbounded, Bound::Unbounded, reversed)
        .map(|i| i.map(|(k, e)| (k.into_owned(), e.into_owned())))
        .collect::<Result<_>>()
        .unwrap()
}

#[test]
fn the_winning_version_is_read_and_losers_are_not_stored() {
    let m = Memtable::with_expected_rows(16);
    m.apply(b"r", &update(&[(b"a", live(5, b"new"))]), false);
    m.apply(b"r", &update(&[(b"a", live(3, b"old"))]), false);
    m.apply(
        b"r",
        &update(&[(b"b", live(1, b"x")), (b"a", live(5, b"news"))]),
        false,
    );
    assert_eq!(
        read(&m, b"r", false),
        [
            (b"a".to_vec(), live(5, b"news")),
            (b"b".to_vec(), live(1, b"x"))
        ]
    );
    let flushed: Vec<_> = m.flush_rows(false).collect();
    assert_eq!(flushed.len(), 1);
    let entries: Vec<_> = flushed[0]
        .entries()
        .map(|(k, e)| (k.to_vec(), e.timestamp()))
        .collect();
    assert_eq!(entries, [(b"a".to_vec(), 5), (b"b".to_vec(), 1)]);
    assert_eq!(m.operations(), 4);
}

#[test]
fn a_row_deletion_shadows_older_cells_and_later_ones_show() {
    let m = Memtable::with_expected_rows(16);
    m.apply(
        b"r",
        &update(&[(b"a", live(1, b"x")), (b"b", live(9, b"y"))]),
        false,
    );
    let del = DeletionTime {
        marked_for_delete_at: 5,
        local_deletion_time: 100,
    };
    m.apply(
        b"r",
        &RowUpdate {
            deletion: Some(del),
            entries: update(&[(b"c", live(4, b"shadowed"))]).entries,
        },
        false,
    );
    m.apply(b"r", &update(&[(b"d", live(6, b"later"))]), false);
    let r = m.row(b"r").unwrap();
    assert_eq!(r.deletion().unwrap(), Some(del));
    let f: Vec<_> = m.flush_rows(false).collect();
    assert_eq!(f[0].deletion, Some(del));
    let keys: Vec<_> = f[0].entries().map(|(k, _)| k.to_vec()).collect();
    assert_eq!(keys, [b"b".to_vec(), b"d".to_vec()], "a and c are shadowed");
}

#[test]
fn slices_read_the_same_forward_and_backward_within_bounds() {
    let m = Memtable::with_expected_rows(16);
    for i in 0u8..20 {
        m.apply(
            b"r",
            &update(&[(&[i * 2], live(i64::from(i), &[i]))]),
            false,
        );
    }
    // A newer version of one entry and a row before and after.
    m.apply(b"r", &update(&[(&[10], live(100, b"v2"))]), false);
    m.apply(b"q", &update(&[(&[1], live(1, b"q"))]), false);
    m.apply(b"s", &update(&[(&[1], live(1, b"s"))]), false);
    let r = m.row(b"r").unwrap();
    for (lo, hi) in [
        (Bound::Unbounded, Bound::Unbounded),
        (Bound::Included(&[10u8][..]), Bound::Excluded(&[20u8][..])),
        (Bound::Excluded(&[10u8][..]), Bound::Included(&[20u8][..])),
        (Bound::Included(&[11u8][..]), Bound::Included(&[11u8][..])),
    ] {
        let fwd: Vec<_> = r
            .scan(lo, hi, false)
            .map(|i| i.unwrap().0.into_owned())
            .collect();
        let mut back: Vec<_> = r
            .scan(lo, hi, true)
            .map(|i| i.unwrap().0.into_owned())
            .collect();
        back.reverse();
        assert_eq!(fwd, back, "{lo:?} {hi:?}");
        let want: Vec<Vec<u8>> = (0u8..20)
            .map(|i| vec![i * 2])
            .filter(|k| {
                use std::ops::RangeBounds;
                (lo, hi).contains(&k.as_slice())
            })
            .collect();
        assert_eq!(fwd, want);
    }
    assert_eq!(read(&m, b"r", false)[5], (vec![10], live(100, b"v2")));
    let rows: Vec<&[u8]> = m
        .rows_from(Bound::Excluded(b"q"))
        .map(|r| r.sort_key())
        .collect();
    assert_eq!(rows, [&b"r"[..], b"s"]);
}

#[test]
fn a_super_column_deletion_hides_its_older_sub_columns() {
    let m = Memtable::with_expected_rows(16);
    let prefix = cell_key::super_column(&crate::model::comparator::BytesType, b"sc");
    let sub =
        |name: &[u8]| cell_key::sub_column(&prefix, &crate::model::comparator::BytesType, name);
    m.apply(b"r", &update(&[(&sub(b"a"), live(1, b"x"))]), true);
    let d = DeletionTime {
        marked_for_delete_at: 2,
        local_deletion_time: 9,
    };
    m.apply(b"r", &update(&[(&prefix, Entry::GroupDeletion(d))]), true);
    m.apply(b"r", &update(&[(&sub(b"b"), live(1, b"too old"))]), true);
    m.apply(b"r", &update(&[(&sub(b"c"), live(3, b"newer"))]), true);
    let f: Vec<_> = m.flush_rows(true).collect();
    let keys: Vec<_> = f[0].entries().map(|(k, _)| k.to_vec()).collect();
    assert_eq!(keys, [prefix.clone(), sub(b"c")]);
}

#[test]
fn ttl_and_tombstones_reconcile_as_spec_section_3_says() {
    let m = Memtable::with_expected_rows(16);
    let ttl = Entry::Cell(Cell::live(
        5,
        b"t".to_vec(),
        Some(Ttl {
            ttl: 10,
            local_expiration_time: 50,
        }),
    ));
    m.apply(b"r", &update(&[(b"a", live(5, b"zzz"))]), false);
    m.apply(b"r", &update(&[(b"a", ttl.clone())]), false);
    assert_eq!(read(&m, b"r", false), [(b"a".to_vec(), ttl)]);
    let tomb = Entry::Cell(Cell::tombstone(5, 7));
    m.apply(b"r", &update(&[(b"a", tomb.clone())]), false);
    assert_eq!(read(&m, b"r", false), [(b"a".to_vec(), tomb)]);
}

#[test]
fn the_arena_counts_what_the_rows_take() {
    let m = Memtable::with_expected_rows(1000);
    let before = m.live_bytes();
    for i in 0u32..50_000 {
        m.apply(
            &i.to_be_bytes(),
            &update(&[(b"c", live(1, &[7; 100]))]),
            false,
        );
    }
    let grew = m.live_bytes() - before;
    // Each cell is one node: a 32-byte header, its links, the row key, the entry and ~113 bytes
    // of value; the arena grows a 1 MiB chunk at a time.
    assert!(
        (50_000 * 150 - (1 << 20)..=50_000 * 200 + (1 << 20)).contains(&grew),
        "{grew}"
    );
}

#[test]
fn readers_never_see_part_of_a_row_mutation() {
    let m = Memtable::with_expected_rows(1000);
    let done = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for w in 0..2u8 {
            let (m, done) = (&m, &done);
            s.spawn(move || {
                for i in 1..=2_000i64 {
                    // Every mutation writes the same timestamp to all 8 columns of its row.
                    let keys: Vec<[u8; 1]> = (0u8..8).map(|c| [c]).collect();
                    let cells: Vec<Entry> = (0..8).map(|_| live(i, &[w])).collect();
                    let entries: Vec<(&[u8], Entry)> =
                        keys.iter().map(|k| &k[..]).zip(cells).collect();
                    let row = [b'r', (i % 4) as u8];
                    m.apply(&row, &update(&entries), false);
                }
                done.fetch_add(1, Ordering::Relaxed);
            });
        }
        let (m, done) = (&m, &done);
        s.spawn(move || {
            let mut reads = 0;
            while done.load(Ordering::Relaxed) < 2 || reads < 1000 {
                for r in 0..4u8 {
                    let cells = read(m, &[b'r', r], false);
                    let ts: Vec<i64> = cells
                        .iter()
                        .map(|(_, e)| match e {
                            Entry::Cell(c) => c.timestamp,
                            Entry::GroupDeletion(_) => -1,
                        })
                        .collect();
                    assert!(
                        ts.is_empty() || (ts.len() == 8 && ts.iter().all(|t| *t == ts[0])),
                        "a torn row: {ts:?}"
                    );
                }
                reads += 1;
            }
        });
    });
}

#[test]
fn a_reader_never_sees_a_cell_go_back() {
    let m = Memtable::with_expected_rows(1000);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let writers = 4u8;
    std::thread::scope(|s| {
        for w in 0..writers {
            let (m, done) = (&m, &done);
            s.spawn(move || {
                for n in 1..=2_000i64 {
                    let cells: Vec<(&[u8], Entry)> = [&b"a"[..], b"b", b"c"]
                        .into_iter()
                        .map(|k| (k, live(n, &n.to_be_bytes())))
                        .collect();
                    let row = [b'r', w * 2 + (n % 2) as u8];
                    m.apply(&row, &update(&cells), false);
                }
                done.fetch_add(1, Ordering::Relaxed);
            });
        }
        for _ in 0..2 {
            let (m, done) = (&m, &done);
            s.spawn(move || {
                let mut seen = [0i64; 8];
                while done.load(Ordering::Relaxed) < writers as usize {
                    for r in 0..2 * writers {
                        let ts: Vec<i64> = read(m, &[b'r', r], false)
                            .iter()
                            .map(|(_, e)| e.as_ref().timestamp())
                            .collect();
                        if ts.is_empty() {
                            assert_eq!(seen[r as usize], 0, "row {r} vanished");
                            continue;
                        }
                        assert!(
                            ts.len() == 3 && ts.iter().all(|t| *t == ts[0]),
                            "torn: {ts:?}"
                        );
                        assert!(
                            ts[0] >= seen[r as usize],
                            "row {r} went back from {} to {}",
                            seen[r as usize],
                            ts[0]
                        );
                        seen[r as usize] = ts[0];
                    }
                }
            });
        }
    });
}

#[test]
fn a_row_stays_found_while_new_rows_are_linked_around_it() {
    // A reader's search ends between a row and the one before it, exactly where a new row's
    // first node goes: it must return the row it was looking for, not the newcomer.
    let m = Memtable::with_expected_rows(200_000);
    let old: Vec<[u8; 8]> = (1..=8u64).map(|i| (i << 60).to_be_bytes()).collect();
    for k in &old {
        m.apply(k, &update(&[(b"a", live(1, b"v"))]), false);
    }
    let done = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for w in 0..2u64 {
            let (m, done) = (&m, &done);
            s.spawn(move || {
                // Each new row sorts right before one of this writer's old rows.
                for j in 0..25_000u64 {
                    for i in (1..=8u64).filter(|i| i % 2 == w) {
                        let k = (i << 60) - (1 << 20) + j;
                        m.apply(&k.to_be_bytes(), &update(&[(b"a", live(1, b"n"))]), false);
                    }
                }
                done.fetch_add(1, Ordering::Relaxed);
            });
        }
        for _ in 0..2 {
            let (m, done, old) = (&m, &done, &old);
            s.spawn(move || {
                while done.load(Ordering::Relaxed) < 2 {
                    for k in old {
                        let cells = read(m, k, false);
                        assert_eq!(cells.len(), 1, "row {k:?} lost its cell: {cells:?}");
                    }
                }
            });
        }
    });
}

#[test]
fn a_memtable_on_chunks_an_earlier_one_filled_reads_only_its_own_writes() {
    let pool = Arc::new(ChunkPool::new(64 << 20));
    let value = [0xFFu8; 200];
    let key = |i: u32, gen: u8| {
        let mut k = vec![gen; 12];
        k.extend_from_slice(&i.to_be_bytes());
        k
    };
    // The first memtable fills several chunks with bytes that are not zero anywhere a link
    // could be, and gives them back.
    let first = Memtable::with_pool(1000, Some(pool.clone()));
    for i in 0..20_000 {
        first.apply(&key(i, 0xEE), &update(&[(b"col", live(7, &value))]), false);
    }
    drop(first);
    let pooled = pool.bytes();
    assert!(pooled >= 4 << 20, "the chunks came back: {pooled}");

    let second = Memtable::with_pool(1000, Some(pool.clone()));
    for i in (0..10_000u32).rev() {
        let v = i.to_be_bytes();
        second.apply(
            &key(i, 0x11),
            &update(&[(b"a", live(1, &v)), (b"b", live(2, &v))]),
            false,
        );
    }
    assert!(
        pool.bytes() < pooled,
        "the second memtable took recycled chunks"
    );
    for i in [0u32, 1, 4_999, 9_999] {
        let v = i.to_be_bytes();
        assert_eq!(
            read(&second, &key(i, 0x11), false),
            [(b"a".to_vec(), live(1, &v)), (b"b".to_vec(), live(2, &v))]
        );
        assert!(second.row(&key(i, 0xEE)).is_none());
    }
    let rows: Vec<Vec<u8>> = second
        .flush_rows(false)
        .map(|r| r.sort_key.to_vec())
        .collect();
    let want: Vec<Vec<u8>> = (0..10_000).map(|i| key(i, 0x11)).collect();
    assert_eq!(rows, want, "every row once, in order, nothing else");
}
