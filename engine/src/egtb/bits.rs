//! A bit per position, shared between threads.

use std::sync::atomic::{AtomicU64, Ordering};

/// A fixed-size set of indices, one bit each, that threads may set concurrently.
#[derive(Debug)]
pub struct Bits {
    words: Vec<AtomicU64>,
}

impl Bits {
    /// `len` clear bits.
    pub fn new(len: u64) -> Bits {
        Bits {
            words: (0..len.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Sets bit `i`. `Release`: whoever takes the word with [`Bits::take`] and sees the bit
    /// also sees what this thread wrote before setting it.
    #[inline]
    pub fn set(&self, i: u64) {
        let (w, b) = ((i / 64) as usize, i % 64);
        if self.words[w].load(Ordering::Relaxed) & (1 << b) == 0 {
            self.words[w].fetch_or(1 << b, Ordering::Release);
        }
    }

    /// Whether bit `i` is set.
    #[inline]
    pub fn get(&self, i: u64) -> bool {
        self.words[(i / 64) as usize].load(Ordering::Relaxed) & (1 << (i % 64)) != 0
    }

    /// Clears word `w` (bits `64w..64w + 64`) and returns what it held.
    #[inline]
    pub fn take(&self, w: usize) -> u64 {
        if self.words[w].load(Ordering::Relaxed) == 0 {
            0
        } else {
            self.words[w].swap(0, Ordering::Acquire)
        }
    }

    /// Word `w` (bits `64w..64w + 64`).
    #[inline]
    pub fn word(&self, w: usize) -> u64 {
        self.words[w].load(Ordering::Relaxed)
    }

    /// Sets word `w` to `bits`.
    #[inline]
    pub fn store(&self, w: usize, bits: u64) {
        self.words[w].store(bits, Ordering::Relaxed);
    }

    /// The number of words.
    #[inline]
    pub fn words(&self) -> usize {
        self.words.len()
    }

    /// The number of set bits.
    pub fn count(&self) -> u64 {
        self.words
            .iter()
            .map(|w| w.load(Ordering::Relaxed).count_ones() as u64)
            .sum()
    }
}
