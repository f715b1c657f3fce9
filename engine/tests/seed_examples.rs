//! The seeds' worked examples, through the public API (SPEC §2 and §10): LongType vs UTF8Type
//! order, a Super CF with two comparators, BloggyAppy from its storage-conf.xml (front page, tag
//! page, comments in time order), and Twissandra's Timeline newest first.

// A test (or benchmark) stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use supercolumn::comparator::{ComparatorRegistry, LongType, TimeUuidType, Utf8Type};
use supercolumn::{
    BatchMutation, ColumnFamilyDef, ColumnParent, ColumnPath, KeyspaceDef, SlicePredicate,
    SliceRange, StorageConf, TimeUuidGenerator, WriteOptions,
};

#[test]
fn long_type_sorts_numerically_and_utf8_sorts_as_text() {
    let t = open_schema(vec![KeyspaceDef::new("Seed")
        .with_column_family(ColumnFamilyDef::standard("Longs").with_comparator(LongType))
        .with_column_family(
            ColumnFamilyDef::standard("Texts").with_comparator(Utf8Type),
        )]);
    for n in [123i64, 832416, 3, 976] {
        let w = WriteOptions::at(1);
        t.db.insert(
            "Seed",
            "row",
            &ColumnPath::new("Longs").column(long(n)),
            "v",
            w,
        )
        .unwrap();
        t.db.insert(
            "Seed",
            "row",
            &ColumnPath::new("Texts").column(n.to_string()),
            "v",
            w,
        )
        .unwrap();
    }
    let all = SlicePredicate::Range(SliceRange::all());
    let longs =
        t.db.get_slice("Seed", "row", &ColumnParent::new("Longs"), &all)
            .unwrap();
    let longs: Vec<i64> = names(&longs)
        .into_iter()
        .map(|n| i64::from_be_bytes(n.try_into().unwrap()))
        .collect();
    assert_eq!(longs, [3, 123, 976, 832416]);
    let texts =
        t.db.get_slice("Seed", "row", &ColumnParent::new("Texts"), &all)
            .unwrap();
    assert_eq!(strings(names(&texts)), ["123", "3", "832416", "976"]);
}

#[test]
fn super_cf_orders_super_columns_and_sub_columns_by_their_own_comparators() {
    // Twitter's UserRelationships: super columns by UTF8Type, sub-columns by TimeUUIDType.
    let t = open_schema(vec![KeyspaceDef::new("Twitter").with_column_family(
        ColumnFamilyDef::super_family("UserRelationships")
            .with_comparator(Utf8Type)
            .with_subcomparator(TimeUuidType),
    )]);
    let g = TimeUuidGenerator::new(7);
    // Ten moments 100 s apart: time_low (the first 4 bytes) wraps every ~430 s, so byte order
    // and time order disagree across these, and only a time-aware comparator sorts them right.
    let ids: Vec<[u8; 16]> = (0..10)
        .map(|i| *g.at(T0 + i * 100_000_000).as_bytes())
        .collect();
    let mut by_bytes = ids.clone();
    by_bytes.sort();
    assert_ne!(by_bytes, ids, "the data must tell the two orders apart");
    // Spread them over three super columns, inserted in an order that is neither.
    let scs = ["user_timeline", "followers", "following"];
    for (i, id) in ids.iter().enumerate().rev() {
        let sc = scs[i % 3];
        let path = ColumnPath::new("UserRelationships")
            .super_column(sc)
            .column(id);
        t.db.insert("Twitter", "ericflo", &path, "x", WriteOptions::at(1))
            .unwrap();
    }
    let all = SlicePredicate::Range(SliceRange::all());
    let r =
        t.db.get_slice(
            "Twitter",
            "ericflo",
            &ColumnParent::new("UserRelationships"),
            &all,
        )
        .unwrap();
    assert_eq!(
        strings(names(&r)),
        ["followers", "following", "user_timeline"]
    );
    let timeline: Vec<[u8; 16]> = r[2]
        .as_super_column()
        .unwrap()
        .columns
        .iter()
        .map(|c| c.name.clone().try_into().unwrap())
        .collect();
    let expected: Vec<[u8; 16]> = ids.iter().step_by(3).copied().collect();
    let mut expected_bytewise = expected.clone();
    expected_bytewise.sort();
    assert_ne!(
        expected_bytewise, expected,
        "this super column alone tells the orders apart"
    );
    assert_eq!(timeline, expected, "sub-columns in time order");
}

/// The storage-conf.xml excerpt of seed 000, verbatim but for its surrounding comment.
const BLOGGY_CONF: &str = r#"<Keyspace Name="BloggyAppy">
        <!-- other keyspace config stuff -->

        <!-- CF definitions -->
        <ColumnFamily CompareWith="BytesType" Name="Authors"/>
        <ColumnFamily CompareWith="BytesType" Name="BlogEntries"/>
        <ColumnFamily CompareWith="TimeUUIDType" Name="TaggedPosts"/>
        <ColumnFamily CompareWith="TimeUUIDType" Name="Comments"
            CompareSubcolumnsWith="BytesType" ColumnType="Super"/>
    </Keyspace>"#;

struct Blog {
    t: TestDb,
    ids: TimeUuidGenerator,
}

impl Blog {
    fn new() -> Blog {
        let conf = StorageConf::parse(BLOGGY_CONF, &ComparatorRegistry::default()).unwrap();
        let t = open_with(conf.options.keyspaces, supercolumn::Partitioner::Random);
        Blog {
            t,
            ids: TimeUuidGenerator::new(42),
        }
    }

    fn add_author(&self, id: &str, name: &str) {
        let mut b = BatchMutation::new();
        b.insert(
            id,
            ColumnPath::new("Authors").column("name"),
            name,
            WriteOptions::now(),
        );
        b.insert(
            id,
            ColumnPath::new("Authors").column("email"),
            format!("{id}@example.com"),
            WriteOptions::now(),
        );
        self.t.db.batch_mutate("BloggyAppy", &b).unwrap();
    }

    /// Posts an entry: its BlogEntries row, and a TaggedPosts column under each tag and
    /// `__notag__` (name: a TimeUUID of the post time, value: the slug), in one batch.
    fn post(&self, slug: &str, author: &str, tags: &[&str]) {
        self.t.clock.advance_seconds(60);
        let now = self.t.db.options().clock.now_micros();
        let w = WriteOptions::now();
        let mut b = BatchMutation::new();
        for (col, val) in [
            ("title", format!("Title of {slug}")),
            ("body", format!("Body of {slug}")),
            ("author", author.to_string()),
            ("tags", tags.join(",")),
            ("pubDate", now.to_string()),
        ] {
            b.insert(slug, ColumnPath::new("BlogEntries").column(col), val, w);
        }
        let id = self.ids.next(now);
        for tag in tags.iter().chain(std::iter::once(&"__notag__")) {
            b.insert(
                tag,
                ColumnPath::new("TaggedPosts").column(id.as_bytes()),
                slug,
                w,
            );
        }
        self.t.db.batch_mutate("BloggyAppy", &b).unwrap();
    }

    fn comment(&self, slug: &str, who: &str, text: &str) {
        self.t.clock.advance_seconds(5);
        let now = self.t.db.options().clock.now_micros();
        let id = self.ids.next(now);
        let mut b = BatchMutation::new();
        for (col, val) in [
            ("commenter", who.to_string()),
            ("email", format!("{who}@example.com")),
            ("comment", text.to_string()),
            ("commentTime", now.to_string()),
        ] {
            let path = ColumnPath::new("Comments")
                .super_column(id.as_bytes())
                .column(col);
            b.insert(slug, path, val, WriteOptions::now());
        }
        self.t.db.batch_mutate("BloggyAppy", &b).unwrap();
    }

    /// The seed's recipe: the last 10 columns of the tag row, newest first; each value is a
    /// BlogEntries key; each entry's author is an Authors key.
    fn latest(&self, tag: &str) -> Vec<(String, String)> {
        let db = &self.t.db;
        let last10 = SlicePredicate::Range(SliceRange::all().reversed().count(10));
        let cols = db
            .get_slice(
                "BloggyAppy",
                tag,
                &ColumnParent::new("TaggedPosts"),
                &last10,
            )
            .unwrap();
        let slugs = values(&cols);
        let entries = db
            .multiget_slice(
                "BloggyAppy",
                &slugs,
                &ColumnParent::new("BlogEntries"),
                &SlicePredicate::names(["author"]),
            )
            .unwrap();
        entries
            .into_iter()
            .map(|e| {
                let author = e.columns[0].as_column().unwrap().value.clone();
                let name = db
                    .get(
                        "BloggyAppy",
                        &author,
                        &ColumnPath::new("Authors").column("name"),
                    )
                    .unwrap()
                    .unwrap();
                (
                    String::from_utf8(e.key).unwrap(),
                    String::from_utf8(name.as_column().unwrap().value.clone()).unwrap(),
                )
            })
            .collect()
    }
}

#[test]
fn bloggy_front_page_is_the_ten_latest_posts_with_their_authors() {
    let blog = Blog::new();
    blog.add_author("phatduckk", "Arin Sarkissian");
    blog.add_author("ericflo", "Eric Florenzano");
    for i in 0..13 {
        let author = if i % 2 == 0 { "phatduckk" } else { "ericflo" };
        let tags: &[&str] = if i % 3 == 0 {
            &["cassandra"]
        } else {
            &["life"]
        };
        blog.post(&format!("post-{i:02}"), author, tags);
    }
    let front = blog.latest("__notag__");
    let slugs: Vec<&str> = front.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        slugs,
        [
            "post-12", "post-11", "post-10", "post-09", "post-08", "post-07", "post-06", "post-05",
            "post-04", "post-03"
        ]
    );
    assert_eq!(front[0].1, "Arin Sarkissian");
    assert_eq!(front[1].1, "Eric Florenzano");

    let tagged = blog.latest("cassandra");
    let slugs: Vec<&str> = tagged.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        slugs,
        ["post-12", "post-09", "post-06", "post-03", "post-00"]
    );
}

#[test]
fn bloggy_comments_come_back_in_time_order() {
    let blog = Blog::new();
    blog.add_author("phatduckk", "Arin Sarkissian");
    blog.post("i-love-cassandra", "phatduckk", &["cassandra"]);
    for (who, text) in [
        ("jsmith", "first!"),
        ("ericflo", "nice"),
        ("jsmith", "agreed"),
    ] {
        blog.comment("i-love-cassandra", who, text);
    }
    let all = SlicePredicate::Range(SliceRange::all());
    let comments = blog
        .t
        .db
        .get_slice(
            "BloggyAppy",
            "i-love-cassandra",
            &ColumnParent::new("Comments"),
            &all,
        )
        .unwrap();
    let texts: Vec<String> = comments
        .iter()
        .map(|sc| {
            let sc = sc.as_super_column().unwrap();
            let c = sc.columns.iter().find(|c| c.name == b"comment").unwrap();
            String::from_utf8(c.value.clone()).unwrap()
        })
        .collect();
    assert_eq!(texts, ["first!", "nice", "agreed"]);
    // Sub-columns of each comment sort by BytesType.
    let sub = sub_names(&comments[0]);
    assert_eq!(
        sub,
        [&b"comment"[..], b"commentTime", b"commenter", b"email"]
    );
}

/// Seed 004's Twissandra keyspace, with the keyspace-level replication elements.
const TWISSANDRA_CONF: &str = r#"
  <Keyspaces>
    <Keyspace Name="Twissandra">
       <ColumnFamily CompareWith="UTF8Type" Name="User"/>
      <ColumnFamily CompareWith="BytesType" Name="Username"/>
      <ColumnFamily CompareWith="BytesType" Name="Friends"/>
      <ColumnFamily CompareWith="BytesType" Name="Followers"/>
      <ColumnFamily CompareWith="UTF8Type" Name="Tweet"/>
      <ColumnFamily CompareWith="LongType" Name="Timeline"/>
      <ColumnFamily CompareWith="LongType" Name="Userline"/>

      <ReplicaPlacementStrategy>org.apache.cassandra.locator.RackUnawareStrategy</ReplicaPlacementStrategy>

      <!-- Number of replicas of the data -->
      <ReplicationFactor>1</ReplicationFactor>
      <EndPointSnitch>org.apache.cassandra.locator.EndPointSnitch</EndPointSnitch>

    </Keyspace>
  </Keyspaces>"#;

#[test]
fn twissandra_timeline_reads_newest_first() {
    let conf = StorageConf::parse(TWISSANDRA_CONF, &ComparatorRegistry::default()).unwrap();
    assert!(conf.warnings.is_empty(), "{:?}", conf.warnings);
    let t = open_with(conf.options.keyspaces, supercolumn::Partitioner::Random);
    let ks = t.db.describe_keyspace("Twissandra").unwrap();
    assert_eq!(ks.replication_factor, 1);
    assert!(ks.endpoint_snitch.ends_with("EndPointSnitch"));

    // ericflo follows jsmith; each tweet goes to the author's Userline and every follower's
    // Timeline, under the tweet's timestamp.
    let db = &t.db;
    db.insert(
        "Twissandra",
        "ericflo",
        &ColumnPath::new("Friends").column("jsmith"),
        T0.to_string(),
        WriteOptions::now(),
    )
    .unwrap();
    db.insert(
        "Twissandra",
        "jsmith",
        &ColumnPath::new("Followers").column("ericflo"),
        T0.to_string(),
        WriteOptions::now(),
    )
    .unwrap();
    let tweets = [
        (T0 + 30, "t-c", "jsmith"),
        (T0 + 10, "t-a", "jsmith"),
        (T0 + 20, "t-b", "ericflo"),
        (T0 + 40, "t-d", "jsmith"),
    ];
    for (ts, id, author) in tweets {
        let mut b = BatchMutation::new();
        b.insert(
            id,
            ColumnPath::new("Tweet").column("body"),
            format!("hello from {author}"),
            WriteOptions::now(),
        );
        b.insert(
            author,
            ColumnPath::new("Userline").column(long(ts)),
            id,
            WriteOptions::now(),
        );
        b.insert(
            author,
            ColumnPath::new("Timeline").column(long(ts)),
            id,
            WriteOptions::now(),
        );
        let followers = db
            .get_slice(
                "Twissandra",
                author,
                &ColumnParent::new("Followers"),
                &SlicePredicate::everything(),
            )
            .unwrap();
        for f in followers {
            b.insert(
                f.name(),
                ColumnPath::new("Timeline").column(long(ts)),
                id,
                WriteOptions::now(),
            );
        }
        db.batch_mutate("Twissandra", &b).unwrap();
    }
    let newest = SlicePredicate::Range(SliceRange::all().reversed().count(3));
    let timeline = db
        .get_slice(
            "Twissandra",
            "ericflo",
            &ColumnParent::new("Timeline"),
            &newest,
        )
        .unwrap();
    assert_eq!(strings(values(&timeline)), ["t-d", "t-c", "t-b"]);
    let userline = db
        .get_slice(
            "Twissandra",
            "jsmith",
            &ColumnParent::new("Userline"),
            &newest,
        )
        .unwrap();
    assert_eq!(strings(values(&userline)), ["t-d", "t-c", "t-a"]);
}
