//! What a request names and what a read returns: paths, predicates, key ranges, results, and the
//! read-side machinery (k-way merge, slice evaluation) that turns stored entries into results.

pub(crate) mod merge;
pub mod path;
pub mod predicate;
pub mod result;
pub(crate) mod slice;

pub use path::{ColumnParent, ColumnPath};
pub use predicate::{KeyRange, RangeBound, SlicePredicate, SliceRange};
pub use result::{Column, ColumnOrSuperColumn, KeySlice, SuperColumn};
