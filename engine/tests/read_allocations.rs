//! Heap allocations of a point read, counted by a global allocator that counts the calling
//! thread's allocations: a read of a row whose block and position are cached allocates only
//! what it returns (the column's name and value), and a read of a row no source holds
//! allocates nothing at all.

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// The counting allocator is the one unsafe thing here: it forwards to the system allocator.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use supercolumn::{BatchMutation, ColumnPath, CommitLogSync, Database, Options, WriteOptions};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: a thread being torn down has no counter left, and needs none.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every call forwards to `System` with the caller's own arguments, so the contract
// `GlobalAlloc` asks of its callers is the one `System` is given; counting touches only a
// thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

const KS: &str = "Keyspace1";

fn settled_db(dir: &std::path::Path) -> Database {
    let mut o = Options::default();
    o.commit_log_sync = CommitLogSync::Periodic { period_ms: 60_000 };
    let db = Database::open(dir, o).unwrap();
    let mut b = BatchMutation::new();
    for i in 0..2000 {
        b.insert(
            format!("row{i:05}"),
            ColumnPath::new("Standard1").column("c"),
            format!("value{i}"),
            WriteOptions::at(1),
        );
    }
    db.batch_mutate(KS, &b).unwrap();
    db.flush_all().unwrap();
    db
}

/// The allocations a typical `get` makes (the median over `keys`, read after a first pass that
/// brought their blocks and positions into the caches: the median leaves out the rare read
/// whose latency histogram grows a bucket).
fn per_read(db: &Database, keys: &[Vec<u8>], path: &ColumnPath) -> u64 {
    for k in keys {
        db.get(KS, k, path).unwrap();
    }
    let mut spent: Vec<u64> = Vec::with_capacity(keys.len());
    for k in keys {
        let before = allocations();
        let got = db.get(KS, k, path).unwrap();
        spent.push(allocations() - before);
        drop(got);
    }
    spent.sort_unstable();
    spent[spent.len() / 2]
}

#[test]
fn a_point_read_of_a_cached_row_allocates_only_what_it_returns() {
    let dir = tempfile::tempdir().unwrap();
    let db = settled_db(dir.path());
    let path = ColumnPath::new("Standard1").column("c");
    // Fewer rows than the key cache holds (1% of the rows, KeysCachedFraction's default).
    let keys: Vec<Vec<u8>> = (0..2000)
        .step_by(150)
        .map(|i| format!("row{i:05}").into_bytes())
        .collect();
    let typical = per_read(&db, &keys, &path);
    println!("a cached read allocates {typical} times");
    // The column's name and value.
    assert!(typical <= 2, "a cached read allocated {typical} times");
}

#[test]
fn a_point_read_of_a_row_no_source_holds_allocates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = settled_db(dir.path());
    let path = ColumnPath::new("Standard1").column("c");
    let keys: Vec<Vec<u8>> = (0..200)
        .map(|i| format!("absent{i:05}").into_bytes())
        .collect();
    let typical = per_read(&db, &keys, &path);
    println!("a read of an absent row allocates {typical} times");
    assert_eq!(typical, 0, "a read of an absent row allocated");
}
