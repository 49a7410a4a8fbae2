//! The root moves endgame tables leave worth playing, for any player with tables (alpha-beta
//! and MCTS): proofs from the game's real history first keep the moves that hold the best
//! proven result, then narrow every move's interval of board seeds, and the player plays only
//! among the moves proven best by seeds where there are any.

use oware_egtb::{Analysis, PROOF_DEPTH, Prover, kept_moves, narrow_moves, prove_moves};
use oware_engine::{Game, Move};
use std::sync::Arc;
use std::time::Instant;

/// Nodes the proofs of one move may visit, over all its root moves (see [`oware_egtb::Prover`]).
pub const PROOF_NODES: u64 = 20_000;

/// Nodes each proof of one threshold may expand when the root moves' intervals of seeds are
/// narrowed (see [`oware_egtb::prove_moves`]); a timed search stops them at its deadline.
pub const SEED_PROOF_NODES: u64 = 100_000;

/// Nodes per threshold of the second round of seed proofs, run where the first leaves no move
/// sure to be best and several that may be: the judge's budget.
pub const CONTESTED_PROOF_NODES: u64 = oware_egtb::JUDGE_PROOF_NODES;

/// The root moves of `game` worth playing once the tables have spoken, or `None` where the
/// tables do not cover the position (or the result proofs give nothing).
///
/// 1. The result proofs ([`Prover::moves`], [`PROOF_NODES`] in all) keep the moves that hold
///    the best proven result ([`kept_moves`]).
/// 2. Every move's interval of board seeds is narrowed as `oware judge` does it
///    ([`prove_moves`], [`SEED_PROOF_NODES`] per threshold).
/// 3. Where that leaves no move sure to be best but several that may be, those contested moves
///    are narrowed further from where they stand ([`narrow_moves`],
///    [`CONTESTED_PROOF_NODES`] per threshold).
/// 4. The moves proven best by seeds where there are any, else the kept moves no other move is
///    sure to beat by seeds ([`best_by_seeds`]).
///
/// The tables are the prover's. No proof runs after `deadline`.
pub fn table_root_moves(
    prover: &mut Prover,
    game: &Game,
    deadline: Option<Instant>,
) -> Option<Vec<Move>> {
    let tables = Arc::clone(prover.tables());
    let proofs = prover.moves(game, PROOF_DEPTH, PROOF_NODES, deadline)?;
    let kept = kept_moves(&proofs);
    let (mut analysis, _) = prove_moves(&tables, prover, game, SEED_PROOF_NODES, deadline)?;
    let contested = analysis.best_moves();
    if analysis.optimal_moves().is_empty() && contested.len() > 1 {
        // The moves that may be best overlap: narrow them again from where the first round
        // left them, with a larger budget (the moves surely beaten stay as they are: they
        // cannot change which moves are best).
        let which = |m: Move| contested.contains(&m);
        narrow_moves(
            &mut analysis,
            prover,
            game,
            &which,
            CONTESTED_PROOF_NODES,
            deadline,
        );
    }
    Some(best_by_seeds(&analysis, kept))
}

/// The root moves worth searching once the tables have spoken: the moves proven best by board
/// seeds (`analysis`: every move's interval after proofs from the real history) where there
/// are any; otherwise those of `kept` (the moves that keep the best proven result) that no
/// other move is sure to beat by seeds.
///
/// Where every move of `kept` is sure to be beaten by seeds (the result proofs and the seed
/// proofs have different budgets, so they can settle different moves), the moves whose lowest
/// seed count is the highest are searched: each secures more seeds than a move of `kept` can
/// get, so it keeps at least the result `kept` was proven to keep.
pub(crate) fn best_by_seeds(analysis: &Analysis, kept: Vec<Move>) -> Vec<Move> {
    let optimal = analysis.optimal_moves();
    if !optimal.is_empty() {
        return optimal;
    }
    let best = analysis.best_moves();
    let narrowed: Vec<Move> = kept.iter().copied().filter(|m| best.contains(m)).collect();
    if !narrowed.is_empty() {
        return narrowed;
    }
    let securing = analysis.securing_moves();
    if securing.is_empty() { kept } else { securing }
}

/// The move a search with tables plays: `chosen` where `allowed` holds it (or is empty), else
/// the allowed move the search visited most (the first of `allowed` on a tie). `visits` is by
/// policy index ([`Move::relative`]), as an MCTS result gives it.
pub fn restrict_to(allowed: &[Move], chosen: Move, visits: &[u32; 6]) -> Move {
    if allowed.is_empty() || allowed.contains(&chosen) {
        return chosen;
    }
    let mut best = allowed[0];
    for &m in &allowed[1..] {
        if visits[m.relative()] > visits[best.relative()] {
            best = m;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analysis(moves: &[(&str, u8, u8)]) -> Analysis {
        Analysis {
            probe: oware_egtb::Probe {
                bounds: oware_egtb::Bounds { lo: 0, hi: 10 },
                seeds: 10,
                captured_own: 19,
                captured_other: 19,
            },
            moves: moves
                .iter()
                .map(|&(mv, lo, hi)| oware_egtb::MoveBounds {
                    mv: mv.parse().expect("a move"),
                    bounds: oware_egtb::Bounds { lo, hi },
                    repeats: false,
                })
                .collect(),
        }
    }

    #[test]
    fn the_root_keeps_moves_the_seed_proofs_do_not_rule_out() {
        let mv = |s: &str| s.parse::<Move>().expect("a move");
        // A move proven best by seeds wins over the result proofs' choice.
        let a = analysis(&[("a", 6, 6), ("b", 2, 5), ("c", 0, 4)]);
        assert_eq!(best_by_seeds(&a, vec![mv("b"), mv("c")]), vec![mv("a")]);
        // Without one: the kept moves no other move is sure to beat.
        let a = analysis(&[("a", 3, 7), ("b", 4, 6), ("c", 0, 3)]);
        assert_eq!(best_by_seeds(&a, vec![mv("a"), mv("c")]), vec![mv("a")]);
        // Every kept move is sure to be beaten (the result proofs settled other moves than the
        // seed proofs): the moves securing the most seeds, never a move proven worse.
        let a = analysis(&[("a", 5, 8), ("b", 2, 9), ("c", 0, 4)]);
        assert_eq!(best_by_seeds(&a, vec![mv("c")]), vec![mv("a")]);
    }

    #[test]
    fn a_search_plays_its_choice_only_where_the_tables_allow_it() {
        let mv = |s: &str| s.parse::<Move>().expect("a move");
        let visits = [5, 40, 30, 0, 25, 0];
        // South's houses a..f are the policy indices 0..6.
        assert_eq!(restrict_to(&[], mv("b"), &visits), mv("b"));
        assert_eq!(restrict_to(&[mv("b"), mv("c")], mv("b"), &visits), mv("b"));
        assert_eq!(
            restrict_to(&[mv("a"), mv("e"), mv("c")], mv("b"), &visits),
            mv("c")
        );
        assert_eq!(restrict_to(&[mv("d"), mv("f")], mv("b"), &visits), mv("d"));
    }
}
