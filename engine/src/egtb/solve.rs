//! Retrograde analysis of one table, given the solved smaller ones.
//!
//! 1. **Capture pass.** Every position is expanded once: a position without a legal move is
//!    final (its value is its mover's row); the best interval over its capturing moves is
//!    looked up in the smaller tables and kept (one byte).
//! 2. **Sweeps.** Every live position starts at the optimistic top, `lo = n`, `hi = 0`, and is
//!    lowered in place, sweep after sweep, to the value its quiet moves allow given its
//!    children's current intervals — never raised. When a sweep changes nothing the intervals
//!    are the greatest fixed point, which the module docs show to be sound. A position is
//!    looked at again only when one of its children changed in the sweep before or earlier in
//!    this one (a bit per position), so late sweeps touch few positions.
//!
//! Threads share the intervals as relaxed atomics: a stale read only delays a change, and each
//! position is written by the one thread that owns its chunk.

use super::bits::Bits;
use super::bounds::Bounds;
use super::index::{Boards, table_len, unrank};
use super::successors::{Successor, own_row, successors};
use super::table::Table;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Positions per unit of parallel work.
const CHUNK: u64 = 1 << 14;
/// The capture pass's marker of a position without a legal move.
const FINAL: u8 = 255;
/// The capture pass's marker of a live position without a capturing move.
const NO_CAPTURE: u8 = 254;

/// What the solver reports while it works.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolveEvent {
    /// A pass over the table begins: 0 is the capture pass, then sweeps 1, 2, ….
    PassStarted {
        /// Seeds of the table.
        n: u8,
        /// The pass.
        pass: u32,
        /// Positions this pass will look at.
        positions: u64,
    },
    /// Positions looked at so far in the current pass (reported every few thousand).
    Progress {
        /// Seeds of the table.
        n: u8,
        /// The pass.
        pass: u32,
        /// Positions done in this pass.
        done: u64,
    },
    /// A pass ended.
    PassFinished {
        /// Seeds of the table.
        n: u8,
        /// The pass.
        pass: u32,
        /// Positions whose interval changed.
        changed: u64,
    },
}

/// Figures of one solved table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolveStats {
    /// Positions in the table.
    pub positions: u64,
    /// Sweeps after the capture pass, the last one changing nothing.
    pub sweeps: u32,
    /// Positions expanded over all passes (the unit of work).
    pub expanded: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Threads used.
    pub threads: usize,
}

impl SolveStats {
    /// Positions expanded per second per thread.
    pub fn positions_per_second_per_thread(&self) -> f64 {
        let s = self.elapsed.as_secs_f64() * self.threads.max(1) as f64;
        if s > 0.0 {
            self.expanded as f64 / s
        } else {
            0.0
        }
    }
}

/// The interval of a capturing move for its mover: `seeds` taken now plus what the mover gets
/// of the `n'` seeds left, which the child's mover does not.
#[inline]
fn capture_bounds(seeds: u8, child: Bounds, child_n: u8) -> Bounds {
    let f = child.flip(child_n);
    Bounds {
        lo: seeds + f.lo,
        hi: seeds + f.hi,
    }
}

/// Chunks of `0..len` as index ranges.
fn chunks(len: u64) -> Vec<(u64, u64)> {
    (0..len.div_ceil(CHUNK))
        .map(|c| (c * CHUNK, ((c + 1) * CHUNK).min(len)))
        .collect()
}

/// `lo` and `hi` of a position packed in one word, so a child costs one memory access.
#[inline]
fn pack(lo: u8, hi: u8) -> u16 {
    lo as u16 | (hi as u16) << 8
}

#[inline]
fn unpack(w: u16) -> (u8, u8) {
    (w as u8, (w >> 8) as u8)
}

/// Solves the table of `n` seeds. `smaller[k]` is the solved table of `k` seeds for every
/// `k < n`. Runs on the current rayon pool; reports through `report`.
///
/// # Panics
/// If `smaller` does not hold the tables below `n` in order, or `n` exceeds
/// [`super::MAX_TABLE_SEEDS`].
pub fn solve_table(
    n: u8,
    smaller: &[Table],
    report: &(dyn Fn(SolveEvent) + Sync),
) -> (Table, SolveStats) {
    let started = Instant::now();
    assert!(n as usize <= super::MAX_TABLE_SEEDS, "{n} seeds: too many");
    assert!(
        smaller.len() >= n as usize
            && smaller[..n as usize]
                .iter()
                .enumerate()
                .all(|(k, t)| t.seeds() as usize == k),
        "the tables below {n} seeds must be given in order"
    );
    let len = table_len(n as usize);
    let work = chunks(len);
    let done = AtomicU64::new(0);
    let tick = |pass: u32, count: u64| {
        let d = done.fetch_add(count, Relaxed) + count;
        report(SolveEvent::Progress { n, pass, done: d });
    };
    let empty = Successor::Quiet {
        house: 0,
        index: 0,
        row: 0,
    };

    // Pass 0: finals, captures, and the optimistic start of everything else.
    report(SolveEvent::PassStarted {
        n,
        pass: 0,
        positions: len,
    });
    let mut fixed = vec![NO_CAPTURE; len as usize];
    let state: Vec<AtomicU16> = (0..len).map(|_| AtomicU16::new(pack(n, 0))).collect();
    fixed
        .par_chunks_mut(CHUNK as usize)
        .enumerate()
        .for_each(|(c, out)| {
            let start = c as u64 * CHUNK;
            let mut succ = [empty; 6];
            let boards = Boards::new(n as usize, start, start + out.len() as u64);
            for ((i, board), slot) in boards.zip(out.iter_mut()) {
                let k = successors(&board, n, &mut succ);
                let mut best: Option<Bounds> = None;
                let mut quiet = false;
                for s in &succ[..k] {
                    match *s {
                        Successor::Capture { seeds, index, .. } => {
                            let child_n = n - seeds;
                            let child = smaller[child_n as usize].at(index);
                            let b = capture_bounds(seeds, child, child_n);
                            best = Some(match best {
                                None => b,
                                Some(o) => Bounds {
                                    lo: o.lo.max(b.lo),
                                    hi: o.hi.max(b.hi),
                                },
                            });
                        }
                        Successor::Quiet { .. } => quiet = true,
                    }
                }
                let settled = match (k, best, quiet) {
                    // No legal move: each side takes its row.
                    (0, _, _) => Some(Bounds::exact(own_row(&board))),
                    // Only captures: their best is the value.
                    (_, Some(b), false) => Some(b),
                    _ => None,
                };
                if let Some(b) = settled {
                    state[i as usize].store(pack(b.lo, b.hi), Relaxed);
                    *slot = FINAL;
                } else if let Some(b) = best {
                    *slot = b.code();
                }
            }
            tick(0, out.len() as u64);
        });
    report(SolveEvent::PassFinished {
        n,
        pass: 0,
        changed: len,
    });
    let mut stats = SolveStats {
        positions: len,
        expanded: len,
        threads: rayon::current_num_threads(),
        ..SolveStats::default()
    };

    // Sweeps. `dirty`: positions to look at in the coming sweep. In a full sweep every live
    // position is looked at and `changed` records which moved; its parents are found after the
    // sweep, unless so many moved that the next sweep is full again. In a targeted sweep a
    // position that moves marks its parents at once, so those later in the same sweep see it.
    let live = Bits::new(len);
    let words_per_chunk = (CHUNK / 64) as usize;
    live_words(&fixed, &live);
    let dirty = Bits::new(len);
    let changed = Bits::new(len);
    let mut todo = fill(&dirty, &live);
    let mut full = true;
    let mut pass = 0;
    while todo > 0 {
        pass += 1;
        report(SolveEvent::PassStarted {
            n,
            pass,
            positions: todo,
        });
        done.store(0, Relaxed);
        let count_changed = AtomicU64::new(0);
        work.par_iter().enumerate().for_each(|(c, &(start, end))| {
            let mut succ = [empty; 6];
            let mut cursor = Cursor::new(n, start);
            let (mut looked, mut moved) = (0u64, 0u64);
            let first = c * words_per_chunk;
            let last = (end.div_ceil(64) as usize).min(dirty.words());
            for w in first..last {
                let mut bits = dirty.take(w);
                while bits != 0 {
                    let i = w as u64 * 64 + bits.trailing_zeros() as u64;
                    bits &= bits - 1;
                    let iu = i as usize;
                    looked += 1;
                    let board = cursor.seek(i);
                    let k = successors(&board, n, &mut succ);
                    let f = fixed[iu];
                    let (mut l, mut h) = match Bounds::from_code(f) {
                        Some(b) if f != NO_CAPTURE => (b.lo, b.hi),
                        _ => (0, 0),
                    };
                    for s in &succ[..k] {
                        if let Successor::Quiet { index, row, .. } = *s {
                            let (cl, ch) = unpack(state[index as usize].load(Relaxed));
                            // The game may end at the child by repetition (each side takes its
                            // row) or go on with the child's value: the mover is sure only of
                            // the worse of the two, and may hope for the better.
                            l = l.max(n - row.max(ch));
                            h = h.max(n - row.min(cl));
                        }
                    }
                    let (ol, oh) = unpack(state[iu].load(Relaxed));
                    if l < ol || h > oh {
                        state[iu].store(pack(l.min(ol), h.max(oh)), Relaxed);
                        moved += 1;
                        if full {
                            changed.set(i);
                        } else {
                            mark_parents(&board, n, &live, &dirty);
                        }
                    }
                }
            }
            if moved > 0 {
                count_changed.fetch_add(moved, Relaxed);
            }
            tick(pass, looked);
        });
        stats.expanded += todo;
        let moved = count_changed.into_inner();
        report(SolveEvent::PassFinished {
            n,
            pass,
            changed: moved,
        });
        if full {
            if moved > len / 8 {
                // Most positions moved: look at every live one again rather than find parents.
                for w in 0..changed.words() {
                    changed.store(w, 0);
                }
                todo = fill(&dirty, &live);
            } else {
                work.par_iter().enumerate().for_each(|(c, &(start, end))| {
                    let mut cursor = Cursor::new(n, start);
                    let first = c * words_per_chunk;
                    let last = (end.div_ceil(64) as usize).min(changed.words());
                    for w in first..last {
                        let mut bits = changed.take(w);
                        while bits != 0 {
                            let i = w as u64 * 64 + bits.trailing_zeros() as u64;
                            bits &= bits - 1;
                            mark_parents(&cursor.seek(i), n, &live, &dirty);
                        }
                    }
                });
                full = false;
                todo = dirty.count();
            }
        } else {
            todo = dirty.count();
        }
    }
    stats.sweeps = pass;
    let codes: Vec<u8> = state
        .par_iter()
        .map(|w| {
            let (l, h) = unpack(w.load(Relaxed));
            // Sound bounds of a real value can never cross.
            assert!(
                l <= h,
                "table of {n} seeds: the fixed point has an empty interval"
            );
            Bounds { lo: l, hi: h }.code()
        })
        .collect();
    stats.elapsed = started.elapsed();
    let table = match Table::new(n as usize, codes) {
        Ok(t) => t,
        Err(e) => unreachable!("a solved table is valid: {e}"),
    };
    (table, stats)
}

/// Sets the bit of every live position (not settled by the capture pass).
fn live_words(fixed: &[u8], live: &Bits) {
    fixed.par_chunks(64).enumerate().for_each(|(w, f)| {
        let mut bits = 0u64;
        for (b, &x) in f.iter().enumerate() {
            bits |= ((x != FINAL) as u64) << b;
        }
        live.store(w, bits);
    });
}

/// Makes `dirty` a copy of `live`; returns the number of set bits.
fn fill(dirty: &Bits, live: &Bits) -> u64 {
    (0..live.words())
        .into_par_iter()
        .for_each(|w| dirty.store(w, live.word(w)));
    live.count()
}

/// Marks the live positions that reach `board` by a quiet move.
#[inline]
fn mark_parents(board: &[u8; 12], n: u8, live: &Bits, dirty: &Bits) {
    super::unmove::quiet_parents(board, n, |p| {
        if live.get(p) {
            dirty.set(p);
        }
    });
}

/// The board at an index, found by stepping from the last one when it is near and by
/// unranking when it is not.
struct Cursor {
    n: u8,
    index: u64,
    board: [u8; 12],
}

impl Cursor {
    fn new(n: u8, start: u64) -> Cursor {
        let board = unrank(start, n as usize).unwrap_or([0; 12]);
        Cursor {
            n,
            index: start,
            board,
        }
    }

    #[inline]
    fn seek(&mut self, i: u64) -> [u8; 12] {
        if (i < self.index || i - self.index > 24)
            && let Some(b) = unrank(i, self.n as usize)
        {
            self.board = b;
            self.index = i;
        }
        while self.index < i {
            Boards::step(&mut self.board);
            self.index += 1;
        }
        self.board
    }
}
