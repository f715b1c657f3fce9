//! What the keyspaces are: definitions, the storage-conf.xml reader, and the catalog persisted
//! in the data directory. Consulted by every layer, owned by none.

pub(crate) mod catalog;
pub mod definition;
pub mod index;

pub use definition::{
    default_keyspaces, validate_identifier, ColumnFamilyDef, ColumnType, KeysCached, KeyspaceDef,
    MAX_BLOCK_SIZE_KB,
};
pub use index::{entry_value, IndexDef, IndexOf};
