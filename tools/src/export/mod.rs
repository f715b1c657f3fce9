//! `supercolumn export`: the way out to a Cassandra 4/5 cluster. Writes CQL that `cqlsh -f`
//! loads: each keyspace's `CREATE KEYSPACE`, each table's `CREATE TABLE` (a Thrift-era column
//! family as the table Cassandra shows it: `key`, `column1`, [`column2`,] `value`), then every
//! live cell as its own statement `USING TIMESTAMP t [AND TTL remaining]`, so write times and
//! expiry carry over and the cluster reconciles later writes the same way. Cells are written
//! with `UPDATE` (an `INSERT` would add a row marker the original row may not have); a CQL
//! row's marker is an `INSERT` of its key columns alone. Tombstones are not exported. It reads
//! through the public API only.

mod literal;

use std::io::Write;

use anyhow::Context;
use supercolumn::comparator::CompositeType;
use supercolumn::{
    Column, ColumnFamilyDef, ColumnOrSuperColumn, ColumnParent, ColumnType, Database, KeyRange,
    RangeBound, SlicePredicate,
};
use supercolumn_cql::{create_type_statement, quote_ident, CqlType, Kind, Table, UserTypes};

pub use literal::literal;

/// `literal`, its refusal naming the type.
fn lit(ty: &CqlType, bytes: &[u8]) -> anyhow::Result<String> {
    literal(ty, bytes).map_err(|e| anyhow::anyhow!("a {ty} value: {e}"))
}
use supercolumn_cql::thrift_type;

/// Rows read from the engine per request.
const PAGE: usize = 256;

/// What an export wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Exported {
    /// Keyspaces.
    pub keyspaces: usize,
    /// Tables.
    pub tables: usize,
    /// Cells (row markers included).
    pub cells: u64,
}

fn is_system(ks: &str) -> bool {
    ks == "system" || ks.starts_with("system_")
}

/// Writes the export of `target` (`KS`, `KS.TABLE`, or every keyspace) to `out`; `now_seconds`
/// (rounded up, as the engine counts expiry) is the moment remaining TTLs count from.
pub fn export(
    db: &Database,
    target: Option<&str>,
    now_seconds: i64,
    out: &mut dyn Write,
) -> anyhow::Result<Exported> {
    let (only_ks, only_table) = match target {
        None => (None, None),
        Some(t) => match t.split_once('.') {
            Some((k, c)) => (Some(k.to_string()), Some(c.to_string())),
            None => (Some(t.to_string()), None),
        },
    };
    let keyspaces: Vec<String> = match &only_ks {
        Some(k) => {
            db.describe_keyspace(k)?;
            vec![k.clone()]
        }
        None => db
            .keyspaces()
            .into_iter()
            .filter(|k| !is_system(k))
            .collect(),
    };
    let mut stats = Exported::default();
    for ks in &keyspaces {
        let def = db.describe_keyspace(ks)?;
        writeln!(
            out,
            "CREATE KEYSPACE IF NOT EXISTS {} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': '{}'}};\n",
            quote_ident(ks),
            def.replication_factor
        )?;
        stats.keyspaces += 1;
        let cfs: Vec<&ColumnFamilyDef> = def
            .column_families
            .iter()
            .filter(|cf| only_table.as_ref().is_none_or(|t| *t == cf.name))
            .collect();
        if let (Some(t), true) = (&only_table, cfs.is_empty()) {
            anyhow::bail!("no table {ks}.{t}");
        }
        // Its types before its tables, each after the types it names (creation order).
        let types = UserTypes::of(&def)?;
        for t in types.list() {
            let stmt = create_type_statement(t);
            writeln!(
                out,
                "{}\n",
                stmt.replacen("CREATE TYPE ", "CREATE TYPE IF NOT EXISTS ", 1)
            )?;
        }
        for cf in cfs {
            let shape = Shape::of(ks, cf, &types)?;
            writeln!(out, "{}\n", shape.create_statement())?;
            stats.tables += 1;
            stats.cells += export_cells(db, ks, cf, &shape, now_seconds, out)
                .with_context(|| format!("exporting {ks}.{}", cf.name))?;
            writeln!(out)?;
            // Its indexes after its rows: each is built once, over them.
            if let Shape::Cql(t) = &shape {
                for index in &t.indexes {
                    let stmt = index.create_statement(t);
                    writeln!(
                        out,
                        "{}\n",
                        stmt.replacen(" INDEX ", " INDEX IF NOT EXISTS ", 1)
                    )?;
                }
            }
        }
    }
    Ok(stats)
}

/// How a column family's cells become statements.
enum Shape {
    /// A CQL table.
    Cql(Table),
    /// A Thrift-era column family: key, column1, [column2,] value types.
    Thrift {
        name: String,
        key: CqlType,
        column1: CqlType,
        column2: Option<CqlType>,
        value: CqlType,
    },
}

impl Shape {
    fn of(ks: &str, cf: &ColumnFamilyDef, types: &UserTypes) -> anyhow::Result<Shape> {
        if let Some(t) = Table::from_cf(ks, cf, types)? {
            return Ok(Shape::Cql(t));
        }
        let name = format!("{}.{}", quote_ident(ks), quote_ident(&cf.name));
        let key = cf
            .key_validation_class
            .as_ref()
            .map_or(CqlType::Blob, |k| thrift_type(&**k));
        let value = thrift_type(&*cf.default_validation_class);
        Ok(match cf.column_type {
            ColumnType::Standard => Shape::Thrift {
                name,
                key,
                column1: thrift_type(&*cf.comparator),
                column2: None,
                value,
            },
            ColumnType::Super => Shape::Thrift {
                name,
                key,
                column1: thrift_type(&*cf.comparator),
                column2: Some(
                    cf.subcomparator
                        .as_ref()
                        .map_or(CqlType::Blob, |s| thrift_type(&**s)),
                ),
                value,
            },
        })
    }

    fn create_statement(&self) -> String {
        match self {
            Shape::Cql(t) => t.create_statement(),
            Shape::Thrift {
                name,
                key,
                column1,
                column2,
                value,
            } => match column2 {
                None => format!(
                    "CREATE TABLE IF NOT EXISTS {name} (\n    key {key},\n    column1 {column1},\n    value {value},\n    PRIMARY KEY (key, column1)\n);"
                ),
                Some(c2) => format!(
                    "CREATE TABLE IF NOT EXISTS {name} (\n    key {key},\n    column1 {column1},\n    column2 {c2},\n    value {value},\n    PRIMARY KEY (key, column1, column2)\n);"
                ),
            },
        }
    }
}

/// ` USING TIMESTAMP t [AND TTL n]`, or `None` for a cell already expired. A cell that never
/// expires, in a table whose writes expire by default, is written `AND TTL 0`: without it the
/// loading table would give it its default TTL.
fn using(c: &Column, now_seconds: i64, default_ttl: u32) -> Option<String> {
    match c.expires_at {
        None if default_ttl > 0 => Some(format!(" USING TIMESTAMP {} AND TTL 0", c.timestamp)),
        None => Some(format!(" USING TIMESTAMP {}", c.timestamp)),
        // Cassandra's largest TTL: an expiry counted from a second rounded up may be one past.
        Some(at) if at > now_seconds => Some(format!(
            " USING TIMESTAMP {} AND TTL {}",
            c.timestamp,
            (at - now_seconds).min(630_720_000)
        )),
        Some(_) => None,
    }
}

fn export_cells(
    db: &Database,
    ks: &str,
    cf: &ColumnFamilyDef,
    shape: &Shape,
    now_seconds: i64,
    out: &mut dyn Write,
) -> anyhow::Result<u64> {
    let parent = ColumnParent::new(&cf.name);
    let predicate = SlicePredicate::everything();
    let mut start = RangeBound::Unbounded;
    let mut last: Option<Vec<u8>> = None;
    let mut cells = 0u64;
    loop {
        let range = KeyRange {
            start: start.clone(),
            end: RangeBound::Unbounded,
            count: PAGE,
        };
        let rows = db.get_range_slices(ks, &parent, &predicate, &range)?;
        let n = rows.len();
        for row in rows {
            if last.as_ref() == Some(&row.key) {
                continue;
            }
            for item in &row.columns {
                cells += match (shape, item) {
                    (Shape::Cql(t), ColumnOrSuperColumn::Column(c)) => {
                        cql_cell(t, &row.key, c, now_seconds, out)?
                    }
                    (Shape::Thrift { .. }, ColumnOrSuperColumn::Column(c)) => {
                        thrift_cell(shape, &row.key, None, c, now_seconds, out)?
                    }
                    (Shape::Thrift { .. }, ColumnOrSuperColumn::SuperColumn(s)) => {
                        let mut k = 0;
                        for c in &s.columns {
                            k += thrift_cell(shape, &row.key, Some(&s.name), c, now_seconds, out)?;
                        }
                        k
                    }
                    (Shape::Cql(_), ColumnOrSuperColumn::SuperColumn(_)) => 0,
                };
            }
            last = Some(row.key.clone());
        }
        match &last {
            Some(k) if n == PAGE => start = RangeBound::Key(k.clone()),
            _ => break,
        }
    }
    Ok(cells)
}

fn thrift_cell(
    shape: &Shape,
    key: &[u8],
    super_column: Option<&[u8]>,
    c: &Column,
    now_seconds: i64,
    out: &mut dyn Write,
) -> anyhow::Result<u64> {
    let Shape::Thrift {
        name,
        key: kt,
        column1,
        column2,
        value,
    } = shape
    else {
        return Ok(0);
    };
    let Some(using) = using(c, now_seconds, 0) else {
        return Ok(0);
    };
    let mut wher = format!("key = {}", lit(kt, key)?);
    match (super_column, column2) {
        (Some(sc), Some(c2)) => {
            wher.push_str(&format!(" AND column1 = {}", lit(column1, sc)?));
            wher.push_str(&format!(" AND column2 = {}", lit(c2, &c.name)?));
        }
        _ => wher.push_str(&format!(" AND column1 = {}", lit(column1, &c.name)?)),
    }
    writeln!(
        out,
        "UPDATE {name}{using} SET value = {} WHERE {wher};",
        lit(value, &c.value)?
    )?;
    Ok(1)
}

fn cql_cell(
    t: &Table,
    key: &[u8],
    c: &Column,
    now_seconds: i64,
    out: &mut dyn Write,
) -> anyhow::Result<u64> {
    let Some(using) = using(c, now_seconds, t.options.default_ttl) else {
        return Ok(0);
    };
    let parts = CompositeType::split(&c.name)
        .map_err(|e| anyhow::anyhow!("a cell name of {}.{}: {}", t.keyspace, t.name, e.0))?;
    let nck = t.clustering.len();
    anyhow::ensure!(
        parts.len() > nck,
        "a cell name of {}.{} has {} components, fewer than its clustering columns and name",
        t.keyspace,
        t.name,
        parts.len()
    );
    let pk = t.split_row_key(key);
    // A static cell belongs to its partition: its UPDATE names no clustering column.
    let is_static = CompositeType::is_static(&c.name);
    let mut keys: Vec<(String, String)> = Vec::new();
    for (i, col) in t.columns.iter().enumerate() {
        let v = match col.kind {
            Kind::PartitionKey(k) => pk.get(k).map(|b| lit(&col.ty, b)).transpose()?,
            Kind::Clustering(_) if is_static => None,
            Kind::Clustering(k) => Some(lit(&col.ty, parts[k].bytes)?),
            Kind::Regular => None,
        };
        if let Some(v) = v {
            keys.push((quote_ident(&t.columns[i].name), v));
        }
    }
    let table = format!("{}.{}", quote_ident(&t.keyspace), quote_ident(&t.name));
    let column = std::str::from_utf8(parts[nck].bytes)
        .map_err(|_| anyhow::anyhow!("a column name in {table} is not UTF-8"))?;
    if column.is_empty() {
        let names: Vec<&str> = keys.iter().map(|(n, _)| n.as_str()).collect();
        let values: Vec<&str> = keys.iter().map(|(_, v)| v.as_str()).collect();
        writeln!(
            out,
            "INSERT INTO {table} ({}) VALUES ({}){using};",
            names.join(", "),
            values.join(", ")
        )?;
        return Ok(1);
    }
    // A dropped column's cells (or, for a column added back, those from before the drop)
    // are not the table's: a cluster would show them under the new column.
    let Some(def) = t.columns.iter().find(|d| d.name == column) else {
        return Ok(0);
    };
    if def.dropped_at.is_some_and(|at| c.timestamp <= at) {
        return Ok(0);
    }
    let wher: Vec<String> = keys.iter().map(|(n, v)| format!("{n} = {v}")).collect();
    let col = quote_ident(column);
    let set = assignment(&def.ty, &col, parts.get(nck + 1).map(|p| p.bytes), &c.value)?;
    let using = if def.ty == CqlType::Counter {
        String::new()
    } else {
        using
    };
    writeln!(
        out,
        "UPDATE {table}{using} SET {set} WHERE {};",
        wher.join(" AND ")
    )?;
    Ok(1)
}

/// The `SET` of an `UPDATE` that writes one cell of a column of type `ty`: its value, a
/// collection's element (`element`: its name part), or a counter's count added.
fn assignment(
    ty: &CqlType,
    col: &str,
    element: Option<&[u8]>,
    value: &[u8],
) -> anyhow::Result<String> {
    Ok(match (ty, element) {
        (CqlType::List(e), Some(_)) => format!("{col} = {col} + [{}]", lit(e, value)?),
        (CqlType::Set(e), Some(el)) => format!("{col} = {col} + {{{}}}", lit(e, el)?),
        (CqlType::Map(k, v), Some(el)) => {
            format!("{col} = {col} + {{{}: {}}}", lit(k, el)?, lit(v, value)?)
        }
        // A non-frozen user type's field, named by its position.
        (CqlType::Udt(u), Some(el)) => {
            let field = <[u8; 2]>::try_from(el)
                .ok()
                .and_then(|p| usize::try_from(i16::from_be_bytes(p)).ok())
                .and_then(|i| u.fields.get(i));
            let Some((name, fty)) = field else {
                anyhow::bail!("{col}: a cell of no field of type {}", u.name);
            };
            format!("{col}.{} = {}", quote_ident(name), lit(fty, value)?)
        }
        // A counter is loaded by adding its count (a cluster refuses a set, a timestamp or
        // a TTL on one).
        (CqlType::Counter, _) => format!("{col} = {col} + {}", lit(&CqlType::Bigint, value)?),
        (ty, _) => format!("{col} = {}", lit(ty, value)?),
    })
}
