//! Thrift-era column families seen through CQL the way Cassandra shows them: a Standard one as a
//! table `(key, column1, value)`, a Super one as `(key, column1, column2, value)`, typed by its
//! key validator, comparators and default validator; so cqlsh and the drivers can read (and
//! `DESCRIBE`, and `COPY … TO`) a BloggyAppy database, and write its cells one at a time.
//! Everything goes through the Thrift-era API: for reads, `=`, `IN`, `<`, `<=`, `>`, `>=` on the
//! key, the names and the token are applied to the cells read (a restricted key reads only its
//! rows).
//!
//! Long because Thrift-era column families seen through CQL (their shape, reads and writes) are one
//! concept.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::ast::{Assignment, Relation, Select, Selector, Statement, Term};
use crate::error::CqlError;
use crate::rows::Rows;
use crate::table::{ColumnDef, Kind, Table};
use crate::types::{CqlType, Literal, Op};
use supercolumn::comparator::Comparator;
use supercolumn::{
    BatchMutation, ColumnFamilyDef, ColumnOrSuperColumn, ColumnParent, ColumnPath, ColumnType,
    Database, KeyRange, RangeBound, SlicePredicate, Token, WriteOptions,
};

/// Rows read per request while scanning.
const PAGE: usize = 512;

/// The CQL type a Thrift-era comparator or validator shows as.
pub fn thrift_type(c: &dyn Comparator) -> CqlType {
    let name = c.name();
    let short = name.rsplit('.').next().unwrap_or(&name);
    match short {
        "UTF8Type" => CqlType::Text,
        "AsciiType" => CqlType::Ascii,
        "LongType" => CqlType::Bigint,
        "Int32Type" => CqlType::Int,
        "IntegerType" => CqlType::Varint,
        "TimeUUIDType" => CqlType::Timeuuid,
        "UUIDType" => CqlType::Uuid,
        "BooleanType" => CqlType::Boolean,
        "DoubleType" => CqlType::Double,
        "FloatType" => CqlType::Float,
        "DateType" | "TimestampType" => CqlType::Timestamp,
        // BytesType, LexicalUUIDType (ordered differently from CQL's uuid), custom types.
        _ => CqlType::Blob,
    }
}

/// A Thrift-era column family as a table.
pub struct Compact {
    /// The table as `DESCRIBE` and `system_schema` show it.
    pub table: Table,
    names: Arc<dyn Comparator>,
    subnames: Option<Arc<dyn Comparator>>,
}

impl Compact {
    /// The table a column family shows as, if it is not a CQL table.
    pub fn of(keyspace: &str, cf: &ColumnFamilyDef) -> Option<Compact> {
        if cf.cql_table.is_some() {
            return None;
        }
        let col = |name: &str, ty: CqlType, kind: Kind| ColumnDef {
            name: name.into(),
            ty,
            kind,
            is_static: false,
            dropped_at: None,
        };
        let key = cf
            .key_validation_class
            .as_ref()
            .map_or(CqlType::Blob, |k| thrift_type(&**k));
        let mut columns = vec![
            col("key", key, Kind::PartitionKey(0)),
            col("column1", thrift_type(&*cf.comparator), Kind::Clustering(0)),
        ];
        let subnames = match cf.column_type {
            ColumnType::Super => {
                let sub = cf.subcomparator.clone();
                let ty = sub.as_ref().map_or(CqlType::Blob, |s| thrift_type(&**s));
                columns.push(col("column2", ty, Kind::Clustering(1)));
                sub.or_else(|| Some(cf.comparator.clone()))
            }
            ColumnType::Standard => None,
        };
        columns.push(col(
            "value",
            thrift_type(&*cf.default_validation_class),
            Kind::Regular,
        ));
        let clustering: Vec<usize> = (1..columns.len() - 1).collect();
        Some(Compact {
            table: Table {
                keyspace: keyspace.to_string(),
                name: cf.name.clone(),
                descending: vec![false; clustering.len()],
                options: Default::default(),
                dropped: Vec::new(),
                indexes: Vec::new(),
                partition_key: vec![0],
                clustering,
                columns,
            },
            names: cf.comparator.clone(),
            subnames,
        })
    }

    fn compare(&self, column: usize, a: &[u8], b: &[u8]) -> Ordering {
        match (column, &self.subnames) {
            (1, _) => self.names.compare(a, b),
            (2, Some(sub)) if self.table.columns.len() == 4 => sub.compare(a, b),
            _ => a.cmp(b),
        }
    }
}

/// One cell as a row: key, name(s), value, write time, expiry.
struct Cell {
    values: Vec<Vec<u8>>,
    timestamp: i64,
    expires_at: Option<i64>,
}

fn literal(t: &Term) -> Result<&Literal, CqlError> {
    match t {
        Term::Literal(l) => Ok(l),
        Term::Bind(_) => Err(CqlError::invalid(
            "a Thrift-era column family's restrictions take literal values",
        )),
    }
}

/// Answers a SELECT on a Thrift-era column family; `now_seconds` (the whole second, as the CQL
/// layer's) is what TTL() counts from.
// Long because it answers every SELECT a Thrift-era column family takes (its key, column1 and
// column2 restrictions, LIMIT) in one pass over the engine's slices.
pub fn select(
    db: &Database,
    c: &Compact,
    sel: &Select,
    now_seconds: i64,
) -> Result<Rows, CqlError> {
    let t = &c.table;
    let p = db.partitioner();
    // Restrictions, as (column index, op, encoded value); the token's as (op, token).
    let mut on_columns: Vec<(usize, Op, Vec<Vec<u8>>)> = Vec::new();
    let mut on_token: Vec<(Op, Option<Token>)> = Vec::new();
    for r in &sel.relations {
        match r {
            Relation::Compare(name, op, term) => {
                let (i, def) = t.column(name)?;
                let v = def.ty.encode(literal(term)?, name)?.unwrap_or_default();
                on_columns.push((i, *op, vec![v]));
            }
            Relation::In(name, terms) => {
                let (i, def) = t.column(name)?;
                let mut vs = Vec::new();
                for term in terms {
                    vs.push(def.ty.encode(literal(term)?, name)?.unwrap_or_default());
                }
                on_columns.push((i, Op::Eq, vs));
            }
            Relation::Token(_, op, terms, false) => {
                let [term] = terms.as_slice() else {
                    return Err(CqlError::invalid("token() takes a number"));
                };
                let text = match literal(term)? {
                    Literal::Number(n) | Literal::Str(n) => n.clone(),
                    _ => return Err(CqlError::invalid("token() takes a number")),
                };
                // Below the partitioner's range (the driver's minimum token for
                // RandomPartitioner is -1): no bound.
                let token = p.parse_token(&text).ok();
                if token.is_none() && !text.trim_start().starts_with('-') {
                    return Err(CqlError::invalid(format!(
                        "'{text}' is not a token of {}",
                        p.class_name()
                    )));
                }
                on_token.push((*op, token));
            }
            Relation::Token(..) => {
                return Err(CqlError::invalid("token(key) compares with a token here"))
            }
            Relation::InMarker(..) => {
                return Err(CqlError::invalid(
                    "a Thrift-era column family takes IN with its values listed",
                ))
            }
            Relation::Multi(..) | Relation::MultiIn(..) => {
                return Err(CqlError::invalid(
                    "a Thrift-era column family takes no multi-column relation",
                ))
            }
            Relation::Entry(c, ..) => {
                return Err(CqlError::invalid(format!(
                    "Column {c} cannot be used as a map"
                )))
            }
        }
    }
    let keys: Option<Vec<Vec<u8>>> = on_columns
        .iter()
        .find(|(i, op, _)| *i == 0 && *op == Op::Eq)
        .map(|(_, _, vs)| vs.clone());
    let limit = match &sel.limit {
        None => usize::MAX,
        Some(term) => match literal(term)? {
            Literal::Number(n) => n
                .parse::<usize>()
                .map_err(|_| CqlError::invalid("LIMIT takes a positive number"))?,
            _ => return Err(CqlError::invalid("LIMIT takes a number")),
        },
    };
    let keep = |cell: &Cell| -> bool {
        let token_ok = on_token.iter().all(|(op, bound)| {
            let Some(b) = bound else {
                return matches!(op, Op::Gt | Op::Ge);
            };
            let tk = p.token(&cell.values[0]);
            match op {
                Op::Eq => tk == *b,
                Op::Lt => tk < *b,
                Op::Le => tk <= *b,
                Op::Gt => tk > *b,
                Op::Ge => tk >= *b,
                Op::Ne => tk != *b,
                Op::Contains | Op::ContainsKey | Op::In => false,
            }
        });
        token_ok
            && on_columns.iter().all(|(i, op, vs)| {
                let v = &cell.values[*i];
                match op {
                    Op::Eq => vs.iter().any(|x| c.compare(*i, v, x) == Ordering::Equal),
                    Op::Lt => c.compare(*i, v, &vs[0]) == Ordering::Less,
                    Op::Le => c.compare(*i, v, &vs[0]) != Ordering::Greater,
                    Op::Gt => c.compare(*i, v, &vs[0]) == Ordering::Greater,
                    Op::Ge => c.compare(*i, v, &vs[0]) != Ordering::Less,
                    Op::Ne => c.compare(*i, v, &vs[0]) != Ordering::Equal,
                    Op::Contains | Op::ContainsKey | Op::In => false,
                }
            })
    };
    let mut cells: Vec<Cell> = Vec::new();
    let take = |key: &[u8], items: Vec<ColumnOrSuperColumn>, cells: &mut Vec<Cell>| {
        for item in items {
            let flat: Vec<(Vec<Vec<u8>>, supercolumn::Column)> = match item {
                ColumnOrSuperColumn::Column(col) => vec![(vec![col.name.clone()], col)],
                ColumnOrSuperColumn::SuperColumn(s) => s
                    .columns
                    .into_iter()
                    .map(|col| (vec![s.name.clone(), col.name.clone()], col))
                    .collect(),
            };
            for (names, col) in flat {
                let mut values = vec![key.to_vec()];
                values.extend(names);
                values.push(col.value);
                let cell = Cell {
                    values,
                    timestamp: col.timestamp,
                    expires_at: col.expires_at,
                };
                if cells.len() < limit && keep(&cell) {
                    cells.push(cell);
                }
            }
        }
    };
    let parent = ColumnParent::new(&t.name);
    let everything = SlicePredicate::everything();
    match keys {
        Some(keys) => {
            for k in keys {
                let items = db.get_slice(&t.keyspace, &k, &parent, &everything)?;
                take(&k, items, &mut cells);
            }
        }
        None => {
            let mut start = RangeBound::Unbounded;
            let mut last: Option<Vec<u8>> = None;
            while cells.len() < limit {
                let mut range = KeyRange::all();
                range.start = start.clone();
                range.count = PAGE;
                let rows = db.get_range_slices(&t.keyspace, &parent, &everything, &range)?;
                let n = rows.len();
                for row in rows {
                    if last.as_ref() != Some(&row.key) {
                        take(&row.key, row.columns, &mut cells);
                        last = Some(row.key);
                    }
                }
                match &last {
                    Some(k) if n == PAGE => start = RangeBound::Key(k.clone()),
                    _ => break,
                }
            }
        }
    }
    project(t, sel, cells, now_seconds)
}

fn project(t: &Table, sel: &Select, cells: Vec<Cell>, now_seconds: i64) -> Result<Rows, CqlError> {
    if let [Selector::Count] = sel.selectors.as_slice() {
        return Ok(Rows::from_vecs(
            vec![("count".into(), CqlType::Bigint)],
            [vec![Some((cells.len() as i64).to_be_bytes().to_vec())]],
        ));
    }
    let value = t.columns.len() - 1;
    enum Pick {
        Column(usize),
        WriteTime,
        Ttl,
    }
    let mut picks = Vec::new();
    let mut columns = Vec::new();
    if sel.selectors.is_empty() {
        for (i, c) in t.columns.iter().enumerate() {
            picks.push(Pick::Column(i));
            columns.push((c.name.clone(), c.ty.clone()));
        }
    }
    for s in &sel.selectors {
        match s {
            Selector::Column(name) => {
                let (i, c) = t.column(name)?;
                picks.push(Pick::Column(i));
                columns.push((c.name.clone(), c.ty.clone()));
            }
            Selector::WriteTime(name, _) | Selector::Ttl(name) if name == "value" => {
                let wt = matches!(s, Selector::WriteTime(..));
                picks.push(if wt { Pick::WriteTime } else { Pick::Ttl });
                columns.push(if wt {
                    ("writetime(value)".into(), CqlType::Bigint)
                } else {
                    ("ttl(value)".into(), CqlType::Int)
                });
            }
            _ => {
                return Err(CqlError::invalid(
                    "a Thrift-era column family selects its columns, COUNT(*), and WRITETIME or TTL of value",
                ))
            }
        }
    }
    let rows = cells
        .into_iter()
        .map(|cell| {
            picks
                .iter()
                .map(|p| match p {
                    Pick::Column(i) => Some(
                        cell.values[if *i == value {
                            cell.values.len() - 1
                        } else {
                            *i
                        }]
                        .clone(),
                    ),
                    Pick::WriteTime => Some(cell.timestamp.to_be_bytes().to_vec()),
                    Pick::Ttl => cell.expires_at.map(|e| {
                        let left = (e - now_seconds).clamp(0, i64::from(i32::MAX)) as i32;
                        left.to_be_bytes().to_vec()
                    }),
                })
                .collect()
        })
        .collect::<Vec<_>>();
    Ok(Rows::from_vecs(columns, rows))
}

/// The bytes of a literal term for column `i`.
fn value_of(t: &Table, i: usize, term: &Term) -> Result<Vec<u8>, CqlError> {
    let c = &t.columns[i];
    c.ty.encode(literal(term)?, &c.name)?
        .ok_or_else(|| CqlError::invalid(format!("{} cannot be null here", c.name)))
}

fn number(term: &Term, what: &str) -> Result<i64, CqlError> {
    match literal(term)? {
        Literal::Number(n) => n
            .parse()
            .map_err(|_| CqlError::invalid(format!("{what} must be an integer, not {n}"))),
        _ => Err(CqlError::invalid(format!("{what} must be an integer"))),
    }
}

/// Runs an INSERT, UPDATE or DELETE on a Thrift-era column family through the Thrift-era API:
/// a cell is `key`, `column1` [, `column2`] and `value`, as `select` shows it (what `export`
/// writes, so an export loads into supercolumn too). `timestamp` stamps a write that gives
/// none (a driver's client-side one; else the database clock).
// Long because it is one match over INSERT, UPDATE and DELETE on a Thrift-era column family, each
// arm a few engine calls.
pub fn write(
    db: &Database,
    c: &Compact,
    statement: &Statement,
    timestamp: Option<i64>,
) -> Result<(), CqlError> {
    let t = &c.table;
    let names = t.columns.len() - 2; // column1 [, column2]
    let value_at = t.columns.len() - 1;
    let mut at: Vec<Option<Vec<u8>>> = vec![None; t.columns.len()];
    let set = |name: &str, term: &Term, at: &mut Vec<Option<Vec<u8>>>| -> Result<(), CqlError> {
        let (i, _) = t.column(name)?;
        at[i] = Some(value_of(t, i, term)?);
        Ok(())
    };
    let keyed = |relations: &[Relation], at: &mut Vec<Option<Vec<u8>>>| -> Result<(), CqlError> {
        for r in relations {
            match r {
                Relation::Compare(name, Op::Eq, term) if name != "value" => set(name, term, at)?,
                _ => {
                    return Err(CqlError::invalid(
                        "a write to a Thrift-era column family names its cell with = on key and the column names",
                    ))
                }
            }
        }
        Ok(())
    };
    if matches!(
        statement,
        Statement::Insert {
            condition: Some(_),
            ..
        } | Statement::Update {
            condition: Some(_),
            ..
        } | Statement::Delete {
            condition: Some(_),
            ..
        }
    ) {
        return Err(CqlError::invalid(
            "conditional writes (IF …) to a Thrift-era column family are not supported",
        ));
    }
    let (using, delete) = match statement {
        Statement::Insert {
            columns,
            values,
            using,
            ..
        } => {
            for (name, term) in columns.iter().zip(values) {
                set(name, term, &mut at)?;
            }
            (using, false)
        }
        Statement::Update {
            using,
            assignments,
            relations,
            ..
        } => {
            for a in assignments {
                match a {
                    Assignment::Set(name, term) if name == "value" => set(name, term, &mut at)?,
                    _ => return Err(CqlError::invalid("an UPDATE here sets value = …")),
                }
            }
            keyed(relations, &mut at)?;
            (using, false)
        }
        Statement::Delete {
            columns,
            using,
            relations,
            ..
        } => {
            if columns.iter().any(|(n, e)| n != "value" || e.is_some()) {
                return Err(CqlError::invalid("a DELETE here deletes cells (or value)"));
            }
            keyed(relations, &mut at)?;
            (using, true)
        }
        _ => return Err(CqlError::invalid("not a write")),
    };
    let mut w = match using.timestamp.as_ref() {
        Some(ts) => WriteOptions::at(number(ts, "TIMESTAMP")?),
        None => timestamp.map_or_else(WriteOptions::now, WriteOptions::at),
    };
    if let Some(ttl) = &using.ttl {
        let v = u32::try_from(number(ttl, "TTL")?)
            .ok()
            .filter(|v| *v <= 630_720_000)
            .ok_or_else(|| CqlError::invalid("TTL must be 0 to 630720000 seconds"))?;
        if v > 0 {
            w = w.with_ttl(v);
        }
    }
    let Some(key) = at[0].clone() else {
        return Err(CqlError::invalid("the key must be given"));
    };
    let mut path = ColumnPath::new(&t.name);
    let given: Vec<&Vec<u8>> = at[1..=names].iter().map_while(Option::as_ref).collect();
    if at[1..=names].iter().skip(given.len()).any(Option::is_some) {
        return Err(CqlError::invalid("column2 is given only with column1"));
    }
    match (names, given.as_slice()) {
        (_, []) => {}
        (1, [c1]) => path = path.column(c1),
        (2, [sc]) => path = path.super_column(sc),
        (_, [sc, c2]) => path = path.super_column(sc).column(c2),
        _ => return Err(CqlError::invalid("too many column names")),
    }
    let mut b = BatchMutation::new();
    if delete {
        b.remove(
            &key,
            path,
            Some(
                w.timestamp
                    .unwrap_or_else(|| db.options().clock.now_micros()),
            ),
        );
    } else {
        if given.len() != names {
            return Err(CqlError::invalid("a write names every column of its cell"));
        }
        let Some(value) = at[value_at].clone() else {
            return Err(CqlError::invalid("value must be given"));
        };
        b.insert(&key, path, value, w);
    }
    db.batch_mutate(&t.keyspace, &b)?;
    Ok(())
}
