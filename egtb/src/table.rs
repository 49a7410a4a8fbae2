//! One solved table in memory: the codes of every position of one seed count.

use super::bounds::Bounds;
use super::index::{MAX_TABLE_SEEDS, table_len};

/// The table of all positions with `n` seeds on the board, one code ([`Bounds::code`]) per
/// index. Every code is checked when the table is made, so looking one up cannot fail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    n: u8,
    codes: Vec<u8>,
}

/// Why a list of codes is not a table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    /// Tables go up to [`MAX_TABLE_SEEDS`].
    #[error("a table of {0} seeds is not supported (at most {MAX_TABLE_SEEDS})")]
    TooManySeeds(usize),
    /// The number of codes is not `C(n + 11, 11)`.
    #[error("the table of {n} seeds needs {expected} entries, found {found}")]
    Length {
        /// Seeds.
        n: usize,
        /// `C(n + 11, 11)`.
        expected: u64,
        /// What was given.
        found: u64,
    },
    /// A code that is no interval, or one beyond the table's seeds.
    #[error("entry {index} of the table of {n} seeds holds the invalid code {code}")]
    Code {
        /// Seeds.
        n: usize,
        /// Where.
        index: u64,
        /// The byte.
        code: u8,
    },
}

impl Table {
    /// Makes the table of `n` seeds from its codes, checking every one.
    pub fn new(n: usize, codes: Vec<u8>) -> Result<Table, TableError> {
        if n > MAX_TABLE_SEEDS {
            return Err(TableError::TooManySeeds(n));
        }
        let expected = table_len(n);
        if codes.len() as u64 != expected {
            return Err(TableError::Length {
                n,
                expected,
                found: codes.len() as u64,
            });
        }
        // Valid codes of this table: intervals with hi ≤ n.
        let mut valid = [false; 256];
        for (c, ok) in valid.iter_mut().enumerate() {
            *ok = Bounds::from_code(c as u8).is_some_and(|b| b.hi as usize <= n);
        }
        if let Some(i) = codes.iter().position(|&c| !valid[c as usize]) {
            return Err(TableError::Code {
                n,
                index: i as u64,
                code: codes[i],
            });
        }
        Ok(Table { n: n as u8, codes })
    }

    /// Seeds on the board in this table's positions.
    #[inline]
    pub fn seeds(&self) -> u8 {
        self.n
    }

    /// Number of positions.
    #[inline]
    pub fn len(&self) -> u64 {
        self.codes.len() as u64
    }

    /// Whether the table has no positions (never: every seed count has at least one board).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// The stored codes, in index order.
    #[inline]
    pub fn codes(&self) -> &[u8] {
        &self.codes
    }

    /// The interval stored at `index`, or `None` when the index is out of range.
    #[inline]
    pub fn get(&self, index: u64) -> Option<Bounds> {
        let code = *self.codes.get(index as usize)?;
        Bounds::from_code(code)
    }

    /// The interval at `index`, which the caller knows to be in range (an index ranked from a
    /// board of this table's seeds).
    #[inline]
    pub(crate) fn at(&self, index: u64) -> Bounds {
        match self.get(index) {
            Some(b) => b,
            None => unreachable!("index {index} of the table of {} seeds", self.n),
        }
    }

    /// How many positions hold each code (index = code).
    pub fn histogram(&self) -> [u64; 256] {
        let mut h = [0u64; 256];
        for &c in &self.codes {
            h[c as usize] += 1;
        }
        h
    }

    /// How many positions have an exact value.
    pub fn exact_count(&self) -> u64 {
        let h = self.histogram();
        h[..=self.n as usize].iter().sum()
    }
}
