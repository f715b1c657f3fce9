//! One comparison of a conditional write's `IF` against the row as it is: the column's value,
//! or one element or field of it, compared with a value or any of `IN`'s, as Cassandra
//! compares them (nulls included). Reads nothing itself: `mod.rs` reads the row.

use super::super::ast::{ColumnCondition, Op, Subscript};
use super::super::error::CqlError;
use super::super::rows::Rows;
use super::super::session::Session;
use super::super::table::Table;
use super::super::types::{matches_filter, CqlType};

impl Session<'_> {
    /// Whether one comparison holds of `current`: the column's value (or its element or
    /// field) against the value, or any of `IN`'s. Every value is checked, whatever the
    /// answer, so a bad one is refused either way.
    pub(super) fn column_holds(
        &self,
        t: &Table,
        cc: &ColumnCondition,
        current: &Rows,
    ) -> Result<bool, CqlError> {
        let c = cc.column.as_str();
        let (_, def) = t.column(c)?;
        if matches!(cc.op, Op::Contains | Op::ContainsKey) {
            return self.contains_holds(cc, &def.ty, current);
        }
        let at = current.columns().iter().position(|(n, _)| n == c);
        let whole = current.first().zip(at).and_then(|(r, i)| r.get(i));
        let (ty, have) = match &cc.subscript {
            None => (def.ty.clone(), whole.map(<[u8]>::to_vec)),
            Some(Subscript::Element(k)) => {
                let (kt, vt) = def.ty.element_access(c).map_err(CqlError::invalid)?;
                let is_list = match &def.ty {
                    CqlType::Frozen(inner) => matches!(**inner, CqlType::List(_)),
                    ty => matches!(ty, CqlType::List(_)),
                };
                let key = self.value(&kt, k, c)?.ok_or_else(|| {
                    let what = if is_list { "list" } else { "map" };
                    CqlError::invalid(format!("Invalid null value for {what} element access"))
                })?;
                let index = <[u8; 4]>::try_from(key.as_slice()).map(i32::from_be_bytes);
                if let (true, Ok(i @ ..0)) = (is_list, index) {
                    return Err(CqlError::invalid(format!(
                        "Invalid negative list index {i}"
                    )));
                }
                let have = match whole {
                    Some(w) => def.ty.element_at(w, &key).map_err(CqlError::invalid)?,
                    None => None,
                };
                (vt, have)
            }
            Some(Subscript::Field(f)) => {
                let (i, ft) = def.ty.field_access(c, f).map_err(CqlError::invalid)?;
                let have = match whole {
                    Some(w) => def.ty.field_at(w, i).map_err(CqlError::invalid)?,
                    None => None,
                };
                (ft, have)
            }
        };
        let wants = if cc.list_marker {
            // `IN ?`: the values are the bound list's elements.
            let list = CqlType::List(Box::new(ty.clone()));
            let bound = match cc.values.first() {
                Some(term) => self.value(&list, term, c)?,
                None => None,
            };
            let bound = bound.ok_or_else(|| {
                CqlError::invalid(format!("Invalid null list in IN condition for {c}"))
            })?;
            let elements = list.elements(&bound).map_err(CqlError::invalid)?;
            elements.into_iter().map(|(v, _)| Some(v)).collect()
        } else {
            let mut wants = Vec::with_capacity(cc.values.len());
            for term in &cc.values {
                wants.push(self.value(&ty, term, c)?);
            }
            wants
        };
        let mut any = false;
        for mut want in wants {
            // An empty collection that is not frozen is no collection: null, as Cassandra
            // compares it (`IF l = []` holds for a list never written).
            if ty.is_collection() && want.as_deref() == Some(&[0, 0, 0, 0][..]) {
                want = None;
            }
            any |= compare(&ty, have.as_deref(), cc.op, want.as_deref(), c)?;
        }
        Ok(any)
    }
}

impl Session<'_> {
    /// `IF c CONTAINS v` or `IF m CONTAINS KEY k`: whether the collection as it is holds the
    /// element (a map the value), or the key; a null or empty collection holds nothing.
    fn contains_holds(
        &self,
        cc: &ColumnCondition,
        ty: &CqlType,
        current: &Rows,
    ) -> Result<bool, CqlError> {
        let c = cc.column.as_str();
        let inner = match ty {
            CqlType::Frozen(inner) => inner.as_ref(),
            t => t,
        };
        let key = cc.op == Op::ContainsKey;
        let (word, fits) = if key {
            ("CONTAINS KEY", matches!(inner, CqlType::Map(..)))
        } else {
            ("CONTAINS", inner.is_collection())
        };
        if !fits {
            let what = if key { "non-map" } else { "non-collection" };
            return Err(CqlError::invalid(format!(
                "Cannot use {word} on {what} column {c}"
            )));
        }
        if cc.subscript.is_some() || cc.is_in {
            return Err(CqlError::invalid(format!(
                "{word} conditions on {c} take one value, on the whole column"
            )));
        }
        let element = match (inner, key) {
            (CqlType::Map(k, _), true) => k.as_ref(),
            (CqlType::List(e) | CqlType::Set(e) | CqlType::Map(_, e), _) => e.as_ref(),
            _ => inner,
        };
        let at = current.columns().iter().position(|(n, _)| n == c);
        let have = current.first().zip(at).and_then(|(r, i)| r.get(i));
        let mut holds = false;
        for term in &cc.values {
            let want = self.value(element, term, c)?.ok_or_else(|| {
                CqlError::invalid(format!(
                    "Invalid comparison with null for operator \"{word}\""
                ))
            })?;
            holds |= matches_filter(ty, have, cc.op, &want);
        }
        Ok(holds)
    }
}

/// Whether the current value `have` compares to `want` as `op` says (`null = null` holds; no
/// other comparison with a null does, and an ordering with a null is refused, as Cassandra's).
fn compare(
    ty: &CqlType,
    have: Option<&[u8]>,
    op: Op,
    want: Option<&[u8]>,
    column: &str,
) -> Result<bool, CqlError> {
    if matches!(op, Op::Contains | Op::ContainsKey) {
        return Err(CqlError::invalid(format!(
            "CONTAINS conditions on {column} are not supported here"
        )));
    }
    // A whole collection or user type of many cells compares as its frozen value does.
    let frozen;
    let ty = if ty.is_multi_cell() {
        frozen = CqlType::Frozen(Box::new(ty.clone()));
        &frozen
    } else {
        ty
    };
    let sign = op.symbol();
    match (want, op) {
        (None, Op::Eq) => Ok(have.is_none()),
        (None, Op::Ne) => Ok(have.is_some()),
        (None, _) => Err(CqlError::invalid(format!(
            "Invalid comparison with null for operator \"{sign}\""
        ))),
        (Some(_), Op::Lt | Op::Le | Op::Gt | Op::Ge) if *ty == CqlType::Duration => {
            Err(CqlError::invalid(format!(
                "Slice conditions ( {sign} ) are not supported on durations"
            )))
        }
        // A type without an order (decimal, a frozen collection of decimals) answers only `=`;
        // a frozen collection of ordered types orders element by element (`FrozenType`).
        (Some(_), Op::Lt | Op::Le | Op::Gt | Op::Ge) if ty.comparator().is_none() => {
            Err(CqlError::invalid(format!(
                "ordering conditions on {column} of type {ty} are not supported yet"
            )))
        }
        // `!=` holds against a null (Cassandra's: a missing value differs from any value).
        (Some(_), Op::Ne) if have.is_none() => Ok(true),
        (Some(w), _) => Ok(matches_filter(ty, have, op, w)),
    }
}
