//! Which kind of value a CQL type is, as the storage sees it: a collection (stored as cells,
//! or frozen in one), a value one cell holds whole, a tuple of such values, a type stored as
//! many cells; and the freezing of what a frozen collection holds. Only the classification;
//! encoding and ordering are `mod.rs`'s.

use super::CqlType;

impl CqlType {
    /// Whether this is a collection whose elements the engine stores, as cells or frozen in
    /// one cell: a set's elements and a map's keys ordered values, a list's elements and a
    /// map's values any value a cell holds (frozen collections, tuples and user types, as deep
    /// as they nest).
    pub fn is_collection_of_scalars(&self) -> bool {
        let ordered = |t: &CqlType| t.comparator().is_some();
        // A list's elements and a map's values are never ordered: a type without an order
        // (`duration`) may be one.
        match self {
            CqlType::List(e) => e.is_cell_value(),
            CqlType::Set(e) => ordered(e),
            CqlType::Map(k, v) => ordered(k) && v.is_cell_value(),
            _ => false,
        }
    }

    /// Whether one cell holds a value of this type whole: a scalar, a frozen collection, tuple
    /// or user type, a vector (each nested as deep as its parts allow).
    pub fn is_cell_value(&self) -> bool {
        self.comparator().is_some()
            || self.is_frozen_collection()
            || matches!(
                self,
                CqlType::Decimal | CqlType::Duration | CqlType::Vector(..)
            )
            || self.is_tuple_of_values()
            || self.is_frozen_udt()
    }

    /// This type with every collection inside it frozen, as a frozen collection's elements
    /// are (the outermost collection itself left as it is).
    pub fn frozen_within(self) -> CqlType {
        let freeze = |t: Box<CqlType>| -> Box<CqlType> {
            Box::new(match *t {
                t if t.is_collection() => CqlType::Frozen(Box::new(t.frozen_within())),
                CqlType::Frozen(inner) => CqlType::Frozen(Box::new(inner.frozen_within())),
                other => other,
            })
        };
        match self {
            CqlType::List(e) => CqlType::List(freeze(e)),
            CqlType::Set(e) => CqlType::Set(freeze(e)),
            CqlType::Map(k, v) => CqlType::Map(freeze(k), freeze(v)),
            other => other,
        }
    }

    /// Whether this is a tuple whose elements are values a cell can hold: scalars (ordered or
    /// not) and frozen collections of scalars.
    pub fn is_tuple_of_values(&self) -> bool {
        let CqlType::Tuple(ts) = self else {
            return false;
        };
        !ts.is_empty()
            && ts.iter().all(|t| {
                t.comparator().is_some()
                    || t.is_frozen_collection()
                    || t.is_frozen_udt()
                    || matches!(t, CqlType::Decimal | CqlType::Duration)
            })
    }

    /// Whether a duration is this type or lies anywhere inside it.
    pub fn references_duration(&self) -> bool {
        match self {
            CqlType::Duration => true,
            CqlType::Frozen(t) | CqlType::List(t) | CqlType::Set(t) | CqlType::Vector(t, _) => {
                t.references_duration()
            }
            CqlType::Map(k, v) => k.references_duration() || v.references_duration(),
            CqlType::Tuple(ts) => ts.iter().any(CqlType::references_duration),
            CqlType::Udt(u) => u.fields.iter().any(|(_, t)| t.references_duration()),
            _ => false,
        }
    }

    /// Whether this is `frozen<…>` of a collection whose elements are cell values (frozen
    /// collections among them, as deep as they go).
    pub fn is_frozen_collection(&self) -> bool {
        matches!(self, CqlType::Frozen(inner)
            if inner.is_collection() && inner.is_collection_of_scalars())
    }

    /// Whether this is a (non-frozen) collection.
    pub fn is_collection(&self) -> bool {
        matches!(self, CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..))
    }

    /// Whether a value of this type is stored as many cells, one per element or field: a
    /// collection or a user type that is not frozen.
    pub fn is_multi_cell(&self) -> bool {
        self.is_collection() || matches!(self, CqlType::Udt(_))
    }
}
