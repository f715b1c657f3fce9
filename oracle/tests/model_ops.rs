//! The `model_ops` fuzz target's body on a few hundred inputs in every `cargo test`: random
//! byte strings decoded as operation sequences (as libFuzzer's would be), then every input of
//! the checked-in seed corpus (`fuzz/seeds/model_ops`).

// A test stops at the first surprise: unwrapping is how it says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use supercolumn_oracle::{run_input, Input};

/// xorshift64*: reproducible bytes without a dependency.
fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

fn check(data: &[u8], name: &str) {
    let input = Input::from_bytes(data);
    if let Err(f) = run_input(&input) {
        panic!("{name}: {f}\nconfig: {:?}", input.config);
    }
}

#[test]
fn random_operation_sequences_match_the_model() {
    let seeds: u64 = std::env::var("MODEL_OPS_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    for seed in 0..seeds {
        let len = 64 + (seed as usize * 37) % 900;
        check(&bytes(seed, len), &format!("seed {seed}"));
    }
}

#[test]
fn the_seed_corpus_matches_the_model() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/model_ops");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        check(&std::fs::read(&path).unwrap(), &path.display().to_string());
        n += 1;
    }
    assert!(
        n >= 10,
        "the seed corpus is missing: {n} inputs in {}",
        dir.display()
    );
}
