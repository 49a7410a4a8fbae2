//! Benchmarks of the alpha-beta baseline, each pinned to known results while it is timed (as
//! shakmaty's benches pin perft counts): the node count, best move and score of a fixed-depth
//! search from a cleared table, from the start, from a middle game and in an endgame whose
//! value hangs on a repetition. A change of search or evaluation that alters them fails the
//! bench; update the figures here on purpose when that is the intent. Also prints the depth
//! reached in one second (criterion measures time only).

use criterion::{Criterion, Throughput, criterion_main};
use oware_engine::{Game, Move, Position, Side};
use oware_search::alphabeta::{DEFAULT_TT_MB, EvalWeights, terminal_score};
use oware_search::{AlphaBetaResult, SearchBudget, Searcher};
use std::hint::black_box;

/// A pinned search: the game, the depth, and what a cleared searcher must find.
struct Case {
    name: &'static str,
    game: Game,
    depth: u32,
    nodes: u64,
    best: &'static str,
    score: i32,
}

fn search(game: &Game, depth: u32, searcher: &mut Searcher) -> AlphaBetaResult {
    searcher.clear();
    searcher.search(
        game,
        SearchBudget {
            depth: Some(depth),
            ..SearchBudget::default()
        },
        &[],
    )
}

fn check(case: &Case, r: &AlphaBetaResult) {
    let best: Option<Move> = case.best.parse().ok();
    assert_eq!(
        (r.nodes, r.best, r.score),
        (case.nodes, best, case.score),
        "{}: nodes, best move, score",
        case.name
    );
}

fn cases() -> Vec<Case> {
    // 24 plies of a reference game (tests/data/openspiel_games.jsonl, the first game).
    let middle = Game::replay(
        "d F a C c B d F f B b A f C b F b D f F a E f D"
            .split_whitespace()
            .take(24),
    )
    .expect("a legal reference game");
    // The endgame of the table's repetition test (tests/alphabeta.rs): South wins in 12 by
    // steering back into the position before North's `F`.
    let before = Position::from_parts([0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1], [23, 21], Side::North)
        .expect("48 seeds");
    let mut endgame = Game::from_position(before, 1000);
    endgame.play("F".parse().expect("a move")).expect("legal");
    vec![
        Case {
            name: "start_depth12",
            game: Game::new(),
            depth: 12,
            nodes: 144_410,
            best: "f",
            score: -49,
        },
        Case {
            name: "middle_depth14",
            game: middle,
            depth: 14,
            nodes: 310_388,
            best: "d",
            score: -430,
        },
        Case {
            name: "repetition_endgame_depth12",
            game: endgame,
            depth: 12,
            nodes: 869,
            best: "b",
            score: terminal_score(4, 12),
        },
    ]
}

fn bench_fixed_depth(c: &mut Criterion) {
    let mut group = c.benchmark_group("alphabeta");
    group.sample_size(10);
    let mut searcher = Searcher::new(DEFAULT_TT_MB);
    // The figures are pinned with the hand-made evaluation (eval=classic).
    searcher.set_weights(EvalWeights::CLASSIC);
    for case in cases() {
        check(&case, &search(&case.game, case.depth, &mut searcher));
        group.throughput(Throughput::Elements(case.nodes));
        group.bench_function(case.name, |b| {
            b.iter(|| {
                let r = search(black_box(&case.game), case.depth, &mut searcher);
                check(&case, &r);
                r.score
            })
        });
    }
    group.finish();
}

fn report_one_second() {
    let mut searcher = Searcher::new(DEFAULT_TT_MB);
    let r = searcher.search(
        &Game::new(),
        SearchBudget {
            millis: Some(1000),
            ..SearchBudget::default()
        },
        &[],
    );
    println!(
        "alphabeta 1 s from the start: depth {} nodes {} ({:.2} M nodes/s) score {} pv {}",
        r.depth,
        r.nodes,
        r.nodes_per_second() / 1e6,
        r.score,
        r.pv.iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
}

fn bench_one_second(_c: &mut Criterion) {
    report_one_second();
}

/// The benchmark group (in a module of its own, so the function the macro generates is private).
mod group {
    use super::{bench_fixed_depth, bench_one_second};
    criterion::criterion_group!(benches, bench_fixed_depth, bench_one_second);
}
criterion_main!(group::benches);
