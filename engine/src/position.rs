//! The board position and the move rules (sowing, capture, grand slam, feeding).

use crate::moves::{Move, MoveList};
use crate::side::Side;
use std::fmt;

/// Seeds in the game.
pub const TOTAL_SEEDS: u8 = 48;
/// Captured seeds that end the game at once.
pub const WINNING_CAPTURE: u8 = 25;

/// A position: the 12 houses in canonical order (`a`..`f`, `A`..`F`), the seeds each side has
/// captured, and the side to move.
///
/// A position alone cannot know about repetitions or the ply limit; [`crate::Game`] adds those.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    board: [u8; 12],
    captured: [u8; 2],
    to_move: Side,
}

/// Why a move cannot be played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
    /// The house belongs to the side not to move.
    #[error("house {mv} belongs to {owner}, but {to_move} is to move")]
    NotYourHouse {
        /// The move tried.
        mv: Move,
        /// The house's owner.
        owner: Side,
        /// The side to move.
        to_move: Side,
    },
    /// The house holds no seeds.
    #[error("house {0} is empty")]
    EmptyHouse(Move),
    /// The opponent's row is empty and this move would not give it a seed.
    #[error("house {0} does not reach the opponent's empty row, and a move that feeds it exists")]
    MustFeed(Move),
    /// The game has already ended.
    #[error("the game is over")]
    GameOver,
}

/// Parts that make no position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// Board and captured seeds do not add up to 48.
    #[error("board and captured seeds sum to {sum}, not 48")]
    SeedCount {
        /// The sum found.
        sum: u32,
    },
}

/// What a move did, beyond moving seeds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MoveEffect {
    /// Seeds captured by the move (0 when nothing was captured or the capture was cancelled).
    pub captured: u8,
    /// Whether a capture was cancelled because it would have taken all the opponent's seeds.
    pub grand_slam: bool,
}

/// Next house in sowing order.
const NEXT: [u8; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0];

impl Default for Position {
    fn default() -> Self {
        Position::start()
    }
}

impl Position {
    /// The start position: four seeds in every house, South to move.
    pub const fn start() -> Position {
        Position {
            board: [4; 12],
            captured: [0, 0],
            to_move: Side::South,
        }
    }

    /// Builds a position from its parts, checking that it is one the rules can reach in seed
    /// count: board plus captured totals must make 48.
    pub fn from_parts(
        board: [u8; 12],
        captured: [u8; 2],
        to_move: Side,
    ) -> Result<Position, PositionError> {
        let sum: u32 =
            board.iter().map(|&x| x as u32).sum::<u32>() + captured[0] as u32 + captured[1] as u32;
        if sum != TOTAL_SEEDS as u32 {
            return Err(PositionError::SeedCount { sum });
        }
        Ok(Position {
            board,
            captured,
            to_move,
        })
    }

    /// The same board and captured totals with `side` to move (a position with the same
    /// seeds, so always a valid one): what a side could do if it were its turn.
    #[inline]
    pub const fn with_to_move(self, side: Side) -> Position {
        Position {
            to_move: side,
            ..self
        }
    }

    /// The seeds in each house, canonical order `a`..`f`, `A`..`F`.
    #[inline]
    pub const fn board(&self) -> &[u8; 12] {
        &self.board
    }

    /// Seeds captured by South and North.
    #[inline]
    pub const fn captured(&self) -> [u8; 2] {
        self.captured
    }

    /// The side to move.
    #[inline]
    pub const fn to_move(&self) -> Side {
        self.to_move
    }

    /// Seeds on `side`'s row.
    #[inline]
    pub fn row_seeds(&self, side: Side) -> u8 {
        let s = side.row_start();
        self.board[s..s + 6].iter().sum()
    }

    /// Whether a side has captured 25 or more.
    #[inline]
    pub fn has_winning_capture(&self) -> bool {
        self.captured[0] >= WINNING_CAPTURE || self.captured[1] >= WINNING_CAPTURE
    }

    /// The legal moves of the side to move, in house order. Empty when the game is over by
    /// capture count or when the side to move cannot move.
    #[inline]
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        let mut mask = self.legal_mask();
        while mask != 0 {
            list.push(Move::from_relative(
                self.to_move,
                mask.trailing_zeros() as usize,
            ));
            mask &= mask - 1;
        }
        list
    }

    /// The legal moves as a bit mask over the mover's houses (bit `i` = policy index `i`, the
    /// same set as [`Position::legal_moves`]); 0 when the game is over by capture count or the
    /// side to move cannot move.
    #[inline]
    pub fn legal_mask(&self) -> u8 {
        if self.has_winning_capture() {
            return 0;
        }
        let me = self.to_move.row_start();
        let must_feed = self.row_seeds(!self.to_move) == 0;
        let mut mask = 0u8;
        for i in 0..6 {
            let seeds = self.board[me + i];
            let ok = seeds > 0 && (!must_feed || seeds as usize >= 6 - i);
            mask |= (ok as u8) << i;
        }
        mask
    }

    /// Whether `m` is legal here; the reason when it is not.
    pub fn check(&self, m: Move) -> Result<(), PlayError> {
        if self.has_winning_capture() {
            return Err(PlayError::GameOver);
        }
        if m.owner() != self.to_move {
            return Err(PlayError::NotYourHouse {
                mv: m,
                owner: m.owner(),
                to_move: self.to_move,
            });
        }
        let seeds = self.board[m.house()];
        if seeds == 0 {
            return Err(PlayError::EmptyHouse(m));
        }
        if self.row_seeds(!self.to_move) == 0 && (seeds as usize) < 6 - m.relative() {
            return Err(PlayError::MustFeed(m));
        }
        Ok(())
    }

    /// Plays `m` after checking it; returns the new position and what the move did.
    ///
    /// This applies only the move itself: endings that collect seeds (no move, repetition,
    /// ply limit) are decided by [`crate::Game`].
    pub fn play(&self, m: Move) -> Result<(Position, MoveEffect), PlayError> {
        self.check(m)?;
        let mut next = *self;
        let effect = next.play_unchecked(m);
        Ok((next, effect))
    }

    /// Plays `m` in place without checking it.
    ///
    /// The caller guarantees that `m` is in [`Position::legal_moves`]; otherwise the resulting
    /// position is meaningless (though memory-safe, and seeds are still conserved).
    #[inline]
    pub fn play_unchecked(&mut self, m: Move) -> MoveEffect {
        let origin = m.house();
        let seeds = self.board[origin];
        self.board[origin] = 0;
        let mut last = origin;
        if seeds < 12 {
            for _ in 0..seeds {
                last = NEXT[last] as usize;
                self.board[last] += 1;
            }
            // 11 seeds end one house before the origin: never the origin itself.
        } else {
            let laps = seeds / 11;
            let rem = seeds % 11;
            for (i, h) in self.board.iter_mut().enumerate() {
                if i != origin {
                    *h += laps;
                }
            }
            last = (origin + 11) % 12;
            for _ in 0..rem {
                last = NEXT[last] as usize;
                if last == origin {
                    last = NEXT[last] as usize;
                }
                self.board[last] += 1;
            }
        }
        let me = self.to_move;
        self.to_move = !me;
        let mut effect = MoveEffect::default();
        let them = !me;
        if them.owns(last) && (self.board[last] == 2 || self.board[last] == 3) {
            let start = them.row_start();
            let mut total = 0u8;
            let mut h = last;
            loop {
                let s = self.board[h];
                if s != 2 && s != 3 {
                    break;
                }
                total += s;
                if h == start {
                    break;
                }
                h -= 1;
            }
            if total == self.row_seeds(them) {
                effect.grand_slam = true;
            } else {
                let mut h = last;
                loop {
                    let s = self.board[h];
                    if s != 2 && s != 3 {
                        break;
                    }
                    self.board[h] = 0;
                    if h == start {
                        break;
                    }
                    h -= 1;
                }
                self.captured[me.index()] += total;
                effect.captured = total;
            }
        }
        effect
    }

    /// Moves every seed on the board to the captured total of the side whose row holds it.
    /// This is how the no-move, repetition and ply-limit endings settle the board.
    pub fn collect_rows(&mut self) {
        for side in Side::BOTH {
            self.captured[side.index()] += self.row_seeds(side);
        }
        self.board = [0; 12];
    }

    /// An exact, collision-free key of the position (board, captured totals, side to move),
    /// used to detect repetitions.
    #[inline]
    pub fn key(&self) -> u128 {
        let mut bytes = [0u8; 16];
        bytes[..12].copy_from_slice(&self.board);
        bytes[12] = self.captured[0];
        bytes[13] = self.captured[1];
        bytes[14] = self.to_move as u8;
        u128::from_le_bytes(bytes)
    }

    /// The captured totals (South, North) held in a [`Position::key`].
    #[inline]
    pub const fn key_captured(key: u128) -> [u8; 2] {
        let bytes = key.to_le_bytes();
        [bytes[12], bytes[13]]
    }

    /// The seeds on `side`'s row in the board held in a [`Position::key`]: what that side
    /// takes if the game ends by repeating that position.
    #[inline]
    pub const fn key_row_seeds(key: u128, side: Side) -> u8 {
        let bytes = key.to_le_bytes();
        let s = side.row_start();
        bytes[s] + bytes[s + 1] + bytes[s + 2] + bytes[s + 3] + bytes[s + 4] + bytes[s + 5]
    }
}

impl fmt::Display for Position {
    /// North's row on top from `F` down to `A`, South's below from `a` to `f`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "  ")?;
        for h in (6..12).rev() {
            write!(f, "{:>3}", self.board[h])?;
        }
        writeln!(f, "   North {:>2}", self.captured[1])?;
        write!(f, "  ")?;
        for h in 0..6 {
            write!(f, "{:>3}", self.board[h])?;
        }
        write!(
            f,
            "   South {:>2}   {} to move",
            self.captured[0], self.to_move
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_gives_back_its_captured_totals() {
        let mut board = [0u8; 12];
        board[3] = 5;
        board[8] = 2;
        let pos = Position::from_parts(board, [30, 11], Side::North).expect("valid");
        assert_eq!(Position::key_captured(pos.key()), [30, 11]);
        assert_eq!(Position::key_captured(Position::start().key()), [0, 0]);
    }
}
