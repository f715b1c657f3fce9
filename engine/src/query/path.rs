//! Where in a column family a request points: Thrift's `ColumnPath` and `ColumnParent`.

/// A column family, optionally a super column in it, optionally a column (or sub-column).
///
/// ```
/// use supercolumn::ColumnPath;
/// let city = ColumnPath::new("Super1").super_column("homeAddress").column("city");
/// let row = ColumnPath::new("Standard1");
/// # let _ = (city, row);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ColumnPath {
    /// The column family.
    pub column_family: String,
    /// The super column (Super CFs only).
    pub super_column: Option<Vec<u8>>,
    /// The column, or the sub-column of `super_column`.
    pub column: Option<Vec<u8>>,
}

impl ColumnPath {
    /// The whole row of `column_family` (as a path to `remove`).
    pub fn new(column_family: impl Into<String>) -> Self {
        ColumnPath {
            column_family: column_family.into(),
            super_column: None,
            column: None,
        }
    }

    /// Names a super column.
    pub fn super_column(mut self, name: impl AsRef<[u8]>) -> Self {
        self.super_column = Some(name.as_ref().to_vec());
        self
    }

    /// Names a column (or sub-column).
    pub fn column(mut self, name: impl AsRef<[u8]>) -> Self {
        self.column = Some(name.as_ref().to_vec());
        self
    }

    /// The parent of this path's column: the CF, and the super column if any.
    pub fn parent(&self) -> ColumnParent {
        ColumnParent {
            column_family: self.column_family.clone(),
            super_column: self.super_column.clone(),
        }
    }
}

/// The container whose children a read returns: a CF's row, or one super column in it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ColumnParent {
    /// The column family.
    pub column_family: String,
    /// The super column whose sub-columns are read (Super CFs only).
    pub super_column: Option<Vec<u8>>,
}

impl ColumnParent {
    /// The columns (or super columns) of a row of `column_family`.
    pub fn new(column_family: impl Into<String>) -> Self {
        ColumnParent {
            column_family: column_family.into(),
            super_column: None,
        }
    }

    /// The sub-columns of one super column.
    pub fn super_column(mut self, name: impl AsRef<[u8]>) -> Self {
        self.super_column = Some(name.as_ref().to_vec());
        self
    }
}

/// A column path that borrows its parts: what a write needs to name its column without
/// allocating (a wide-row load names thousands of columns per batch).
///
/// ```
/// use supercolumn::ColumnPathRef;
/// let name = 42u64.to_be_bytes();
/// let cell = ColumnPathRef::new("Wide1").column(&name);
/// let city = ColumnPathRef::new("Super1").super_column("homeAddress").column("city");
/// # let _ = (cell, city);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ColumnPathRef<'a> {
    /// The column family.
    pub column_family: &'a str,
    /// The super column (Super CFs only).
    pub super_column: Option<&'a [u8]>,
    /// The column, or the sub-column of `super_column`.
    pub column: Option<&'a [u8]>,
}

impl<'a> ColumnPathRef<'a> {
    /// The whole row of `column_family`.
    #[inline]
    pub fn new(column_family: &'a str) -> Self {
        ColumnPathRef {
            column_family,
            super_column: None,
            column: None,
        }
    }

    /// Names a super column.
    pub fn super_column<N: AsRef<[u8]> + ?Sized>(mut self, name: &'a N) -> Self {
        self.super_column = Some(name.as_ref());
        self
    }

    /// Names a column (or sub-column).
    #[inline]
    pub fn column<N: AsRef<[u8]> + ?Sized>(mut self, name: &'a N) -> Self {
        self.column = Some(name.as_ref());
        self
    }

    /// An owned copy.
    pub fn to_owned_path(self) -> ColumnPath {
        ColumnPath {
            column_family: self.column_family.to_string(),
            super_column: self.super_column.map(<[u8]>::to_vec),
            column: self.column.map(<[u8]>::to_vec),
        }
    }
}

impl<'a> From<&'a ColumnPath> for ColumnPathRef<'a> {
    fn from(p: &'a ColumnPath) -> Self {
        ColumnPathRef {
            column_family: &p.column_family,
            super_column: p.super_column.as_deref(),
            column: p.column.as_deref(),
        }
    }
}

/// Anything that names a column path: a [`ColumnPath`] (owned or borrowed) or a
/// [`ColumnPathRef`]. Writes take it so that a caller holding borrowed names copies nothing.
pub trait AsColumnPath {
    /// The path, borrowed.
    fn as_column_path(&self) -> ColumnPathRef<'_>;
}

impl AsColumnPath for ColumnPath {
    fn as_column_path(&self) -> ColumnPathRef<'_> {
        self.into()
    }
}

impl AsColumnPath for &ColumnPath {
    fn as_column_path(&self) -> ColumnPathRef<'_> {
        (*self).into()
    }
}

impl AsColumnPath for ColumnPathRef<'_> {
    fn as_column_path(&self) -> ColumnPathRef<'_> {
        *self
    }
}
