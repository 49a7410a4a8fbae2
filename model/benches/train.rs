//! One training step (forward, backward, optimizer) of the default network on the CPU (`flex`)
//! at batch 256 and 1024. Throughput is in samples per second.
//!
//! Run: `cargo bench -p oware-model --bench train`.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use oware_engine::Position;
use oware_model::{Device, Learner, ModelConfig, OptimConfig, TrainBatch, legal_mask};
use std::time::Duration;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn batch(n: usize) -> TrainBatch {
    let mut b = TrainBatch::default();
    let mut pos = Position::start();
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    while b.len() < n {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            pos = Position::start();
            continue;
        }
        let mask = legal_mask(&pos);
        let legal = mask.iter().filter(|&&l| l).count() as f32;
        b.positions.push(pos);
        b.policy
            .push(mask.map(|l| if l { 1.0 / legal } else { 0.0 }));
        b.value
            .push(if seed.is_multiple_of(2) { 1.0 } else { -1.0 });
        b.margin.push((seed % 21) as f32 / 48.0);
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let m = moves.as_slice()[(seed % moves.len() as u64) as usize];
        pos = pos
            .play(m)
            .map(|(p, _)| p)
            .unwrap_or_else(|_| Position::start());
    }
    b
}

fn bench_train(c: &mut Criterion) {
    let mut group = c.benchmark_group("train_step_256x3");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    group.sample_size(10);
    for n in [256usize, 1024] {
        let data = batch(n);
        let mut learner = Learner::new(
            &ModelConfig::new(),
            &OptimConfig::default(),
            &Device::flex(),
        );
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("adam", n), &n, |bch, _| {
            bch.iter(|| {
                learner
                    .step(&data, 1e-4)
                    .map(|l| l.total)
                    .unwrap_or(f32::NAN)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_train);
criterion_main!(benches);
