//! A collection value's serialized form (the protocol's, from v3, and a frozen collection's
//! cell): an `int` count, then each element (a map's key, then its value) as an `int` length
//! and bytes. Reading one into its elements, checked against their types; writing one; and
//! putting a bound frozen set or map in the order Cassandra keeps. What the elements mean is
//! `types.rs`'s; how a collection is stored as cells is `collection.rs`'s.

use super::CqlType;

impl CqlType {
    /// The elements of a collection value in its serialized form (protocol v3: an `int` count,
    /// then each element, a map's key then value, as an `int` length and bytes), each checked
    /// against its type: (element or key, value of a map).
    pub fn elements(&self, bytes: &[u8]) -> Result<Vec<Element>, String> {
        let (first, second) = match self {
            CqlType::List(e) | CqlType::Set(e) => (e.as_ref(), None),
            CqlType::Map(k, v) => (k.as_ref(), Some(v.as_ref())),
            other => return Err(format!("{other} is not a collection")),
        };
        let mut r = bytes;
        let int = |r: &mut &[u8]| -> Result<i32, String> {
            let (head, rest) = r
                .split_first_chunk::<4>()
                .ok_or("a collection value cut short")?;
            *r = rest;
            Ok(i32::from_be_bytes(*head))
        };
        let n = int(&mut r)?;
        // Every element takes at least 4 bytes: a count beyond that is a lie, refused before
        // anything is allocated for it.
        let n = usize::try_from(n)
            .ok()
            .filter(|n| n.saturating_mul(4) <= r.len())
            .ok_or("a collection count that does not fit its bytes")?;
        let mut out = Vec::with_capacity(n);
        let take = |r: &mut &[u8], ty: &CqlType| -> Result<Vec<u8>, String> {
            let len = usize::try_from(int(r)?).map_err(|_| "a null inside a collection")?;
            if len > r.len() {
                return Err("a collection element cut short".into());
            }
            let (b, rest) = r.split_at(len);
            *r = rest;
            ty.check(b)?;
            Ok(b.to_vec())
        };
        for _ in 0..n {
            let a = take(&mut r, first)?;
            let b = match second {
                Some(t) => Some(take(&mut r, t)?),
                None => None,
            };
            out.push((a, b));
        }
        if !r.is_empty() {
            return Err("bytes after the collection's last element".into());
        }
        Ok(out)
    }

    /// The elements of a list value, a null element (length -1) as `None`: a client may not
    /// bind one, but a result may hold one (Cassandra 5's `ttl()` of elements written
    /// without a TTL). `None` for bytes that are no such list.
    pub fn list_items(&self, bytes: &[u8]) -> Option<Vec<Option<Vec<u8>>>> {
        let CqlType::List(e) = self else {
            return None;
        };
        let (n, mut r) = bytes.split_first_chunk::<4>()?;
        let n = usize::try_from(i32::from_be_bytes(*n)).ok()?;
        let mut out = Vec::with_capacity(n.min(r.len() / 4));
        for _ in 0..n {
            let (len, rest) = r.split_first_chunk::<4>()?;
            r = rest;
            let Ok(len) = usize::try_from(i32::from_be_bytes(*len)) else {
                out.push(None);
                continue;
            };
            let b = r.get(..len)?;
            e.check(b).ok()?;
            out.push(Some(b.to_vec()));
            r = &r[len..];
        }
        r.is_empty().then_some(out)
    }

    /// Checked bytes bound to a marker as Cassandra keeps them: a frozen set's elements and a
    /// frozen map's keys sorted and each kept once (of a repeated key, the last value given),
    /// as a literal of it is, also where such a value is an element of a collection. `None`:
    /// the bytes stand as they are.
    pub fn canonical(&self, bytes: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let frozen = |t: &CqlType| matches!(t, CqlType::Frozen(_));
        match self {
            CqlType::Frozen(inner) => match &**inner {
                CqlType::Set(e) | CqlType::Map(e, _) => {
                    let cmp = e.comparator().ok_or("a frozen collection without order")?;
                    let mut items = inner.elements(bytes)?;
                    // A stable sort of the reversed elements keeps the last of equal keys first.
                    items.reverse();
                    items.sort_by(|a, b| cmp.compare(&a.0, &b.0));
                    items.dedup_by(|a, b| a.0 == b.0);
                    Ok(Some(serialize(
                        items.iter().map(|(a, b)| (a.as_slice(), b.as_deref())),
                    )))
                }
                _ => Ok(None),
            },
            CqlType::List(e) | CqlType::Set(e) | CqlType::Map(e, _) => {
                // The elements (a map's keys) and a map's values that are frozen collections.
                let second = match self {
                    CqlType::Map(_, v) => Some(v.as_ref()).filter(|v| frozen(v)),
                    _ => None,
                };
                if !frozen(e) && second.is_none() {
                    return Ok(None);
                }
                let mut items = self.elements(bytes)?;
                for (a, b) in &mut items {
                    if frozen(e) {
                        if let Some(c) = e.canonical(a)? {
                            *a = c;
                        }
                    }
                    if let (Some(v), Some(b)) = (second, b.as_mut()) {
                        if let Some(c) = v.canonical(b)? {
                            *b = c;
                        }
                    }
                }
                Ok(Some(serialize(
                    items.iter().map(|(a, b)| (a.as_slice(), b.as_deref())),
                )))
            }
            _ => Ok(None),
        }
    }
}

/// One element of a collection value: the element (a map's key) and a map's value.
pub type Element = (Vec<u8>, Option<Vec<u8>>);

/// A collection value in its serialized form: the count, then each element (and a map's
/// value) as an `int` length and bytes.
pub fn serialize<'a>(items: impl Iterator<Item = (&'a [u8], Option<&'a [u8]>)>) -> Vec<u8> {
    let mut out = vec![0; 4];
    let mut n = 0i32;
    for (a, b) in items {
        n = n.saturating_add(1);
        for part in std::iter::once(a).chain(b) {
            out.extend_from_slice(&(part.len() as i32).to_be_bytes());
            out.extend_from_slice(part);
        }
    }
    out[..4].copy_from_slice(&n.to_be_bytes());
    out
}

/// Appends one element to a collection value being built in its serialized form (count first).
/// With `first`, the element goes before those already there.
pub(crate) fn add_element(
    out: &mut Vec<u8>,
    ty: &CqlType,
    element: &[u8],
    value: &[u8],
    first: bool,
) {
    let parts: &[&[u8]] = match ty {
        CqlType::List(_) => &[value],
        CqlType::Set(_) => &[element],
        _ => &[element, value],
    };
    let mut bytes = Vec::new();
    for p in parts {
        bytes.extend_from_slice(&(p.len() as i32).to_be_bytes());
        bytes.extend_from_slice(p);
    }
    if first {
        out.splice(4..4, bytes);
    } else {
        out.extend_from_slice(&bytes);
    }
    if let Some(count) = out.first_chunk_mut::<4>() {
        *count = i32::from_be_bytes(*count).saturating_add(1).to_be_bytes();
    }
}
