//! Simulations per second: the tree alone (uniform evaluator), single-game and batched, and
//! rollout UCT, all from the start position.

use criterion::{Criterion, Throughput, criterion_main};
use oware_engine::Game;
use oware_search::UniformEvaluator;
use oware_search::mcts::{BatchedSearch, MctsConfig, RolloutSearch, RootAlgorithm, Search};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use std::hint::black_box;

fn config(root: RootAlgorithm, sims: u32, leaves: u32) -> MctsConfig {
    MctsConfig {
        sims,
        root,
        leaves_per_tree: leaves,
        reuse_tree: false,
        ..MctsConfig::default()
    }
}

fn bench_single(c: &mut Criterion) {
    const SIMS: u32 = 800;
    let mut group = c.benchmark_group("mcts_tree_single");
    group.throughput(Throughput::Elements(SIMS as u64));
    for (name, root) in [
        ("puct", RootAlgorithm::Puct),
        ("gumbel", RootAlgorithm::Gumbel),
    ] {
        group.bench_function(format!("{name}_800_sims"), |b| {
            let mut search = Search::new(config(root, SIMS, 1)).expect("valid config");
            let mut rng = SmallRng::seed_from_u64(1);
            let game = Game::new();
            b.iter(|| {
                search.reset(&game);
                let r = search.run(&UniformEvaluator, SIMS, true, &mut rng);
                let r = r.expect("uniform never fails").expect("live game");
                assert_eq!(r.visits.iter().sum::<u32>(), SIMS);
                black_box(r)
            })
        });
    }
    group.finish();
}

fn bench_batched(c: &mut Criterion) {
    const SLOTS: usize = 256;
    const SIMS: u32 = 100;
    let mut group = c.benchmark_group("mcts_tree_batched");
    group.sample_size(10);
    group.throughput(Throughput::Elements(SLOTS as u64 * SIMS as u64));
    for leaves in [1, 4] {
        group.bench_function(format!("256_slots_100_sims_{leaves}_leaves"), |b| {
            let mut driver = BatchedSearch::new(config(RootAlgorithm::Puct, SIMS, leaves), SLOTS)
                .expect("valid config");
            let mut rng = SmallRng::seed_from_u64(1);
            b.iter(|| {
                for slot in 0..SLOTS {
                    driver.reset(slot, Game::new());
                }
                let results = driver
                    .search(&UniformEvaluator, &mut rng)
                    .expect("uniform never fails");
                assert_eq!(results[0].expect("live").visits.iter().sum::<u32>(), SIMS);
                black_box(results)
            })
        });
    }
    group.finish();
}

fn bench_rollout(c: &mut Criterion) {
    const SIMS: u32 = 2000;
    let mut group = c.benchmark_group("mcts_rollout");
    group.throughput(Throughput::Elements(SIMS as u64));
    group.bench_function("uct_2000_sims_from_start", |b| {
        let mut search = RolloutSearch::new(1.4);
        let mut rng = SmallRng::seed_from_u64(1);
        let game = Game::new();
        b.iter(|| {
            search.reset(&game);
            let r = search.run(SIMS, &mut rng).expect("live game");
            assert_eq!(r.visits.iter().sum::<u32>(), SIMS);
            black_box(r)
        })
    });
    group.finish();
}

/// The group lives in a private module so that its generated function needs no docs.
mod group {
    use super::{bench_batched, bench_rollout, bench_single};
    criterion::criterion_group!(benches, bench_single, bench_batched, bench_rollout);
}
criterion_main!(group::benches);
