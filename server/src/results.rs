//! The protocol's messages for what the CQL layer returns: RESULT bodies (Void, Rows with their
//! metadata and paging state, Set_keyspace, Prepared, Schema_change), ERROR bodies with
//! Cassandra's codes, and the CQL types as the protocol's type options. Encoding only: what to
//! answer is `dispatch.rs`'s call.

use cassandra_protocol::frame::events::{
    SchemaChange, SchemaChangeOptions, SchemaChangeTarget, SchemaChangeType,
};
use cassandra_protocol::frame::message_error::{
    AlreadyExistsError, ErrorBody, ErrorType, UnpreparedError,
};
use cassandra_protocol::frame::message_result::{
    BodyResResultPrepared, BodyResResultRows, BodyResResultSetKeyspace, CTuple, CUdt, ColSpec,
    ColType, ColTypeOption, ColTypeOptionValue, PreparedMetadata, ResResultBody, RowsMetadata,
    RowsMetadataFlags, TableSpec,
};
use cassandra_protocol::frame::{Serialize, Version};
use cassandra_protocol::types::{CBytes, CBytesShort};
use supercolumn_cql::{CqlError, CqlType, Rows};

/// The protocol's type option for a CQL type.
pub fn type_option(ty: &CqlType) -> ColTypeOption {
    let simple = |id| ColTypeOption { id, value: None };
    match ty {
        CqlType::Ascii => simple(ColType::Ascii),
        CqlType::Text => simple(ColType::Varchar),
        CqlType::Int => simple(ColType::Int),
        CqlType::Bigint => simple(ColType::Bigint),
        CqlType::Counter => simple(ColType::Counter),
        CqlType::Smallint => simple(ColType::Smallint),
        CqlType::Tinyint => simple(ColType::Tinyint),
        CqlType::Varint => simple(ColType::Varint),
        CqlType::Decimal => simple(ColType::Decimal),
        CqlType::Boolean => simple(ColType::Boolean),
        CqlType::Float => simple(ColType::Float),
        CqlType::Double => simple(ColType::Double),
        CqlType::Uuid => simple(ColType::Uuid),
        CqlType::Timeuuid => simple(ColType::Timeuuid),
        CqlType::Timestamp => simple(ColType::Timestamp),
        CqlType::Date => simple(ColType::Date),
        CqlType::Time => simple(ColType::Time),
        CqlType::Blob => simple(ColType::Blob),
        CqlType::Inet => simple(ColType::Inet),
        // Protocol v5 has an id for it; to v3 and v4 Cassandra names its class.
        CqlType::Duration => ColTypeOption {
            id: ColType::Custom,
            value: Some(ColTypeOptionValue::CString(
                "org.apache.cassandra.db.marshal.DurationType".into(),
            )),
        },
        CqlType::List(e) => ColTypeOption {
            id: ColType::List,
            value: Some(ColTypeOptionValue::CList(Box::new(type_option(e)))),
        },
        CqlType::Set(e) => ColTypeOption {
            id: ColType::Set,
            value: Some(ColTypeOptionValue::CSet(Box::new(type_option(e)))),
        },
        CqlType::Map(k, v) => ColTypeOption {
            id: ColType::Map,
            value: Some(ColTypeOptionValue::CMap(
                Box::new(type_option(k)),
                Box::new(type_option(v)),
            )),
        },
        CqlType::Frozen(inner) => type_option(inner),
        // Drivers know it by its class name (protocol v5 adds no id for it).
        CqlType::Vector(..) => ColTypeOption {
            id: ColType::Custom,
            value: Some(ColTypeOptionValue::CString(
                ty.marshal_class().unwrap_or_default(),
            )),
        },
        CqlType::Udt(u) => ColTypeOption {
            id: ColType::Udt,
            value: Some(ColTypeOptionValue::UdtType(CUdt {
                ks: u.keyspace.clone(),
                udt_name: u.name.clone(),
                descriptions: u
                    .fields
                    .iter()
                    .map(|(n, t)| (n.clone(), type_option(t)))
                    .collect(),
            })),
        },
        CqlType::Tuple(ts) => ColTypeOption {
            id: ColType::Tuple,
            value: Some(ColTypeOptionValue::TupleType(CTuple {
                types: ts.iter().map(type_option).collect(),
            })),
        },
    }
}

fn col_specs(columns: &[(String, CqlType)]) -> Vec<ColSpec> {
    columns
        .iter()
        .map(|(name, ty)| ColSpec {
            table_spec: None,
            name: name.clone(),
            col_type: type_option(ty),
        })
        .collect()
}

/// A Rows result; `paging_state` set when more pages follow.
pub fn rows(
    keyspace: &str,
    table: &str,
    rows: Rows,
    paging_state: Option<Vec<u8>>,
    version: Version,
) -> Vec<u8> {
    let mut flags = RowsMetadataFlags::GLOBAL_TABLE_SPACE;
    if paging_state.is_some() {
        flags |= RowsMetadataFlags::HAS_MORE_PAGES;
    }
    let metadata = RowsMetadata {
        flags,
        columns_count: rows.columns().len() as i32,
        paging_state: paging_state.map(CBytes::new),
        new_metadata_id: None,
        global_table_spec: Some(TableSpec {
            ks_name: keyspace.to_string(),
            table_name: table.to_string(),
        }),
        col_specs: col_specs(rows.columns()),
    };
    let body = BodyResResultRows {
        metadata,
        rows_count: rows.len() as i32,
        rows_content: rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| v.map_or_else(CBytes::new_null, |v| CBytes::new(v.to_vec())))
                    .collect()
            })
            .collect(),
        protocol_version: version,
    };
    ResResultBody::Rows(body).serialize_to_vec(version)
}

/// A Void result.
pub fn void(version: Version) -> Vec<u8> {
    ResResultBody::Void.serialize_to_vec(version)
}

/// A Set_keyspace result.
pub fn set_keyspace(keyspace: &str, version: Version) -> Vec<u8> {
    ResResultBody::SetKeyspace(BodyResResultSetKeyspace {
        body: keyspace.to_string(),
    })
    .serialize_to_vec(version)
}

/// A Schema_change result from the CQL layer's description (`CREATED TABLE ks.t`).
pub fn schema_change(description: &str, version: Version) -> Vec<u8> {
    let mut words = description.splitn(3, ' ');
    let change_type = match words.next() {
        Some("DROPPED") => SchemaChangeType::Dropped,
        Some("UPDATED") => SchemaChangeType::Updated,
        _ => SchemaChangeType::Created,
    };
    let target = words.next().unwrap_or_default();
    let name = words.next().unwrap_or_default();
    let (target, options) = match (target, name.split_once('.')) {
        ("TABLE", Some((ks, t))) => (
            SchemaChangeTarget::Table,
            SchemaChangeOptions::TableType(ks.to_string(), t.to_string()),
        ),
        ("TYPE", Some((ks, t))) => (
            SchemaChangeTarget::Type,
            SchemaChangeOptions::TableType(ks.to_string(), t.to_string()),
        ),
        _ => (
            SchemaChangeTarget::Keyspace,
            SchemaChangeOptions::Keyspace(name.to_string()),
        ),
    };
    ResResultBody::SchemaChange(SchemaChange {
        change_type,
        target,
        options,
    })
    .serialize_to_vec(version)
}

/// A Prepared result: the statement's id, its markers' columns, and no result metadata (each
/// Rows answer carries its own).
pub fn prepared(
    id: &[u8],
    keyspace: &str,
    table: &str,
    binds: &[(String, CqlType)],
    pk_indexes: Vec<i16>,
    version: Version,
) -> Vec<u8> {
    let spec = TableSpec {
        ks_name: keyspace.to_string(),
        table_name: table.to_string(),
    };
    let body = BodyResResultPrepared {
        id: CBytesShort::new(id.to_vec()),
        result_metadata_id: None,
        metadata: PreparedMetadata {
            pk_indexes,
            global_table_spec: Some(spec),
            col_specs: col_specs(binds),
        },
        result_metadata: RowsMetadata {
            flags: RowsMetadataFlags::NO_METADATA,
            columns_count: 0,
            paging_state: None,
            new_metadata_id: None,
            global_table_spec: None,
            col_specs: Vec::new(),
        },
    };
    ResResultBody::Prepared(body).serialize_to_vec(version)
}

/// An error body of a kind and message.
pub fn error(ty: ErrorType, message: impl Into<String>, version: Version) -> Vec<u8> {
    let mut message = message.into();
    // A `[string]` has a 16-bit length: a longer message is cut, on a character boundary.
    if message.len() > u16::MAX as usize {
        let mut end = u16::MAX as usize;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
    }
    ErrorBody { message, ty }.serialize_to_vec(version)
}

/// The error body for a CQL layer error, with Cassandra's code for its kind.
pub fn cql_error(e: &CqlError, version: Version) -> Vec<u8> {
    if e.is_server_fault() {
        tracing::error!(error = %e, "a request failed on the server");
    }
    if let CqlError::Engine(unavailable @ supercolumn::Error::IndexNotBuilt { .. }) = e {
        return index_not_available(&unavailable.to_string(), version);
    }
    let message = match e {
        CqlError::Syntax { .. } => e.to_string(),
        CqlError::Invalid(m)
        | CqlError::Stale(m)
        | CqlError::Unauthorized(m)
        | CqlError::Config(m) => m.clone(),
        CqlError::Unconfigured(m) => format!("unconfigured {m}"),
        CqlError::AlreadyExists(m) => m.clone(),
        CqlError::Engine(inner) => inner.to_string(),
    };
    let ty = match e {
        CqlError::Syntax { .. } => ErrorType::Syntax,
        CqlError::Unauthorized(_) => ErrorType::Unauthorized,
        CqlError::Config(_) => ErrorType::Config,
        CqlError::Invalid(_) | CqlError::Unconfigured(_) | CqlError::Stale(_) => ErrorType::Invalid,
        CqlError::Engine(_) if !e.is_server_fault() => ErrorType::Invalid,
        CqlError::AlreadyExists(m) => {
            // "keyspace ks already exists" / "table ks.t already exists"
            let name = m.split(' ').nth(1).unwrap_or_default();
            let (ks, table) = name.split_once('.').unwrap_or((name, ""));
            ErrorType::AlreadyExists(AlreadyExistsError {
                ks: ks.to_string(),
                table: table.to_string(),
            })
        }
        CqlError::Engine(_) => ErrorType::Server,
    };
    error(ty, message, version)
}

/// Cassandra's answer to a read through an index still building: a read failure (0x1300) of
/// the one replica there is, at consistency ONE, its reason `INDEX_NOT_AVAILABLE` (code 6) in
/// protocol v5's reason map. Written out here because the protocol crate's read failure cannot
/// be built outside it, and its v5 map writes a port the spec's `[inetaddr]` does not have.
/// Version 3 has no read failure: there, as Cassandra does, it is a read timeout (0x1200).
fn index_not_available(why: &str, version: Version) -> Vec<u8> {
    const ONE: u16 = 0x0001;
    const INDEX_NOT_AVAILABLE: u16 = 6;
    let message = format!(
        "Operation failed - received 0 responses and 1 failures: INDEX_NOT_AVAILABLE ({why})"
    );
    let mut out = Vec::with_capacity(32 + message.len());
    let v3 = version < Version::V4;
    out.extend_from_slice(&if v3 { 0x1200u32 } else { 0x1300 }.to_be_bytes());
    out.extend_from_slice(&(message.len().min(u16::MAX as usize) as u16).to_be_bytes());
    out.extend_from_slice(&message.as_bytes()[..message.len().min(u16::MAX as usize)]);
    out.extend_from_slice(&ONE.to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes()); // received
    out.extend_from_slice(&1i32.to_be_bytes()); // block_for
    if v3 {
        out.push(0); // data_present
        return out;
    }
    out.extend_from_slice(&1i32.to_be_bytes()); // failures
    if version >= Version::V5 {
        out.extend_from_slice(&[4, 127, 0, 0, 1]);
        out.extend_from_slice(&INDEX_NOT_AVAILABLE.to_be_bytes());
    }
    out.push(0); // data_present
    out
}

/// The error a client gets for a prepared id the server does not know (it prepares again).
pub fn unprepared(id: &[u8], version: Version) -> Vec<u8> {
    error(
        ErrorType::Unprepared(UnpreparedError {
            id: CBytesShort::new(id.to_vec()),
        }),
        "prepared statement not found: prepare it again",
        version,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use cassandra_protocol::frame::message_error::FailureInfo;
    use cassandra_protocol::frame::FromCursor;
    use std::io::Cursor;

    #[test]
    fn a_read_through_a_building_index_is_a_read_failure_every_version_decodes() {
        let e = CqlError::Engine(supercolumn::Error::IndexNotBuilt {
            keyspace: "ks".into(),
            index: "v_idx".into(),
        });
        let says = "INDEX_NOT_AVAILABLE (The secondary index 'v_idx' is not yet available)";
        let body = cql_error(&e, Version::V3);
        let decoded = ErrorBody::from_cursor(&mut Cursor::new(body.as_slice()), Version::V3);
        let ErrorType::ReadTimeout(t) = decoded.unwrap().ty else {
            panic!("version 3 has no read failure");
        };
        assert_eq!((t.received, t.block_for), (0, 1));
        let version = Version::V4;
        let body = cql_error(&e, version);
        let mut cursor = Cursor::new(body.as_slice());
        let decoded = ErrorBody::from_cursor(&mut cursor, version).unwrap();
        assert_eq!(cursor.position() as usize, body.len(), "{version:?}");
        assert!(decoded.message.contains(says), "{}", decoded.message);
        let ErrorType::ReadFailure(f) = decoded.ty else {
            panic!("{version:?}: {:?}", decoded.ty);
        };
        assert_eq!((f.received, f.block_for), (0, 1));
        assert!(!f.replica_has_responded());
        assert_eq!(f.failure_info, FailureInfo::NumFailures(1));
        // Version 5's reason map: the spec's `[inetaddr]` (no port) and a `[short]` code,
        // read here by hand because the protocol crate reads a port there.
        let body = cql_error(&e, Version::V5);
        let message_len = usize::from(u16::from_be_bytes([body[4], body[5]]));
        let message = std::str::from_utf8(&body[6..6 + message_len]).unwrap();
        assert!(message.contains(says), "{message}");
        let rest = &body[6 + message_len..];
        let want: &[u8] = &[
            0, 1, // ONE
            0, 0, 0, 0, // received
            0, 0, 0, 1, // block_for
            0, 0, 0, 1, // one failure
            4, 127, 0, 0, 1, // from 127.0.0.1
            0, 6, // INDEX_NOT_AVAILABLE
            0, // no data
        ];
        assert_eq!(&body[..4], &[0, 0, 0x13, 0]);
        assert_eq!(rest, want);
    }

    #[test]
    fn a_configuration_refusal_is_cassandras_config_error() {
        let e =
            CqlError::Config("Cannot have a counter column (\"c\") in a non counter table".into());
        let body = cql_error(&e, Version::V4);
        let decoded =
            ErrorBody::from_cursor(&mut Cursor::new(body.as_slice()), Version::V4).unwrap();
        assert_eq!(&body[..4], &[0, 0, 0x23, 0]);
        assert!(matches!(decoded.ty, ErrorType::Config), "{:?}", decoded.ty);
        assert_eq!(
            decoded.message,
            "Cannot have a counter column (\"c\") in a non counter table"
        );
    }
}
