//! Reads `storage-conf.xml` (SPEC §6) with a real XML parser.
//!
//! The root may be `<Storage>` (Cassandra's own file), `<Keyspaces>` or a single `<Keyspace>` (as
//! the seeds quote it). Every mistake is a [`ConfError`] naming the line, the element and, where
//! it is one, the attribute; unknown elements and attributes are collected as warnings (and
//! logged) and otherwise ignored. This file turns text into [`Options`]; it opens no database.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use roxmltree::{Document, Node};

mod column;

use super::{CommitLogSync, Options};
use crate::error::{ConfError, Error};
use crate::model::comparator::{Comparator, ComparatorRegistry};
use crate::model::partitioner::Partitioner;
use crate::schema::{ColumnFamilyDef, ColumnType, KeysCached, KeyspaceDef};

/// A parsed configuration: the options it sets and the warnings it raised.
#[derive(Debug, Clone)]
pub struct StorageConf {
    /// Options with every element of the file applied (and `keyspaces` set when it has any).
    pub options: Options,
    /// Unknown elements and attributes, one line each, with their line numbers.
    pub warnings: Vec<String>,
}

impl StorageConf {
    /// Reads and parses a file.
    pub fn load(path: &Path, comparators: &ComparatorRegistry) -> Result<StorageConf, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Ok(Self::parse_with_file(&text, Some(path), comparators)?)
    }

    /// Parses configuration text.
    pub fn parse(text: &str, comparators: &ComparatorRegistry) -> Result<StorageConf, ConfError> {
        Self::parse_with_file(text, None, comparators)
    }

    fn parse_with_file(
        text: &str,
        file: Option<&Path>,
        comparators: &ComparatorRegistry,
    ) -> Result<StorageConf, ConfError> {
        let doc = Document::parse(text).map_err(|e| ConfError {
            file: file.map(Path::to_path_buf),
            line: e.pos().row,
            element: "?".into(),
            attribute: None,
            message: format!("not well-formed XML: {e}"),
        })?;
        let mut p = Parser {
            doc: &doc,
            file,
            comparators,
            warnings: Vec::new(),
            options: Options {
                comparators: comparators.clone(),
                ..Options::default()
            },
        };
        let root = doc.root_element();
        match root.tag_name().name() {
            "Storage" => p.storage(root)?,
            "Keyspaces" => p.options.keyspaces = Some(p.keyspaces(root)?),
            "Keyspace" => p.options.keyspaces = Some(vec![p.keyspace(root)?]),
            other => {
                return Err(p.err(
                    root,
                    None,
                    format!(
                    "the root element must be <Storage>, <Keyspaces> or <Keyspace>, not <{other}>"
                ),
                ))
            }
        }
        for w in &p.warnings {
            tracing::warn!("{w}");
        }
        Ok(StorageConf {
            options: p.options,
            warnings: p.warnings,
        })
    }
}

fn elements<'a, 'b>(node: Node<'a, 'b>) -> impl Iterator<Item = Node<'a, 'b>> {
    node.children().filter(Node::is_element)
}

struct Parser<'d, 'i> {
    doc: &'d Document<'i>,
    file: Option<&'d Path>,
    comparators: &'d ComparatorRegistry,
    warnings: Vec<String>,
    options: Options,
}

impl<'d, 'i> Parser<'d, 'i> {
    fn line_of(&self, pos: usize) -> u32 {
        self.doc.text_pos_at(pos).row
    }

    fn err(&self, node: Node, attribute: Option<&str>, message: impl Into<String>) -> ConfError {
        let pos = attribute
            .and_then(|a| node.attribute_node(a))
            .map_or(node.range().start, |a| a.range().start);
        ConfError {
            file: self.file.map(Path::to_path_buf),
            line: self.line_of(pos),
            element: node.tag_name().name().to_string(),
            attribute: attribute.map(str::to_string),
            message: message.into(),
        }
    }

    fn warn(&mut self, node: Node, what: String) {
        let line = self.line_of(node.range().start);
        let file = self
            .file
            .map_or("storage-conf.xml".to_string(), |p| p.display().to_string());
        self.warnings.push(format!(
            "{file}:{line}: {what} is not known and was ignored"
        ));
    }

    fn text<'n>(&self, node: Node<'n, '_>) -> Result<&'n str, ConfError> {
        let t = node.text().unwrap_or("").trim();
        if t.is_empty() {
            return Err(self.err(node, None, "the element is empty"));
        }
        Ok(t)
    }

    fn number<T: FromStr>(&self, node: Node) -> Result<T, ConfError> {
        let t = self.text(node)?;
        t.parse()
            .map_err(|_| self.err(node, None, format!("'{t}' is not a valid number here")))
    }

    fn positive<T: FromStr + PartialOrd + Default + Copy + std::fmt::Display>(
        &self,
        node: Node,
    ) -> Result<T, ConfError> {
        let v: T = self.number(node)?;
        if v <= T::default() {
            return Err(self.err(node, None, format!("{v} must be positive")));
        }
        Ok(v)
    }

    fn positive_f64(&self, node: Node) -> Result<f64, ConfError> {
        let v: f64 = self.number(node)?;
        if !(v.is_finite() && v > 0.0) {
            return Err(self.err(node, None, format!("{v} must be a positive number")));
        }
        Ok(v)
    }

    fn attr_number<T: FromStr>(&self, node: Node, attr: &str) -> Result<Option<T>, ConfError> {
        match node.attribute(attr) {
            None => Ok(None),
            Some(v) => v.trim().parse().map(Some).map_err(|_| {
                self.err(
                    node,
                    Some(attr),
                    format!("'{v}' is not a valid number here"),
                )
            }),
        }
    }

    fn comparator(&self, node: Node, attr: &str) -> Result<Option<Arc<dyn Comparator>>, ConfError> {
        match node.attribute(attr) {
            None => Ok(None),
            Some(v) => self
                .comparators
                .resolve(v)
                .map(Some)
                .map_err(|e| self.err(node, Some(attr), e.0)),
        }
    }

    // Long because it is one match with an arm per storage-conf.xml element.
    fn storage(&mut self, root: Node) -> Result<(), ConfError> {
        let (mut sync_mode, mut period, mut window) = (None, None, None);
        for n in elements(root) {
            match n.tag_name().name() {
                "Partitioner" => {
                    let t = self.text(n)?;
                    let p = Partitioner::from_class_name(t).ok_or_else(|| {
                        self.err(n, None, format!("unknown partitioner '{t}' (RandomPartitioner, OrderPreservingPartitioner or Murmur3Partitioner)"))
                    })?;
                    self.options.partitioner = Some(p);
                }
                "CommitLogDirectory" => {
                    self.options.commit_log_directory = Some(self.text(n)?.into())
                }
                "DataFileDirectories" => {
                    let mut dirs = Vec::new();
                    for d in elements(n) {
                        if d.tag_name().name() == "DataFileDirectory" {
                            dirs.push(PathBuf::from(self.text(d)?));
                        } else {
                            self.warn(d, format!("element <{}>", d.tag_name().name()));
                        }
                    }
                    self.options.data_file_directories = dirs;
                }
                "CommitLogSegmentSizeInMB" | "CommitLogRotationThresholdInMB" => {
                    self.options.commit_log_segment_size_mb = self.positive(n)?
                }
                "CommitLogSync" => {
                    sync_mode = Some((n, self.text(n)?.to_string()));
                }
                "CommitLogSyncPeriodInMS" => period = Some(self.positive::<u64>(n)?),
                "CommitLogSyncBatchWindowInMS" => window = Some(self.positive_f64(n)?),
                "MemtableThroughputInMB" => {
                    self.options.memtable_throughput_mb = self.positive(n)?
                }
                "MemtableTotalSpaceInMB" => {
                    self.options.memtable_total_space_mb = self.positive(n)?
                }
                "MemtableOperationsInMillions" => {
                    self.options.memtable_operations_millions = self.positive_f64(n)?
                }
                "MemtableFlushAfterMinutes" => {
                    self.options.memtable_flush_after_minutes = self.number(n)?
                }
                "BloomFilterFpChance" => {
                    let v: f64 = self.number(n)?;
                    if !(v > 0.0 && v < 1.0) {
                        return Err(self.err(n, None, format!("{v} is outside (0, 1)")));
                    }
                    self.options.bloom_filter_fp_chance = v;
                }
                "BlockCacheSizeInMB" => self.options.block_cache_size_mb = self.number(n)?,
                "ColumnIndexSizeInKB" => {
                    let v: u32 = self.number(n)?;
                    if v == 0 {
                        return Err(self.err(n, None, "the block size must be at least 1 KB"));
                    }
                    self.options.column_index_size_kb = Some(v);
                }
                "GCGraceSeconds" => self.options.gc_grace_seconds = self.number(n)?,
                "MinimumCompactionThreshold" => {
                    self.options.min_compaction_threshold = self.number(n)?
                }
                "MaximumCompactionThreshold" => {
                    self.options.max_compaction_threshold = self.number(n)?
                }
                "Keyspaces" => self.options.keyspaces = Some(self.keyspaces(n)?),
                other => self.warn(n, format!("element <{other}>")),
            }
            // Named here, so it overrides what a database keeps even at its default value.
            let stored = match n.tag_name().name() {
                "CommitLogSyncPeriodInMS" | "CommitLogSyncBatchWindowInMS" => Some("CommitLogSync"),
                "CommitLogRotationThresholdInMB" => Some("CommitLogSegmentSizeInMB"),
                name => crate::options::STORED_SETTINGS
                    .iter()
                    .find(|s| **s == name)
                    .copied(),
            };
            if let Some(name) = stored {
                self.options.mark_given(name);
            }
        }
        if self.options.min_compaction_threshold > self.options.max_compaction_threshold
            && self.options.max_compaction_threshold != 0
        {
            return Err(ConfError {
                file: self.file.map(Path::to_path_buf),
                line: self.line_of(root.range().start),
                element: "MinimumCompactionThreshold".into(),
                attribute: None,
                message: format!(
                    "MinimumCompactionThreshold {} exceeds MaximumCompactionThreshold {}",
                    self.options.min_compaction_threshold, self.options.max_compaction_threshold
                ),
            });
        }
        self.options.commit_log_sync = match sync_mode {
            None => CommitLogSync::Periodic {
                period_ms: period.unwrap_or(10_000),
            },
            Some((n, mode)) => match mode.as_str() {
                "periodic" => CommitLogSync::Periodic {
                    period_ms: period.unwrap_or(10_000),
                },
                "batch" => CommitLogSync::Batch {
                    window_ms: window.unwrap_or(1.0),
                },
                _ => {
                    return Err(self.err(
                        n,
                        None,
                        format!("'{mode}' is neither 'periodic' nor 'batch'"),
                    ))
                }
            },
        };
        Ok(())
    }

    fn keyspaces(&mut self, node: Node) -> Result<Vec<KeyspaceDef>, ConfError> {
        let mut out: Vec<KeyspaceDef> = Vec::new();
        for n in elements(node) {
            if n.tag_name().name() != "Keyspace" {
                self.warn(n, format!("element <{}>", n.tag_name().name()));
                continue;
            }
            let ks = self.keyspace(n)?;
            if out.iter().any(|o| o.name == ks.name) {
                return Err(self.err(
                    n,
                    Some("Name"),
                    format!("keyspace '{}' is defined twice", ks.name),
                ));
            }
            out.push(ks);
        }
        Ok(out)
    }

    fn name_attr(&self, node: Node, what: &'static str) -> Result<String, ConfError> {
        let name = node
            .attribute("Name")
            .ok_or_else(|| self.err(node, Some("Name"), "the Name attribute is missing"))?;
        crate::schema::validate_identifier(name, what)
            .map_err(|e| self.err(node, Some("Name"), e.to_string()))?;
        Ok(name.to_string())
    }

    fn keyspace(&mut self, node: Node) -> Result<KeyspaceDef, ConfError> {
        let mut ks = KeyspaceDef::new(self.name_attr(node, "keyspace")?);
        for a in node.attributes() {
            if a.name() != "Name" {
                self.warn(node, format!("attribute {} of <Keyspace>", a.name()));
            }
        }
        for n in elements(node) {
            match n.tag_name().name() {
                "KeysCachedFraction" => {
                    let v: f64 = self.number(n)?;
                    if !(0.0..=1.0).contains(&v) {
                        return Err(self.err(n, None, format!("{v} is outside 0..=1")));
                    }
                    ks.keys_cached_fraction = v;
                }
                "ColumnFamily" => {
                    let cf = self.column_family(n)?;
                    if ks.column_family(&cf.name).is_some() {
                        return Err(self.err(
                            n,
                            Some("Name"),
                            format!(
                                "column family '{}' is defined twice in keyspace '{}'",
                                cf.name, ks.name
                            ),
                        ));
                    }
                    ks.column_families.push(cf);
                    ks.validate()
                        .map_err(|e| self.err(n, None, e.to_string()))?;
                }
                "ReplicaPlacementStrategy" => {
                    ks.replica_placement_strategy = self.text(n)?.to_string()
                }
                "ReplicationFactor" => {
                    let rf: u32 = self.number(n)?;
                    if rf == 0 {
                        return Err(self.err(n, None, "ReplicationFactor must be at least 1"));
                    }
                    if rf != 1 {
                        let line = self.line_of(n.range().start);
                        self.warnings.push(format!(
                            "line {line}: ReplicationFactor {rf} is kept for describe keyspace; supercolumn is one node and keeps one copy"
                        ));
                    }
                    ks.replication_factor = rf;
                }
                "EndPointSnitch" => ks.endpoint_snitch = self.text(n)?.to_string(),
                other => self.warn(n, format!("element <{other}>")),
            }
        }
        Ok(ks)
    }

    // Long because it is one match with an arm per ColumnFamily attribute.
    fn column_family(&mut self, n: Node) -> Result<ColumnFamilyDef, ConfError> {
        const KNOWN: &[&str] = &[
            "Name",
            "CompareWith",
            "ColumnType",
            "CompareSubcolumnsWith",
            "Comment",
            "DefaultValidationClass",
            "KeysCached",
            "KeysCachedFraction",
            "GCGraceSeconds",
            "MinimumCompactionThreshold",
            "MaximumCompactionThreshold",
        ];
        let name = self.name_attr(n, "column family")?;
        for a in n.attributes() {
            if !KNOWN.contains(&a.name()) {
                self.warn(
                    n,
                    format!("attribute {} of <ColumnFamily Name=\"{name}\">", a.name()),
                );
            }
        }
        let column_type = match n.attribute("ColumnType") {
            None | Some("Standard") => ColumnType::Standard,
            Some("Super") => ColumnType::Super,
            Some(other) => {
                return Err(self.err(
                    n,
                    Some("ColumnType"),
                    format!("'{other}' is neither 'Standard' nor 'Super'"),
                ))
            }
        };
        let mut cf = match column_type {
            ColumnType::Standard => ColumnFamilyDef::standard(name),
            ColumnType::Super => ColumnFamilyDef::super_family(name),
        };
        if let Some(c) = self.comparator(n, "CompareWith")? {
            cf.comparator = c;
        }
        if let Some(c) = self.comparator(n, "CompareSubcolumnsWith")? {
            if column_type == ColumnType::Standard {
                return Err(self.err(
                    n,
                    Some("CompareSubcolumnsWith"),
                    format!(
                        "column family '{}' is Standard: CompareSubcolumnsWith is only for ColumnType=\"Super\"",
                        cf.name
                    ),
                ));
            }
            cf.subcomparator = Some(c);
        }
        if let Some(c) = self.comparator(n, "DefaultValidationClass")? {
            cf.default_validation_class = c;
        }
        cf.comment = n.attribute("Comment").map(str::to_string).or_else(|| {
            elements(n)
                .find(|c| c.tag_name().name() == "Comment")
                .and_then(|c| c.text())
                .map(|t| t.trim().to_string())
        });
        if let Some(v) = n.attribute("KeysCachedFraction") {
            // 0.6.0-beta1's attribute: always a fraction, 0 disabling the cache.
            let f: f64 = v.trim().parse().map_err(|_| {
                self.err(
                    n,
                    Some("KeysCachedFraction"),
                    format!("'{v}' is not a number"),
                )
            })?;
            if !(0.0..=1.0).contains(&f) {
                return Err(self.err(
                    n,
                    Some("KeysCachedFraction"),
                    format!("{v} is outside 0..=1"),
                ));
            }
            cf.keys_cached = Some(KeysCached::Fraction(f));
        }
        if let Some(v) = n.attribute("KeysCached") {
            let kc = KeysCached::parse(v).map_err(|e| self.err(n, Some("KeysCached"), e))?;
            cf.keys_cached = Some(kc);
        }
        for c in elements(n) {
            if c.tag_name().name() == "Column" {
                self.column(c, &mut cf)?;
            } else if c.tag_name().name() != "Comment" {
                self.warn(
                    c,
                    format!("element <{}> in <ColumnFamily>", c.tag_name().name()),
                );
            }
        }
        cf.gc_grace_seconds = self.attr_number(n, "GCGraceSeconds")?;
        cf.min_compaction_threshold = self.attr_number(n, "MinimumCompactionThreshold")?;
        cf.max_compaction_threshold = self.attr_number(n, "MaximumCompactionThreshold")?;
        cf.validate()
            .map_err(|e| self.err(n, None, e.to_string()))?;
        Ok(cf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<StorageConf, ConfError> {
        StorageConf::parse(text, &ComparatorRegistry::default())
    }

    #[test]
    fn full_storage_file() {
        let c = parse(
            r#"<Storage>
  <ClusterName>Test Cluster</ClusterName>
  <Partitioner>org.apache.cassandra.dht.OrderPreservingPartitioner</Partitioner>
  <CommitLogSync>batch</CommitLogSync>
  <CommitLogSyncBatchWindowInMS>2</CommitLogSyncBatchWindowInMS>
  <MemtableThroughputInMB>8</MemtableThroughputInMB>
  <GCGraceSeconds>60</GCGraceSeconds>
  <DataFileDirectories><DataFileDirectory>/tmp/x</DataFileDirectory></DataFileDirectories>
  <Keyspaces>
    <Keyspace Name="Twissandra">
      <ColumnFamily CompareWith="LongType" Name="Timeline" MinimumCompactionThreshold="2"/>
      <ReplicaPlacementStrategy>org.apache.cassandra.locator.RackUnawareStrategy</ReplicaPlacementStrategy>
      <ReplicationFactor>1</ReplicationFactor>
      <EndPointSnitch>org.apache.cassandra.locator.EndPointSnitch</EndPointSnitch>
    </Keyspace>
  </Keyspaces>
</Storage>"#,
        )
        .unwrap();
        let o = &c.options;
        assert_eq!(o.partitioner, Some(Partitioner::OrderPreserving));
        assert_eq!(o.commit_log_sync, CommitLogSync::Batch { window_ms: 2.0 });
        assert_eq!(o.memtable_throughput_mb, 8);
        assert_eq!(o.gc_grace_seconds, 60);
        assert_eq!(o.data_file_directories, [PathBuf::from("/tmp/x")]);
        let ks = &o.keyspaces.as_ref().unwrap()[0];
        assert_eq!(ks.column_families[0].comparator.name(), "LongType");
        assert_eq!(ks.column_families[0].min_compaction_threshold, Some(2));
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(c.warnings[0].contains("ClusterName"));
    }

    fn err(text: &str) -> ConfError {
        parse(text).unwrap_err()
    }

    #[test]
    fn errors_name_line_element_and_attribute() {
        let e = err("<Keyspaces>\n<Keyspace Name=\"K\">\n<ColumnFamily Name=\"C\" CompareWith=\"Nope\"/>\n</Keyspace></Keyspaces>");
        assert_eq!((e.line, e.element.as_str()), (3, "ColumnFamily"));
        assert_eq!(e.attribute.as_deref(), Some("CompareWith"));
        assert!(
            e.to_string()
                .contains("storage-conf.xml:3: <ColumnFamily> attribute CompareWith"),
            "{e}"
        );

        let e = err("<Keyspace Name=\"K\">\n  <ColumnFamily Name=\"C\" CompareSubcolumnsWith=\"UTF8Type\"/>\n</Keyspace>");
        assert_eq!(
            (e.line, e.attribute.as_deref()),
            (2, Some("CompareSubcolumnsWith"))
        );

        let e = err("<Keyspaces><Keyspace Name=\"K\"/>\n<Keyspace Name=\"K\"/></Keyspaces>");
        assert_eq!((e.line, e.element.as_str()), (2, "Keyspace"));
        assert!(e.message.contains("twice"));

        let e = err("<Keyspace Name=\"K\"><ColumnFamily Name=\"C\"/>\n<ColumnFamily Name=\"C\"/></Keyspace>");
        assert!(e.message.contains("twice") && e.line == 2);

        let e = err("<Keyspace Name=\"../x\"/>");
        assert_eq!(e.attribute.as_deref(), Some("Name"));

        let e = err("<Keyspace Name=\"K\"><ColumnFamily CompareWith=\"UTF8Type\"/></Keyspace>");
        assert!(e.message.contains("Name attribute is missing"));

        let e =
            err("<Keyspace Name=\"K\">\n\n<KeysCachedFraction>1.5</KeysCachedFraction></Keyspace>");
        assert_eq!((e.line, e.element.as_str()), (3, "KeysCachedFraction"));

        let e =
            err("<Keyspace Name=\"K\"><ColumnFamily Name=\"C\" KeysCached=\"150%\"/></Keyspace>");
        assert_eq!(e.attribute.as_deref(), Some("KeysCached"));

        let e = err("<Storage><Partitioner>Nope</Partitioner></Storage>");
        assert!(e.message.contains("unknown partitioner"));

        let e = err("<Keyspace Name=\"K\">");
        assert!(e.message.contains("well-formed"));

        let e = err("<Other/>");
        assert!(e.message.contains("root element"));
    }

    #[test]
    fn zero_sizes_and_inverted_thresholds_are_errors() {
        for bad in [
            "<Storage><MemtableThroughputInMB>0</MemtableThroughputInMB></Storage>",
            "<Storage><CommitLogSegmentSizeInMB>0</CommitLogSegmentSizeInMB></Storage>",
            "<Storage><CommitLogSyncPeriodInMS>0</CommitLogSyncPeriodInMS></Storage>",
            "<Storage><MinimumCompactionThreshold>8</MinimumCompactionThreshold><MaximumCompactionThreshold>4</MaximumCompactionThreshold></Storage>",
            "<Keyspace Name=\"K\"><ReplicationFactor>0</ReplicationFactor></Keyspace>",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let c = parse("<Keyspace Name=\"K\"><ReplicationFactor>3</ReplicationFactor><ColumnFamily Name=\"C\"><Foo/></ColumnFamily></Keyspace>").unwrap();
        assert_eq!(c.options.keyspaces.unwrap()[0].replication_factor, 3);
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        let c = parse(
            "<Storage><CommitLogSyncBatchWindowInMS>2</CommitLogSyncBatchWindowInMS></Storage>",
        )
        .unwrap();
        assert_eq!(
            c.options.commit_log_sync,
            CommitLogSync::Periodic { period_ms: 10_000 }
        );
    }

    #[test]
    fn keys_cached_fraction_attribute_zero_disables() {
        let c = parse(
            "<Keyspace Name=\"K\"><ColumnFamily Name=\"C\" KeysCachedFraction=\"0\"/></Keyspace>",
        )
        .unwrap();
        assert_eq!(
            c.options.keyspaces.unwrap()[0].column_families[0].keys_cached,
            Some(KeysCached::Fraction(0.0))
        );
    }

    #[test]
    fn cassandra_keys_cached_attribute_overrides() {
        let c = parse("<Keyspace Name=\"K\"><KeysCachedFraction>0.1</KeysCachedFraction><ColumnFamily Name=\"C\" KeysCached=\"50%\"/></Keyspace>").unwrap();
        let ks = &c.options.keyspaces.unwrap()[0];
        assert_eq!(ks.keys_cached_fraction, 0.1);
        assert_eq!(
            ks.column_families[0].keys_cached,
            Some(KeysCached::Fraction(0.5))
        );
    }
}
