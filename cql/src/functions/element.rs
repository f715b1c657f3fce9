//! Selecting into a collection, as Cassandra 4 does for maps and sets: `m['k']` (a map's
//! value, a set's element, null when absent) and `m['a'..'c']` (the entries or elements
//! whose key lies in the inclusive range, either end open), on the serialized collection a
//! row holds, ordered by the key type's comparator.

use super::super::error::CqlError;
use super::super::types::{serialize, CqlType};

/// The collection type under a `frozen<…>`.
fn unfrozen(ty: &CqlType) -> &CqlType {
    match ty {
        CqlType::Frozen(t) => t,
        t => t,
    }
}

/// The type of a key of a collection of type `ty` (a map's key, a set's element), and of
/// what one element selects (a map's value, a set's element); Cassandra's refusal for others,
/// naming the selection (`Element` or `Slice`).
pub(in super::super) fn key_and_value(
    ty: &CqlType,
    column: &str,
    selection: &str,
) -> Result<(CqlType, CqlType), CqlError> {
    match unfrozen(ty) {
        CqlType::Map(k, v) => Ok(((**k).clone(), (**v).clone())),
        CqlType::Set(e) => Ok(((**e).clone(), (**e).clone())),
        CqlType::List(_) => Err(CqlError::invalid(format!(
            "{selection} selection is only allowed on sets and maps, but {column} is a list"
        ))),
        other => Err(CqlError::invalid(format!(
            "{selection} selection is only allowed on sets and maps, but {column} is a {other}"
        ))),
    }
}

/// `value[key]`: a map's value or a set's element (`None`: absent).
pub(super) fn element(ty: &CqlType, value: &[u8], key: &[u8]) -> Result<Option<Vec<u8>>, CqlError> {
    let ty = unfrozen(ty);
    let items = ty.elements(value).map_err(CqlError::invalid)?;
    let (k, _) = key_and_value(ty, "", "Element")?;
    let cmp = k.comparator();
    let same = |a: &[u8]| cmp.as_ref().map_or(a == key, |c| c.compare(a, key).is_eq());
    Ok(items
        .into_iter()
        .find(|(a, _)| same(a))
        .map(|(a, b)| b.unwrap_or(a)))
}

/// `value[from..to]`: the entries (or elements) whose key lies in the inclusive range
/// (`None`: none, as CQL has no empty collection).
pub(super) fn slice(
    ty: &CqlType,
    value: &[u8],
    from: Option<&[u8]>,
    to: Option<&[u8]>,
) -> Result<Option<Vec<u8>>, CqlError> {
    let ty = unfrozen(ty);
    let items = ty.elements(value).map_err(CqlError::invalid)?;
    let (k, _) = key_and_value(ty, "", "Element")?;
    let cmp = k.comparator();
    let order = |a: &[u8], b: &[u8]| cmp.as_ref().map_or(a.cmp(b), |c| c.compare(a, b));
    let kept: Vec<_> = items
        .iter()
        .filter(|(a, _)| {
            from.is_none_or(|f| order(a, f).is_ge()) && to.is_none_or(|t| order(a, t).is_le())
        })
        .collect();
    if kept.is_empty() {
        return Ok(None);
    }
    Ok(Some(serialize(
        kept.into_iter().map(|(a, b)| (a.as_slice(), b.as_deref())),
    )))
}
