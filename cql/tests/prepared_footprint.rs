//! A prepared statement's `footprint` bounds what it really holds: the bytes allocated by
//! preparing it and still held while it lives, counted by this binary's allocator, for the
//! shapes that make the most of each token (long IN lists, collection literals, many short
//! numbers). A server bounds its cache of prepared statements by these footprints.

#![allow(clippy::unwrap_used, clippy::expect_used, unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use supercolumn::{Database, Options};
use supercolumn_cql::Session;

/// The system allocator, counting the bytes live (with malloc's smallest chunk for each).
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

fn charged(layout: Layout) -> isize {
    layout.size().max(24).next_multiple_of(16) as isize
}

// SAFETY: every call is passed to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(charged(layout), Ordering::Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(charged(layout), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        let grown = Layout::from_size_align(new, layout.align()).unwrap();
        LIVE.fetch_add(charged(grown) - charged(layout), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn a_prepared_statement_holds_no_more_than_its_footprint() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), Options::default()).unwrap();
    let mut s = Session::new(&db);
    s.execute(
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
         CREATE TABLE ks.t (k int, c int, v text, l list<int>, m map<int, text>, st set<bigint>,
                            PRIMARY KEY (k, c))",
    )
    .unwrap();
    s.set_keyspace(Some("ks".into()));
    let ints = |n: usize| {
        (0..n)
            .map(|i| (i % 10).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let shapes = [
        format!("SELECT * FROM t WHERE k = 1 AND c IN ({})", ints(9000)),
        format!("SELECT * FROM t WHERE k IN ({}) AND c = ?", ints(5000)),
        format!("UPDATE t SET l = [{}] WHERE k = ? AND c = ?", ints(5000)),
        format!("UPDATE t SET st = {{{}}} WHERE k = ? AND c = ?", ints(5000)),
        format!(
            "UPDATE t SET m = {{{}}} WHERE k = ? AND c = ?",
            (0..3000)
                .map(|i| format!("{i}:'a'"))
                .collect::<Vec<_>>()
                .join(",")
        ),
        format!(
            "INSERT INTO t (k, c, v) VALUES (1, 2, '{}')",
            "x".repeat(50_000)
        ),
        "INSERT INTO t (k, c, v) VALUES (?, ?, ?)".to_string(),
    ];
    for text in &shapes {
        let before = LIVE.load(Ordering::Relaxed);
        let p = s.prepare(text).unwrap();
        let held = LIVE.load(Ordering::Relaxed) - before;
        assert!(
            held as usize <= p.footprint(),
            "{:.60}: holds {held} bytes, footprint {}",
            text,
            p.footprint()
        );
        drop(p);
    }
}
