//! Alpha-beta with endgame tables against the tables themselves and against an exhaustive,
//! history-aware solver of the real game (`oware_egtb::brute`).

use oware_egtb::brute::{BruteSolver, sampled_game, south_to_move};
use oware_egtb::{Boards, Outcome, SolveOptions, Table, Tables, solve_table_with};
use oware_engine::{Game, Move, Position, Side};
use oware_search::alphabeta::{SEED, table_estimate, table_node, table_score};
use oware_search::{AlphaBetaPlayer, Budget, Player, RandomPlayer};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::OnceLock;

/// The tables of 0..=8 seeds, solved once for all tests.
fn tables() -> &'static [Table] {
    static T: OnceLock<Vec<Table>> = OnceLock::new();
    T.get_or_init(|| {
        let mut tables = Vec::new();
        // The exact search of 0..=6 seeds only: the seventh and eighth tables' cost minutes.
        let options = SolveOptions::exact_up_to(6);
        for n in 0..=8 {
            let (t, _) = solve_table_with(n, &tables, &options, &|_| {});
            tables.push(t);
        }
        tables
    })
}

fn set() -> Tables {
    Tables::from_tables(std::path::Path::new("mem"), tables().to_vec())
}

fn south(board: [u8; 12]) -> Position {
    south_to_move(board)
}

/// The smallest tables where the exhaustive solver is quick.
const SOLVED_BY_BRUTE_FORCE: u8 = 3;

#[test]
fn alphabeta_with_tables_never_loses_a_won_table_position() {
    // From positions the tables call won (or at least drawn) for South, against a random
    // player and alpha-beta with and without tables.
    use std::sync::Arc;
    let tb = Arc::new(set());
    let mut rng = SmallRng::seed_from_u64(44);
    let (mut won, mut safe) = (0, 0);
    let mut tried = 0;
    while won + safe < 50 && tried < 50_000 {
        tried += 1;
        let n = rng.random_range(4..=8u8);
        let mut board = [0u8; 12];
        for _ in 0..n {
            board[rng.random_range(0..12)] += 1;
        }
        let own = rng.random_range(16..=24u8).min(48 - n);
        let other = 48 - n - own;
        if other > 24 {
            continue;
        }
        let pos = Position::from_parts(board, [own, other], Side::South).expect("valid");
        let game = Game::from_position(pos, oware_engine::DEFAULT_MAX_PLIES);
        if game.is_over() {
            continue;
        }
        let probe = tb.probe(&pos).expect("covered");
        let (worst, _) = probe.outcomes();
        if worst == Outcome::Loss {
            continue;
        }
        let opponents: [Box<dyn Player + Send>; 3] = [
            Box::new(RandomPlayer::new(tried)),
            Box::new(AlphaBetaPlayer::new(Some(4), None, tried)),
            Box::new(AlphaBetaPlayer::new(Some(4), None, tried).with_tables(tb.clone())),
        ];
        // The three games at once: each move of the player with tables runs its root proofs.
        std::thread::scope(|scope| {
            let games: Vec<_> = opponents
                .into_iter()
                .map(|mut opponent| {
                    let (tb, mut g) = (tb.clone(), game.clone());
                    scope.spawn(move || {
                        let mut me = AlphaBetaPlayer::new(Some(4), None, tried ^ 7).with_tables(tb);
                        while !g.is_over() {
                            let mv = if g.to_move() == Side::South {
                                me.choose(&g, Budget::default()).expect("a move").mv
                            } else {
                                opponent.choose(&g, Budget::default()).expect("a move").mv
                            };
                            g.play(mv).expect("legal");
                        }
                        (opponent.name(), g.result().expect("over"))
                    })
                })
                .collect();
            for game in games {
                let (name, result) = game.join().expect("a game thread");
                let got = Outcome::of_total(result.score[0] as u32);
                assert!(
                    got >= worst,
                    "{board:?} {own}-{other}: the tables promise at least a {worst:?}, {name} got {result}"
                );
            }
        });
        if worst == Outcome::Win {
            won += 1;
        } else {
            safe += 1;
        }
    }
    assert!(
        won >= 20 && safe >= 10,
        "{won} won and {safe} drawn-or-better positions tried"
    );
}

#[test]
fn search_nodes_score_inside_their_table_band() {
    // Every node of the tables of 1..=6 seeds, seen by either searching side, with and
    // without an empty history: the estimate lies in the entry interval's margins, the score where
    // the search stops lies in the band, a settled result is one score, and the entry
    // interval of a fresh node lies inside the stored one.
    let tb = set();
    let (mut open, mut settled) = (0, 0);
    for n in 1..=6u8 {
        let t = &tables()[n as usize];
        for (_, board) in Boards::new(n as usize, 0, t.len()) {
            let pos = south(board);
            if pos.legal_moves().is_empty() {
                continue;
            }
            let stored = tb.bounds(&pos).expect("covered");
            let entry = tb.entry(&pos).expect("covered");
            assert!(stored.lo <= entry.lo && entry.hi <= stored.hi, "{board:?}");
            // The estimate comes from the entry interval, whatever the history.
            let (elo, ehi) = tb.probe_with(&pos, true).expect("covered").margins();
            let estimate = table_estimate(&tb, &pos).expect("covered");
            assert!(
                SEED * elo <= estimate && estimate <= SEED * ehi,
                "{board:?}"
            );
            // An empty history, any history, and histories whose repeats give the mover
            // some of the rows.
            for repeats in [
                None,
                Some((0, n)),
                Some((0, 0)),
                Some((n, n)),
                Some((n / 2, n)),
            ] {
                let (lo, hi) = tb.probe_after(&pos, repeats).expect("covered").margins();
                let narrowed = tb.bounds_after(&pos, repeats).expect("covered");
                assert!(
                    stored.lo <= narrowed.lo && narrowed.hi <= stored.hi,
                    "{board:?}"
                );
                if repeats.is_none() {
                    assert_eq!(narrowed, entry, "{board:?}");
                } else if repeats == Some((0, n)) {
                    assert_eq!(narrowed, stored, "{board:?}");
                }
                for side in [Side::South, Side::North] {
                    let node = table_node(&tb, &pos, side, repeats).expect("covered");
                    assert!(node.floor <= node.ceiling);
                    for h in [-5000, -300, 0, 300, 5000] {
                        let s = node.leaf_score(h, estimate);
                        assert!(node.floor <= s && s <= node.ceiling, "{board:?} {h}: {s}");
                    }
                    let (slo, shi) = if side == Side::South {
                        (lo, hi)
                    } else {
                        (-hi, -lo)
                    };
                    if slo > 0 || shi < 0 || slo == shi {
                        let s = table_score(slo);
                        let s = if side == Side::South { s } else { -s };
                        assert_eq!((node.floor, node.ceiling), (s, s), "{board:?}");
                        settled += 1;
                    } else {
                        open += 1;
                    }
                }
            }
        }
    }
    assert!(
        open > 1000 && settled > 1000,
        "{open} open, {settled} settled"
    );
}

#[test]
fn alphabeta_with_tables_keeps_the_best_result_of_the_real_game() {
    // Small table positions with sampled histories and close captured totals: the move
    // `alphabeta:depth=2,egtb=…` plays keeps the result the exhaustive solver gives the
    // position with that history (the proofs of its root moves settle them all here).
    let tb = std::sync::Arc::new(set());
    let mut solver = BruteSolver::new();
    let mut rng = SmallRng::seed_from_u64(5);
    let mut player = AlphaBetaPlayer::new(Some(2), None, 9).with_tables(tb);
    let (mut tried, mut open) = (0, 0);
    while tried < 300 {
        let Some((start, houses, game)) =
            sampled_game(&mut rng, SOLVED_BY_BRUTE_FORCE, |n, rng| {
                rng.random_range(24 - n..=24)
            })
        else {
            continue;
        };
        let captured = game.position().captured();
        tried += 1;
        open += !tb_exact(&game) as u32;
        let best = solver.outcome(&game);
        let mv = player.choose(&game, Budget::default()).expect("live").mv;
        let mut child = game.clone();
        child.play(mv).expect("legal");
        let kept = match child.result() {
            Some(r) => Outcome::of_total(r.score[game.to_move().index()] as u32),
            None => match solver.outcome(&child) {
                Outcome::Win => Outcome::Loss,
                Outcome::Loss => Outcome::Win,
                Outcome::Draw => Outcome::Draw,
            },
        };
        assert_eq!(kept, best, "{start:?} {houses:?} {captured:?}: played {mv}");
    }
    assert!(
        open > 30,
        "{open} positions with a cycle-dependent interval"
    );
}

/// Whether the stored interval of the game's position is exact.
fn tb_exact(game: &Game) -> bool {
    set().bounds(game.position()).expect("covered").is_exact()
}

/// The board seeds (of `n`) that the side to move after the quiet `houses` from `start`
/// (South to move there) secures by playing `mv`, by the exhaustive solver of the real game:
/// the largest `t` with which it wins when it starts with 25 − `t` captured.
fn move_value(solver: &mut BruteSolver, start: &[u8; 12], n: u8, houses: &[usize], mv: Move) -> u8 {
    let side = if houses.len().is_multiple_of(2) {
        Side::South
    } else {
        Side::North
    };
    (1..=n)
        .rev()
        .find(|&t| {
            let (mine, theirs) = (25 - t, 48 - n - (25 - t));
            let captured = match side {
                Side::South => [mine, theirs],
                Side::North => [theirs, mine],
            };
            let pos = Position::from_parts(*start, captured, Side::South).expect("valid");
            let mut game = Game::from_position(pos, u32::MAX);
            for &h in houses {
                game.play(Move::from_relative(game.to_move(), h))
                    .expect("legal");
            }
            game.play(mv).expect("legal");
            solver.wins(&game, side)
        })
        .unwrap_or(0)
}

#[test]
fn alphabeta_with_tables_plays_a_move_of_the_best_value_where_proofs_settle_every_move() {
    // Small table positions with sampled histories: the root proofs settle every move's value
    // by seeds here, so the move `alphabeta:depth=2,egtb=…` plays secures as many board seeds
    // as the best move does by the exhaustive solver, not only the same result.
    let tb = std::sync::Arc::new(set());
    let mut solver = BruteSolver::new();
    let mut rng = SmallRng::seed_from_u64(8);
    let mut player = AlphaBetaPlayer::new(Some(2), None, 3).with_tables(tb);
    let (mut tried, mut choices) = (0, 0);
    while tried < 500 {
        let Some((start, houses, game)) =
            sampled_game(&mut rng, SOLVED_BY_BRUTE_FORCE, |n, rng| {
                rng.random_range(24 - n..=24)
            })
        else {
            continue;
        };
        tried += 1;
        let n: u8 = start.iter().sum();
        let values: Vec<(Move, u8)> = game
            .legal_moves()
            .iter()
            .map(|m| (m, move_value(&mut solver, &start, n, &houses, m)))
            .collect();
        let best = values.iter().map(|v| v.1).max().expect("a live game");
        choices += values.iter().any(|v| v.1 < best) as u32;
        let mv = player.choose(&game, Budget::default()).expect("live").mv;
        let got = values.iter().find(|v| v.0 == mv).expect("legal").1;
        assert_eq!(got, best, "{start:?} {houses:?}: played {mv} of {values:?}");
    }
    assert!(
        choices > 25,
        "{choices} positions where a move gives seeds away"
    );
}
