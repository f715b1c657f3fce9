//! The database-wide settings kept with the schema, so a database reopened without its
//! `storage-conf.xml` runs as it was created: batch mode stays batch mode.
//!
//! At open, a setting the caller gave — named in the conf file, or set in code to something
//! other than its default — overrides the stored one; every other setting comes from what is
//! stored. The result is what is in force, stored again if it changed. Each setting is kept
//! under its `storage-conf.xml` element name, so a later build can add settings and an older
//! one skips names it does not know.

use std::path::PathBuf;

use super::{CommitLogSync, Options};
use crate::codec::{Reader, Writer};
use crate::error::FormatError;

/// One kind of setting value: how it is stored and shown.
trait Value: Sized + PartialEq + Clone {
    fn put(&self, w: &mut Writer);
    fn get(r: &mut Reader<'_>) -> Result<Self, FormatError>;
    fn show(&self) -> String;
}

impl Value for u32 {
    fn put(&self, w: &mut Writer) {
        w.u32(*self);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, FormatError> {
        r.u32()
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

impl Value for f64 {
    fn put(&self, w: &mut Writer) {
        w.f64(*self);
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, FormatError> {
        r.f64()
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

impl Value for Option<u32> {
    fn put(&self, w: &mut Writer) {
        w.opt(*self, |w, v| w.u32(v));
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, FormatError> {
        r.opt(|r| r.u32())
    }
    fn show(&self) -> String {
        self.map_or("default".into(), |v| v.to_string())
    }
}

impl Value for Option<PathBuf> {
    fn put(&self, w: &mut Writer) {
        w.opt(self.as_ref(), |w, p| w.str(&p.to_string_lossy()));
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, FormatError> {
        r.opt(|r| r.str().map(PathBuf::from))
    }
    fn show(&self) -> String {
        self.as_ref()
            .map_or("inside the data directory".into(), |p| {
                p.display().to_string()
            })
    }
}

impl Value for CommitLogSync {
    fn put(&self, w: &mut Writer) {
        match *self {
            CommitLogSync::Periodic { period_ms } => {
                w.u8(0);
                w.u64(period_ms);
            }
            CommitLogSync::Batch { window_ms } => {
                w.u8(1);
                w.f64(window_ms);
            }
        }
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, FormatError> {
        match r.u8()? {
            0 => Ok(CommitLogSync::Periodic {
                period_ms: r.u64()?,
            }),
            1 => Ok(CommitLogSync::Batch {
                window_ms: r.f64()?,
            }),
            t => Err(r.error(format!("commit log sync mode {t}"))),
        }
    }
    fn show(&self) -> String {
        match self {
            CommitLogSync::Periodic { period_ms } => format!("periodic (every {period_ms} ms)"),
            CommitLogSync::Batch { window_ms } => format!("batch (window {window_ms} ms)"),
        }
    }
}

/// For every stored setting: its element name and its field of [`Options`].
macro_rules! for_each_setting {
    ($m:ident) => {
        $m! {
            "CommitLogDirectory" => commit_log_directory,
            "CommitLogSegmentSizeInMB" => commit_log_segment_size_mb,
            "CommitLogSync" => commit_log_sync,
            "MemtableThroughputInMB" => memtable_throughput_mb,
            "MemtableTotalSpaceInMB" => memtable_total_space_mb,
            "MemtableOperationsInMillions" => memtable_operations_millions,
            "MemtableFlushAfterMinutes" => memtable_flush_after_minutes,
            "BloomFilterFpChance" => bloom_filter_fp_chance,
            "BlockCacheSizeInMB" => block_cache_size_mb,
            "ColumnIndexSizeInKB" => column_index_size_kb,
            "GCGraceSeconds" => gc_grace_seconds,
            "MinimumCompactionThreshold" => min_compaction_threshold,
            "MaximumCompactionThreshold" => max_compaction_threshold,
        }
    };
}

/// The names of the stored settings, as `storage-conf.xml` spells them.
pub const NAMES: &[&str] = &{
    macro_rules! names {
        ($($name:literal => $field:ident,)*) => { [$($name),*] };
    }
    for_each_setting!(names)
};

impl Options {
    /// The stored settings' encoding (what the catalog keeps).
    pub(crate) fn encode_settings(&self) -> Vec<u8> {
        let mut w = Writer::default();
        macro_rules! put {
            ($($name:literal => $field:ident,)*) => {
                w.u32(NAMES.len() as u32);
                $(
                    w.str($name);
                    let mut v = Writer::default();
                    self.$field.put(&mut v);
                    w.bytes(&v.buf);
                )*
            };
        }
        for_each_setting!(put);
        w.buf
    }

    /// These options with the stored settings in `stored` filled in wherever these leave a
    /// setting at its default and no configuration file named it. Returns the options in force.
    pub(crate) fn with_stored_settings(&self, stored: &[u8]) -> Result<Options, FormatError> {
        let defaults = Options::default();
        let mut out = self.clone();
        let mut r = Reader::new(stored);
        let n = r.count(4 + 4)?;
        for _ in 0..n {
            let name = r.str()?;
            let mut v = Reader::new(r.bytes()?);
            macro_rules! take {
                ($($n:literal => $field:ident,)*) => {
                    match name {
                        $(
                            $n => {
                                let value = Value::get(&mut v)?;
                                if !self.given.contains($n) && self.$field == defaults.$field {
                                    out.$field = value;
                                }
                            }
                        )*
                        other => tracing::warn!("SCHEMA.db keeps a setting '{other}' this build does not know; ignored"),
                    }
                };
            }
            for_each_setting!(take);
        }
        if r.remaining() != 0 {
            return Err(r.error("trailing bytes after the settings"));
        }
        Ok(out)
    }

    /// The stored settings in force, one `Name: value` line each (for `describe` and `stats`).
    pub fn settings_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        macro_rules! show {
            ($($name:literal => $field:ident,)*) => {
                $( lines.push(format!("{}: {}", $name, self.$field.show())); )*
            };
        }
        for_each_setting!(show);
        lines
    }

    /// Makes the setting `name` (its `storage-conf.xml` element, one of
    /// [`STORED_SETTINGS`](crate::options::STORED_SETTINGS)) override the one the database
    /// keeps even when it equals the default; a setting changed from its default overrides
    /// anyway. Configuration files do this for every element they name.
    pub fn mark_given(&mut self, name: &'static str) {
        self.given.insert(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_settings_fill_in_what_was_not_given() {
        let created = Options {
            commit_log_sync: CommitLogSync::Batch { window_ms: 2.0 },
            min_compaction_threshold: 6,
            column_index_size_kb: Some(16),
            ..Options::default()
        };
        let stored = created.encode_settings();

        let reopened = Options::default().with_stored_settings(&stored).unwrap();
        assert_eq!(reopened.commit_log_sync, created.commit_log_sync);
        assert_eq!(reopened.min_compaction_threshold, 6);
        assert_eq!(reopened.column_index_size_kb, Some(16));

        // Given in code: it wins.
        let given = Options {
            min_compaction_threshold: 8,
            ..Options::default()
        };
        let o = given.with_stored_settings(&stored).unwrap();
        assert_eq!(
            (o.min_compaction_threshold, o.commit_log_sync),
            (8, created.commit_log_sync)
        );

        // Named by a conf file, even at its default value: it wins too.
        let mut conf = Options::default();
        conf.mark_given("CommitLogSync");
        let o = conf.with_stored_settings(&stored).unwrap();
        assert_eq!(o.commit_log_sync, CommitLogSync::default());
    }

    #[test]
    fn unknown_settings_are_skipped_and_damage_is_an_error() {
        let mut w = Writer::default();
        w.u32(1);
        w.str("SomethingNew");
        w.bytes(&[1, 2, 3]);
        assert!(Options::default().with_stored_settings(&w.buf).is_ok());
        let stored = Options::default().encode_settings();
        for n in 0..stored.len() {
            assert!(
                Options::default()
                    .with_stored_settings(&stored[..n])
                    .is_err(),
                "cut at {n}"
            );
        }
    }

    #[test]
    fn every_setting_is_shown() {
        let lines = Options::default().settings_lines();
        assert_eq!(lines.len(), NAMES.len());
        assert!(lines.contains(&"CommitLogSync: periodic (every 10000 ms)".to_string()));
    }
}
