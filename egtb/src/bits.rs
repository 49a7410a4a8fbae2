//! A bit per position, shared between threads.

use std::sync::atomic::{AtomicU64, Ordering};

/// A fixed-size set of indices, one bit each, that threads may set concurrently.
#[derive(Debug)]
pub(crate) struct Bits {
    words: Vec<AtomicU64>,
}

impl Bits {
    /// `len` clear bits.
    pub(crate) fn new(len: u64) -> Bits {
        Bits {
            words: (0..len.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Sets bit `i`. `Release`: whoever takes the bit with [`Bits::take_bit`] and sees it
    /// also sees what this thread wrote before setting it.
    #[inline]
    pub(crate) fn set(&self, i: u64) {
        let (w, b) = ((i / 64) as usize, i % 64);
        if self.words[w].load(Ordering::Relaxed) & (1 << b) == 0 {
            self.words[w].fetch_or(1 << b, Ordering::Release);
        }
    }

    /// Clears bit `i` and returns whether it was set.
    #[inline]
    pub(crate) fn take_bit(&self, i: u64) -> bool {
        let (w, b) = ((i / 64) as usize, 1u64 << (i % 64));
        self.words[w].load(Ordering::Relaxed) & b != 0
            && self.words[w].fetch_and(!b, Ordering::Acquire) & b != 0
    }
}
