//! Alpha-beta against built positions and against a brute-force solver of small endgames.

use oware_engine::{Game, Move, Position, Side};
use oware_search::alphabeta::{
    AlphaBetaPlayer, SearchBudget, Searcher, WIN_THRESHOLD, plies_to_end, terminal_score,
};
use oware_search::{Budget, Player};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn mv(s: &str) -> Move {
    s.parse().expect("test move")
}

fn pos(board: [u8; 12], captured: [u8; 2], to_move: Side) -> Position {
    Position::from_parts(board, captured, to_move).expect("test position")
}

fn depth(d: u32) -> SearchBudget {
    SearchBudget {
        depth: Some(d),
        ..SearchBudget::default()
    }
}

/// South 23 captured; `f` sows its one seed into North's `A` (1 → 2) and wins with 25.
fn immediate_win() -> Position {
    pos([1, 0, 0, 0, 0, 1, 1, 4, 4, 4, 0, 0], [23, 10], Side::South)
}

#[test]
fn takes_an_immediate_win_with_its_exact_score() {
    let game = Game::from_position(immediate_win(), 1000);
    for d in [1, 2, 6] {
        let r = Searcher::new(1).search(&game, depth(d), &[]);
        assert_eq!(r.best, Some(mv("f")), "depth {d}");
        // Final totals 25–10: a win one ply away by 15 seeds.
        assert_eq!(r.score, terminal_score(15, 1), "depth {d}");
        assert_eq!(plies_to_end(r.score), Some(1));
        assert_eq!(r.pv.first(), Some(&mv("f")));
    }
}

#[test]
fn scores_a_finished_game_exactly() {
    let mut game = Game::from_position(immediate_win(), 1000);
    game.play(mv("f")).expect("legal");
    let result = game.result().expect("game over");
    assert_eq!(result.score, [25, 10]);
    let r = Searcher::new(1).search(&game, depth(5), &[]);
    assert_eq!(r.best, None);
    assert_eq!(r.depth, 0);
    // North is to move in the finished game and lost by 15.
    assert_eq!(r.score, terminal_score(-15, 0));

    // A game ended by having no move collects the rows: North has no seeds and South cannot
    // feed, so South's 3 seeds go to South: 25–23.
    let stuck = pos([1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], [22, 23], Side::South);
    let game = Game::from_position(stuck, 1000);
    let result = game.result().expect("no legal move ends it");
    assert_eq!(result.score, [25, 23]);
    let r = Searcher::new(1).search(&game, depth(3), &[]);
    assert_eq!((r.best, r.score), (None, terminal_score(2, 0)));
}

#[test]
fn avoids_an_immediate_loss() {
    // North has 23 and threatens F→a (1 → 2) or E→F,a for 25. Only `a` (emptying the
    // target) parries; `b` loses at once.
    let p = pos([1, 1, 0, 0, 0, 0, 5, 5, 0, 0, 2, 1], [10, 23], Side::South);
    let game = Game::from_position(p, 1000);
    for d in [2, 4, 8] {
        let r = Searcher::new(1).search(&game, depth(d), &[mv("b"), mv("a")]);
        assert_eq!(r.best, Some(mv("a")), "depth {d}: {r:?}");
        assert!(r.score > -WIN_THRESHOLD || plies_to_end(r.score) > Some(2));
    }
    let mut lost = game.clone();
    lost.play(mv("b")).expect("legal");
    let r = Searcher::new(1).search(&lost, depth(4), &[]);
    assert!(r.score >= WIN_THRESHOLD, "North wins at once: {r:?}");
    assert_eq!(plies_to_end(r.score), Some(1));
}

#[test]
fn the_ply_limit_is_an_ending() {
    // One ply left: every move ends the game by the ply limit, rows collected. South's best
    // is the move that leaves most seeds on its own row after captures.
    let p = pos([3, 0, 0, 2, 0, 1, 1, 1, 2, 0, 0, 0], [19, 19], Side::South);
    let game = Game::from_position(p, 1);
    let mut best_margin = i32::MIN;
    for m in &game.legal_moves() {
        let mut g = game.clone();
        g.play(m).expect("legal");
        let r = g.result().expect("ply limit reached");
        best_margin = best_margin.max(r.margin_for(Side::South));
    }
    let r = Searcher::new(1).search(&game, depth(6), &[]);
    assert_eq!(r.score, terminal_score(best_margin, 1));
    let mut g = game.clone();
    g.play(r.best.expect("a move")).expect("legal");
    assert_eq!(
        g.result().expect("over").margin_for(Side::South),
        best_margin
    );
}

/// Exact negamax over the full rules (repetitions, ply limit) by playing `Game`s; `None` when
/// it needs more than `budget` nodes or `max_depth` plies.
fn solve(game: &Game, ply: u32, max_depth: u32, budget: &mut u64) -> Option<i32> {
    if let Some(r) = game.result() {
        return Some(terminal_score(r.margin_for(game.to_move()), ply));
    }
    if ply >= max_depth || *budget == 0 {
        return None;
    }
    *budget -= 1;
    let mut best = i32::MIN;
    for m in &game.legal_moves() {
        let mut g = game.clone();
        g.play_unchecked(m);
        best = best.max(-solve(&g, ply + 1, max_depth, budget)?);
    }
    Some(best)
}

fn random_endgame(rng: &mut SmallRng) -> Position {
    loop {
        let seeds = rng.random_range(2..=8u8);
        let mut board = [0u8; 12];
        for _ in 0..seeds {
            board[rng.random_range(0..12)] += 1;
        }
        let rest = 48 - seeds;
        let south = rng.random_range(rest.saturating_sub(24)..=24.min(rest));
        let side = if rng.random_bool(0.5) {
            Side::South
        } else {
            Side::North
        };
        let p = pos(board, [south, rest - south], side);
        if !Game::from_position(p, 1000).is_over() {
            return p;
        }
    }
}

#[test]
fn solves_small_endgames_exactly() {
    let mut rng = SmallRng::seed_from_u64(11);
    let mut solved = 0;
    let mut decisive = 0;
    let mut deep_wins = 0;
    for _ in 0..600 {
        let p = random_endgame(&mut rng);
        // Short ply limits make that ending matter too.
        let max_plies = if rng.random_bool(0.3) { 9 } else { 1000 };
        let game = Game::from_position(p, max_plies);
        let mut budget = 200_000;
        let Some(exact) = solve(&game, 0, 24, &mut budget) else {
            continue;
        };
        solved += 1;
        if exact.abs() >= WIN_THRESHOLD {
            decisive += 1;
        }
        // Forced wins that need the opponent's replies to be seen through.
        if exact >= WIN_THRESHOLD && plies_to_end(exact) >= Some(3) {
            deep_wins += 1;
        }
        let r = Searcher::new(1).search(&game, depth(25), &[]);
        assert_eq!(r.score, exact, "{p}\nmax plies {max_plies}: {r:?}");
        // The chosen move achieves that score.
        let mut g = game.clone();
        g.play(r.best.expect("a move")).expect("legal");
        let mut budget = 200_000;
        let after = solve(&g, 1, 25, &mut budget).expect("solvable");
        assert_eq!(-after, exact, "{p}: move {:?}", r.best);
    }
    assert!(solved > 100, "only {solved} endgames solved");
    assert!(decisive > 20, "only {decisive} decisive endgames");
    assert!(deep_wins > 5, "only {deep_wins} forced wins of 3+ plies");
}

#[test]
fn player_is_deterministic_for_a_seed_and_respects_limits() {
    let play = |seed: u64| {
        let mut a = AlphaBetaPlayer::new(Some(4), None, seed);
        let mut b = AlphaBetaPlayer::new(Some(3), None, seed + 1);
        let mut game = Game::new();
        while !game.is_over() && game.ply() < 40 {
            let p: &mut AlphaBetaPlayer = if game.ply().is_multiple_of(2) {
                &mut a
            } else {
                &mut b
            };
            let c = p.choose(&game, Budget::default()).expect("a move");
            assert!(game.legal_moves().contains(c.mv));
            let v = c.value.expect("alpha-beta has a value");
            assert!((-1.0..=1.0).contains(&v));
            assert!(c.info.starts_with("depth "), "{}", c.info);
            game.play(c.mv).expect("legal");
        }
        game.record()
    };
    assert_eq!(play(5), play(5));
    let mut p = AlphaBetaPlayer::new(Some(9), None, 1);
    assert_eq!(p.name(), "alphabeta:depth=9");
    let c = p
        .choose(
            &Game::new(),
            Budget {
                depth: Some(2),
                ..Budget::default()
            },
        )
        .expect("a move");
    assert!(c.info.starts_with("depth 2 "), "{}", c.info);
    let r = p.last_result().expect("searched");
    assert_eq!(r.depth, 2);
    assert!(r.nodes > 0 && !r.pv.is_empty());
    let timed = p
        .choose(
            &Game::new(),
            Budget {
                millis: Some(30),
                ..Budget::default()
            },
        )
        .expect("a move");
    assert!(Game::new().legal_moves().contains(timed.mv));
}

/// Plain fixed-depth negamax over the full rules with the search's evaluation at the leaves,
/// no table and no pruning: the value a `depth`-ply search must find.
fn minimax(game: &Game, depth: u32, ply: u32) -> i32 {
    if let Some(r) = game.result() {
        return terminal_score(r.margin_for(game.to_move()), ply);
    }
    if depth == 0 {
        return oware_search::alphabeta::evaluate(game.position());
    }
    let mut best = i32::MIN;
    for m in &game.legal_moves() {
        let mut g = game.clone();
        g.play_unchecked(m);
        best = best.max(-minimax(&g, depth - 1, ply + 1));
    }
    best
}

/// The graph-history interaction. South to move after North's `F` from `x0`: with `x0` in the
/// game's history, South wins in 12 by steering back into `x0` (a repetition ends the game
/// and each side takes its own row, which South leads); from the same position with no
/// history that line is no repetition and the win is not there. A searcher that keeps its
/// table from one search to the next must not carry scores from one history into the other.
/// (Before the fix, the table kept from the history-free search hid the win: +3.14 instead of
/// a win in 12.)
#[test]
fn table_scores_do_not_carry_repetitions_between_histories() {
    let x0 = pos([0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1], [23, 21], Side::North);
    let mut with_history = Game::from_position(x0, 1000);
    with_history.play(mv("F")).expect("legal");
    let without_history = Game::from_position(*with_history.position(), 1000);
    let win = minimax(&with_history, 12, 0);
    assert_eq!(win, terminal_score(4, 12), "a win in 12 by 4 seeds");
    // Plain fixed-depth searches (no quiescence), so the scores are minimax's.
    let plain = || {
        let mut s = Searcher::new(1);
        s.set_quiescence(0);
        s
    };
    let fresh_with = plain().search(&with_history, depth(12), &[]);
    let fresh_without = plain().search(&without_history, depth(12), &[]);
    assert_eq!(fresh_with.score, win);
    assert_eq!(fresh_without.score, minimax(&without_history, 12, 0));
    assert!(fresh_without.score < WIN_THRESHOLD, "{fresh_without:?}");

    // The same searcher, one history after the other, in both orders.
    for (first, second, want) in [
        (&without_history, &with_history, &fresh_with),
        (&with_history, &without_history, &fresh_without),
    ] {
        let mut warm = plain();
        warm.search(first, depth(12), &[]);
        let r = warm.search(second, depth(12), &[]);
        assert_eq!((r.best, r.score), (want.best, want.score), "{r:?}");
    }
}
