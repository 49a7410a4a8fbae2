//! The two sides of the board.

use std::fmt;
use std::ops::Not;

/// One of the two players. South moves first and owns houses `a`–`f` (indices 0..6);
/// North owns `A`–`F` (indices 6..12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The first player, owning houses `a`–`f`.
    South = 0,
    /// The second player, owning houses `A`–`F`.
    North = 1,
}

impl Side {
    /// Both sides, South first.
    pub const BOTH: [Side; 2] = [Side::South, Side::North];

    /// 0 for South, 1 for North: the index into `captured` arrays.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The index of this side's first house (`a` = 0 or `A` = 6).
    #[inline]
    pub const fn row_start(self) -> usize {
        self as usize * 6
    }

    /// The lower-case name used in JSON and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Side::South => "south",
            Side::North => "north",
        }
    }

    /// Whether the absolute house index `house` (0..12) lies on this side's row.
    #[inline]
    pub const fn owns(self, house: usize) -> bool {
        house / 6 == self as usize
    }
}

impl Not for Side {
    type Output = Side;
    #[inline]
    fn not(self) -> Side {
        match self {
            Side::South => Side::North,
            Side::North => Side::South,
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A string that names no side.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown side '{0}': expected 'south' or 'north'")]
pub struct ParseSideError(pub String);

impl std::str::FromStr for Side {
    type Err = ParseSideError;
    /// `south`/`s` or `north`/`n`, in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "south" | "s" => Ok(Side::South),
            "north" | "n" => Ok(Side::North),
            _ => Err(ParseSideError(s.to_string())),
        }
    }
}
