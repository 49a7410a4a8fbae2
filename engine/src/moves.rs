//! Moves, their notation and a stack-allocated move list.

use crate::side::Side;
use std::fmt;
use std::str::FromStr;

/// A move: the absolute index (0..12, `a`..`f` then `A`..`F`) of the house to sow from.
///
/// South's moves print as `a`–`f`, North's as `A`–`F`. A `Move` is only legal for the side that
/// owns the house; [`crate::Position::play`] checks that.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move(u8);

impl Move {
    /// The move sowing from absolute house `house` (0..12). Returns `None` when out of range.
    pub const fn new(house: usize) -> Option<Move> {
        if house < 12 {
            Some(Move(house as u8))
        } else {
            None
        }
    }

    /// The move of `side` from its house at position `i` (0..6) counted from the side's first
    /// house in sowing order (`a`/`A` is 0). This is the policy index used by the network.
    ///
    /// # Panics
    /// In debug builds, if `i >= 6`.
    #[inline]
    pub const fn from_relative(side: Side, i: usize) -> Move {
        debug_assert!(i < 6);
        Move((side.row_start() + i) as u8)
    }

    /// The absolute house index (0..12).
    #[inline]
    pub const fn house(self) -> usize {
        self.0 as usize
    }

    /// The position (0..6) of the house within its owner's row: the policy index.
    #[inline]
    pub const fn relative(self) -> usize {
        self.0 as usize % 6
    }

    /// The side that owns the house this move sows from.
    #[inline]
    pub const fn owner(self) -> Side {
        if self.0 < 6 { Side::South } else { Side::North }
    }

    /// The notation letter: `a`–`f` for South's houses, `A`–`F` for North's.
    pub const fn letter(self) -> char {
        let i = self.0 % 6;
        if self.0 < 6 {
            (b'a' + i) as char
        } else {
            (b'A' + i) as char
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// A move string that is not one of `a`–`f` or `A`–`F`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a move: expected one house letter, a-f (South) or A-F (North)")]
pub struct ParseMoveError(pub String);

impl FromStr for Move {
    type Err = ParseMoveError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c @ 'a'..='f'), None) => Ok(Move(c as u8 - b'a')),
            (Some(c @ 'A'..='F'), None) => Ok(Move(c as u8 - b'A' + 6)),
            _ => Err(ParseMoveError(s.to_string())),
        }
    }
}

/// Up to six moves, stored on the stack in house order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveList {
    moves: [Move; 6],
    len: u8,
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList::new()
    }
}

impl MoveList {
    /// An empty list.
    pub const fn new() -> MoveList {
        MoveList {
            moves: [Move(0); 6],
            len: 0,
        }
    }

    /// Appends a move. At most six moves fit; more is a logic error.
    #[inline]
    pub fn push(&mut self, m: Move) {
        debug_assert!(self.len < 6);
        self.moves[self.len as usize] = m;
        self.len += 1;
    }

    /// The number of moves.
    #[inline]
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the list is empty.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The moves as a slice, in house order.
    #[inline]
    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len as usize]
    }

    /// The `i`-th move, if any.
    #[inline]
    pub fn get(&self, i: usize) -> Option<Move> {
        self.as_slice().get(i).copied()
    }

    /// Whether `m` is in the list.
    pub fn contains(&self, m: Move) -> bool {
        self.as_slice().contains(&m)
    }

    /// Iterates over the moves in house order.
    pub fn iter(&self) -> impl Iterator<Item = Move> + '_ {
        self.as_slice().iter().copied()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = Move;
    type IntoIter = std::iter::Copied<std::slice::Iter<'a, Move>>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter().copied()
    }
}

/// The moves in notation, separated by spaces.
pub fn moves_text(moves: &[Move]) -> String {
    let mut s = String::with_capacity(moves.len() * 2);
    for (i, m) in moves.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push(m.letter());
    }
    s
}
