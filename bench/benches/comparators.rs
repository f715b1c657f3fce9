//! Comparators: compare and validate for each built-in type, on pairs of valid names
//! (1,000 pairs per iteration).
//!
//! `cargo bench -p supercolumn-bench --bench comparators`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use supercolumn::comparator::{built_in, Comparator};
use supercolumn::TimeUuidGenerator;
use supercolumn_bench::KeyStream;

fn names(c: &dyn Comparator, n: usize) -> Vec<Vec<u8>> {
    let ids = TimeUuidGenerator::new(7);
    let mut ks = KeyStream::new(1);
    (0..n)
        .map(|i| {
            let x = ks.next().unwrap_or(0);
            match c.name().as_str() {
                "LongType" => (x as i64).to_be_bytes().to_vec(),
                "LexicalUUIDType" => [x.to_be_bytes(), x.rotate_left(7).to_be_bytes()].concat(),
                "TimeUUIDType" => ids
                    .next(1_374_546_754_299_000 + (x % 1_000_000_000) as i64)
                    .as_bytes()
                    .to_vec(),
                _ => format!("column-{:016x}-{i}", x).into_bytes(),
            }
        })
        .collect()
}

fn comparators(c: &mut Criterion) {
    let mut g = c.benchmark_group("comparator");
    g.throughput(Throughput::Elements(1000));
    for t in built_in() {
        let t = t.as_ref();
        let ns = names(t, 1001);
        g.bench_function(format!("{}/compare", t.name()), |b| {
            b.iter(|| {
                for w in ns.windows(2) {
                    black_box(t.compare(&w[0], &w[1]));
                }
            })
        });
        g.bench_function(format!("{}/validate", t.name()), |b| {
            b.iter(|| {
                for n in &ns[..1000] {
                    black_box(t.validate(n).is_ok());
                }
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2));
    targets = comparators
}
criterion_main!(benches);
