//! How CQL must write a name to keep it: bare, or double-quoted when it is not lower-case
//! letters, digits and `_`, or is a word CQL reserves (so an export or a `DESCRIBE` loads into
//! a cluster). Only writes names; reading them is the lexer's.

/// A name as CQL must write it to keep it: bare when it is lower-case letters, digits and `_`
/// starting with a letter, otherwise double-quoted.
// Long because it holds the list of CQL's reserved words.
pub fn quote_ident(name: &str) -> String {
    // Every word the parser gives a meaning somewhere (a bare `if` as a keyspace name would
    // read back as the start of IF NOT EXISTS), and Cassandra's reserved keywords, so that an
    // export or a DESCRIBE loads into a cluster.
    const RESERVED: &[&str] = &[
        "add",
        "allow",
        "alter",
        "and",
        "apply",
        "asc",
        "authorize",
        "batch",
        "begin",
        "by",
        "clustering",
        "columnfamily",
        "compact",
        "count",
        "create",
        "default",
        "delete",
        "desc",
        "describe",
        "distinct",
        "drop",
        "entries",
        "execute",
        "exists",
        "false",
        "filtering",
        "from",
        "full",
        "grant",
        "if",
        "in",
        "index",
        "infinity",
        "insert",
        "into",
        "is",
        "key",
        "keyspace",
        "limit",
        "materialized",
        "mbean",
        "mbeans",
        "modify",
        "nan",
        "norecursive",
        "not",
        "now",
        "null",
        "of",
        "on",
        "or",
        "order",
        "partition",
        "per",
        "primary",
        "rename",
        "replace",
        "revoke",
        "schema",
        "select",
        "set",
        "storage",
        "table",
        "timestamp",
        "to",
        "token",
        "true",
        "truncate",
        "ttl",
        "unlogged",
        "unset",
        "update",
        "use",
        "using",
        "values",
        "view",
        "where",
        "with",
        "writetime",
    ];
    let bare = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !RESERVED.contains(&name);
    if bare {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}
