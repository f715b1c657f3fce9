//! The comparison operators of a `WHERE` or an `IF`, and how CQL writes each.

/// A comparison operator in `WHERE` (or an `IF` condition): what a type's order answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `=`
    Eq,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `!=`
    Ne,
    /// `CONTAINS`: a collection holds the value (a map, as a value)
    Contains,
    /// `CONTAINS KEY`: a map holds the key
    ContainsKey,
    /// `IN`, as a filter only (a parsed `IN` is its own relation): the filter's value is the
    /// list of values, as `in_list` writes it.
    In,
}

impl Op {
    /// The operator as CQL writes it.
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Ne => "!=",
            Op::Contains => "CONTAINS",
            Op::ContainsKey => "CONTAINS KEY",
            Op::In => "IN",
        }
    }
}
