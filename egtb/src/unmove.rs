//! Un-moves: the positions of the same table that reach a given one by a move that captures
//! nothing. Each candidate is found by un-sowing and then confirmed by playing the move forward
//! with the engine's rules, so the rules live in one place only.

use super::index::rank;
use super::successors::table_position;
use oware_engine::Move;
use oware_engine::Side;

/// Calls `found` with the index of every position of the table of `n` seeds that moves to
/// `board` (mover's order) without capturing. A parent may be reported once per move that
/// leads here (never more than once per move).
pub(crate) fn quiet_parents(board: &[u8; 12], n: u8, mut found: impl FnMut(u64)) {
    // In `board`'s order the parent's mover owns houses 6..12.
    for origin in 6..12 {
        if board[origin] != 0 {
            continue;
        }
        for s in 1..=n {
            let laps = s / 11;
            let rem = s % 11;
            let mut parent = *board;
            let mut fits = true;
            for d in 1..12u8 {
                let h = (origin + d as usize) % 12;
                let take = laps + (d <= rem) as u8;
                if parent[h] < take {
                    fits = false;
                    break;
                }
                parent[h] -= take;
            }
            if !fits {
                // More seeds take more from every house: no larger `s` fits either.
                break;
            }
            parent[origin] = s;
            // The parent in its mover's order.
            let mut p = [0u8; 12];
            p[..6].copy_from_slice(&parent[6..]);
            p[6..].copy_from_slice(&parent[..6]);
            let pos = table_position(&p, n);
            let house = origin - 6;
            if pos.legal_mask() & (1 << house) == 0 {
                continue;
            }
            let mut child = pos;
            if child
                .play_unchecked(Move::from_relative(Side::South, house))
                .captured
                > 0
            {
                continue;
            }
            debug_assert_eq!(super::index::rank_from(child.board(), 6), rank(board));
            found(rank(&p));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{Boards, table_len};
    use crate::successors::{Successor, successors};
    use std::collections::HashSet;

    #[test]
    fn un_moves_are_exactly_the_inverse_of_quiet_moves() {
        for n in 0..=7u8 {
            let len = table_len(n as usize);
            // Forward: every quiet edge parent → child.
            let mut forward = HashSet::new();
            let mut succ = [Successor::Quiet {
                house: 0,
                index: 0,
                row: 0,
            }; 6];
            for (i, board) in Boards::new(n as usize, 0, len) {
                let k = successors(&board, n, &mut succ);
                for s in &succ[..k] {
                    if let Successor::Quiet { index, .. } = *s {
                        forward.insert((i, index));
                    }
                }
            }
            // Backward: every parent found from each child.
            let mut backward = HashSet::new();
            for (i, board) in Boards::new(n as usize, 0, len) {
                quiet_parents(&board, n, |p| {
                    backward.insert((p, i));
                });
            }
            assert_eq!(forward, backward, "n={n}");
        }
    }
}
