//! The data of the benchmarks, the same on every engine for a seed: 16-byte row keys, 100-byte
//! values half random (as db_bench makes them), and wide rows named by 8-byte big-endian
//! integers (which sort as LongType does for non-negative numbers).

use supercolumn::{BatchMutation, ColumnPath, Database, WriteOptions};

use crate::KeyStream;

/// A cell to load: (row key, column name, value).
pub type Cell = (Vec<u8>, Vec<u8>, Vec<u8>);

/// Point row `i` as loaded by the benchmarks: its key, column `v`, its round-0 value.
pub fn point_row(i: u64) -> Cell {
    (key(i).to_vec(), b"v".to_vec(), value(i, 0))
}

/// Column `c` of wide row `r`: an 8-byte value.
pub fn wide_cell(r: u64, c: u64) -> Cell {
    (wide_key(r), wide_column(c).to_vec(), vec![b'w'; 8])
}

/// Writes cells into Keyspace1.Standard1 at timestamp 1, `batch` cells per `batch_mutate`.
pub fn load(
    db: &Database,
    cells: impl IntoIterator<Item = Cell>,
    batch: usize,
) -> supercolumn::Result<()> {
    let mut b = BatchMutation::new();
    for (k, c, v) in cells {
        b.insert(
            k,
            ColumnPath::new("Standard1").column(c),
            v,
            WriteOptions::at(1),
        );
        if b.len() >= batch {
            db.batch_mutate("Keyspace1", &b)?;
            b = BatchMutation::new();
        }
    }
    db.batch_mutate("Keyspace1", &b)
}

/// The row key of point row `i`.
pub fn key(i: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&i.to_be_bytes());
    k[8..].copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes());
    k
}

/// A key that no fill writes (for `readmissing`).
pub fn missing_key(i: u64) -> [u8; 16] {
    let mut k = key(i);
    k[15] ^= 0x5a;
    k[8] ^= 0xa5;
    k
}

/// The value written for point row `i` in round `round`: 50 random bytes, 50 repeated.
pub fn value(i: u64, round: u64) -> Vec<u8> {
    let mut v: Vec<u8> = KeyStream::new(i ^ (round << 40))
        .take(7)
        .flat_map(u64::to_le_bytes)
        .collect();
    v.resize(50, 0);
    v.extend(std::iter::repeat_n(b'x', 50));
    v
}

/// The row key of wide row `r`.
pub fn wide_key(r: u64) -> Vec<u8> {
    format!("wide-{r:08}").into_bytes()
}

/// The name of column `c` of a wide row.
pub fn wide_column(c: u64) -> [u8; 8] {
    c.to_be_bytes()
}
