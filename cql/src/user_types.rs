//! A keyspace's user-defined types as the catalog keeps them (each its `CREATE TYPE`
//! statement, in creation order, so a type names only types before it), and what a type's
//! name in a statement means there: its definition, checked by Cassandra's rules (a type is
//! used only in its own keyspace; a type inside a collection, a tuple or another type is
//! frozen; a type holds no counters). Running `CREATE`/`ALTER`/`DROP TYPE` is
//! `type_schema.rs`'s; a value's bytes are `types/udt.rs`'s.

use std::sync::Arc;

use super::ast::Statement;
use super::error::CqlError;
use super::parser::parse;
use super::types::{quote_name, CqlType, UserType};
use supercolumn::schema::KeyspaceDef;

/// The user-defined types of one keyspace.
#[derive(Debug, Clone, Default)]
pub struct UserTypes {
    keyspace: String,
    types: Vec<Arc<UserType>>,
}

impl UserTypes {
    /// A keyspace without types.
    pub fn none(keyspace: &str) -> UserTypes {
        UserTypes {
            keyspace: keyspace.to_string(),
            types: Vec::new(),
        }
    }

    /// The types the catalog keeps for `def`.
    pub fn of(def: &KeyspaceDef) -> Result<UserTypes, CqlError> {
        UserTypes::from_statements(&def.name, &def.cql_types)
    }

    /// The types `texts` (`CREATE TYPE` statements, in creation order) define in `keyspace`.
    /// A type may name one stored after it (`ALTER TYPE a ADD f frozen<c>`, `c` created
    /// later): each pass defines the types whose types are known, until all are.
    pub fn from_statements(keyspace: &str, texts: &[String]) -> Result<UserTypes, CqlError> {
        let mut types = UserTypes::none(keyspace);
        let mut pending = Vec::with_capacity(texts.len());
        for text in texts {
            let stmts = parse(text)?;
            let [Statement::CreateType { name, fields, .. }] = stmts.as_slice() else {
                return Err(CqlError::invalid(format!(
                    "the stored type of keyspace {keyspace} is not a CREATE TYPE: {text}"
                )));
            };
            pending.push((name.table.clone(), fields.clone()));
        }
        while !pending.is_empty() {
            let mut failed = None;
            let before = pending.len();
            pending.retain(|(name, fields)| match types.define(name, fields) {
                Ok(t) => {
                    types.types.push(Arc::new(t));
                    false
                }
                Err(e) => {
                    failed.get_or_insert(e);
                    true
                }
            });
            if pending.len() == before {
                return Err(failed.unwrap_or_else(|| CqlError::invalid("a stored type")));
            }
        }
        Ok(types)
    }

    /// Its types, in creation order.
    pub fn list(&self) -> &[Arc<UserType>] {
        &self.types
    }

    /// The type named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<UserType>> {
        self.types.iter().find(|t| t.name == name)
    }

    /// A new type `name` of `fields` in this keyspace, checked as Cassandra checks a
    /// `CREATE TYPE` (its fields' types looked up here).
    pub fn define(&self, name: &str, fields: &[(String, CqlType)]) -> Result<UserType, CqlError> {
        if CqlType::scalar(name).is_some()
            || matches!(name, "list" | "set" | "map" | "frozen" | "tuple" | "vector")
        {
            return Err(CqlError::invalid(format!(
                "{name} is a reserved type name and cannot be used for a user type"
            )));
        }
        let mut out = Vec::with_capacity(fields.len());
        let mut budget = MAX_EXPANDED;
        for (field, ty) in fields {
            if out.iter().any(|(n, _)| n == field) {
                return Err(CqlError::invalid(format!(
                    "Duplicate field name {field} in type {name}"
                )));
            }
            let ty = self.resolve(ty)?;
            if matches!(ty, CqlType::Udt(_)) {
                return Err(CqlError::invalid(
                    "A user type cannot contain non-frozen UDTs",
                ));
            }
            // A type's value is walked whole (checked, ordered, printed, described to
            // drivers): types nesting types many times over are refused before anything
            // walks them.
            if !within(&ty, &mut budget) {
                return Err(CqlError::invalid(format!(
                    "type {name} nests other types too often: expanded, it has over {MAX_EXPANDED} parts"
                )));
            }
            if holds(&ty, &|t| matches!(t, CqlType::Counter)) {
                return Err(CqlError::invalid("A user type cannot contain counters"));
            }
            out.push((field.clone(), ty));
        }
        Ok(UserType {
            keyspace: self.keyspace.clone(),
            name: name.to_string(),
            fields: out,
        })
    }

    /// `ty` with each user type it names replaced by its definition here; one inside a
    /// collection, a tuple or a frozen value is frozen (a non-frozen one inside a collection
    /// is refused, in Cassandra's words).
    pub fn resolve(&self, ty: &CqlType) -> Result<CqlType, CqlError> {
        self.resolve_in(ty, None)
    }

    /// `columns` with their types resolved (an `ALTER TABLE … ADD`'s).
    pub fn resolve_columns(
        &self,
        columns: &[(String, CqlType)],
    ) -> Result<Vec<(String, CqlType)>, CqlError> {
        columns
            .iter()
            .map(|(n, t)| Ok((n.clone(), self.resolve(t)?)))
            .collect()
    }

    /// `within`: the collection or tuple `ty` is inside, if any, and whether it is frozen.
    fn resolve_in(
        &self,
        ty: &CqlType,
        within: Option<(&CqlType, bool)>,
    ) -> Result<CqlType, CqlError> {
        let boxed = |t: &CqlType, frozen: bool| -> Result<Box<CqlType>, CqlError> {
            self.resolve_in(t, Some((ty, frozen))).map(Box::new)
        };
        let frozen = within.is_some_and(|(_, f)| f);
        Ok(match ty {
            CqlType::Udt(named) => {
                let found = self.lookup(named)?;
                match within {
                    Some((outer, false)) if outer.is_collection() => {
                        return Err(CqlError::invalid(format!(
                            "Non-frozen UDTs are not allowed inside collections: {outer}"
                        )))
                    }
                    Some(_) => CqlType::Frozen(Box::new(CqlType::Udt(found))),
                    None => CqlType::Udt(found),
                }
            }
            CqlType::Frozen(inner) if matches!(**inner, CqlType::Udt(_)) => {
                let CqlType::Udt(named) = &**inner else {
                    return Err(CqlError::invalid("a frozen type"));
                };
                CqlType::Frozen(Box::new(CqlType::Udt(self.lookup(named)?)))
            }
            CqlType::Frozen(inner) => CqlType::Frozen(boxed(inner, true)?),
            CqlType::List(e) => CqlType::List(boxed(e, frozen)?),
            CqlType::Set(e) => CqlType::Set(boxed(e, frozen)?),
            CqlType::Map(k, v) => CqlType::Map(boxed(k, frozen)?, boxed(v, frozen)?),
            CqlType::Vector(e, n) => CqlType::Vector(boxed(e, true)?, *n),
            CqlType::Tuple(ts) => CqlType::Tuple(
                ts.iter()
                    .map(|t| self.resolve_in(t, Some((ty, true))))
                    .collect::<Result<_, _>>()?,
            ),
            other => other.clone(),
        })
    }

    /// The definition a named type refers to.
    fn lookup(&self, named: &UserType) -> Result<Arc<UserType>, CqlError> {
        if !named.keyspace.is_empty() && named.keyspace != self.keyspace {
            return Err(CqlError::invalid(format!(
                "Statement on keyspace {} cannot refer to a user type in keyspace {}; user types can only be used in the keyspace they are defined in",
                self.keyspace, named.keyspace
            )));
        }
        self.get(&named.name).cloned().ok_or_else(|| {
            CqlError::invalid(format!("Unknown type {}.{}", self.keyspace, named.name))
        })
    }
}

/// The most parts (types, fields, elements) a user type may have once the types it nests are
/// expanded.
const MAX_EXPANDED: usize = 10_000;

/// Whether `ty`, expanded, has at most `budget` parts (taken from it).
fn within(ty: &CqlType, budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    match ty {
        CqlType::List(e) | CqlType::Set(e) | CqlType::Frozen(e) | CqlType::Vector(e, _) => {
            within(e, budget)
        }
        CqlType::Map(k, v) => within(k, budget) && within(v, budget),
        CqlType::Tuple(ts) => ts.iter().all(|t| within(t, budget)),
        CqlType::Udt(u) => u.fields.iter().all(|(_, t)| within(t, budget)),
        _ => true,
    }
}

/// Whether `ty`, or a type inside it (a field of a user type too), passes `test`.
pub fn holds(ty: &CqlType, test: &dyn Fn(&CqlType) -> bool) -> bool {
    if test(ty) {
        return true;
    }
    match ty {
        CqlType::List(e) | CqlType::Set(e) | CqlType::Frozen(e) | CqlType::Vector(e, _) => {
            holds(e, test)
        }
        CqlType::Map(k, v) => holds(k, test) || holds(v, test),
        CqlType::Tuple(ts) => ts.iter().any(|t| holds(t, test)),
        CqlType::Udt(u) => u.fields.iter().any(|(_, t)| holds(t, test)),
        _ => false,
    }
}

/// Whether `ty` names the user type `name` (of its keyspace), however deep.
pub fn uses(ty: &CqlType, name: &str) -> bool {
    holds(ty, &|t| matches!(t, CqlType::Udt(u) if u.name == name))
}

/// The `CREATE TYPE` statement of `t`, as the catalog keeps it and `DESCRIBE` prints it.
pub fn create_statement(t: &UserType) -> String {
    let fields: Vec<String> = t
        .fields
        .iter()
        .map(|(n, ty)| format!("    {} {ty}", quote_name(n)))
        .collect();
    format!(
        "CREATE TYPE {}.{} (\n{}\n);",
        quote_name(&t.keyspace),
        t.quoted_name(),
        fields.join(",\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyspace(types: &[&str]) -> KeyspaceDef {
        let mut def = KeyspaceDef::new("ks");
        def.cql_types = types.iter().map(|t| t.to_string()).collect();
        def
    }

    #[test]
    fn types_are_looked_up_in_order_and_frozen_where_nested() {
        let def = keyspace(&[
            "CREATE TYPE ks.address (street text, zip int, tags set<text>)",
            "CREATE TYPE ks.person (name text, home frozen<address>, others list<frozen<address>>)",
        ]);
        let types = UserTypes::of(&def).unwrap();
        let person = types.get("person").unwrap();
        assert_eq!(person.fields.len(), 3);
        assert!(person.fields[1].1.is_frozen_udt());
        let back = create_statement(types.get("address").unwrap());
        assert_eq!(
            back,
            "CREATE TYPE ks.address (\n    street text,\n    zip int,\n    tags set<text>\n);"
        );
        // The statement the catalog keeps reads back as the same type.
        let again = UserTypes::of(&keyspace(&[&back])).unwrap();
        assert_eq!(again.get("address"), types.get("address"));
        let named = UserType::named(None, "address".into());
        let list = CqlType::List(Box::new(named.clone()));
        let e = types.resolve(&list).unwrap_err();
        assert!(
            e.to_string()
                .contains("Non-frozen UDTs are not allowed inside collections: list<address>"),
            "{e}"
        );
        let tuple = types.resolve(&CqlType::Tuple(vec![named.clone()])).unwrap();
        assert_eq!(tuple.to_string(), "frozen<tuple<frozen<address>>>");
        let e = types
            .resolve(&UserType::named(Some("other".into()), "address".into()))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("user types can only be used in the keyspace"),
            "{e}"
        );
        let e = types
            .resolve(&UserType::named(None, "nope".into()))
            .unwrap_err();
        assert!(e.to_string().contains("Unknown type ks.nope"), "{e}");
        let e = UserTypes::of(&keyspace(&["CREATE TYPE ks.bad (a address)"])).unwrap_err();
        assert!(e.to_string().contains("Unknown type ks.address"), "{e}");
        let e = types.define("bad", &[("a".into(), named)]).unwrap_err();
        assert!(
            e.to_string().contains("cannot contain non-frozen UDTs"),
            "{e}"
        );
        let e = types
            .define("bad", &[("c".into(), CqlType::Counter)])
            .unwrap_err();
        assert!(e.to_string().contains("cannot contain counters"), "{e}");
        assert!(uses(&person.fields[2].1, "address"));
    }
}
