//! Size-tiered compaction's choice of what to merge (Cassandra's `CompactionManager.getBuckets`):
//! SSTables fall into buckets of similar size — each within 0.5×–1.5× of its bucket's average,
//! and every SSTable under a small-file floor in one bucket — and a bucket holding at least the
//! minimum threshold is compacted, oldest first, at most the maximum threshold at a time.
//! This file only chooses; merging is [`super::task`].

/// SSTables smaller than this all share one bucket (Cassandra's 50 MB).
pub const SMALL_FLOOR: u64 = 50 << 20;

/// An SSTable as bucketing sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Its generation (older generations are smaller numbers).
    pub generation: u64,
    /// Bytes on disk.
    pub bytes: u64,
}

/// Groups SSTables into buckets of similar size. Candidates are taken smallest first, so each
/// bucket's average moves as little as possible as members join; within a bucket, members are
/// returned oldest first.
pub fn buckets(tables: &[Candidate], small_floor: u64) -> Vec<Vec<Candidate>> {
    let mut sorted = tables.to_vec();
    sorted.sort_by_key(|c| (c.bytes, c.generation));
    let mut out: Vec<(u64, Vec<Candidate>)> = Vec::new(); // (total bytes, members)
    for c in sorted {
        let home = out.iter_mut().find(|(total, members)| {
            let avg = *total / members.len() as u64;
            (c.bytes > avg / 2 && c.bytes < avg + avg / 2)
                || (c.bytes < small_floor && avg < small_floor)
        });
        match home {
            Some((total, members)) => {
                *total += c.bytes;
                members.push(c);
            }
            None => out.push((c.bytes, vec![c])),
        }
    }
    out.into_iter()
        .map(|(_, mut m)| {
            m.sort_by_key(|c| c.generation);
            m
        })
        .collect()
}

/// The SSTables a minor compaction should merge now, if any: from the first bucket (smallest
/// sizes first) holding at least `min` SSTables, its oldest `max`. A threshold of 0 turns minor
/// compaction off.
pub fn pick(tables: &[Candidate], min: u32, max: u32, small_floor: u64) -> Option<Vec<Candidate>> {
    if min == 0 || max == 0 {
        return None;
    }
    let min = (min as usize).max(2);
    buckets(tables, small_floor)
        .into_iter()
        .find(|b| b.len() >= min)
        .map(|mut b| {
            b.truncate(max as usize);
            b
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(generation: u64, mb: u64) -> Candidate {
        Candidate {
            generation,
            bytes: mb << 20,
        }
    }

    #[test]
    fn small_tables_share_a_bucket_and_large_ones_group_by_size() {
        let t = [
            c(1, 1),
            c(2, 5),
            c(3, 49),
            c(4, 100),
            c(5, 140),
            c(6, 400),
            c(7, 90),
        ];
        let b = buckets(&t, SMALL_FLOOR);
        let gens: Vec<Vec<u64>> = b
            .iter()
            .map(|x| x.iter().map(|c| c.generation).collect())
            .collect();
        assert_eq!(gens, [vec![1, 2, 3], vec![4, 5, 7], vec![6]]);
    }

    #[test]
    fn picks_the_first_full_bucket_oldest_first_up_to_max() {
        let t: Vec<Candidate> = (1..=6).map(|g| c(g, 1)).collect();
        assert_eq!(pick(&t, 4, 32, SMALL_FLOOR).unwrap().len(), 6);
        let two = pick(&t, 4, 2, SMALL_FLOOR).unwrap();
        assert_eq!(two.iter().map(|c| c.generation).collect::<Vec<_>>(), [1, 2]);
        assert!(pick(&t[..3], 4, 32, SMALL_FLOOR).is_none());
        assert!(
            pick(&t, 0, 32, SMALL_FLOOR).is_none(),
            "0 turns minor compaction off"
        );
        assert!(pick(&t, 4, 0, SMALL_FLOOR).is_none());
    }

    #[test]
    fn dissimilar_sizes_do_not_mix() {
        let t = [c(1, 100), c(2, 300), c(3, 900), c(4, 2700)];
        assert!(pick(&t, 2, 32, SMALL_FLOOR).is_none());
    }
}
