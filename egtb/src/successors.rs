//! The moves of a table position, played by the engine's own rules ([`Position::play_unchecked`]),
//! with each child named by its table and index.

use super::index::rank_from;
use oware_engine::Position;
use oware_engine::Side;

/// Where one legal move of a table position leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Successor {
    /// The move captures `seeds`: the child is `index` in the table of `n − seeds` seeds.
    Capture {
        /// The mover's house (0..6) in its own row.
        house: u8,
        /// Seeds captured.
        seeds: u8,
        /// The child's index in the smaller table.
        index: u64,
    },
    /// The move captures nothing (a cancelled grand slam included): the child is `index` in
    /// the same table, and `row` seeds lie on the row of the child's side to move.
    Quiet {
        /// The mover's house (0..6) in its own row.
        house: u8,
        /// The child's index in the same table.
        index: u64,
        /// Seeds on the row of the child's mover (the side that just moved keeps `n − row`).
        row: u8,
    },
}

impl Successor {
    /// The mover's house (0..6) the move sows from.
    #[inline]
    pub fn house(self) -> u8 {
        match self {
            Successor::Capture { house, .. } | Successor::Quiet { house, .. } => house,
        }
    }
}

/// A table position of `n` seeds (board in the mover's order) as an engine position, South to
/// move. The captured totals (24 and `24 − n`) only make the seed count whole; no table value
/// depends on them, and none reaches 25 before a move.
#[inline]
pub fn table_position(board: &[u8; 12], n: u8) -> Position {
    debug_assert!(n <= 24);
    match Position::from_parts(*board, [24, 24 - n], Side::South) {
        Ok(p) => p,
        // The board holds n seeds by construction of every caller.
        Err(e) => unreachable!("a table board of {n} seeds: {e}"),
    }
}

/// The board of `pos` in its mover's order (the mover's row first).
#[inline]
pub fn movers_board(pos: &Position) -> [u8; 12] {
    let b = pos.board();
    match pos.to_move() {
        Side::South => *b,
        Side::North => {
            let mut r = [0u8; 12];
            r[..6].copy_from_slice(&b[6..]);
            r[6..].copy_from_slice(&b[..6]);
            r
        }
    }
}

/// Seeds on the mover's row of a board in the mover's order.
#[inline]
pub fn own_row(board: &[u8; 12]) -> u8 {
    board[..6].iter().sum()
}

/// Fills `out` with the legal moves of the table position `board` (mover's order, `n` seeds) in
/// house order and returns how many there are; 0 means the mover has no legal move.
#[inline]
pub fn successors(board: &[u8; 12], n: u8, out: &mut [Successor; 6]) -> usize {
    let pos = table_position(board, n);
    let mut mask = pos.legal_mask();
    let mut len = 0;
    while mask != 0 {
        let house = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        let mut child = pos;
        let effect = child.play_unchecked(oware_engine::Move::from_relative(Side::South, house));
        // The child has North to move: its mover's order starts at house 6.
        let b = child.board();
        out[len] = if effect.captured > 0 {
            Successor::Capture {
                house: house as u8,
                seeds: effect.captured,
                index: rank_from(b, 6),
            }
        } else {
            Successor::Quiet {
                house: house as u8,
                index: rank_from(b, 6),
                row: b[6..].iter().sum(),
            }
        };
        len += 1;
    }
    len
}
