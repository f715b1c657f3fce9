//! Inputs the way a fuzzer makes them, for the tests that run the fuzz targets' bodies without
//! a nightly compiler: random bytes, and valid seeds mutated (flips, truncations, insertions,
//! splices). The CQL crate's tests use it too.

use super::Rng;

/// A mutation of `seed` the way a fuzzer makes them: flips, truncations, insertions, splices.
pub fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..1 + rng.pick(4) {
        match rng.pick(5) {
            0 if !b.is_empty() => {
                let i = rng.pick(b.len());
                b[i] ^= 1 << rng.pick(8);
            }
            1 => b.truncate(rng.pick(b.len() + 1)),
            2 => {
                let i = rng.pick(b.len() + 1);
                let junk: Vec<u8> = (0..rng.pick(16)).map(|_| rng.next() as u8).collect();
                b.splice(i..i, junk);
            }
            3 if !b.is_empty() => {
                // Overwrite four bytes with an extreme length-like value.
                let i = rng.pick(b.len());
                for (j, v) in [0xffu8, 0xff, 0xff, 0x7f].iter().enumerate() {
                    if let Some(x) = b.get_mut(i + j) {
                        *x = *v;
                    }
                }
            }
            _ => {
                if !b.is_empty() {
                    let i = rng.pick(b.len());
                    let j = rng.pick(b.len());
                    b.swap(i, j);
                }
            }
        }
    }
    b
}

pub fn run(
    seeds: &[Vec<u8>],
    body: fn(&[u8]) -> Result<u64, String>,
    n: usize,
    salt: u64,
) -> usize {
    let mut rng = Rng(0x9e37_79b9 ^ salt);
    let mut ok = 0;
    for seed in seeds {
        assert!(body(seed).is_ok(), "the valid seed must read");
    }
    for i in 0..n {
        let input = if i % 4 == 0 {
            (0..rng.pick(300)).map(|_| rng.next() as u8).collect()
        } else {
            let which = rng.pick(seeds.len());
            mutate(&mut rng, &seeds[which])
        };
        if body(&input).is_ok() {
            ok += 1;
        }
    }
    ok
}
