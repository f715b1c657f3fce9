//! What a request names and what a read returns: paths, predicates, key ranges, results, and
//! slice evaluation, which turns the merged entries of a row (`crate::merge`) into results.

pub mod index_clause;
pub mod path;
pub mod predicate;
pub(crate) mod prefix_deletion;
pub(crate) mod range_deletion;
pub mod result;
pub(crate) mod slice;

pub use index_clause::{IndexClause, IndexExpression, IndexOperator};
pub use path::{AsColumnPath, ColumnParent, ColumnPath, ColumnPathRef};
pub use predicate::{KeyRange, RangeBound, SlicePredicate, SliceRange};
pub use result::{Column, ColumnOrSuperColumn, KeySlice, SuperColumn};
