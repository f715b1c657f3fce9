//! Replay: reading the commit log back at open, in order, handing each intact record to the
//! caller with its position — and proving first that the log is whole.
//!
//! What must be there: every segment from the manifest's `log_oldest` on (older ones are
//! provably flushed), consecutively numbered, including the one the last open started
//! (`log_start`). Each segment's header records how far its predecessor's intact records ran, so
//! an older segment cut short or damaged is caught, and a segment closed by an end-of-segment
//! marker says its successor must exist. Only the newest segment may end in a torn tail (a
//! crash mid-append); anywhere else a tail, a gap or damage is lost acknowledged data, and
//! replay stops with [`Error::Corrupt`] naming the file and offset — unless the caller asked to
//! ignore replay errors, and then each problem is reported and what it lost is skipped.

use std::path::{Path, PathBuf};

use super::record::{self, RowMutation};
use super::segment::{self, Ending, Header};
use super::LogPosition;
use crate::error::{CorruptKind, Error, FormatError, Place, Result};
use crate::file_names;
use crate::io::FileSystem;

/// What the manifest says of the log's extent (0: not known).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogBounds {
    /// Every segment from this one on must exist.
    pub oldest: u64,
    /// The segment the last open started; it must exist.
    pub start: u64,
}

/// What replay found.
#[derive(Debug, Default)]
pub struct Replayed {
    /// The highest segment number present in the folder (0: none).
    pub max_seq: u64,
    /// The segments replayed, oldest first: they hold data until the memtables are flushed.
    pub segments: Vec<(u64, PathBuf)>,
    /// The newest replayed segment and the offset its intact records end at: the next segment
    /// records it in its header.
    pub newest_end: Option<(u64, u64)>,
    /// Segments older than the manifest's bound: flushed, so to be deleted.
    pub obsolete: Vec<PathBuf>,
    /// Records replayed.
    pub records: u64,
    /// When errors were ignored: each problem and what it dropped, one line each.
    pub dropped: Vec<String>,
}

/// The segment files in `dir`, by sequence number.
pub fn segments_in(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let entries = match fs.read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut out: Vec<(u64, PathBuf)> = entries
        .into_iter()
        .filter_map(|entry| {
            let name = entry.path.file_name()?.to_str()?;
            file_names::parse_segment(name).map(|seq| (seq, entry.path))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// Problems found: an error at once, or (ignoring errors) a line each.
struct Problems {
    ignore: bool,
    dropped: Vec<String>,
}

impl Problems {
    fn report(&mut self, path: &Path, fault: FormatError) -> Result<()> {
        let e = Error::corrupt(path, fault);
        if !self.ignore {
            return Err(e);
        }
        let line = e.to_string();
        tracing::warn!("commit log replay error ignored: {line}");
        self.dropped.push(line);
        Ok(())
    }
}

fn missing(reason: &str) -> FormatError {
    FormatError::new(CorruptKind::Missing, reason)
}

/// Where in the file a fault is, as an offset (0 when it names no offset).
fn offset_of(e: &FormatError) -> u64 {
    match e.place {
        Place::Offset(o) => o,
        _ => 0,
    }
}

/// The header of the segment at `path`, if it has an intact one.
fn header_of(fs: &dyn FileSystem, path: &Path) -> Option<Header> {
    use std::io::Read;
    let mut buf = Vec::with_capacity(segment::HEADER_LEN as usize);
    fs.open_read(path)
        .and_then(|f| f.take(segment::HEADER_LEN).read_to_end(&mut buf))
        .ok()?;
    segment::read(&buf).header
}

/// Replays the log in `dir` within `bounds`, handing every record to `apply` in order.
// Long because each segment is checked against the ones around it (torn tails, what the next
// segment's header says of this one) in one loop over shared state.
pub fn replay_log(
    fs: &dyn FileSystem,
    dir: &Path,
    bounds: LogBounds,
    ignore_errors: bool,
    apply: &mut dyn FnMut(LogPosition, RowMutation) -> Result<()>,
) -> Result<Replayed> {
    let all = segments_in(fs, dir)?;
    let mut out = Replayed {
        max_seq: all.last().map_or(0, |s| s.0),
        ..Replayed::default()
    };
    let (obsolete, live): (Vec<_>, Vec<_>) = all.into_iter().partition(|s| s.0 < bounds.oldest);
    out.obsolete = obsolete.into_iter().map(|s| s.1).collect();
    let mut problems = Problems {
        ignore: ignore_errors,
        dropped: Vec::new(),
    };
    let path_of = |seq: u64| dir.join(file_names::segment(seq));
    if bounds.oldest > 0 && live.first().map(|s| s.0) != Some(bounds.oldest) {
        problems.report(
            &path_of(bounds.oldest),
            missing("the manifest says every commit log segment from this one on holds unflushed writes"),
        )?;
    }
    if bounds.start > 0 && live.last().is_none_or(|s| s.0 < bounds.start) {
        problems.report(
            &path_of(bounds.start),
            missing("the manifest says the commit log was started here at the last open"),
        )?;
    }
    for w in live.windows(2) {
        if w[1].0 != w[0].0 + 1 {
            problems.report(
                &path_of(w[0].0 + 1),
                missing(&format!(
                    "the commit log has segments {} and {} but none between",
                    w[0].0, w[1].0
                )),
            )?;
        }
    }
    for (i, (seq, path)) in live.iter().enumerate() {
        let (seq, path) = (*seq, path.as_path());
        let newest = i + 1 == live.len();
        let bytes = fs.read(path).map_err(|e| Error::io(path, e))?;
        let c = segment::read(&bytes);
        // What the next segment's header says of this one: where its intact records ended when
        // the next was started (0: it held none).
        let next_says = live
            .get(i + 1)
            .filter(|n| n.0 == seq + 1)
            .and_then(|n| header_of(fs, &n.1))
            .and_then(|h| h.prev_end);
        match c.header {
            // A segment whose header never reached the disk (an open that failed or died right
            // after creating it) holds no records, and the next segment, started after a replay
            // that read it, says so: nothing is lost.
            None if !newest && next_says == Some(0) => tracing::info!(
                "{} has no complete header and held no records (the next segment says so)",
                path.display()
            ),
            None if !newest && !matches!(c.ending, Ending::Damaged(_)) => problems.report(
                path,
                FormatError::new(
                    CorruptKind::Truncated,
                    "its header is cut short, yet later segments follow",
                ),
            )?,
            Some(h) if h.seq != seq => problems.report(
                path,
                FormatError::malformed(format!(
                    "the header says segment {}, the name says {seq}",
                    h.seq
                )),
            )?,
            _ => {}
        }
        // How far the next segment says this one's intact records ran.
        let limit = next_says.filter(|p| *p > 0);
        match &c.ending {
            Ending::Damaged(e) if limit.is_none_or(|l| offset_of(e) < l) => {
                problems.report(path, e.clone().also("the records from there on are lost"))?
            }
            Ending::Closed(_) if newest => problems.report(
                &path_of(seq + 1),
                missing(&format!(
                    "segment {seq} ends saying the log goes on in this one"
                )),
            )?,
            Ending::Torn(at) if newest => {
                tracing::info!(
                    "{} ends in a torn record at offset {at} (a crash mid-write)",
                    path.display()
                );
            }
            _ => {}
        }
        if let Some(l) = limit {
            if c.valid_end() < l {
                problems.report(
                    path,
                    FormatError::new(
                        CorruptKind::Truncated,
                        format!(
                            "cut short: its intact records end here, but segment {} says they \
                             ran to offset {l}",
                            seq + 1
                        ),
                    )
                    .at(Place::Offset(c.valid_end())),
                )?;
            }
        }
        // Records are read only after a header, which names their format.
        let version = c.header.map_or(segment::VERSION, |h| h.version);
        for span in c
            .records
            .iter()
            .filter(|r| limit.is_none_or(|l| r.end() <= l))
        {
            let payload = &bytes[span.payload as usize..span.end() as usize];
            let m = match record::decode(payload, version) {
                Ok(m) => m,
                Err(e) => {
                    problems.report(
                        path,
                        e.at(Place::Offset(span.payload))
                            .also("the records from there on are lost"),
                    )?;
                    break;
                }
            };
            apply(
                LogPosition {
                    segment: seq,
                    offset: span.start,
                },
                m,
            )?;
            out.records += 1;
        }
        if c.header.is_some() {
            out.newest_end = Some((seq, c.valid_end()));
        }
        out.segments.push((seq, path.to_path_buf()));
    }
    out.dropped = problems.dropped;
    Ok(out)
}

/// The body of the `commitlog_replay` fuzz target: arbitrary bytes as a segment must give records
/// or an error, never a panic, a hang, or an allocation sized by the input's claims.
#[cfg(feature = "testing")]
pub fn fuzz_segment(bytes: &[u8]) -> std::result::Result<u64, String> {
    let c = segment::read(bytes);
    let version = c.header.map_or(segment::VERSION, |h| h.version);
    let mut n = 0;
    for span in &c.records {
        let payload = &bytes[span.payload as usize..span.end() as usize];
        let m = record::decode(payload, version).map_err(|e| e.to_string())?;
        std::hint::black_box(m);
        n += 1;
    }
    match c.ending {
        Ending::Damaged(e) => Err(e.to_string()),
        _ => Ok(n),
    }
}
