//! What a table says of one position: the interval `[lo, hi]` holding the number of board seeds
//! the side to move secures with best play, whatever the history (see the module docs), stored
//! as one byte.
//!
//! Exact values (`lo == hi`) are their own code, `0..=21`; an interval `lo < hi` is
//! `22 + hi·(hi − 1)/2 + lo`, which keeps every pair with `hi ≤ 21` below 253. Codes 253–255
//! never occur in a table (a file holding one is damaged).

use super::index::MAX_TABLE_SEEDS;

/// The interval a table stores for a position, in seeds of the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bounds {
    /// The side to move secures at least this many of the board's seeds.
    pub lo: u8,
    /// The opponent holds the side to move to at most this many.
    pub hi: u8,
}

/// The number of distinct codes: exact values and intervals with `hi ≤ 21`.
pub const CODES: usize = {
    let m = MAX_TABLE_SEEDS + 1;
    m + m * (m - 1) / 2
};

/// `DECODE[c]` is the interval of code `c`, `(lo, hi)`; `(1, 0)` for codes that are not used.
static DECODE: [(u8, u8); 256] = {
    let mut t = [(1u8, 0u8); 256];
    let mut hi = 0;
    while hi <= MAX_TABLE_SEEDS {
        let mut lo = 0;
        while lo <= hi {
            let b = Bounds {
                lo: lo as u8,
                hi: hi as u8,
            };
            t[b.code() as usize] = (lo as u8, hi as u8);
            lo += 1;
        }
        hi += 1;
    }
    t
};

impl Bounds {
    /// The exact value `v`.
    #[inline]
    pub const fn exact(v: u8) -> Bounds {
        Bounds { lo: v, hi: v }
    }

    /// Whether the value is known exactly.
    #[inline]
    pub const fn is_exact(self) -> bool {
        self.lo == self.hi
    }

    /// The exact value, if known.
    #[inline]
    pub const fn value(self) -> Option<u8> {
        if self.lo == self.hi {
            Some(self.lo)
        } else {
            None
        }
    }

    /// The byte stored in a table. `lo ≤ hi ≤ 21` is the caller's guarantee.
    #[inline]
    pub const fn code(self) -> u8 {
        let (lo, hi) = (self.lo as usize, self.hi as usize);
        debug_assert!(lo <= hi && hi <= MAX_TABLE_SEEDS);
        if lo == hi {
            lo as u8
        } else {
            (MAX_TABLE_SEEDS + 1 + hi * (hi - 1) / 2 + lo) as u8
        }
    }

    /// The interval of a stored byte; `None` for a byte no table holds.
    #[inline]
    pub fn from_code(code: u8) -> Option<Bounds> {
        let (lo, hi) = DECODE[code as usize];
        (lo <= hi).then_some(Bounds { lo, hi })
    }

    /// The same interval seen by the other side of a board of `n` seeds: what one side
    /// secures, the other does not.
    #[inline]
    pub const fn flip(self, n: u8) -> Bounds {
        Bounds {
            lo: n - self.hi,
            hi: n - self.lo,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_interval_has_its_own_code() {
        let mut seen = [false; 256];
        for hi in 0..=MAX_TABLE_SEEDS as u8 {
            for lo in 0..=hi {
                let b = Bounds { lo, hi };
                let c = b.code();
                assert!(!seen[c as usize]);
                seen[c as usize] = true;
                assert_eq!(Bounds::from_code(c), Some(b));
                assert_eq!(b.is_exact(), lo == hi);
            }
        }
        assert_eq!(seen.iter().filter(|&&s| s).count(), CODES);
        assert_eq!(CODES, 253);
        for c in CODES..256 {
            assert_eq!(Bounds::from_code(c as u8), None);
        }
        assert_eq!(Bounds::exact(7).code(), 7);
        assert_eq!(Bounds { lo: 2, hi: 9 }.flip(12), Bounds { lo: 3, hi: 10 });
    }
}
