//! Perft: counting the leaf positions of the game tree, the standard check of move generation.

use crate::position::Position;

/// The number of leaf positions `depth` plies below `pos`. A position that is already over
/// (25 captured, or no legal move) counts as one leaf and is not expanded.
///
/// Repetitions and the ply limit cannot occur within the depths perft is used for from the
/// start position, so the position-level endings are the complete set here.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return 1;
    }
    if depth == 1 {
        return moves.len() as u64;
    }
    let mut total = 0;
    for m in &moves {
        let mut next = *pos;
        next.play_unchecked(m);
        total += perft(&next, depth - 1);
    }
    total
}

/// Perft split by first move: each legal move with its leaf count at `depth - 1` below it.
pub fn perft_divide(pos: &Position, depth: u32) -> Vec<(crate::Move, u64)> {
    pos.legal_moves()
        .iter()
        .map(|m| {
            let mut next = *pos;
            next.play_unchecked(m);
            (m, perft(&next, depth.saturating_sub(1)))
        })
        .collect()
}
