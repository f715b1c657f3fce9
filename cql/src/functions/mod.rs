//! CQL's native scalar functions (Cassandra's `system` keyspace of functions): which function a
//! call names, chosen by its name and its arguments' types as Cassandra chooses among
//! overloads, its result type, and its value from its arguments' bytes. The time functions are
//! `time.rs`'s, the arithmetic and casts of numbers `number.rs`'s (decimals `decimal.rs`'s),
//! the operators' choice of overload `operation.rs`'s, a time plus a duration `temporal.rs`'s,
//! the aggregates `aggregate.rs`'s, the write times and TTLs of cells `cell_time.rs`'s. What a
//! selector or a term *is* stays with the callers (`selection.rs`, `execute.rs`); this module
//! sees only types and bytes.

pub(super) mod aggregate;
pub(super) mod cell_time;
mod decimal;
pub(super) mod element;
mod fold;
mod number;
mod operation;
mod temporal;
mod time;

use super::error::CqlError;
use super::types::{CqlType, Literal};
pub(super) use fold::{chosen, fold};
pub(super) use number::ArithOp;
pub(super) use operation::{assignable, operator, resolve, Operand};
use supercolumn::model::partitioner::Partitioner;
use supercolumn::model::timeuuid::TimeUuidGenerator;

/// What a function may read besides its arguments: the statement's time, a source of
/// TimeUUIDs, the partitioner (`token()`).
pub(super) struct Context<'a> {
    /// Microseconds since the Unix epoch, the statement's "now".
    pub now_micros: i64,
    pub uuids: &'a TimeUuidGenerator,
    pub partitioner: Partitioner,
    /// The values bound to the statement's markers (none at PREPARE: a marker reads null).
    pub binds: &'a [Option<Vec<u8>>],
}

/// A native function, with the argument types it was chosen for.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Native {
    Now,
    Uuid,
    CurrentTimestamp,
    CurrentDate,
    CurrentTime,
    /// `toDate(x)`, `toTimestamp(x)`, `toUnixTimestamp(x)`, `dateOf(x)`, `unixTimestampOf(x)`:
    /// `x` (a timeuuid, timestamp or date) as the result type.
    TimeAs(CqlType, CqlType),
    MinTimeuuid,
    MaxTimeuuid,
    /// `blobAsT(b)`: the bytes of a blob, checked to be a `T`.
    BlobAs(CqlType),
    /// `tAsBlob(x)`: a value's bytes as a blob.
    AsBlob,
    /// `token(k…)`: the partition key's token (its one argument is the row key's bytes).
    Token,
    /// `CAST(x AS t)`: (from, to).
    Cast(CqlType, CqlType),
    /// `l op r` on numbers of types (l, r), computed in the result's type.
    Arith(ArithOp, CqlType, CqlType),
    /// `-x`
    Negate(CqlType),
    /// `t + d` or `t - d` of a timestamp or a date (this type) and a duration.
    Temporal(ArithOp, CqlType),
    /// `a + b` of two strings: their concatenation.
    Concat,
    /// `c[k]` of a map or set of this type: (collection, key).
    Element(CqlType),
    /// `c[a..b]` of a map or set of this type: (collection, from, to), an absent end open.
    Slice(CqlType),
    /// `toJson(x)` of a value of this type.
    ToJson(CqlType),
    /// `u.f`: field `usize` of a value of this (frozen) user type.
    Field(CqlType, usize),
    /// `similarity_…(a, b)` of two `vector<float, n>`.
    Similarity(Similarity),
    /// `writetime(…)`, `ttl(…)` and their kin of cells below a column: (the column's cell
    /// records or one cell's time, and the part selected where the selector goes below them).
    CellTime(Box<cell_time::CellTime>),
}

/// Cassandra 5's vector similarities, each scaled into [0, 1] as its ANN search scores them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Similarity {
    /// (1 + cos θ) / 2
    Cosine,
    /// 1 / (1 + ‖a − b‖²)
    Euclidean,
    /// (1 + a·b) / 2
    DotProduct,
}

/// The similarity of two float vectors' bytes.
fn similarity(s: Similarity, a: &[u8], b: &[u8]) -> Result<Vec<u8>, CqlError> {
    let floats = |v: &[u8]| -> Vec<f32> {
        v.chunks_exact(4)
            .map(|c| f32::from_be_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    let (x, y) = (floats(a), floats(b));
    if x.len() != y.len() || !a.len().is_multiple_of(4) {
        return Err(CqlError::invalid("vectors of different sizes"));
    }
    let dot: f32 = x.iter().zip(&y).map(|(p, q)| p * q).sum();
    let v = match s {
        Similarity::Cosine => {
            let norm = |v: &[f32]| v.iter().map(|p| p * p).sum::<f32>().sqrt();
            let (nx, ny) = (norm(&x), norm(&y));
            if nx == 0.0 || ny == 0.0 {
                return Err(CqlError::invalid(
                    "Function system.similarity_cosine doesn't support all-zero vectors",
                ));
            }
            (1.0 + dot / (nx * ny)) / 2.0
        }
        Similarity::Euclidean => {
            let d2: f32 = x.iter().zip(&y).map(|(p, q)| (p - q) * (p - q)).sum();
            1.0 / (1.0 + d2)
        }
        Similarity::DotProduct => (1.0 + dot) / 2.0,
    };
    Ok(v.to_be_bytes().to_vec())
}

/// A function chosen for a call: what it is, the types its arguments take, what it returns.
#[derive(Debug, Clone)]
pub(super) struct Chosen {
    pub native: Native,
    pub params: Vec<CqlType>,
    pub returns: CqlType,
}

/// What is known of an argument when a function is chosen: its type, or (a literal) the value
/// as written, which fits any type it can be read as.
pub(super) enum Arg<'a> {
    Typed(CqlType),
    Literal(&'a Literal),
}

impl Arg<'_> {
    fn fits(&self, ty: &CqlType) -> bool {
        match self {
            Arg::Typed(t) => t == ty,
            Arg::Literal(Literal::Null | Literal::Marker(..)) => true,
            Arg::Literal(l) => ty.encode(l, "").is_ok(),
        }
    }
}

/// The scalar types `blobAsT` and `tAsBlob` exist for.
const BLOB_TYPES: [&str; 20] = [
    "ascii",
    "bigint",
    "blob",
    "boolean",
    "date",
    "decimal",
    "double",
    "duration",
    "float",
    "inet",
    "int",
    "smallint",
    "text",
    "time",
    "timestamp",
    "timeuuid",
    "tinyint",
    "uuid",
    "varchar",
    "varint",
];

/// The older name of a native function Cassandra 5 also names in snake case (`to_date`,
/// `blob_as_text`, `int_as_blob`, …); other names as they are.
pub(super) fn unsnaked(name: &str) -> std::borrow::Cow<'_, str> {
    let old = match name {
        "current_timeuuid" => "currenttimeuuid",
        "current_timestamp" => "currenttimestamp",
        "current_date" => "currentdate",
        "current_time" => "currenttime",
        "to_date" => "todate",
        "to_timestamp" => "totimestamp",
        "to_unix_timestamp" => "tounixtimestamp",
        "min_timeuuid" => "mintimeuuid",
        "max_timeuuid" => "maxtimeuuid",
        "to_json" => "tojson",
        "from_json" => "fromjson",
        _ => {
            if let Some(t) = name
                .strip_prefix("blob_as_")
                .filter(|t| BLOB_TYPES.contains(t))
            {
                return format!("blobas{t}").into();
            }
            if let Some(t) = name
                .strip_suffix("_as_blob")
                .filter(|t| BLOB_TYPES.contains(t))
            {
                return format!("{t}asblob").into();
            }
            return name.into();
        }
    };
    old.into()
}

/// The overloads of a function name (lower case): (function, parameters, result).
fn overloads(name: &str) -> Vec<(Native, Vec<CqlType>, CqlType)> {
    let name = unsnaked(name);
    let name = name.as_ref();
    use CqlType::{Bigint, Blob, Date, Time, Timestamp, Timeuuid};
    let time_as = |from: Vec<CqlType>, to: CqlType| {
        from.into_iter()
            .map(|f| (Native::TimeAs(f.clone(), to.clone()), vec![f], to.clone()))
            .collect::<Vec<_>>()
    };
    match name {
        "now" | "currenttimeuuid" => vec![(Native::Now, vec![], Timeuuid)],
        "uuid" => vec![(Native::Uuid, vec![], CqlType::Uuid)],
        "currenttimestamp" => vec![(Native::CurrentTimestamp, vec![], Timestamp)],
        "currentdate" => vec![(Native::CurrentDate, vec![], Date)],
        "currenttime" => vec![(Native::CurrentTime, vec![], Time)],
        "todate" => time_as(vec![Timeuuid, Timestamp, Date], Date),
        "totimestamp" => time_as(vec![Timeuuid, Date, Timestamp], Timestamp),
        "tounixtimestamp" => time_as(vec![Timeuuid, Timestamp, Date], Bigint),
        "dateof" => time_as(vec![Timeuuid], Timestamp),
        "unixtimestampof" => time_as(vec![Timeuuid], Bigint),
        "mintimeuuid" => vec![(Native::MinTimeuuid, vec![Timestamp], Timeuuid)],
        "maxtimeuuid" => vec![(Native::MaxTimeuuid, vec![Timestamp], Timeuuid)],
        _ => {
            if let Some(t) = name.strip_prefix("blobas").and_then(blob_type) {
                return vec![(Native::BlobAs(t.clone()), vec![Blob], t)];
            }
            if let Some(t) = name.strip_suffix("asblob").and_then(blob_type) {
                return vec![(Native::AsBlob, vec![t], Blob)];
            }
            Vec::new()
        }
    }
}

fn blob_type(name: &str) -> Option<CqlType> {
    BLOB_TYPES.contains(&name).then(|| {
        if name == "blob" {
            CqlType::Blob
        } else {
            CqlType::scalar(name).unwrap_or(CqlType::Blob)
        }
    })
}

/// Whether `name` (lower case) is a native scalar function.
pub(super) fn exists(name: &str) -> bool {
    !overloads(name).is_empty()
}

/// The function `name(args…)` calls: the one overload its arguments fit (Cassandra's
/// messages when none or several do).
pub(super) fn choose(name: &str, args: &[Arg<'_>]) -> Result<Chosen, CqlError> {
    let lower = name.to_ascii_lowercase();
    let all = overloads(&lower);
    if all.is_empty() {
        return Err(CqlError::invalid(format!("Unknown function '{lower}'")));
    }
    let fitting: Vec<_> = all
        .iter()
        .filter(|(_, params, _)| {
            params.len() == args.len() && params.iter().zip(args).all(|(p, a)| a.fits(p))
        })
        .collect();
    match fitting.as_slice() {
        [(native, params, returns)] => Ok(Chosen {
            native: native.clone(),
            params: params.clone(),
            returns: returns.clone(),
        }),
        [] => Err(CqlError::invalid(format!(
            "Invalid call to function {}, none of its type signatures match (known type signatures: {})",
            display_name(&lower),
            signatures(&lower, &all)
        ))),
        _ => Err(CqlError::invalid(format!(
            "Ambiguous call to function {} (can be matched by type signatures: {}): use type casts to disambiguate",
            display_name(&lower),
            signatures(&lower, &fitting.into_iter().cloned().collect::<Vec<_>>())
        ))),
    }
}

fn signatures(name: &str, all: &[(Native, Vec<CqlType>, CqlType)]) -> String {
    all.iter()
        .map(|(_, params, returns)| {
            let ps: Vec<String> = params.iter().map(ToString::to_string).collect();
            format!("{} : ({}) -> {returns}", display_name(name), ps.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How Cassandra names a native function in a result's column names: `system.todate`.
pub(super) fn display_name(lower: &str) -> String {
    format!("system.{lower}")
}

/// The function `CAST(x AS to)` is, for an `x` of type `from`.
pub(super) fn cast(from: &CqlType, to: &CqlType) -> Result<Chosen, CqlError> {
    if !number::castable(from, to) && !time::castable(from, to) {
        return Err(CqlError::invalid(format!("{from} cannot be cast to {to}")));
    }
    Ok(Chosen {
        native: Native::Cast(from.clone(), to.clone()),
        params: vec![from.clone()],
        returns: to.clone(),
    })
}

/// `token(k…)`, whose one input is the row key, of the partitioner's token type.
pub(super) fn token(partitioner: Partitioner) -> Chosen {
    Chosen {
        native: Native::Token,
        params: vec![CqlType::Blob],
        returns: token_type(partitioner),
    }
}

/// The CQL type of a partitioner's tokens.
pub(super) fn token_type(p: Partitioner) -> CqlType {
    match p {
        Partitioner::Murmur3 => CqlType::Bigint,
        Partitioner::Random => CqlType::Varint,
        _ => CqlType::Blob,
    }
}

/// The value of `f` for these arguments (`None`: null). A null argument gives null, as in
/// Cassandra's native functions.
// Long because it is one match with an arm per native function, each handing its arguments on.
pub(super) fn call(
    f: &Native,
    args: &[Option<Vec<u8>>],
    cx: &Context<'_>,
) -> Result<Option<Vec<u8>>, CqlError> {
    let arg = |i: usize| args.get(i).and_then(Option::as_deref);
    Ok(Some(match f {
        Native::Now => cx.uuids.next(cx.now_micros).as_bytes().to_vec(),
        Native::Uuid => uuid::Uuid::new_v4().as_bytes().to_vec(),
        Native::CurrentTimestamp => time::millis(cx.now_micros).to_be_bytes().to_vec(),
        Native::CurrentDate => time::date_of_millis(time::millis(cx.now_micros)),
        Native::CurrentTime => time::time_of_day(cx.now_micros),
        Native::TimeAs(from, to) => match arg(0) {
            Some(v) => time::convert(from, to, v)?,
            None => return Ok(None),
        },
        Native::MinTimeuuid | Native::MaxTimeuuid => match arg(0) {
            Some(v) => time::bound_timeuuid(v, *f == Native::MaxTimeuuid)?,
            None => return Ok(None),
        },
        Native::BlobAs(t) => match arg(0) {
            Some(v) => {
                t.check(v).map_err(|e| {
                    CqlError::invalid(format!("In call to function system.blobas{t}, value 0x{} is not a valid binary representation for type {t}: {e}", hex::encode(v)))
                })?;
                v.to_vec()
            }
            None => return Ok(None),
        },
        Native::AsBlob => match arg(0) {
            Some(v) => v.to_vec(),
            None => return Ok(None),
        },
        Native::Token => match arg(0) {
            Some(key) => time::token_bytes(cx.partitioner, key),
            None => return Ok(None),
        },
        Native::Cast(from, to) => match arg(0) {
            Some(v) if time::castable(from, to) => time::cast(from, to, v)?,
            Some(v) => number::cast(from, to, v)?,
            None => return Ok(None),
        },
        Native::Arith(op, l, r) => match (arg(0), arg(1)) {
            (Some(a), Some(b)) => number::arith(*op, l, a, r, b)?,
            _ => return Ok(None),
        },
        Native::Temporal(op, t) => match (arg(0), arg(1)) {
            (Some(a), Some(b)) => temporal::add(t, a, b, *op == ArithOp::Sub).map_err(|why| {
                CqlError::invalid(format!(
                    "the operation '{t} {} duration' failed: {why}",
                    op.symbol()
                ))
            })?,
            _ => return Ok(None),
        },
        Native::Concat => match (arg(0), arg(1)) {
            (Some(a), Some(b)) => [a, b].concat(),
            _ => return Ok(None),
        },
        Native::Negate(t) => match arg(0) {
            Some(v) => number::negate(t, v)?,
            None => return Ok(None),
        },
        Native::Element(t) => match (arg(0), arg(1)) {
            (Some(c), Some(k)) => return element::element(t, c, k),
            _ => return Ok(None),
        },
        Native::Similarity(s) => match (arg(0), arg(1)) {
            (Some(a), Some(b)) => similarity(*s, a, b)?,
            _ => return Ok(None),
        },
        Native::ToJson(t) => match arg(0) {
            Some(v) => t.to_json(v).into_bytes(),
            None => b"null".to_vec(),
        },
        Native::Field(t, i) => return field(t, *i, arg(0)),
        Native::Slice(t) => match arg(0) {
            Some(c) => return element::slice(t, c, arg(1), arg(2)),
            None => return Ok(None),
        },
        Native::CellTime(ct) => return cell_time::value(ct, args),
    }))
}

/// Field `i` of `value`, a value of the user type `t` (frozen or not).
fn field(t: &CqlType, i: usize, value: Option<&[u8]>) -> Result<Option<Vec<u8>>, CqlError> {
    let u = match t {
        CqlType::Frozen(inner) => inner.as_ref(),
        t => t,
    };
    match (value, u) {
        (Some(v), CqlType::Udt(u)) => {
            let fields = CqlType::udt_fields(u, v).map_err(CqlError::invalid)?;
            Ok(fields.into_iter().nth(i).flatten())
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests;
