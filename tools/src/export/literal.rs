//! Stored bytes as CQL literals a Cassandra cluster parses back to the same bytes: numbers
//! from their big-endian form, text quoted, blobs in hex, timestamps as milliseconds and times
//! as nanoseconds (exact, unlike a formatted date).

use supercolumn_cql::CqlType;

/// A quoted CQL string.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn hex(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

fn be<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.try_into().ok()
}

/// The literal for `bytes` of type `ty`; scalar bytes that do not fit the type are written as
/// a blob cast, so nothing is dropped or changed (`blobAsInt(0x…)`). Collections, frozen or not
/// and nested, are written element by element (`[1, 2]`, `{'a': {3}}`); one whose bytes do not
/// decode has no literal (CQL has no cast to a collection), and is an error naming why.
pub fn literal(ty: &CqlType, bytes: &[u8]) -> Result<String, String> {
    match (scalar(ty, bytes), ty) {
        (Some(s), _) => Ok(s),
        (None, CqlType::Frozen(inner)) => literal(inner, bytes),
        (None, CqlType::Tuple(types)) => {
            let items = ty.tuple_elements(bytes)?;
            let body = items
                .iter()
                .zip(types)
                .map(|(v, t)| v.as_ref().map_or(Ok("null".into()), |b| literal(t, b)))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(format!("({})", body.join(", ")))
        }
        (None, CqlType::Udt(u)) => {
            let items = CqlType::udt_fields(u, bytes)?;
            let body = items
                .iter()
                .zip(&u.fields)
                .map(|(v, (name, t))| {
                    let value = v.as_ref().map_or(Ok("null".into()), |b| literal(t, b))?;
                    Ok(format!("{}: {value}", supercolumn_cql::quote_ident(name)))
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok(format!("{{{}}}", body.join(", ")))
        }
        (None, CqlType::Vector(e, _)) => {
            let body = ty
                .vector_elements(bytes)?
                .into_iter()
                .map(|b| literal(e, b))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(format!("[{}]", body.join(", ")))
        }
        (None, _) => collection(ty, bytes),
    }
}

/// A collection's literal, its elements' literals inside.
fn collection(ty: &CqlType, bytes: &[u8]) -> Result<String, String> {
    let items = ty.elements(bytes)?;
    let (first, values) = match ty {
        CqlType::List(e) | CqlType::Set(e) => (e.as_ref(), None),
        CqlType::Map(k, v) => (k.as_ref(), Some(v.as_ref())),
        other => return Err(format!("{other} is not a collection")),
    };
    let mut body = Vec::with_capacity(items.len());
    for (a, b) in &items {
        body.push(match (values, b) {
            (Some(v), Some(b)) => format!("{}: {}", literal(first, a)?, literal(v, b)?),
            _ => literal(first, a)?,
        });
    }
    let (open, close) = if matches!(ty, CqlType::List(_)) {
        ("[", "]")
    } else {
        ("{", "}")
    };
    Ok(format!("{open}{}{close}", body.join(", ")))
}

/// The literal of a type that is not a collection (`None`: it is one).
fn scalar(ty: &CqlType, bytes: &[u8]) -> Option<String> {
    let cast = |name: &str| format!("blobAs{name}({})", hex(bytes));
    Some(match ty {
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
        CqlType::Bigint | CqlType::Counter => {
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
        // Unquoted, as Cassandra reads it (a zero duration prints as nothing).
        CqlType::Duration => match supercolumn_cql::Duration::decode(bytes) {
            Ok(d) if d == supercolumn_cql::Duration::default() => "0s".into(),
            Ok(d) => d.text(),
            Err(_) => cast("Duration"),
        },
        CqlType::List(_)
        | CqlType::Set(_)
        | CqlType::Map(..)
        | CqlType::Frozen(_)
        | CqlType::Tuple(_)
        | CqlType::Udt(_)
        | CqlType::Vector(..) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(ty: &CqlType, b: &[u8]) -> String {
        literal(ty, b).unwrap()
    }

    #[test]
    fn literals_are_exact() {
        assert_eq!(lit(&CqlType::Int, &7i32.to_be_bytes()), "7");
        assert_eq!(lit(&CqlType::Int, &[1, 2]), "blobAsInt(0x0102)");
        assert_eq!(lit(&CqlType::Text, "it's".as_bytes()), "'it''s'");
        assert_eq!(lit(&CqlType::Blob, &[0, 255]), "0x00ff");
        assert_eq!(lit(&CqlType::Timestamp, &1i64.to_be_bytes()), "1");
        assert_eq!(
            lit(&CqlType::Double, &f64::NAN.to_be_bytes()),
            "blobAsDouble(0x7ff8000000000000)"
        );
        assert_eq!(lit(&CqlType::Tinyint, &[0xff]), "-1");
    }

    #[test]
    fn frozen_and_nested_collections_are_literals_not_hex() {
        // [int n] then [int len][bytes] per element (and per value of a map).
        let coll = |items: &[&[u8]]| {
            let mut b = (items.len() as i32).to_be_bytes().to_vec();
            for i in items {
                b.extend_from_slice(&(i.len() as i32).to_be_bytes());
                b.extend_from_slice(i);
            }
            b
        };
        let list = CqlType::Frozen(Box::new(CqlType::List(Box::new(CqlType::Int))));
        let one_two = coll(&[&1i32.to_be_bytes(), &2i32.to_be_bytes()]);
        assert_eq!(lit(&list, &one_two), "[1, 2]");
        let set = CqlType::Frozen(Box::new(CqlType::Set(Box::new(CqlType::Text))));
        assert_eq!(lit(&set, &coll(&[b"a", b"it's"])), "{'a', 'it''s'}");
        let inner = CqlType::Frozen(Box::new(CqlType::Set(Box::new(CqlType::Int))));
        let map = CqlType::Map(Box::new(CqlType::Text), Box::new(inner));
        let mut m = 1i32.to_be_bytes().to_vec();
        for part in [&b"k"[..], &coll(&[&3i32.to_be_bytes()])] {
            m.extend_from_slice(&(part.len() as i32).to_be_bytes());
            m.extend_from_slice(part);
        }
        assert_eq!(lit(&map, &m), "{'k': {3}}");
        assert_eq!(lit(&list, &coll(&[])), "[]");
        assert!(
            literal(&list, &[0, 0, 0, 9]).is_err(),
            "a count with no elements"
        );
    }
}
