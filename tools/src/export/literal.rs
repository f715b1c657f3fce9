//! Stored bytes as CQL literals a Cassandra cluster parses back to the same bytes: numbers
//! from their big-endian form, text quoted, blobs in hex, timestamps as milliseconds and times
//! as nanoseconds (exact, unlike a formatted date).

use supercolumn::cql::CqlType;

/// A quoted CQL string.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(2 + b.len() * 2);
    s.push_str("0x");
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

fn be<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.try_into().ok()
}

/// The literal for `bytes` of type `ty`; bytes that do not fit the type are written as a blob
/// cast, so nothing is dropped or changed (`blobAsInt(0x…)`).
pub fn literal(ty: &CqlType, bytes: &[u8]) -> String {
    let cast = |name: &str| format!("blobAs{name}({})", hex(bytes));
    match ty {
        CqlType::Blob => hex(bytes),
        CqlType::Text => match std::str::from_utf8(bytes) {
            Ok(s) => quote(s),
            Err(_) => cast("Text"),
        },
        CqlType::Ascii => match std::str::from_utf8(bytes) {
            Ok(s) if s.is_ascii() => quote(s),
            _ => cast("Ascii"),
        },
        CqlType::Int => {
            be::<4>(bytes).map_or_else(|| cast("Int"), |a| i32::from_be_bytes(a).to_string())
        }
        CqlType::Bigint => {
            be::<8>(bytes).map_or_else(|| cast("Bigint"), |a| i64::from_be_bytes(a).to_string())
        }
        CqlType::Smallint => {
            be::<2>(bytes).map_or_else(|| cast("Smallint"), |a| i16::from_be_bytes(a).to_string())
        }
        CqlType::Tinyint => {
            be::<1>(bytes).map_or_else(|| cast("Tinyint"), |a| (a[0] as i8).to_string())
        }
        CqlType::Timestamp => {
            be::<8>(bytes).map_or_else(|| cast("Timestamp"), |a| i64::from_be_bytes(a).to_string())
        }
        CqlType::Time => {
            be::<8>(bytes).map_or_else(|| cast("Time"), |a| i64::from_be_bytes(a).to_string())
        }
        CqlType::Boolean => match bytes {
            [0] => "false".into(),
            [1] => "true".into(),
            _ => cast("Boolean"),
        },
        // Exact in every case, NaN and infinities included.
        CqlType::Float => cast("Float"),
        CqlType::Double => cast("Double"),
        CqlType::Decimal => cast("Decimal"),
        CqlType::Varint => cast("Varint"),
        CqlType::Date => cast("Date"),
        CqlType::Uuid | CqlType::Timeuuid => match be::<16>(bytes) {
            Some(a) => uuid::Uuid::from_bytes(a).to_string(),
            None => cast(if *ty == CqlType::Uuid {
                "Uuid"
            } else {
                "Timeuuid"
            }),
        },
        // An IPv6 address written as text may come back as IPv4 (`::ffff:1.2.3.4`).
        CqlType::Inet => match bytes.len() {
            4 => quote(&ty.display(bytes)),
            _ => cast("Inet"),
        },
        CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) | CqlType::Frozen(_) => hex(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_exact() {
        assert_eq!(literal(&CqlType::Int, &7i32.to_be_bytes()), "7");
        assert_eq!(literal(&CqlType::Int, &[1, 2]), "blobAsInt(0x0102)");
        assert_eq!(literal(&CqlType::Text, "it's".as_bytes()), "'it''s'");
        assert_eq!(literal(&CqlType::Blob, &[0, 255]), "0x00ff");
        assert_eq!(literal(&CqlType::Timestamp, &1i64.to_be_bytes()), "1");
        assert_eq!(
            literal(&CqlType::Double, &f64::NAN.to_be_bytes()),
            "blobAsDouble(0x7ff8000000000000)"
        );
        assert_eq!(literal(&CqlType::Tinyint, &[0xff]), "-1");
    }
}
