//! Benchmarks of the alpha-beta baseline from the start position: nodes per second at a fixed
//! depth, and the depth reached in one second (printed, since criterion measures time).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use oware_engine::{Game, SearchLimits, Searcher};
use std::hint::black_box;

const DEPTH: u32 = 12;

fn fixed_depth_nodes() -> u64 {
    let mut s = Searcher::new(oware_engine::alphabeta::DEFAULT_TT_MB);
    let limits = SearchLimits {
        depth: Some(DEPTH),
        ..SearchLimits::default()
    };
    s.search(&Game::new(), limits, &[]).nodes
}

fn bench_fixed_depth(c: &mut Criterion) {
    // The node count of a fixed-depth search from a cleared table is deterministic.
    let nodes = fixed_depth_nodes();
    assert_eq!(nodes, fixed_depth_nodes());
    let mut group = c.benchmark_group("alphabeta");
    group.sample_size(10);
    group.throughput(Throughput::Elements(nodes));
    let mut searcher = Searcher::new(oware_engine::alphabeta::DEFAULT_TT_MB);
    let game = Game::new();
    group.bench_function(format!("start_depth{DEPTH}"), |b| {
        b.iter(|| {
            searcher.clear();
            let r = searcher.search(
                black_box(&game),
                SearchLimits {
                    depth: Some(DEPTH),
                    ..SearchLimits::default()
                },
                &[],
            );
            assert_eq!(r.nodes, nodes);
            r.score
        })
    });
    group.finish();
}

fn report_one_second() {
    let mut searcher = Searcher::new(oware_engine::alphabeta::DEFAULT_TT_MB);
    let r = searcher.search(
        &Game::new(),
        SearchLimits {
            millis: Some(1000),
            ..SearchLimits::default()
        },
        &[],
    );
    println!(
        "alphabeta 1 s from the start: depth {} nodes {} ({:.2} M nodes/s) score {} pv {}",
        r.depth,
        r.nodes,
        r.nodes_per_second() / 1e6,
        r.score,
        r.pv.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(" ")
    );
}

fn bench_one_second(_c: &mut Criterion) {
    report_one_second();
}

criterion_group!(benches, bench_fixed_depth, bench_one_second);
criterion_main!(benches);
