//! A keyspace's replication options, checked as Cassandra checks them when a keyspace is
//! created (one node keeps one replica whatever they say; `execute.rs` stores them).

use super::error::CqlError;

/// A keyspace's replication as Cassandra checks it: a strategy it has, and SimpleStrategy
/// with its `replication_factor`.
pub(super) fn check(replication: &[(String, String)]) -> Result<(), CqlError> {
    let class = replication
        .iter()
        .find(|(k, _)| k == "class")
        .map(|(_, v)| v.as_str());
    let short = class.map(|c| c.strip_prefix("org.apache.cassandra.locator.").unwrap_or(c));
    match short {
        Some("SimpleStrategy") if !replication.iter().any(|(k, _)| k == "replication_factor") => {
            Err(CqlError::invalid(
                "SimpleStrategy requires a replication_factor strategy option.",
            ))
        }
        None | Some("SimpleStrategy" | "NetworkTopologyStrategy" | "LocalStrategy") => Ok(()),
        Some(_) => Err(CqlError::invalid(format!(
            "Unable to find replication strategy class '{}'",
            class.unwrap_or_default()
        ))),
    }
}
