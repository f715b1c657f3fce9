//! A composite cell name built together with its sort key, component by component, by the
//! engine's own encoders: what [`BatchMutation::insert_sorted`](super::BatchMutation) takes, so
//! a caller that writes many names sharing a prefix (CQL's planned inserts: one clustering
//! prefix, one component per column) encodes the prefix once, and the engine can take the
//! sort key as given without checking it again. It owns only the building; the batch and the
//! validator decide whether to trust it (they do when it was built for the very comparator the
//! column family has now).

use std::sync::Arc;

use crate::model::comparator::{Comparator, CompositeType, MarshalError};

/// A composite name and its sort key, kept in step (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct SortedName {
    comparator: Option<Arc<dyn Comparator>>,
    name: Vec<u8>,
    sort_key: Vec<u8>,
    /// Components pushed, and where the last one's bytes sit in `name` (a collection's
    /// component type depends on the one before it).
    components: usize,
    last: (usize, usize),
    scratch: Vec<u8>,
}

/// A point to go back to with [`SortedName::truncate`]: a prefix of the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortedMark {
    name: usize,
    sort_key: usize,
    components: usize,
    last: (usize, usize),
}

impl SortedName {
    /// An empty name for a column family whose comparator is `comparator` (a `CompositeType`:
    /// CQL tables' names); its room is kept from any earlier use.
    pub fn start(&mut self, comparator: &Arc<dyn Comparator>) -> Result<(), MarshalError> {
        if comparator.as_composite().is_none() {
            return Err(MarshalError::new(format!(
                "a sorted name is built for a composite comparator, not {}",
                comparator.name()
            )));
        }
        if !self
            .comparator
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(c, comparator))
        {
            self.comparator = Some(comparator.clone());
        }
        self.name.clear();
        self.sort_key.clear();
        self.components = 0;
        self.last = (0, 0);
        Ok(())
    }

    /// Appends a component (end of component 0) after validating it with its type.
    pub fn push(&mut self, value: &[u8]) -> Result<&mut Self, MarshalError> {
        let composite = self
            .comparator
            .as_deref()
            .and_then(|c| c.as_composite())
            .ok_or_else(|| MarshalError::new("a sorted name must be started first"))?;
        let i = self.components;
        let previous = (i > 0).then(|| &self.name[self.last.0..self.last.1]);
        let Some(t) = composite.component_type(i, previous) else {
            return Err(MarshalError::new(format!(
                "more components than a composite of {}",
                composite.components().len()
            )));
        };
        let len = u16::try_from(value.len()).map_err(|_| {
            MarshalError::new(format!(
                "component {i} of {} bytes does not fit a composite name",
                value.len()
            ))
        })?;
        if !value.is_empty() {
            t.validate(value)
                .map_err(|e| MarshalError::new(format!("component {i}: {e}")))?;
        }
        CompositeType::push_component_sort_key(
            &**t,
            value,
            0,
            &mut self.sort_key,
            &mut self.scratch,
        );
        self.name.extend_from_slice(&len.to_be_bytes());
        let at = self.name.len();
        self.name.extend_from_slice(value);
        self.name.push(0);
        self.last = (at, at + value.len());
        self.components += 1;
        Ok(self)
    }

    /// Where the name ends now.
    pub fn mark(&self) -> SortedMark {
        SortedMark {
            name: self.name.len(),
            sort_key: self.sort_key.len(),
            components: self.components,
            last: self.last,
        }
    }

    /// Cuts the name back to `mark`, taken from this name since it was started.
    pub fn truncate(&mut self, mark: SortedMark) {
        self.name.truncate(mark.name);
        self.sort_key.truncate(mark.sort_key);
        self.components = mark.components;
        self.last = mark.last;
    }

    /// The composite name.
    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// Its sort key.
    pub fn sort_key(&self) -> &[u8] {
        &self.sort_key
    }

    /// The comparator it was built for.
    pub fn comparator(&self) -> Option<&Arc<dyn Comparator>> {
        self.comparator.as_ref()
    }

    /// Bytes of room it holds.
    pub fn capacity(&self) -> usize {
        self.name.capacity() + self.sort_key.capacity() + self.scratch.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::comparator::{Int32Type, ReversedType, Utf8Type};

    fn comparator() -> Arc<dyn Comparator> {
        Arc::new(CompositeType::new(vec![
            Arc::new(ReversedType(Arc::new(Int32Type))),
            Arc::new(Utf8Type),
        ]))
    }

    #[test]
    fn a_sorted_name_is_the_composite_and_its_sort_key() {
        let c = comparator();
        let mut s = SortedName::default();
        s.start(&c).unwrap();
        s.push(&7i32.to_be_bytes()).unwrap();
        let prefix = s.mark();
        for column in ["", "v", "a\0b"] {
            s.truncate(prefix);
            s.push(column.as_bytes()).unwrap();
            let name = CompositeType::build(&[&7i32.to_be_bytes(), column.as_bytes()], 0);
            assert_eq!(s.name(), name.as_slice());
            let mut key = Vec::new();
            c.encode_sort_key(&name, &mut key);
            assert_eq!(s.sort_key(), key.as_slice(), "{column:?}");
        }
        // Invalid components, and one too many, are refused.
        s.start(&c).unwrap();
        assert!(s.push(&[1, 2, 3]).is_err());
        s.push(&1i32.to_be_bytes()).unwrap();
        assert!(s.push(&[0xff]).is_err());
        s.push(b"x").unwrap();
        assert!(s.push(b"y").is_err());
        assert!(s
            .start(&(Arc::new(Utf8Type) as Arc<dyn Comparator>))
            .is_err());
    }
}
