//! BloggyAppy, the blog of the seeds (SPEC §10), on supercolumn.
//!
//! Authors (BytesType): a row per author. BlogEntries (BytesType): a row per post slug with its
//! title, body, author, tags and pubDate. TaggedPosts (TimeUUIDType): a row per tag, and the
//! `__notag__` row holding every post; each column is named by a TimeUUID of the post's time,
//! its value the slug. Comments (Super, TimeUUIDType / BytesType): a row per post, a super column
//! per comment.
//!
//! `cargo run --example bloggy` prints the front page (the latest 10 posts), a tag page, and a
//! post's comments in time order.

use supercolumn::comparator::ComparatorRegistry;
use supercolumn::{
    BatchMutation, ColumnParent, ColumnPath, Database, SlicePredicate, SliceRange, StorageConf,
    TimeUuidGenerator, WriteOptions,
};

const KS: &str = "BloggyAppy";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A column's value in a row, as text.
fn value(db: &Database, cf: &str, key: &[u8], col: &str) -> Result<String, supercolumn::Error> {
    Ok(db
        .get(KS, key, &ColumnPath::new(cf).column(col))?
        .and_then(|c| c.as_column().map(|c| text(&c.value)))
        .unwrap_or_default())
}

/// The seed's recipe for a page of posts: the last `n` columns of the tag's row (newest first),
/// each value a BlogEntries key, each entry's author an Authors key.
fn page(db: &Database, tag: &str, n: usize) -> Result<Vec<String>, supercolumn::Error> {
    let latest = db.get_slice(
        KS,
        tag,
        &ColumnParent::new("TaggedPosts"),
        &SliceRange::all().reversed().count(n).into(),
    )?;
    let slugs: Vec<Vec<u8>> = latest
        .iter()
        .filter_map(|c| c.as_column().map(|c| c.value.clone()))
        .collect();
    let entries = db.multiget_slice(
        KS,
        &slugs,
        &ColumnParent::new("BlogEntries"),
        &SlicePredicate::names(["title", "author", "pubDate"]),
    )?;
    let mut lines = Vec::new();
    for e in entries {
        let author = value(db, "BlogEntries", &e.key, "author")?;
        let name = value(db, "Authors", author.as_bytes(), "name")?;
        lines.push(format!(
            "  {:<28} by {name}",
            value(db, "BlogEntries", &e.key, "title")?
        ));
    }
    Ok(lines)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let conf = StorageConf::parse(
        include_str!("bloggy-storage-conf.xml"),
        &ComparatorRegistry::default(),
    )?;
    let db = Database::open(dir.path(), conf.options)?;
    let ids = TimeUuidGenerator::for_process();
    // 2013-07-23, a post a day from then on.
    let mut now = 1_374_546_754_299_000i64;

    let mut b = BatchMutation::new();
    for (id, name, email) in [
        ("phatduckk", "Arin Sarkissian", "arin@example.com"),
        ("ericflo", "Eric Florenzano", "eric@example.com"),
    ] {
        b.insert(
            id,
            ColumnPath::new("Authors").column("name"),
            name,
            WriteOptions::at(now),
        );
        b.insert(
            id,
            ColumnPath::new("Authors").column("email"),
            email,
            WriteOptions::at(now),
        );
    }
    db.batch_mutate(KS, &b)?;

    let topics = ["cassandra", "rust", "life"];
    for i in 0..14usize {
        now += 86_400_000_000;
        let slug = format!("post-{i:02}");
        let author = if i % 2 == 0 { "phatduckk" } else { "ericflo" };
        let tags = [topics[i % 3], topics[(i + 1) % 3]];
        let mut b = BatchMutation::new();
        let w = WriteOptions::at(now);
        for (col, val) in [
            ("title", format!("Post number {i}")),
            ("body", format!("The body of post {i}.")),
            ("author", author.to_string()),
            ("tags", tags.join(",")),
            ("pubDate", now.to_string()),
        ] {
            b.insert(&slug, ColumnPath::new("BlogEntries").column(col), val, w);
        }
        let id = ids.next(now);
        for tag in tags.iter().copied().chain(["__notag__"]) {
            b.insert(
                tag,
                ColumnPath::new("TaggedPosts").column(id.as_bytes()),
                &slug,
                w,
            );
        }
        db.batch_mutate(KS, &b)?;
    }

    // Comments on one post, written out of time order: they come back in time order.
    let post = "post-13";
    for (minutes, who, words) in [
        (30, "jsmith", "Agreed!"),
        (5, "ericflo", "First!"),
        (90, "phatduckk", "Thanks, both."),
    ] {
        let at = now + minutes * 60_000_000;
        let id = ids.at(at);
        let mut b = BatchMutation::new();
        for (col, val) in [
            ("commenter", who.to_string()),
            ("comment", words.to_string()),
            ("commentTime", at.to_string()),
        ] {
            b.insert(
                post,
                ColumnPath::new("Comments")
                    .super_column(id.as_bytes())
                    .column(col),
                val,
                WriteOptions::at(at),
            );
        }
        db.batch_mutate(KS, &b)?;
    }
    db.flush_all()?;

    println!("Front page (the 10 latest posts):");
    for l in page(&db, "__notag__", 10)? {
        println!("{l}");
    }
    println!();
    println!("Tagged 'cassandra' (latest 10):");
    for l in page(&db, "cassandra", 10)? {
        println!("{l}");
    }
    println!();
    println!("Comments on {post}, in time order:");
    let comments = db.get_slice(
        KS,
        post,
        &ColumnParent::new("Comments"),
        &SliceRange::all().into(),
    )?;
    for c in comments {
        if let Some(sc) = c.as_super_column() {
            let get = |n: &str| {
                sc.columns
                    .iter()
                    .find(|c| c.name == n.as_bytes())
                    .map(|c| text(&c.value))
                    .unwrap_or_default()
            };
            println!("  {:<10} {}", get("commenter"), get("comment"));
        }
    }
    db.close()?;
    Ok(())
}
