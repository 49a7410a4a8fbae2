#![allow(missing_docs)] // criterion_group! generates undocumented items
//! Benchmarks of the rules: perft and uniform random playouts from the start.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use oware_engine::{DEFAULT_MAX_PLIES, Position, perft, random_playout};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use std::hint::black_box;

fn bench_perft(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    group.throughput(Throughput::Elements(711_414));
    group.bench_function("depth8", |b| {
        b.iter(|| {
            let n = perft(black_box(&Position::start()), 8);
            assert_eq!(n, 711_414);
            n
        })
    });
    group.finish();
}

fn bench_playouts(c: &mut Criterion) {
    let mut group = c.benchmark_group("random_playout");
    const GAMES: u64 = 1000;
    group.throughput(Throughput::Elements(GAMES));
    group.bench_function("from_start_x1000", |b| {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut seen = Vec::with_capacity(256);
        b.iter(|| {
            let mut plies = 0u32;
            for _ in 0..GAMES {
                seen.clear();
                let start = Position::start();
                seen.push(start.key());
                let r = random_playout(start, &mut seen, 0, DEFAULT_MAX_PLIES, &mut rng);
                plies += r.score[0] as u32;
            }
            black_box(plies)
        })
    });
    group.finish();
}

criterion_group!(benches, bench_perft, bench_playouts);
criterion_main!(benches);
