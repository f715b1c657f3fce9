//! Cassandra's rules for counter tables: a `counter` is a regular column of a table whose
//! regular columns are all counters, never part of the primary key, never inside a collection
//! or tuple, and such a table has no default TTL. How counters are written is `write.rs`'s and
//! the engine's; this file only checks a table's shape.

use super::super::error::CqlError;
use super::super::types::CqlType;
use super::{Kind, Table};

/// Whether `ty` holds a counter anywhere inside it.
fn holds_counter(ty: &CqlType) -> bool {
    match ty {
        CqlType::Counter => true,
        CqlType::List(e) | CqlType::Set(e) | CqlType::Frozen(e) | CqlType::Vector(e, _) => {
            holds_counter(e)
        }
        CqlType::Map(k, v) => holds_counter(k) || holds_counter(v),
        CqlType::Tuple(ts) => ts.iter().any(holds_counter),
        _ => false,
    }
}

impl Table {
    /// Whether this is a table of counters.
    pub fn is_counter(&self) -> bool {
        self.columns.iter().any(|c| c.ty == CqlType::Counter)
    }

    /// Refuses a table whose counters break Cassandra's rules, in its words.
    /// Whether `added` columns may join this table: counters only a table of counters, other
    /// columns only a table without (a table of key columns alone holds no counters).
    /// Cassandra refuses either as a configuration error, in these words.
    pub(super) fn counters_take(&self, added: &[(String, CqlType)]) -> Result<(), CqlError> {
        let counter_table = self
            .columns
            .iter()
            .any(|c| c.kind == Kind::Regular && c.ty == CqlType::Counter);
        for (name, ty) in added {
            match (counter_table, *ty == CqlType::Counter) {
                (true, false) => {
                    return Err(CqlError::Config(format!(
                        "Cannot have a non counter column (\"{name}\") in a counter table"
                    )))
                }
                (false, true) => {
                    return Err(CqlError::Config(format!(
                        "Cannot have a counter column (\"{name}\") in a non counter table"
                    )))
                }
                _ => {}
            }
        }
        Ok(())
    }

    pub(super) fn check_counters(&self) -> Result<(), CqlError> {
        for c in &self.columns {
            if c.ty != CqlType::Counter && holds_counter(&c.ty) {
                return Err(CqlError::invalid(format!(
                    "Counters are not allowed inside collections: {}",
                    c.ty
                )));
            }
            if c.ty == CqlType::Counter && c.kind != Kind::Regular {
                return Err(CqlError::invalid(format!(
                    "counter type is not supported for PRIMARY KEY column '{}'",
                    c.name
                )));
            }
        }
        let regular = self.columns.iter().filter(|c| c.kind == Kind::Regular);
        let counters = regular.clone().filter(|c| c.ty == CqlType::Counter).count();
        if counters > 0 && counters < regular.count() {
            return Err(CqlError::invalid(
                "Cannot mix counter and non counter columns in the same table",
            ));
        }
        if counters > 0 && self.options.default_ttl > 0 {
            return Err(CqlError::invalid(
                "Cannot set default_time_to_live on a table with counters",
            ));
        }
        Ok(())
    }
}
