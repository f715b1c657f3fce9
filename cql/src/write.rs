//! The cells of one `INSERT`, `UPDATE` or `DELETE`, added to a [`BatchMutation`]: one method
//! per statement kind, each checking its statement against the table first. Running the
//! batch is `execute.rs`'s; naming the rows a `WHERE` clause covers, `write_rows.rs`'s; a
//! collection's cells, `collection.rs`'s.

use super::ast::{Assignment, Relation, Subscript, TableName, Term, Using};
use super::collection::{CollectionOp, Target};
use super::counter_write::refuse_using;
use super::error::CqlError;
use super::range_delete::names_a_range;
use super::session::Session;
use super::table::{ColumnDef, Kind, Table};
use super::types::CqlType;
use super::write_rows::{names_every_row_whole, restricts_clustering, Naming};
use supercolumn::query::{ColumnPath, ColumnPathRef};
use supercolumn::{BatchMutation, WriteOptions};

/// The table a write names, its own `USING` and its batch's.
pub(super) struct Written<'s> {
    pub table: &'s TableName,
    pub using: &'s Using,
    pub batch_using: &'s Using,
}

/// One CQL row: its table, partition key and clustering values.
struct RowAt<'a> {
    t: &'a Table,
    key: &'a [u8],
    ck: &'a [&'a [u8]],
}

impl Session<'_> {
    /// An `INSERT`'s cells: the row marker, then each column given (a null removes it).
    pub(super) fn add_insert(
        &self,
        w: &Written<'_>,
        columns: &[String],
        values: &[Term],
        batch: &mut BatchMutation,
    ) -> Result<(), CqlError> {
        let t = self.table(w.table)?;
        if t.is_counter() {
            return Err(CqlError::invalid(
                "INSERT statements are not allowed on counter tables, use UPDATE instead",
            ));
        }
        if columns.len() != values.len() {
            return Err(CqlError::invalid(format!(
                "{} columns and {} values",
                columns.len(),
                values.len()
            )));
        }
        let mut given: Vec<Option<Vec<u8>>> = vec![None; t.columns.len()];
        let mut named = vec![false; t.columns.len()];
        for (c, v) in columns.iter().zip(values) {
            let (i, def) = t.column(c)?;
            if named[i] {
                return Err(CqlError::invalid("The column names contains duplicates"));
            }
            named[i] = true;
            given[i] = self.value(&def.ty, v, c)?;
        }
        let key = key_from(&t, &given, &named)?;
        // Static columns alone may be written without a clustering key: no row is written
        // then, only the partition's statics (as in Cassandra).
        let only_statics = t.has_statics()
            && t.clustering.iter().all(|&i| !named[i])
            && (0..t.columns.len())
                .filter(|&i| named[i] && t.columns[i].kind == Kind::Regular)
                .all(|i| t.columns[i].is_static)
            && columns.iter().any(|c| t.is_static(c));
        let clustering = if only_statics {
            Vec::new()
        } else {
            clustering_from(&t, &given, &named)?
        };
        let write = self.write_options(w.using, w.batch_using, &t)?;
        let write = self.stamped(write, &t);
        let cf = t.name.as_str();
        let ck: Vec<&[u8]> = clustering.iter().map(Vec::as_slice).collect();
        if !only_statics {
            let marker = t.cell_name(&ck, "")?;
            batch.insert(&key, ColumnPathRef::new(cf).column(&marker), b"", write);
        }
        for (i, def) in t.columns.iter().enumerate() {
            if def.kind != Kind::Regular || !named[i] {
                continue;
            }
            if def.ty.is_multi_cell() {
                let at = Target::new(&t, &key, &ck, def);
                let op = CollectionOp::Replace(given[i].clone());
                self.write_collection(batch, &at, &op, write)?;
                continue;
            }
            let name = t.cell_name(&ck, &def.name)?;
            match &given[i] {
                Some(v) => batch.insert(&key, ColumnPathRef::new(cf).column(&name), v, write),
                None => batch.remove(&key, ColumnPathRef::new(cf).column(&name), write.timestamp),
            };
        }
        Ok(())
    }

    /// An `UPDATE`'s cells: each assignment, in each row its `WHERE` names.
    pub(super) fn add_update(
        &self,
        w: &Written<'_>,
        assignments: &[Assignment],
        relations: &[Relation],
        batch: &mut BatchMutation,
    ) -> Result<(), CqlError> {
        let t = self.table(w.table)?;
        if t.is_counter() {
            refuse_using(w.using, w.batch_using)?;
            let naming = if statics_only(&t, assignments.iter().map(Assignment::column)) {
                refuse_clustering(&t, relations, "UPDATE")?;
                Naming::Partitions
            } else {
                Naming::Rows
            };
            return self.add_counter_update(&t, assignments, relations, naming);
        }
        let write = self.write_options(w.using, w.batch_using, &t)?;
        let write = self.stamped(write, &t);
        let mut sets = Vec::new();
        let mut ops = Vec::new();
        for a in assignments {
            let c = a.column();
            let (_, def) = t.column(c)?;
            if def.kind != Kind::Regular {
                return Err(CqlError::invalid(format!(
                    "PRIMARY KEY part {c} found in SET part"
                )));
            }
            let kind = match a {
                Assignment::Set(..) => None,
                Assignment::Add(..) => Some('+'),
                Assignment::Prepend(..) => Some('<'),
                Assignment::Discard(..) => Some('-'),
                Assignment::SetElement(_, k, v) => {
                    ops.push((def, self.element_op(def, k, Some(v))?));
                    continue;
                }
                Assignment::SetField(_, f, v) => {
                    ops.push((def, self.field_op(def, f, v)?));
                    continue;
                }
            };
            let term = a.terms()[0];
            if def.ty.is_multi_cell() {
                ops.push((def, self.collection_op(def, kind, term)?));
            } else if let Some(kind) = kind {
                return Err(not_an_operation_on(c, &def.ty, kind, term));
            } else {
                sets.push((def.name.clone(), self.value(&def.ty, term, c)?));
            }
        }
        let naming = if statics_only(&t, assignments.iter().map(Assignment::column)) {
            refuse_clustering(&t, relations, "UPDATE")?;
            Naming::Partitions
        } else {
            Naming::Rows
        };
        for (key, ck) in self.rows_named(&t, relations, naming, "UPDATE")? {
            let ck: Vec<&[u8]> = ck.iter().map(Vec::as_slice).collect();
            for (def, op) in &ops {
                let at = Target::new(&t, &key, &ck, def);
                self.write_collection(batch, &at, op, write)?;
            }
            for (col, v) in &sets {
                let name = t.cell_name(&ck, col)?;
                let path = ColumnPathRef::new(&t.name).column(&name);
                match v {
                    Some(v) => batch.insert(&key, path, v, write),
                    None => batch.remove(&key, path, write.timestamp),
                };
            }
        }
        Ok(())
    }

    /// A `DELETE`'s tombstones: of whole partitions, of rows (a range tombstone over their
    /// clustering prefix), or of the columns and elements it names.
    pub(super) fn add_delete(
        &self,
        w: &Written<'_>,
        columns: &[(String, Option<Subscript>)],
        relations: &[Relation],
        batch: &mut BatchMutation,
    ) -> Result<(), CqlError> {
        if w.using.ttl.is_some() {
            return Err(CqlError::invalid("a DELETE cannot have a TTL"));
        }
        let t = self.table(w.table)?;
        let write = self.write_options(w.using, w.batch_using, &t)?;
        // A deletion does not expire (the table's default TTL is for what is written).
        let mut write = WriteOptions {
            ttl: None,
            ..self.stamped(write, &t)
        };
        if t.is_counter() {
            // A deleted counter stays deleted: its tombstone outranks every later total (the
            // rule of Cassandra's counter tombstones).
            refuse_using(w.using, w.batch_using)?;
            write.timestamp = Some(i64::MAX);
        }
        let ts = write.timestamp;
        let mut elements = Vec::new();
        for (c, e) in columns {
            let (_, def) = t.column(c)?;
            match e {
                Some(Subscript::Element(e)) => elements.push((def, self.element_op(def, e, None)?)),
                Some(Subscript::Field(f)) => elements.push((def, self.field_deletion(def, f)?)),
                None => {}
            }
        }
        let whole_partition = columns.is_empty() && !restricts_clustering(&t, relations);
        // Whole rows may be named by a clustering prefix: every row under it (a range
        // of rows, Cassandra's range tombstone over the prefix), or by a range of
        // clustering values. Columns are deleted from rows named whole.
        let statics = statics_only(&t, columns.iter().map(|(c, _)| c.as_str()));
        if statics {
            refuse_clustering(&t, relations, "DELETE")?;
        } else if !columns.is_empty() && !names_every_row_whole(&t, relations) {
            return Err(CqlError::invalid(
                "Range deletions are not supported for specific columns",
            ));
        }
        if names_a_range(&t, relations) {
            return self.add_range_deletions(&t, relations, ts, batch);
        }
        let naming = match (whole_partition, columns.is_empty()) {
            (true, _) => Naming::Partitions,
            (false, true) => Naming::Prefix,
            (false, false) if statics => Naming::Partitions,
            (false, false) => Naming::Rows,
        };
        for (key, ck) in self.rows_named(&t, relations, naming, "DELETE")? {
            if whole_partition {
                batch.remove(&key, ColumnPath::new(&t.name), ts);
                continue;
            }
            let ck: Vec<&[u8]> = ck.iter().map(Vec::as_slice).collect();
            if columns.is_empty() {
                // A whole CQL row: every cell under its clustering values, as
                // Cassandra's range tombstone over the row (a partition without
                // clustering columns is deleted whole, above).
                batch.remove_prefix(
                    &key,
                    ColumnPath::new(&t.name).column(t.clustering_prefix(&ck)?),
                    ts,
                );
            } else {
                let row = RowAt {
                    t: &t,
                    key: &key,
                    ck: &ck,
                };
                self.delete_columns(batch, &row, columns, &elements, write)?;
            }
        }
        Ok(())
    }

    /// The tombstones of the columns and collection elements a `DELETE` names in one row.
    fn delete_columns(
        &self,
        batch: &mut BatchMutation,
        row: &RowAt<'_>,
        columns: &[(String, Option<Subscript>)],
        elements: &[(&ColumnDef, CollectionOp)],
        write: WriteOptions,
    ) -> Result<(), CqlError> {
        let mut names = Vec::new();
        let mut lists_done: Vec<&str> = Vec::new();
        for (def, op) in elements {
            let at = Target::new(row.t, row.key, row.ck, def);
            if !matches!(def.ty, CqlType::List(_)) {
                self.write_collection(batch, &at, op, write)?;
                continue;
            }
            // A list's index deletions together, each after the ones before.
            if lists_done.contains(&def.name.as_str()) {
                continue;
            }
            lists_done.push(&def.name);
            let indexes: Vec<&[u8]> = elements
                .iter()
                .filter(|(d, _)| d.name == def.name)
                .filter_map(|(_, o)| match o {
                    CollectionOp::SetElement(k, None) => Some(k.as_slice()),
                    _ => None,
                })
                .collect();
            self.delete_list_indexes(batch, &at, &indexes, write)?;
        }
        for (c, _) in columns.iter().filter(|(_, e)| e.is_none()) {
            let (_, def) = row.t.column(c)?;
            if def.kind != Kind::Regular {
                return Err(CqlError::invalid(format!(
                    "invalid identifier {c} for deletion (it is part of the PRIMARY KEY)"
                )));
            }
            names.push(def.name.clone());
        }
        for n in names {
            let (_, def) = row.t.column(&n)?;
            if def.ty.is_multi_cell() {
                // Every element: a range tombstone over the collection.
                let prefix = row.t.name_in_row(row.ck, &n, None, 0)?;
                batch.remove_prefix(
                    row.key,
                    ColumnPath::new(&row.t.name).column(prefix),
                    write.timestamp,
                );
                continue;
            }
            batch.remove(
                row.key,
                ColumnPath::new(&row.t.name).column(row.t.cell_name(row.ck, &n)?),
                write.timestamp,
            );
        }
        Ok(())
    }
}

/// Whether `columns` are all static (and there is one): a write of the partition's statics
/// alone, which names no row.
fn statics_only<'c>(t: &Table, mut columns: impl Iterator<Item = &'c str>) -> bool {
    let mut any = false;
    columns.all(|c| {
        any = true;
        t.is_static(c)
    }) && any
}

/// Refuses a restriction on a clustering column in a write of static columns alone, in
/// Cassandra's words.
/// Cassandra's refusal of `c = c + t`, `c = c - t` (`kind` `+`, `-`) or `c = t + c` (`<`) on
/// a column that is neither a collection nor a counter.
fn not_an_operation_on(c: &str, ty: &CqlType, kind: char, term: &Term) -> CqlError {
    let t = term.text();
    let (operation, only) = match kind {
        '<' => (format!("{c} = {t} + {c}"), "list"),
        _ => (format!("{c} = {c} {kind} {t}"), "counter"),
    };
    let tuple = match ty {
        CqlType::Frozen(inner) => matches!(**inner, CqlType::Tuple(_)),
        ty => matches!(ty, CqlType::Tuple(_)),
    };
    if tuple && kind != '<' {
        return CqlError::invalid(format!(
            "Invalid operation ({operation}) for tuple column {c}"
        ));
    }
    CqlError::invalid(format!(
        "Invalid operation ({operation}) for non {only} column {c}"
    ))
}

fn refuse_clustering(t: &Table, relations: &[Relation], what: &str) -> Result<(), CqlError> {
    if restricts_clustering(t, relations) {
        return Err(CqlError::invalid(format!(
            "Invalid restrictions on clustering columns since the {what} statement modifies only static columns"
        )));
    }
    Ok(())
}

fn key_from(t: &Table, given: &[Option<Vec<u8>>], named: &[bool]) -> Result<Vec<u8>, CqlError> {
    refuse_missing(
        t,
        &t.partition_key,
        named,
        "Some partition key parts are missing",
    )?;
    let mut parts = Vec::new();
    for &i in &t.partition_key {
        let name = &t.columns[i].name;
        match &given[i] {
            Some(v) if !v.is_empty() || t.partition_key.len() > 1 => parts.push(v.as_slice()),
            Some(_) => return Err(CqlError::invalid(format!("key may not be empty ({name})"))),
            None => {
                return Err(CqlError::invalid(format!(
                    "Invalid null value for partition key part {name}"
                )))
            }
        }
    }
    t.row_key(&parts)
}

fn clustering_from(
    t: &Table,
    given: &[Option<Vec<u8>>],
    named: &[bool],
) -> Result<Vec<Vec<u8>>, CqlError> {
    refuse_missing(t, &t.clustering, named, "Some clustering keys are missing")?;
    t.clustering
        .iter()
        .map(|&i| {
            given[i].clone().ok_or_else(|| {
                CqlError::invalid(format!(
                    "Invalid null value for clustering key part {}",
                    t.columns[i].name
                ))
            })
        })
        .collect()
}

/// Refuses, in Cassandra's words (`what: a, b`), key columns an INSERT does not name.
fn refuse_missing(t: &Table, cols: &[usize], named: &[bool], what: &str) -> Result<(), CqlError> {
    let missing: Vec<&str> = cols
        .iter()
        .filter(|&&i| !named[i])
        .map(|&i| t.columns[i].name.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(CqlError::invalid(format!("{what}: {}", missing.join(", "))))
}
