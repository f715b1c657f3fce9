//! Twissandra (seed 004, SPEC §10) on supercolumn: users, who follows whom, and tweets fanned out
//! to the author's Userline and every follower's Timeline, both LongType-named by time, so a
//! timeline reads newest first as the last columns of a row.
//!
//! `cargo run --example twissandra` prints a user's timeline and userline, newest first.

use supercolumn::comparator::{ComparatorRegistry, LongType};
use supercolumn::{
    BatchMutation, ColumnParent, ColumnPath, Database, SlicePredicate, SliceRange, StorageConf,
    WriteOptions,
};

const KS: &str = "Twissandra";

const CONF: &str = r#"<Keyspaces>
    <Keyspace Name="Twissandra">
      <ColumnFamily CompareWith="UTF8Type" Name="User"/>
      <ColumnFamily CompareWith="BytesType" Name="Username"/>
      <ColumnFamily CompareWith="BytesType" Name="Friends"/>
      <ColumnFamily CompareWith="BytesType" Name="Followers"/>
      <ColumnFamily CompareWith="UTF8Type" Name="Tweet"/>
      <ColumnFamily CompareWith="LongType" Name="Timeline"/>
      <ColumnFamily CompareWith="LongType" Name="Userline"/>
      <ReplicaPlacementStrategy>org.apache.cassandra.locator.RackUnawareStrategy</ReplicaPlacementStrategy>
      <ReplicationFactor>1</ReplicationFactor>
      <EndPointSnitch>org.apache.cassandra.locator.EndPointSnitch</EndPointSnitch>
    </Keyspace>
  </Keyspaces>"#;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn follow(db: &Database, who: &str, whom: &str, at: i64) -> supercolumn::Result<()> {
    let mut b = BatchMutation::new();
    b.insert(
        who,
        ColumnPath::new("Friends").column(whom),
        at.to_string(),
        WriteOptions::at(at),
    );
    b.insert(
        whom,
        ColumnPath::new("Followers").column(who),
        at.to_string(),
        WriteOptions::at(at),
    );
    db.batch_mutate(KS, &b)
}

fn tweet(db: &Database, author: &str, id: &str, body: &str, at: i64) -> supercolumn::Result<()> {
    let w = WriteOptions::at(at);
    let name = LongType::encode(at);
    let mut b = BatchMutation::new();
    b.insert(id, ColumnPath::new("Tweet").column("username"), author, w);
    b.insert(id, ColumnPath::new("Tweet").column("body"), body, w);
    b.insert(author, ColumnPath::new("Userline").column(name), id, w);
    b.insert(author, ColumnPath::new("Timeline").column(name), id, w);
    let followers = db.get_slice(
        KS,
        author,
        &ColumnParent::new("Followers"),
        &SlicePredicate::everything(),
    )?;
    for f in followers {
        b.insert(f.name(), ColumnPath::new("Timeline").column(name), id, w);
    }
    db.batch_mutate(KS, &b)
}

fn show(db: &Database, cf: &str, user: &str) -> supercolumn::Result<()> {
    println!("{user}'s {}, newest first:", cf.to_lowercase());
    let latest = db.get_slice(
        KS,
        user,
        &ColumnParent::new(cf),
        &SliceRange::all().reversed().count(10).into(),
    )?;
    for c in latest {
        let Some(c) = c.as_column() else { continue };
        let id = c.value.clone();
        let get = |col: &str| -> supercolumn::Result<String> {
            Ok(db
                .get(KS, &id, &ColumnPath::new("Tweet").column(col))?
                .and_then(|c| c.as_column().map(|c| text(&c.value)))
                .unwrap_or_default())
        };
        let at = i64::from_be_bytes(c.name.clone().try_into().unwrap_or([0; 8]));
        println!("  [{at}] {:<10} {}", get("username")?, get("body")?);
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let conf = StorageConf::parse(CONF, &ComparatorRegistry::default())?;
    let db = Database::open(dir.path(), conf.options)?;
    let mut at = 1_267_000_000_000_000i64;
    for (id, user) in [
        ("a4a70900-24e1-11df-8924-001ff3591711", "ericflo"),
        ("b5b81a11-24e1-11df-8924-001ff3591711", "jsmith"),
        ("c6c92b22-24e1-11df-8924-001ff3591711", "phatduckk"),
    ] {
        let mut b = BatchMutation::new();
        b.insert(
            id,
            ColumnPath::new("User").column("id"),
            id,
            WriteOptions::at(at),
        );
        b.insert(
            id,
            ColumnPath::new("User").column("username"),
            user,
            WriteOptions::at(at),
        );
        b.insert(
            user,
            ColumnPath::new("Username").column("id"),
            id,
            WriteOptions::at(at),
        );
        db.batch_mutate(KS, &b)?;
    }
    follow(&db, "ericflo", "jsmith", at)?;
    follow(&db, "ericflo", "phatduckk", at)?;
    for (n, (author, body)) in [
        ("jsmith", "Just set up my Cassandra cluster."),
        ("phatduckk", "Super columns are neat."),
        ("ericflo", "Twissandra is live!"),
        ("jsmith", "LongType sorts numerically, not by length."),
        ("phatduckk", "Reading the last 10 columns, reversed."),
    ]
    .into_iter()
    .enumerate()
    {
        at += 60_000_000;
        tweet(&db, author, &format!("tweet-{n}"), body, at)?;
    }
    show(&db, "Timeline", "ericflo")?;
    println!();
    show(&db, "Userline", "jsmith")?;
    db.close()?;
    Ok(())
}
