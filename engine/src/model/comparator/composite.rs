//! `CompositeType(T1, T2, …)`: the comparator of CQL3 tables (SPEC §9), built from other
//! comparators.
//!
//! A composite name is a sequence of components, each `length:u16 BE | bytes | end-of-component
//! byte` as Cassandra encodes it; the EOC is 0 in stored names and ±1 in slice bounds. Its sort
//! key is each component's own sort key, escaped, followed by `00` and the EOC mapped to 1, 2, 3
//! (for −1, 0, +1); see `model::sort_key`. This file must not know about CQL statements.
//!
//! A *static* name (a CQL static column's cell) starts with [`STATIC_MARKER`], `00 00 7F`: an
//! empty component whose end-of-component byte no stored name or bound has. Its components
//! follow as in any name (empty clustering components, then the column), so each keeps its
//! position; the marker is not a component. A static name sorts before every other name of the
//! partition (its sort key starts `00 00`, below any component's), as Cassandra keeps a
//! partition's static row before its rows.
//!
//! Long because a composite name's framing, its static marker, its sort key and its checked
//! and text forms are one format, each a walk over the same components.

use std::cmp::Ordering;
use std::sync::Arc;

use super::{Comparator, MarshalError};
use crate::model::sort_key::{escape_into, escaped_len, unescape_into};

/// What a static name starts with (see the module's doc).
pub const STATIC_MARKER: [u8; 3] = [0, 0, 0x7f];

/// A composite comparator over component types.
#[derive(Debug, Clone)]
pub struct CompositeType {
    components: Vec<Arc<dyn Comparator>>,
    /// Whether a component's type depends on the one before it (`ColumnToCollectionType`).
    dependent: bool,
}

/// One component of a composite name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component<'a> {
    /// The component's bytes.
    pub bytes: &'a [u8],
    /// End-of-component: 0 in stored names, −1 / +1 in slice bounds.
    pub eoc: i8,
}

impl CompositeType {
    /// A composite of the given component types (in order).
    pub fn new(components: Vec<Arc<dyn Comparator>>) -> Self {
        let dependent = components.iter().any(|c| c.depends_on_previous());
        CompositeType {
            components,
            dependent,
        }
    }

    /// The type of a component declared as `t`, after a component holding `previous`.
    fn component<'a>(
        &self,
        t: &'a Arc<dyn Comparator>,
        previous: Option<&[u8]>,
    ) -> std::borrow::Cow<'a, Arc<dyn Comparator>> {
        if self.dependent {
            if let Some(c) = previous.and_then(|p| t.after(p)) {
                return std::borrow::Cow::Owned(c);
            }
        }
        std::borrow::Cow::Borrowed(t)
    }

    /// The type of component `i` of a name whose component before it holds `previous` (a
    /// collection's element type depends on its column); `None` past the last component.
    pub fn component_type(
        &self,
        i: usize,
        previous: Option<&[u8]>,
    ) -> Option<std::borrow::Cow<'_, Arc<dyn Comparator>>> {
        self.components.get(i).map(|t| self.component(t, previous))
    }

    /// Appends one component's part of a composite name's sort key (what
    /// [`encode_sort_key`](Comparator::encode_sort_key) writes for it): `value`'s sort key
    /// under its type `t`, escaped, then its end of component. `scratch` is room to encode in.
    #[inline]
    pub fn push_component_sort_key(
        t: &dyn Comparator,
        value: &[u8],
        eoc: i8,
        out: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
    ) {
        if t.sort_key_is_name() {
            escape_into(value, out);
        } else {
            scratch.clear();
            t.encode_sort_key(value, scratch);
            escape_into(scratch, out);
        }
        out.extend_from_slice(&[0, eoc_code(eoc)]);
    }

    /// The component types.
    pub fn components(&self) -> &[Arc<dyn Comparator>] {
        &self.components
    }

    /// Builds a composite name from component bytes (all EOC 0 except `last_eoc` on the last).
    /// Components longer than 65,535 bytes do not fit the format; [`Comparator::parse_text`]
    /// refuses them, and callers building names from bytes must check with [`Self::fits`].
    pub fn build(parts: &[&[u8]], last_eoc: i8) -> Vec<u8> {
        let mut out = Vec::new();
        Self::build_into(parts, last_eoc, &mut out);
        out
    }

    /// [`build`](Self::build), appending to `out`.
    #[inline]
    pub fn build_into(parts: &[&[u8]], last_eoc: i8, out: &mut Vec<u8>) {
        for (i, p) in parts.iter().enumerate() {
            let len = u16::try_from(p.len()).unwrap_or(u16::MAX);
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(&p[..usize::from(len)]);
            out.push(if i + 1 == parts.len() {
                last_eoc as u8
            } else {
                0
            });
        }
    }

    /// A static name: [`STATIC_MARKER`], then the components as [`build`](Self::build) writes
    /// them (`last_eoc` ±1: a bound around a static column's elements).
    pub fn build_static(parts: &[&[u8]], last_eoc: i8) -> Vec<u8> {
        let mut out = STATIC_MARKER.to_vec();
        Self::build_into(parts, last_eoc, &mut out);
        out
    }

    /// Whether `name` is a static name (see the module's doc).
    #[inline]
    pub fn is_static(name: &[u8]) -> bool {
        name.starts_with(&STATIC_MARKER)
    }

    /// Whether every component fits the 16-bit length of the format.
    #[inline]
    pub fn fits(parts: &[&[u8]]) -> bool {
        parts.iter().all(|p| p.len() <= usize::from(u16::MAX))
    }

    /// Splits a composite name into its components, checking the framing (not the types).
    pub fn split(name: &[u8]) -> Result<Vec<Component<'_>>, MarshalError> {
        Self::components_of(name).collect()
    }

    /// The components of a composite name one by one, without allocating: what
    /// [`split`](Self::split) collects (a static name's marker is not one of them, but counts
    /// in [`Components::offset`]). After a framing error it yields nothing more.
    pub fn components_of(name: &[u8]) -> Components<'_> {
        match name.strip_prefix(&STATIC_MARKER) {
            Some(rest) => Components {
                rest,
                offset: STATIC_MARKER.len(),
                index: 0,
            },
            None => Components {
                rest: name,
                offset: 0,
                index: 0,
            },
        }
    }
}

/// The components of a composite name, in order (see [`CompositeType::components_of`]).
#[derive(Debug, Clone)]
pub struct Components<'a> {
    rest: &'a [u8],
    /// Bytes of the name consumed so far.
    offset: usize,
    index: usize,
}

impl Components<'_> {
    /// How many bytes of the name the components yielded so far take.
    pub fn offset(&self) -> usize {
        self.offset
    }
}

impl<'a> Iterator for Components<'a> {
    type Item = Result<Component<'a>, MarshalError>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest;
        if rest.is_empty() {
            return None;
        }
        let fail = |this: &mut Self, e: MarshalError| {
            this.rest = &[];
            Some(Err(e))
        };
        if rest.len() < 2 {
            return fail(
                self,
                MarshalError::new("composite component cut short in its length"),
            );
        }
        let len = usize::from(u16::from_be_bytes([rest[0], rest[1]]));
        if rest.len() < 2 + len + 1 {
            let e = format!(
                "composite component {} declares {len} bytes but the name ends first",
                self.index
            );
            return fail(self, MarshalError::new(e));
        }
        let eoc = rest[2 + len] as i8;
        if !(-1..=1).contains(&eoc) {
            let e = format!(
                "composite component {} has end-of-component byte {eoc}",
                self.index
            );
            return fail(self, MarshalError::new(e));
        }
        self.rest = &rest[3 + len..];
        self.offset += 3 + len;
        self.index += 1;
        Some(Ok(Component {
            bytes: &rest[2..2 + len],
            eoc,
        }))
    }
}

/// `key` after `escape(part)` (see `sort_key::escape_into`) at its front; `None` when it does
/// not start with it. Compared run by run, without building the escaped bytes.
fn strip_escaped<'k>(part: &[u8], mut key: &'k [u8]) -> Option<&'k [u8]> {
    let mut runs = part.split(|&b| b == 0);
    if let Some(first) = runs.next() {
        key = key.strip_prefix(first)?;
    }
    for run in runs {
        key = key.strip_prefix(&[0, 0xff])?.strip_prefix(run)?;
    }
    Some(key)
}

fn eoc_code(eoc: i8) -> u8 {
    (eoc.clamp(-1, 1) + 2) as u8
}

/// Escapes `:` as `\:` in a component's text form (Cassandra's `CompositeType.escape`).
fn escape_text(s: &str) -> String {
    let mut out = s.replace(':', "\\:");
    if out.ends_with('\\') || out.ends_with('!') {
        out.push('!');
    }
    out
}

impl Comparator for CompositeType {
    fn as_composite(&self) -> Option<&CompositeType> {
        Some(self)
    }

    fn composite_len(&self) -> Option<usize> {
        Some(self.components.len())
    }

    fn value_text(&self, name: &[u8], value: &[u8]) -> Option<String> {
        if !self.dependent {
            return None;
        }
        let parts = Self::split(name).ok()?;
        let last = parts.len().checked_sub(1).filter(|&i| i > 0)?;
        let t = self.components.get(last)?;
        let vt = t.value_type_after(parts[last - 1].bytes)?;
        Some(super::collection::CqlLiteral::text(vt.as_ref(), value))
    }

    fn name(&self) -> String {
        let names: Vec<String> = self.components.iter().map(|c| c.name()).collect();
        format!("CompositeType({})", names.join(","))
    }

    fn validate_sorted(
        &self,
        name: &[u8],
        sort_key: &[u8],
        scratch: &mut Vec<u8>,
    ) -> Result<(), MarshalError> {
        // One walk: each component's framing, its type, and its part of the sort key (as
        // `encode_sort_key` writes it), so a planned write costs no more than encoding did.
        let wrong_key = || MarshalError::new("the sort key given is not the name's");
        let mut key = sort_key;
        if Self::is_static(name) {
            key = key.strip_prefix(&[0, 0]).ok_or_else(wrong_key)?;
        }
        let mut previous: Option<&[u8]> = None;
        let mut ended = false;
        let mut components = Self::components_of(name);
        for (i, t) in self.components.iter().enumerate() {
            let Some(p) = components.next() else { break };
            let p = p?;
            if ended {
                return Err(MarshalError::new(format!(
                    "component {} has a non-zero end-of-component but is not the last",
                    i - 1
                )));
            }
            ended = p.eoc != 0;
            let t = self.component(t, previous);
            if !p.bytes.is_empty() {
                t.validate(p.bytes)
                    .map_err(|e| MarshalError::new(format!("component {i}: {e}")))?;
            }
            let part = if t.sort_key_is_name() {
                p.bytes
            } else {
                scratch.clear();
                t.encode_sort_key(p.bytes, scratch);
                scratch.as_slice()
            };
            key = strip_escaped(part, key).ok_or_else(wrong_key)?;
            key = key
                .strip_prefix(&[0, eoc_code(p.eoc)])
                .ok_or_else(wrong_key)?;
            previous = Some(p.bytes);
        }
        if let Some(extra) = components.next() {
            extra?;
            return Err(MarshalError::new(format!(
                "more components than a composite of {}",
                self.components.len()
            )));
        }
        if key.is_empty() {
            Ok(())
        } else {
            Err(wrong_key())
        }
    }

    fn validate(&self, name: &[u8]) -> Result<(), MarshalError> {
        // Framing first, then types: two walks of the name, no allocation.
        let n = Self::components_of(name).try_fold(0usize, |n, p| p.map(|_| n + 1))?;
        if n > self.components.len() {
            return Err(MarshalError::new(format!(
                "{n} components for a composite of {}",
                self.components.len()
            )));
        }
        let mut previous: Option<&[u8]> = None;
        for (i, (p, t)) in Self::components_of(name)
            .flatten()
            .zip(&self.components)
            .enumerate()
        {
            let t = self.component(t, previous);
            if p.eoc != 0 && i + 1 != n {
                return Err(MarshalError::new(format!(
                    "component {i} has a non-zero end-of-component but is not the last"
                )));
            }
            if !p.bytes.is_empty() {
                t.validate(p.bytes)
                    .map_err(|e| MarshalError::new(format!("component {i}: {e}")))?;
            }
            previous = Some(p.bytes);
        }
        Ok(())
    }

    fn encode_sort_key(&self, name: &[u8], out: &mut Vec<u8>) {
        if Self::components_of(name).any(|p| p.is_err()) {
            // Only valid names reach here; keep an invalid one at least deterministic.
            escape_into(name, out);
            return;
        }
        if Self::is_static(name) {
            out.extend_from_slice(&[0, 0]);
        }
        let mut scratch = Vec::new();
        let mut previous: Option<&[u8]> = None;
        for (p, t) in Self::components_of(name).flatten().zip(&self.components) {
            let t = self.component(t, previous);
            Self::push_component_sort_key(&**t, p.bytes, p.eoc, out, &mut scratch);
            previous = Some(p.bytes);
        }
    }

    fn decode_sort_key(&self, key: &[u8], out: &mut Vec<u8>) -> Result<(), MarshalError> {
        // Each component decodes straight into `out` behind a length placeholder: a name read
        // back per returned column allocates nothing else (a part holding no escaped `00` is
        // borrowed, not copied).
        let mut rest = key;
        if let Some(tail) = key.strip_prefix(&[0, 0]) {
            out.extend_from_slice(&STATIC_MARKER);
            rest = tail;
        }
        let mut i = 0;
        let mut previous = 0..0;
        let mut scratch = Vec::new();
        while !rest.is_empty() {
            let t = self.components.get(i).ok_or_else(|| {
                MarshalError::new("composite sort key has more components than its type")
            })?;
            let prev = (i > 0 && self.dependent).then(|| out[previous.clone()].to_vec());
            let t = self.component(t, prev.as_deref());
            let n = escaped_len(rest)
                .ok_or_else(|| MarshalError::new("composite sort key component unterminated"))?;
            let (part, term, tail) = (&rest[..n - 2], rest[n - 1], &rest[n..]);
            // A part with an escaped `00` (a number's zero bytes) is unescaped into one scratch
            // buffer for the whole name, not a fresh one per component.
            let escaped: &[u8] = if part.contains(&0) {
                scratch.clear();
                unescape_into(part, &mut scratch);
                &scratch
            } else {
                part
            };
            if !(1..=3).contains(&term) {
                return Err(MarshalError::new(format!(
                    "composite sort key has terminator {term}"
                )));
            }
            let at = out.len();
            out.extend_from_slice(&[0, 0]);
            t.decode_sort_key(escaped, out)?;
            let len = u16::try_from(out.len() - at - 2)
                .map_err(|_| MarshalError::new("composite component longer than 65535 bytes"))?;
            out[at..at + 2].copy_from_slice(&len.to_be_bytes());
            previous = at + 2..out.len();
            out.push((term as i8 - 2) as u8);
            rest = tail;
            i += 1;
        }
        Ok(())
    }

    fn to_text(&self, name: &[u8]) -> String {
        let Ok(parts) = Self::split(name) else {
            return super::builtin::to_hex(name);
        };
        // A static name shows as Cassandra 2's tools showed it, `static` before its components.
        let mut s = String::from(if Self::is_static(name) { "static:" } else { "" });
        for (i, (p, t)) in parts.iter().zip(&self.components).enumerate() {
            let t = self.component(t, i.checked_sub(1).map(|j| parts[j].bytes));
            if i > 0 {
                s.push(':');
            }
            s.push_str(&escape_text(&t.to_text(p.bytes)));
            match p.eoc {
                1 => s.push_str(":!"),
                -1 => s.push_str(":_"),
                _ => {}
            }
        }
        s
    }

    fn parse_text(&self, text: &str) -> Result<Vec<u8>, MarshalError> {
        // Split on ':' not preceded by '\'.
        let mut fields = Vec::new();
        let mut cur = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&':') => {
                    cur.push(':');
                    chars.next();
                }
                ':' => fields.push(std::mem::take(&mut cur)),
                _ => cur.push(c),
            }
        }
        fields.push(cur);
        // A bound ends in `:!` (+1) or `:_` (−1), the end-of-component of the component before
        // it, as `to_text` writes them (a component that is literally `!` is written `!!`).
        let last_eoc = match fields.last().map(String::as_str) {
            Some("!") if fields.len() > 1 => 1,
            Some("_") if fields.len() > 1 => -1,
            _ => 0,
        };
        if last_eoc != 0 {
            fields.pop();
        }
        if fields.len() > self.components.len() {
            return Err(MarshalError::new(format!(
                "'{text}' has {} components, the type has {}",
                fields.len(),
                self.components.len()
            )));
        }
        let mut parts = Vec::with_capacity(fields.len());
        for (f, t) in fields.iter().zip(&self.components) {
            let t = self.component(t, parts.last().map(Vec::as_slice));
            let f = f.strip_suffix('!').unwrap_or(f);
            parts.push(if f.is_empty() {
                Vec::new()
            } else {
                t.parse_text(f)?
            });
        }
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        if !Self::fits(&refs) {
            return Err(MarshalError::new(
                "a composite component is longer than 65535 bytes",
            ));
        }
        Ok(Self::build(&refs, last_eoc))
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let (Ok(pa), Ok(pb)) = (Self::split(a), Self::split(b)) else {
            return a.cmp(b);
        };
        // Static names first, as their sort keys put them.
        let statics = Self::is_static(b).cmp(&Self::is_static(a));
        if statics != Ordering::Equal {
            return statics;
        }
        for (i, ((x, y), t)) in pa.iter().zip(pb.iter()).zip(&self.components).enumerate() {
            // Reached only while every component before was equal.
            let t = self.component(t, i.checked_sub(1).map(|j| pa[j].bytes));
            let c = t.compare(x.bytes, y.bytes).then(x.eoc.cmp(&y.eoc));
            if c != Ordering::Equal {
                return c;
            }
        }
        pa.len().cmp(&pb.len())
    }
}

#[cfg(test)]
#[path = "composite_tests.rs"]
mod tests;
