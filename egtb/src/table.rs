//! One solved table in memory: the codes of every position of one seed count, and, for
//! tables of format version 4 on, the entry codes beside them (see the crate docs).

use super::bounds::Bounds;
use super::index::{MAX_TABLE_SEEDS, table_len};

/// The table of all positions with `n` seeds on the board, one code ([`Bounds::code`]) per
/// index: the interval valid after every history. Beside it, when known, the **entry** code
/// of every position: the interval of its value after an empty history (right after a
/// capture or at the start of a game), inside the first. Every code is checked when the
/// table is made, so looking one up cannot fail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    n: u8,
    codes: Vec<u8>,
    entries: Option<Vec<u8>>,
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
    /// An entry interval that is no interval or not inside the all-history one.
    #[error(
        "entry {index} of the table of {n} seeds: the entry code {entry} is not an interval inside {all:?}"
    )]
    Entry {
        /// Seeds.
        n: usize,
        /// Where.
        index: u64,
        /// The entry byte.
        entry: u8,
        /// The all-history interval it must lie in.
        all: Bounds,
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
        Ok(Table {
            n: n as u8,
            codes,
            entries: None,
        })
    }

    /// Makes the table of `n` seeds from its all-history codes and its entry codes, checking
    /// every one: each entry interval must lie inside the all-history interval of its
    /// position (the empty history is one of all histories).
    pub fn with_entries(n: usize, codes: Vec<u8>, entries: Vec<u8>) -> Result<Table, TableError> {
        let mut t = Table::new(n, codes)?;
        if entries.len() != t.codes.len() {
            return Err(TableError::Length {
                n,
                expected: t.codes.len() as u64,
                found: entries.len() as u64,
            });
        }
        let bad = t.codes.iter().zip(&entries).position(|(&c, &e)| {
            match (Bounds::from_code(c), Bounds::from_code(e)) {
                (Some(a), Some(b)) => !(a.lo <= b.lo && b.lo <= b.hi && b.hi <= a.hi),
                _ => true,
            }
        });
        if let Some(i) = bad {
            return Err(TableError::Entry {
                n,
                index: i as u64,
                entry: entries[i],
                all: t.at(i as u64),
            });
        }
        t.entries = Some(entries);
        Ok(t)
    }

    /// Whether the table holds entry values (tables of format version 3 do not).
    #[inline]
    pub fn has_entries(&self) -> bool {
        self.entries.is_some()
    }

    /// The stored entry codes, in index order, when the table has them.
    #[inline]
    pub fn entry_codes(&self) -> Option<&[u8]> {
        self.entries.as_deref()
    }

    /// The stored entry interval at `index` (the value after an empty history), or `None`
    /// when the table has no entry values or the index is out of range.
    #[inline]
    pub fn entry(&self, index: u64) -> Option<Bounds> {
        let code = *self.entries.as_ref()?.get(index as usize)?;
        Bounds::from_code(code)
    }

    /// How many positions have an exact entry value; `None` without entry values.
    pub fn entry_exact_count(&self) -> Option<u64> {
        let e = self.entries.as_ref()?;
        let n = self.n;
        Some(e.iter().filter(|&&c| c <= n).count() as u64)
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

    /// How many positions hold each entry code (index = code); `None` without entry values.
    pub fn entry_histogram(&self) -> Option<[u64; 256]> {
        let mut h = [0u64; 256];
        for &c in self.entries.as_ref()? {
            h[c as usize] += 1;
        }
        Some(h)
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
