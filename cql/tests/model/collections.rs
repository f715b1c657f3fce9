//! The collection part of the CQL model: `map`, `set` and `list` columns of the key types, the
//! statements that change them (whole values, `+`, prepends, `-`, `c[k] = v`, `DELETE c[k]`,
//! `DELETE c`), and what `SELECT` must return: the live elements, serialized as the protocol
//! does (a count, then each element's length and bytes), in the collection's order (a map's and
//! a set's by key rank, a list's by where each element went in), `null` when empty. Every step
//! carries a higher `USING TIMESTAMP` than the last, so the model keeps only what is live: each
//! operation supersedes what came before it.

use std::collections::BTreeMap;

use super::{Rng, Val, FROZEN_TYPES, KEY_TYPES};

/// A collection column's kind and the values its parts take.
pub enum Kind {
    Map(&'static [Val], &'static [Val]),
    Set(&'static [Val]),
    List(&'static [Val]),
}

pub struct Coll {
    pub name: String,
    pub kind: Kind,
    pub ty: String,
}

/// A collection's live elements: order key → (element or map key bytes, map value or list
/// value bytes). A map's and a set's order key is the key's rank; a list's, its position.
#[derive(Default, Clone, Debug)]
pub struct State {
    elems: BTreeMap<i64, (Vec<u8>, Vec<u8>)>,
}

pub fn coll(rng: &mut Rng, i: usize) -> Coll {
    let which = rng.pick(3);
    // Any element, key or value may be a frozen collection (a set's elements and a map's keys
    // name cells, in the frozen collection's order).
    let types: Vec<_> = KEY_TYPES.iter().chain(FROZEN_TYPES).collect();
    let key = *types[rng.pick(types.len())];
    let value = *types[rng.pick(types.len())];
    let (kind, text) = match which {
        0 => (
            Kind::Map(key.1, value.1),
            format!("map<{}, {}>", key.0, value.0),
        ),
        1 => (Kind::Set(key.1), format!("set<{}>", key.0)),
        _ => (Kind::List(value.1), format!("list<{}>", value.0)),
    };
    Coll {
        name: format!("w{i}"),
        kind,
        ty: text,
    }
}

impl State {
    /// The value `SELECT` returns: `None` when no element is live.
    pub fn selected(&self, c: &Coll) -> Option<Vec<u8>> {
        if self.elems.is_empty() {
            return None;
        }
        let mut out = (self.elems.len() as i32).to_be_bytes().to_vec();
        for (a, b) in self.elems.values() {
            let parts: &[&[u8]] = match c.kind {
                Kind::Map(..) => &[a, b],
                Kind::Set(_) => &[a],
                Kind::List(_) => &[b],
            };
            for p in parts {
                out.extend_from_slice(&(p.len() as i32).to_be_bytes());
                out.extend_from_slice(p);
            }
        }
        Some(out)
    }

    pub fn is_live(&self) -> bool {
        !self.elems.is_empty()
    }
}

/// A literal of `n` random elements, applied to `state` by `apply` as it is built (so a map's
/// repeated key keeps its last value, as CQL does). `seq` numbers list positions.
fn literal(rng: &mut Rng, c: &Coll, mut apply: impl FnMut(i64, Vec<u8>, Vec<u8>)) -> String {
    let n = rng.pick(4);
    let mut parts = Vec::new();
    for _ in 0..n {
        match c.kind {
            Kind::Map(k, v) => {
                let (k, v) = (&k[rng.pick(k.len())], &v[rng.pick(v.len())]);
                parts.push(format!("{}: {}", k.0, v.0));
                apply(i64::from(k.2), k.1.to_vec(), v.1.to_vec());
            }
            Kind::Set(e) | Kind::List(e) => {
                let e = &e[rng.pick(e.len())];
                parts.push(e.0.to_string());
                apply(i64::from(e.2), e.1.to_vec(), e.1.to_vec());
            }
        }
    }
    let (open, close) = match c.kind {
        Kind::List(_) => ("[", "]"),
        _ => ("{", "}"),
    };
    format!("{open}{}{close}", parts.join(", "))
}

/// Positions for list elements: appends count up from the middle, prepends count down, and
/// each statement's elements keep their order.
pub struct Positions(i64);

impl Default for Positions {
    fn default() -> Self {
        Positions(1)
    }
}

impl Positions {
    fn append(&mut self) -> i64 {
        self.0 += 1;
        self.0 * 1000
    }

    fn prepend(&mut self) -> i64 {
        self.0 += 1;
        -self.0 * 1000
    }
}

/// `c = LITERAL` (or null): the state after an INSERT or UPDATE that sets it whole.
pub fn replace(rng: &mut Rng, c: &Coll, state: &mut State, pos: &mut Positions) -> String {
    state.elems.clear();
    if rng.pick(6) == 0 {
        return "null".into();
    }
    let base = pos.append();
    let mut i = 0;
    literal(rng, c, |rank, a, b| {
        let key = match c.kind {
            Kind::List(_) => {
                i += 1;
                base + i
            }
            _ => rank,
        };
        state.elems.insert(key, (a, b));
    })
}

/// A random change to collection `c`: the text of an UPDATE's `SET` clause or a DELETE's column
/// spec (`true`), or `None` when the operation picked has nothing to act on (a list index).
pub fn change(
    rng: &mut Rng,
    c: &Coll,
    state: &mut State,
    pos: &mut Positions,
) -> Option<(String, bool)> {
    let n = &c.name;
    let list = matches!(c.kind, Kind::List(_));
    Some(match rng.pick(7) {
        0 => (format!("{n} = {}", replace(rng, c, state, pos)), false),
        1 | 2 => {
            let prepend = list && rng.pick(2) == 0;
            let base = if prepend { pos.prepend() } else { pos.append() };
            let mut i = 0;
            let lit = literal(rng, c, |rank, a, b| {
                let key = if list {
                    i += 1;
                    base + i
                } else {
                    rank
                };
                state.elems.insert(key, (a, b));
            });
            if prepend {
                (format!("{n} = {lit} + {n}"), false)
            } else {
                (format!("{n} = {n} + {lit}"), false)
            }
        }
        3 => {
            // A set's elements, a map's keys (given as a set), a list's values go.
            let mut gone = Vec::new();
            let values = match c.kind {
                Kind::Map(k, _) => k,
                Kind::Set(e) | Kind::List(e) => e,
            };
            let mut parts = Vec::new();
            for _ in 0..1 + rng.pick(2) {
                let v = &values[rng.pick(values.len())];
                parts.push(v.0.to_string());
                gone.push((i64::from(v.2), v.1.to_vec()));
            }
            state.elems.retain(|k, (_, b)| {
                !gone.iter().any(|(rank, bytes)| match c.kind {
                    Kind::List(_) => b == bytes,
                    _ => k == rank,
                })
            });
            let (open, close) = if list { ("[", "]") } else { ("{", "}") };
            (
                format!("{n} = {n} - {open}{}{close}", parts.join(", ")),
                false,
            )
        }
        4 => {
            state.elems.clear();
            (n.clone(), true)
        }
        m => {
            let delete = m == 6;
            if delete {
                // `DELETE s[…]` is no operation of a set; delete the whole set instead.
                if let Kind::Set(_) = c.kind {
                    state.elems.clear();
                    return Some((n.clone(), true));
                }
            }
            let (index, key) = match c.kind {
                Kind::Map(k, _) => {
                    let k = &k[rng.pick(k.len())];
                    (k.0.to_string(), Some((i64::from(k.2), k.1.to_vec())))
                }
                Kind::List(_) => {
                    if state.elems.is_empty() {
                        return None;
                    }
                    let i = rng.pick(state.elems.len());
                    let at = *state.elems.keys().nth(i)?;
                    (i.to_string(), Some((at, Vec::new())))
                }
                Kind::Set(_) => return None,
            };
            let (at, kbytes) = key?;
            if delete {
                state.elems.remove(&at);
                return Some((format!("{n}[{index}]"), true));
            }
            let values = match c.kind {
                Kind::Map(_, v) | Kind::List(v) | Kind::Set(v) => v,
            };
            let v = &values[rng.pick(values.len())];
            let a = if list {
                state
                    .elems
                    .get(&at)
                    .map(|e| e.0.clone())
                    .unwrap_or_default()
            } else {
                kbytes
            };
            state.elems.insert(at, (a, v.1.to_vec()));
            (format!("{n}[{index}] = {}", v.0), false)
        }
    })
}
