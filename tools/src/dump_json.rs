//! `sstable-dump --format json`: an SSTable's partitions as Cassandra's `sstabledump` prints
//! them. A CQL table's partition key and clustering values are text, as its types print them;
//! a row's marker is its `liveness_info`; each cell is its column's name and a typed value
//! (numbers as JSON numbers, booleans as booleans, the rest as text), a collection's element
//! with its `path`; tombstones carry `deletion_info` (a deleted row, a deleted collection, a
//! range of rows as two `range_tombstone_bound`s). A column family without a CQL schema shows
//! each column as a row clustered by its name, holding one cell, `value`. Timestamps are
//! ISO-8601 (microseconds), or raw numbers when asked. This file only renders; reading the
//! file is the engine's `inspect`.

use std::time::{Duration, UNIX_EPOCH};

use serde_json::{json, Map, Value};
use supercolumn::comparator::CompositeType;
use supercolumn::inspect::{DumpEntry, DumpRow};
use supercolumn::ColumnFamilyDef;
use supercolumn_cql::{ColumnDef, CqlType, Kind, Table, UserTypes};

use crate::format::key_text;

/// The row being filled: its clustering values' bytes, and the row so far.
type OpenRow = (Vec<Vec<u8>>, Map<String, Value>);

/// Renders the partitions of one column family's SSTable.
pub struct JsonDump<'a> {
    def: &'a ColumnFamilyDef,
    table: Option<Table>,
    raw_timestamps: bool,
}

impl<'a> JsonDump<'a> {
    /// A renderer for `keyspace`'s column family `def`.
    /// `types`: its keyspace's CQL types.
    pub fn new(
        keyspace: &str,
        def: &'a ColumnFamilyDef,
        types: &UserTypes,
        raw_timestamps: bool,
    ) -> Self {
        JsonDump {
            def,
            table: Table::from_cf(keyspace, def, types).ok().flatten(),
            raw_timestamps,
        }
    }

    /// The row key a `--key` names, in any form the dump prints one: `0x…` hex; a CQL table's
    /// key as its type reads it (a composite key's parts joined by `:`, as `sstabledump -k`
    /// takes them); the key validator's text; else the text's bytes.
    pub fn key_of(&self, text: &str) -> anyhow::Result<Vec<u8>> {
        if let Some(hex) = text.strip_prefix("0x") {
            return supercolumn::comparator::builtin::from_hex(hex)
                .map_err(|e| anyhow::anyhow!("--key {text}: {e}"));
        }
        if let Some(t) = &self.table {
            let parts: Vec<&str> = match t.partition_key.len() {
                1 => vec![text],
                _ => text.split(':').collect(),
            };
            anyhow::ensure!(
                parts.len() == t.partition_key.len(),
                "--key {text}: the partition key has {} parts",
                t.partition_key.len()
            );
            let mut values = Vec::new();
            for (part, &i) in parts.iter().zip(&t.partition_key) {
                let c = &t.columns[i];
                let v = supercolumn_cql::value_from_text(&c.ty, part, &c.name)
                    .map_err(|e| anyhow::anyhow!("--key {text}: {e}"))?
                    .ok_or_else(|| anyhow::anyhow!("--key {text}: a null key"))?;
                values.push(v);
            }
            let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
            return t
                .row_key(&refs)
                .map_err(|e| anyhow::anyhow!("--key {text}: {e}"));
        }
        Ok(match &self.def.key_validation_class {
            Some(v) => v
                .parse_text(text)
                .unwrap_or_else(|_| text.as_bytes().to_vec()),
            None => text.as_bytes().to_vec(),
        })
    }

    /// One partition: `{"partition": {"key": […], …}, "rows": […]}`.
    pub fn partition(&self, row: &DumpRow) -> Value {
        let (key, rows) = match &self.table {
            Some(t) => (self.cql_key(t, &row.key), self.cql_rows(t, row)),
            None => (
                vec![Value::String(key_text(
                    &row.key,
                    self.def.key_validation_class.as_deref(),
                ))],
                self.thrift_rows(row),
            ),
        };
        let mut partition = Map::new();
        partition.insert("key".into(), Value::Array(key));
        if let Some((at, local)) = row.deletion {
            partition.insert("deletion_info".into(), self.deletion(at, local));
        }
        json!({ "partition": partition, "rows": rows })
    }

    fn time(&self, micros: i64) -> Value {
        match u64::try_from(micros) {
            Ok(m) if !self.raw_timestamps => Value::String(
                humantime::format_rfc3339_micros(UNIX_EPOCH + Duration::from_micros(m)).to_string(),
            ),
            _ => Value::from(micros),
        }
    }

    fn seconds(&self, seconds: i64) -> Value {
        match u64::try_from(seconds) {
            Ok(s) if !self.raw_timestamps => Value::String(
                humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(s)).to_string(),
            ),
            _ => Value::from(seconds),
        }
    }

    fn deletion(&self, marked_at: i64, local: i64) -> Value {
        json!({ "marked_deleted": self.time(marked_at), "local_delete_time": self.seconds(local) })
    }

    /// A cell's or a row's time and, when it expires, its TTL and expiry.
    fn liveness(&self, cell: &mut Map<String, Value>, timestamp: i64, ttl: Option<(u32, i64)>) {
        cell.insert("tstamp".into(), self.time(timestamp));
        if let Some((ttl, expires_at)) = ttl {
            cell.insert("ttl".into(), Value::from(ttl));
            cell.insert("expires_at".into(), self.seconds(expires_at));
        }
    }

    fn cql_key(&self, t: &Table, key: &[u8]) -> Vec<Value> {
        t.split_row_key(key)
            .iter()
            .zip(&t.partition_key)
            .map(|(v, &i)| Value::String(t.columns[i].ty.display(v)))
            .collect()
    }

    /// The clustering values of a name's first components, as text.
    fn clustering(&self, t: &Table, parts: &[&[u8]]) -> Value {
        Value::Array(
            parts
                .iter()
                .zip(&t.clustering)
                .map(|(v, &i)| Value::String(t.columns[i].ty.display(v)))
                .collect(),
        )
    }

    fn cql_rows(&self, t: &Table, row: &DumpRow) -> Vec<Value> {
        let n_ck = t.clustering.len();
        let mut rows: Vec<Value> = Vec::new();
        let mut open: Option<OpenRow> = None;
        for e in &row.entries {
            let name = match e {
                DumpEntry::Column { name, .. } | DumpEntry::Tombstone { name, .. } => name,
                DumpEntry::PrefixDeletion { prefix, .. } => prefix,
                DumpEntry::SuperColumnDeletion { .. } => continue,
                DumpEntry::RangeDeletion {
                    start,
                    finish,
                    marked_for_delete_at,
                    local_deletion_time,
                } => {
                    close(&mut open, &mut rows);
                    let deletion = self.deletion(*marked_for_delete_at, *local_deletion_time);
                    for (side, bound) in [("start", start), ("end", finish)] {
                        let (clustering, inclusive) = bound_of(bound, side == "start");
                        rows.push(json!({ "type": "range_tombstone_bound", side: {
                            "type": if inclusive { "inclusive" } else { "exclusive" },
                            "clustering": self.clustering(t, &clustering),
                            "deletion_info": deletion,
                        }}));
                    }
                    continue;
                }
            };
            let parts: Vec<&[u8]> = CompositeType::components_of(name)
                .filter_map(|c| c.ok().map(|c| c.bytes))
                .collect();
            if parts.len() < n_ck {
                if let DumpEntry::PrefixDeletion {
                    marked_for_delete_at,
                    local_deletion_time,
                    ..
                } = e
                {
                    close(&mut open, &mut rows);
                    let deletion = self.deletion(*marked_for_delete_at, *local_deletion_time);
                    for side in ["start", "end"] {
                        rows.push(json!({ "type": "range_tombstone_bound", side: {
                            "type": "inclusive",
                            "clustering": self.clustering(t, &parts),
                            "deletion_info": deletion,
                        }}));
                    }
                }
                continue;
            }
            // A partition's static cells (first, as their names sort) are its static block,
            // which names no clustering; a row's clustering has every component.
            let is_static = CompositeType::is_static(name);
            let ck: Vec<Vec<u8>> = if is_static {
                Vec::new()
            } else {
                parts[..n_ck].iter().map(|p| p.to_vec()).collect()
            };
            if open.as_ref().is_none_or(|(c, _)| *c != ck) {
                close(&mut open, &mut rows);
                let mut r = Map::new();
                let kind = if is_static { "static_block" } else { "row" };
                r.insert("type".into(), kind.into());
                if n_ck > 0 && !is_static {
                    r.insert("clustering".into(), self.clustering(t, &parts[..n_ck]));
                }
                r.insert("cells".into(), Value::Array(Vec::new()));
                open = Some((ck, r));
            }
            let Some((_, r)) = open.as_mut() else {
                continue;
            };
            self.cql_entry(t, e, &parts[n_ck..], r);
        }
        close(&mut open, &mut rows);
        rows
    }

    /// Adds entry `e` (whose name's components after the clustering are `rest`) to row `r`.
    fn cql_entry(&self, t: &Table, e: &DumpEntry, rest: &[&[u8]], r: &mut Map<String, Value>) {
        let column = rest.first().and_then(|c| std::str::from_utf8(c).ok());
        let def = column.and_then(|c| {
            t.columns
                .iter()
                .find(|d| d.name == c && d.kind == Kind::Regular)
        });
        let cell = match (e, column, def) {
            // The row marker: the row's own liveness.
            (DumpEntry::Column { timestamp, ttl, .. }, Some(""), _) => {
                let mut live = Map::new();
                self.liveness(&mut live, *timestamp, *ttl);
                r.insert("liveness_info".into(), Value::Object(live));
                return;
            }
            // A prefix of the clustering alone: the row deleted.
            (
                DumpEntry::PrefixDeletion {
                    marked_for_delete_at,
                    local_deletion_time,
                    ..
                },
                None,
                _,
            ) => {
                let deletion = self.deletion(*marked_for_delete_at, *local_deletion_time);
                r.insert("deletion_info".into(), deletion);
                return;
            }
            (_, _, None) => return, // a column dropped since, or a name of no column
            (_, _, Some(d)) => self.cql_cell(e, d, rest.get(1).copied()),
        };
        if let (Some(cell), Some(Value::Array(cells))) = (cell, r.get_mut("cells")) {
            cells.push(Value::Object(cell));
        }
    }

    /// The cell of entry `e` in column `d` (a collection's `element` of it, if it names one).
    fn cql_cell(
        &self,
        e: &DumpEntry,
        d: &ColumnDef,
        element: Option<&[u8]>,
    ) -> Option<Map<String, Value>> {
        let mut cell = Map::new();
        cell.insert("name".into(), d.name.clone().into());
        match e {
            DumpEntry::Column {
                value,
                timestamp,
                ttl,
                ..
            } => {
                match element {
                    Some(element) => {
                        let (path, value) = element_of(&d.ty, element, value);
                        cell.insert("path".into(), Value::Array(vec![path]));
                        cell.insert("value".into(), value);
                    }
                    None => {
                        cell.insert("value".into(), typed(&d.ty, value));
                    }
                }
                self.liveness(&mut cell, *timestamp, *ttl);
            }
            DumpEntry::Tombstone {
                timestamp,
                local_deletion_time,
                ..
            } => {
                if let Some(element) = element {
                    let path = element_of(&d.ty, element, &[]).0;
                    cell.insert("path".into(), Value::Array(vec![path]));
                }
                let local = self.seconds(*local_deletion_time);
                cell.insert(
                    "deletion_info".into(),
                    json!({ "local_delete_time": local }),
                );
                cell.insert("tstamp".into(), self.time(*timestamp));
            }
            // A whole collection replaced or deleted.
            DumpEntry::PrefixDeletion {
                marked_for_delete_at,
                local_deletion_time,
                ..
            } => {
                let deletion = self.deletion(*marked_for_delete_at, *local_deletion_time);
                cell.insert("deletion_info".into(), deletion);
            }
            DumpEntry::SuperColumnDeletion { .. } | DumpEntry::RangeDeletion { .. } => return None,
        }
        Some(cell)
    }

    /// The clustering of a column of a column family without a CQL schema: its name, after
    /// its super column's in a Super CF.
    fn thrift_clustering(&self, super_column: &Option<Vec<u8>>, name: &[u8]) -> Value {
        let names = self.def.comparator.as_ref();
        let mut c: Vec<Value> = Vec::new();
        match (super_column, self.def.subcomparator.as_ref()) {
            (Some(s), Some(sub)) => {
                c.push(names.to_text(s).into());
                c.push(sub.to_text(name).into());
            }
            _ => c.push(names.to_text(name).into()),
        }
        Value::Array(c)
    }

    /// A column family without a CQL schema: each column a row clustered by its name (a
    /// sub-column's by its super column's and its own), holding `value`.
    fn thrift_rows(&self, row: &DumpRow) -> Vec<Value> {
        let names = self.def.comparator.as_ref();
        let values = self.def.default_validation_class.as_ref();
        let clustering = |sc: &Option<Vec<u8>>, name: &[u8]| self.thrift_clustering(sc, name);
        let mut out = Vec::new();
        for e in &row.entries {
            let (clustering, cell) = match e {
                DumpEntry::Column {
                    super_column,
                    name,
                    value,
                    timestamp,
                    ttl,
                } => {
                    let mut cell = Map::new();
                    cell.insert("name".into(), "value".into());
                    cell.insert("value".into(), values.to_text(value).into());
                    self.liveness(&mut cell, *timestamp, *ttl);
                    (clustering(super_column, name), cell)
                }
                DumpEntry::Tombstone {
                    super_column,
                    name,
                    timestamp,
                    local_deletion_time,
                } => {
                    let mut cell = Map::new();
                    cell.insert("name".into(), "value".into());
                    cell.insert(
                        "deletion_info".into(),
                        json!({ "local_delete_time": self.seconds(*local_deletion_time) }),
                    );
                    cell.insert("tstamp".into(), self.time(*timestamp));
                    (clustering(super_column, name), cell)
                }
                DumpEntry::RangeDeletion {
                    start,
                    finish,
                    marked_for_delete_at,
                    local_deletion_time,
                } => {
                    let deletion = self.deletion(*marked_for_delete_at, *local_deletion_time);
                    out.extend([("start", start), ("end", finish)].map(|(side, bound)| {
                        json!({ "type": "range_tombstone_bound",
                                side: { "clustering": [names.to_text(bound)], "deletion_info": deletion }})
                    }));
                    continue;
                }
                DumpEntry::SuperColumnDeletion {
                    name,
                    marked_for_delete_at,
                    local_deletion_time,
                }
                | DumpEntry::PrefixDeletion {
                    prefix: name,
                    marked_for_delete_at,
                    local_deletion_time,
                } => {
                    out.push(json!({
                        "type": "row",
                        "clustering": [names.to_text(name)],
                        "deletion_info": self.deletion(*marked_for_delete_at, *local_deletion_time),
                        "cells": [],
                    }));
                    continue;
                }
            };
            out.push(json!({ "type": "row", "clustering": clustering, "cells": [cell] }));
        }
        out
    }
}

/// Moves the open row, if any, to `rows`, its cells last (as sstabledump orders a row's
/// fields: type, clustering, liveness or deletion, cells).
/// A range deletion's bound as `sstabledump` shows it: its clustering values, and whether it
/// includes them (its last end-of-component byte: a start above them, or a finish below
/// them, excludes them). An open bound has no values and includes everything on its side.
fn bound_of(bound: &[u8], is_start: bool) -> (Vec<&[u8]>, bool) {
    let parts: Vec<_> = CompositeType::components_of(bound)
        .filter_map(Result::ok)
        .collect();
    let eoc = parts.last().map_or(0, |c| c.eoc);
    let inclusive = if is_start { eoc <= 0 } else { eoc >= 0 };
    (parts.iter().map(|c| c.bytes).collect(), inclusive)
}

fn close(open: &mut Option<OpenRow>, rows: &mut Vec<Value>) {
    if let Some((_, mut r)) = open.take() {
        if let Some(cells) = r.shift_remove("cells") {
            r.insert("cells".into(), cells);
        }
        rows.push(Value::Object(r));
    }
}

/// A value as JSON: numbers as numbers, booleans as booleans, everything else as its text.
fn typed(ty: &CqlType, bytes: &[u8]) -> Value {
    let text = ty.display(bytes);
    match ty {
        CqlType::Int
        | CqlType::Bigint
        | CqlType::Counter
        | CqlType::Smallint
        | CqlType::Tinyint
        | CqlType::Varint
        | CqlType::Decimal
        | CqlType::Float
        | CqlType::Double => serde_json::from_str::<serde_json::Number>(&text)
            .map(Value::Number)
            .unwrap_or(Value::String(text)),
        CqlType::Boolean if bytes.len() == 1 => Value::Bool(bytes[0] != 0),
        _ => Value::String(text),
    }
}

/// A collection element's path (a list's by its TimeUUID, a set's and a map's by the
/// element or the key, a user type's field by its name) and its value.
fn element_of(ty: &CqlType, element: &[u8], value: &[u8]) -> (Value, Value) {
    match ty {
        CqlType::List(inner) => (
            Value::String(CqlType::Timeuuid.display(element)),
            typed(inner, value),
        ),
        CqlType::Set(inner) => (
            Value::String(inner.display(element)),
            Value::String(String::new()),
        ),
        CqlType::Map(k, v) => (Value::String(k.display(element)), typed(v, value)),
        // A non-frozen user type's field: by its name, its value by its type.
        CqlType::Udt(u) => {
            let field = <[u8; 2]>::try_from(element)
                .ok()
                .and_then(|p| usize::try_from(i16::from_be_bytes(p)).ok())
                .and_then(|i| u.fields.get(i));
            match field {
                Some((name, t)) => (Value::String(name.clone()), typed(t, value)),
                None => (
                    Value::String(supercolumn::comparator::builtin::to_hex(element)),
                    typed(&CqlType::Blob, value),
                ),
            }
        }
        other => (
            Value::String(supercolumn::comparator::builtin::to_hex(element)),
            typed(other, value),
        ),
    }
}
