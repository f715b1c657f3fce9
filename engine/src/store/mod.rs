//! Per column family state: its memtables (and, later, its SSTables and caches).

pub mod column_family;

pub use column_family::ColumnFamilyStore;
