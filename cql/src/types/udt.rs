//! CQL's user-defined types (`CREATE TYPE address (street text, zip int)`): what a type is (its
//! keyspace, name and fields), and its values: a frozen value is one cell in Cassandra's
//! serialized form, the tuple's (`tuple.rs`): each field's `int` length and bytes in
//! declaration order, `-1` for null; a value written before fields were added stops early, the
//! rest null. Literals (`{street: 'x', zip: 1}`), their text as cqlsh prints it and their
//! checks are here; which type a name means in a keyspace is `user_types.rs`'s.

use std::sync::Arc;

use super::{CqlType, Literal, Within};
use crate::error::CqlError;

/// A user-defined type: its keyspace, name and fields in declaration order. A type named in a
/// statement before it is looked up has no fields yet (a type always has at least one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserType {
    /// Its keyspace (empty while unresolved and not named with one).
    pub keyspace: String,
    /// Its name.
    pub name: String,
    /// (name, type) of each field.
    pub fields: Vec<(String, CqlType)>,
}

impl UserType {
    /// A type as a statement names it, to be looked up.
    pub fn named(keyspace: Option<String>, name: String) -> CqlType {
        CqlType::Udt(Arc::new(UserType {
            keyspace: keyspace.unwrap_or_default(),
            name,
            fields: Vec::new(),
        }))
    }

    /// Whether its fields are known (it has been looked up).
    pub fn is_resolved(&self) -> bool {
        !self.fields.is_empty()
    }

    /// The position and type of the field `name`.
    pub fn field(&self, name: &str) -> Option<(usize, &CqlType)> {
        self.fields
            .iter()
            .enumerate()
            .find(|(_, (n, _))| n == name)
            .map(|(i, (_, t))| (i, t))
    }

    /// The fields' types as a tuple's: a value of this type is a value of that tuple.
    pub fn as_tuple(&self) -> CqlType {
        CqlType::Tuple(self.fields.iter().map(|(_, t)| t.clone()).collect())
    }

    /// Its name as a statement writes it (quoted when it must be).
    pub fn quoted_name(&self) -> String {
        super::quote_ident(&self.name)
    }
}

/// A non-frozen value's cell: its field's position (a `short`) and the field's bytes.
pub type FieldCell = (Vec<u8>, Vec<u8>);

impl CqlType {
    /// Whether this is `frozen<udt>`.
    pub fn is_frozen_udt(&self) -> bool {
        matches!(self, CqlType::Frozen(inner) if matches!(**inner, CqlType::Udt(_)))
    }

    /// The fields of a value of the user-defined type `u`, each checked (`None`: null).
    pub fn udt_fields(u: &UserType, bytes: &[u8]) -> Result<Vec<Option<Vec<u8>>>, String> {
        if !u.is_resolved() {
            return Err(format!("Unknown type {}", u.name));
        }
        u.as_tuple().tuple_elements(bytes)
    }

    /// The cells of a non-frozen value: (the field's position as a `short`, its bytes) for
    /// each field that is not null.
    pub fn udt_cells(u: &UserType, bytes: &[u8]) -> Result<Vec<FieldCell>, String> {
        let fields = CqlType::udt_fields(u, bytes)?;
        let mut out = Vec::with_capacity(fields.len());
        for (i, f) in fields.into_iter().enumerate() {
            if let Some(b) = f {
                let i = i16::try_from(i).map_err(|_| "a user type of over 32767 fields")?;
                out.push((i.to_be_bytes().to_vec(), b));
            }
        }
        Ok(out)
    }

    /// Sets, in the value `value` being assembled from a non-frozen value's cells (empty:
    /// none yet), the field a cell named `position` holds to `bytes`. A cell naming a field
    /// the type does not have (damage, or a field of a type since changed) is left out.
    pub fn udt_set_cell(u: &UserType, value: &mut Vec<u8>, position: &[u8], bytes: &[u8]) {
        let Ok(i) = <[u8; 2]>::try_from(position).map(i16::from_be_bytes) else {
            return;
        };
        let Some(i) = usize::try_from(i).ok().filter(|i| *i < u.fields.len()) else {
            return;
        };
        // A cell whose bytes are not a value of its field's type (damage) is left out, not
        // let spoil the fields assembled so far.
        if u.fields[i].1.check(bytes).is_err() {
            return;
        }
        let mut fields = if value.is_empty() {
            vec![None; u.fields.len()]
        } else {
            CqlType::udt_fields(u, value).unwrap_or_else(|_| vec![None; u.fields.len()])
        };
        fields[i] = Some(bytes.to_vec());
        value.clear();
        for f in fields {
            match f {
                Some(b) => {
                    value.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    value.extend_from_slice(&b);
                }
                None => value.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
    }

    /// Its text as cqlsh shows it: `{street: '1 Main', zip: 12345}`.
    pub(super) fn udt_text(u: &UserType, bytes: &[u8]) -> Option<String> {
        let items = CqlType::udt_fields(u, bytes).ok()?;
        let body: Vec<String> = items
            .iter()
            .zip(&u.fields)
            .map(|(v, (name, t))| {
                let value = match (v, t) {
                    (None, _) => "null".into(),
                    (Some(b), CqlType::Ascii | CqlType::Text) => {
                        format!("'{}'", t.display(b).replace('\'', "''"))
                    }
                    (Some(b), t) => t.display(b),
                };
                format!("{}: {value}", super::quote_ident(name))
            })
            .collect();
        Some(format!("{{{}}}", body.join(", ")))
    }
}

/// The bytes of a literal `{f: v, …}` for the type `u` (in `column`): fields left out are
/// null; an unknown field is refused, in Cassandra's words.
pub(super) fn encode(
    u: &UserType,
    given: &[(String, Literal)],
    column: &str,
) -> Result<Vec<u8>, CqlError> {
    if !u.is_resolved() {
        return Err(CqlError::invalid(format!("Unknown type {}", u.name)));
    }
    let mut items = vec![Literal::Null; u.fields.len()];
    for (name, lit) in given {
        let Some((i, _)) = u.field(name) else {
            return Err(CqlError::invalid(format!(
                "Unknown field '{name}' in value of user defined type {}",
                u.name
            )));
        };
        items[i] = lit.clone();
    }
    // Every field is written, nulls too, as Cassandra and the drivers serialize a value: equal
    // values have equal bytes (a partition key's token is its bytes' hash).
    let CqlType::Tuple(types) = u.as_tuple() else {
        return Err(CqlError::invalid("a user type's fields"));
    };
    let mut fields = Vec::with_capacity(types.len());
    for (((name, _), t), item) in u.fields.iter().zip(&types).zip(&items) {
        fields.push(t.encode_in(item, column, Some(Within::Field(name)))?);
    }
    super::tuple::serialize(&fields, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address() -> UserType {
        UserType {
            keyspace: "ks".into(),
            name: "address".into(),
            fields: vec![
                ("street".into(), CqlType::Text),
                ("zip".into(), CqlType::Int),
                ("Tags".into(), CqlType::Set(Box::new(CqlType::Text))),
            ],
        }
    }

    #[test]
    fn values_serialize_as_tuples_and_print_as_cqlsh_does() {
        let u = address();
        let b = encode(
            &u,
            &[
                ("zip".into(), Literal::Number("7".into())),
                ("street".into(), Literal::Str("it's".into())),
            ],
            "a",
        )
        .unwrap();
        assert_eq!(
            b,
            [0, 0, 0, 4, b'i', b't', b'\'', b's', 0, 0, 0, 4, 0, 0, 0, 7, 255, 255, 255, 255],
            "every field, nulls too"
        );
        assert_eq!(
            CqlType::udt_fields(&u, &b[..16]).unwrap()[2],
            None,
            "a value written before a field was added"
        );
        assert_eq!(
            CqlType::udt_text(&u, &b).unwrap(),
            "{street: 'it''s', zip: 7, \"Tags\": null}"
        );
        let e = encode(&u, &[("nope".into(), Literal::Null)], "a").unwrap_err();
        assert!(e.to_string().contains("Unknown field 'nope'"), "{e}");
        assert!(CqlType::udt_fields(&u, &[0, 0, 0, 9]).is_err());
    }
}
