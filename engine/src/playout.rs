//! Uniform random playouts: the benchmark of the rules and the leaf value of rollout MCTS.

use crate::game::{GameResult, adjudicate};
use crate::position::Position;
use rand::Rng;

/// Plays uniformly random legal moves from `pos` until the game ends, with the full rules
/// (repetition since the last capture, ply limit). `seen` holds the keys of the positions since
/// the last capture that led to `pos` (`pos` included), and is used as scratch space; `ply` is the
/// number of plies already played. Returns the result.
pub fn random_playout<R: Rng + ?Sized>(
    mut pos: Position,
    seen: &mut Vec<u128>,
    mut ply: u32,
    max_plies: u32,
    rng: &mut R,
) -> GameResult {
    loop {
        let moves = pos.legal_moves();
        debug_assert!(
            !moves.is_empty(),
            "playout started from a finished position"
        );
        let m = moves.as_slice()[rng.random_range(0..moves.len())];
        let effect = pos.play_unchecked(m);
        ply += 1;
        if effect.captured > 0 {
            seen.clear();
        }
        if let Some(result) = adjudicate(&mut pos, seen, ply, max_plies) {
            return result;
        }
        seen.push(pos.key());
    }
}
