//! Retrograde analysis of one table, given the solved smaller ones.
//!
//! 1. **Capture pass.** Every position is expanded once: a position without a legal move is
//!    final (its value is its mover's row), so is one with capturing moves only (the best of
//!    them, looked up in the smaller tables); for the others the best interval over their
//!    capturing moves is kept (one byte).
//! 2. **Components.** The quiet moves between the remaining positions form a graph; its
//!    strongly connected components are found by one depth-first search ([`super::scc`]) and
//!    each is solved the moment it is complete, when every component it reaches already is
//!    ([`super::component`]): a position alone in its component, without a move to itself,
//!    in one look and exactly when its children are; a cycle by sweeps over its positions.
//!
//! The search runs on one thread; a large component's sweeps share the intervals among the
//! threads as relaxed atomics: a stale read only delays a change, and each position is
//! written by the one thread that owns its chunk.

use super::bits::Bits;
use super::bounds::Bounds;
use super::component::{Components, FINAL, NO_CAPTURE, NO_SUCCESSOR, pack, unpack};
use super::index::{Boards, table_len, unrank};
use super::prove_entries::prove_open_entries;
use super::scc;
use super::successors::{Successor, own_row, successors};
use super::table::Table;
use rayon::prelude::*;
use std::cell::Cell;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Positions per unit of parallel work.
const CHUNK: u64 = 1 << 14;

/// What the solver reports while it works.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolveEvent {
    /// A pass over the table begins: 0 is the capture pass, 1 the components.
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

/// How far a build goes beyond the fixpoints for entry values (see [`solve_table_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SolveOptions {
    /// Tables of at most this many seeds settle their open entries by an exact search.
    pub exact_up_to: u8,
    /// The most nodes one exact search of an entry may visit; an entry it cannot settle
    /// within them keeps its fixpoint interval.
    pub node_budget: u64,
    /// The most proof-number nodes the proof pass may spend on one entry the exact search left
    /// open (0: no proof pass); see [`super::prove_entries`].
    pub proof_budget: u64,
    /// Whether the exact search starts and ends with the search that shares proofs between
    /// lines (`super::shared_proofs`); off only to measure or test the path search and the
    /// proof pass alone.
    pub shared_proofs: bool,
}

/// The default [`SolveOptions::exact_up_to`]: every table up to 20 seeds. With the search that
/// shares proofs between lines ([`super::shared_proofs`]) every entry of tables 6–20 is exact,
/// tables 8 and 9 take about 20 and 30 s on 2 cores, and once the smaller tables are exact the
/// fixpoints alone settle nearly every entry of the larger ones: the whole build of 0..=20
/// seeds takes about 7 minutes and 1.5 GiB (`docs/results/2026-12-07-shared-proofs.md`).
pub const DEFAULT_EXACT_UP_TO: u8 = 20;
/// The default [`SolveOptions::node_budget`].
pub const DEFAULT_NODE_BUDGET: u64 = 1_000_000;
/// The default [`SolveOptions::proof_budget`].
pub const DEFAULT_PROOF_BUDGET: u64 = 100_000;

impl Default for SolveOptions {
    fn default() -> SolveOptions {
        SolveOptions::exact_up_to(DEFAULT_EXACT_UP_TO)
    }
}

impl SolveOptions {
    /// The default options with the exact search in the tables of up to `seeds` seeds.
    pub const fn exact_up_to(seeds: u8) -> SolveOptions {
        SolveOptions {
            exact_up_to: seeds,
            node_budget: DEFAULT_NODE_BUDGET,
            proof_budget: DEFAULT_PROOF_BUDGET,
            shared_proofs: true,
        }
    }
}

/// Figures of one solved table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolveStats {
    /// Positions in the table.
    pub positions: u64,
    /// The most sweeps one component needed, the last one changing nothing (0 when no
    /// position lies on a cycle).
    pub sweeps: u32,
    /// Components with a cycle (more than one position, or a move to itself).
    pub components: u64,
    /// Positions on a cycle: in those components.
    pub cyclic: u64,
    /// Positions in the largest component.
    pub largest: u64,
    /// Positions expanded over all passes (the unit of work), the exact searches' nodes not
    /// included.
    pub expanded: u64,
    /// Positions with an exact entry value.
    pub entry_exact: u64,
    /// Searches of an entry by the search that shares proofs between lines (those the fixpoints
    /// left open, when the table is within [`SolveOptions::exact_up_to`]; an entry left open by
    /// its first, small-budget round and by the path search is searched again).
    pub shared_searched: u64,
    /// Entries it settled.
    pub shared_settled: u64,
    /// Nodes it visited.
    pub shared_nodes: u64,
    /// Results it reused on another line than the one that found them.
    pub shared_reused: u64,
    /// Entries the path search looked at (those still open after the shared-proof search).
    pub searched: u64,
    /// Entries the exact search settled.
    pub settled: u64,
    /// Nodes the exact searches visited.
    pub search_nodes: u64,
    /// Entries settled exactly inside another entry's search (not searched themselves).
    pub harvested: u64,
    /// Entries the proof pass looked at (those still open after the exact search).
    pub proof_searched: u64,
    /// Entries the proof pass settled.
    pub proof_settled: u64,
    /// Proof-number nodes the proof pass spent.
    pub proof_nodes: u64,
    /// Entries the exact search settled although their lines met entries known only by an
    /// interval (counted in [`SolveStats::settled`] too).
    pub settled_past_open: u64,
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

/// The entry interval of position `index` of the table of `n` seeds: the stored one where the
/// table has entry values, else [`entry_bounds`].
#[inline]
pub(crate) fn entry_of(tables: &[Table], n: u8, index: u64) -> Bounds {
    match tables[n as usize].entry(index) {
        Some(b) => b,
        None => entry_bounds(tables, n, index),
    }
}

/// The interval of the position `index` of the solved table of `n` seeds **right after a
/// capture** (or at the start of a game): its history is empty, so its first move cannot
/// repeat a position. That is the stored interval (valid for every history) narrowed by one
/// look at its moves: a capture at the grandchild's stored interval, a quiet move at
/// `n − value(Q)` with `Q`'s stored interval, never at a repetition. This is what a table
/// without entry values (format version 3) says of an entry; tables that have them store a
/// tighter interval ([`Table::entry`]).
pub fn entry_bounds(tables: &[Table], n: u8, index: u64) -> Bounds {
    let stored = tables[n as usize].at(index);
    if stored.is_exact() {
        return stored;
    }
    let board = match unrank(index, n as usize) {
        Some(b) => b,
        None => unreachable!("position {index} lies in the table of {n} seeds"),
    };
    let mut succ = [NO_SUCCESSOR; 6];
    let k = successors(&board, n, &mut succ);
    let (mut lo, mut hi) = (0u8, 0u8);
    for s in &succ[..k] {
        let b = match *s {
            Successor::Capture { seeds, index, .. } => {
                let child_n = n - seeds;
                capture_bounds(seeds, tables[child_n as usize].at(index), child_n)
            }
            Successor::Quiet { index, .. } => tables[n as usize].at(index).flip(n),
        };
        lo = lo.max(b.lo);
        hi = hi.max(b.hi);
    }
    // Both intervals hold the value after an empty history, so they overlap.
    debug_assert!(k > 0 && lo.max(stored.lo) <= hi.min(stored.hi));
    Bounds {
        lo: lo.max(stored.lo),
        hi: hi.min(stored.hi),
    }
}

/// Solves the table of `n` seeds with the default [`SolveOptions`]: see [`solve_table_with`].
pub fn solve_table(
    n: u8,
    smaller: &[Table],
    report: &(dyn Fn(SolveEvent) + Sync),
) -> (Table, SolveStats) {
    solve_table_with(n, smaller, &SolveOptions::default(), report)
}

/// Solves the table of `n` seeds: its all-history intervals and its entry values (exact
/// where the fixpoints or, for `n ≤ options.exact_up_to`, the exact search settle them).
/// `smaller[k]` is the solved table of `k` seeds for every `k < n` (their entry values are
/// used where present, [`entry_bounds`] otherwise). Runs on the current rayon pool; reports
/// through `report`.
///
/// # Panics
/// If `smaller` does not hold the tables below `n` in order, or `n` exceeds
/// [`super::MAX_TABLE_SEEDS`].
pub fn solve_table_with(
    n: u8,
    smaller: &[Table],
    options: &SolveOptions,
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
    let done = AtomicU64::new(0);
    let tick = |pass: u32, count: u64| {
        let d = done.fetch_add(count, Relaxed) + count;
        report(SolveEvent::Progress { n, pass, done: d });
    };
    let empty = NO_SUCCESSOR;

    // Pass 0: finals, captures, and the optimistic start of everything else.
    report(SolveEvent::PassStarted {
        n,
        pass: 0,
        positions: len,
    });
    let mut fixed = vec![NO_CAPTURE; len as usize];
    let state: Vec<AtomicU16> = (0..len).map(|_| AtomicU16::new(pack(n, 0))).collect();
    let entry: Vec<AtomicU16> = (0..len).map(|_| AtomicU16::new(pack(n, 0))).collect();
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
                            let child = entry_of(smaller, child_n, index);
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
                    // No quiet move: no history matters.
                    entry[i as usize].store(pack(b.lo, b.hi), Relaxed);
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

    // Pass 1: the components of the quiet-move graph over the live positions, each solved as
    // soon as every component it reaches is.
    let live = fixed.iter().filter(|&&f| f != FINAL).count() as u64;
    report(SolveEvent::PassStarted {
        n,
        pass: 1,
        positions: live,
    });
    done.store(0, Relaxed);
    let mut ids: Vec<u32> = fixed
        .par_iter()
        .map(|&f| if f == FINAL { scc::DONE } else { 0 })
        .collect();
    let comps = Components {
        n,
        fixed: &fixed,
        state: &state,
        entry: &entry,
        exact: n <= options.exact_up_to,
        node_budget: options.node_budget,
        shared: options.shared_proofs,
        searched: AtomicU64::new(0),
        settled: AtomicU64::new(0),
        search_nodes: AtomicU64::new(0),
        harvested: AtomicU64::new(0),
        settled_past_open: AtomicU64::new(0),
        shared_searched: AtomicU64::new(0),
        shared_settled: AtomicU64::new(0),
        shared_nodes: AtomicU64::new(0),
        shared_reused: AtomicU64::new(0),
        dirty: Bits::new(len),
        changed: Bits::new(len),
        expanded: AtomicU64::new(0),
    };
    let mut succ = [empty; 6];
    let searched = Cell::new(0u64);
    let mut reported = 0u64;
    scc::components(
        &mut ids,
        |v, out| {
            searched.set(searched.get() + 1);
            let board = match unrank(v as u64, n as usize) {
                Some(b) => b,
                None => unreachable!("position {v} lies in the table of {n} seeds"),
            };
            let k = successors(&board, n, &mut succ);
            let mut m = 0;
            for s in &succ[..k] {
                if let Successor::Quiet { index, .. } = *s {
                    out[m] = index as u32;
                    m += 1;
                }
            }
            m
        },
        |members, id, ids| {
            let c = comps.solve(members, id, ids);
            if c.cyclic {
                stats.components += 1;
                stats.cyclic += members.len() as u64;
                stats.largest = stats.largest.max(members.len() as u64);
                stats.sweeps = stats.sweeps.max(c.sweeps);
            }
            let at = searched.get() + comps.expanded.load(Relaxed);
            if at - reported >= CHUNK {
                tick(1, at - reported);
                reported = at;
            }
        },
    );
    drop(ids);
    stats.searched = comps.searched.load(Relaxed);
    stats.settled = comps.settled.load(Relaxed);
    stats.search_nodes = comps.search_nodes.load(Relaxed);
    stats.harvested = comps.harvested.load(Relaxed);
    stats.settled_past_open = comps.settled_past_open.load(Relaxed);
    stats.shared_searched = comps.shared_searched.load(Relaxed);
    stats.shared_settled = comps.shared_settled.load(Relaxed);
    stats.shared_nodes = comps.shared_nodes.load(Relaxed);
    stats.shared_reused = comps.shared_reused.load(Relaxed);
    let pass1 = searched.get() + comps.expanded.into_inner();
    drop(fixed);
    stats.expanded += pass1;
    report(SolveEvent::PassFinished {
        n,
        pass: 1,
        changed: live,
    });
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
    drop(state);
    let entries: Vec<u8> = entry
        .par_iter()
        .map(|w| {
            let (l, h) = unpack(w.load(Relaxed));
            assert!(l <= h, "table of {n} seeds: an empty entry interval");
            Bounds { lo: l, hi: h }.code()
        })
        .collect();
    drop(entry);
    let table = match Table::with_entries(n as usize, codes, entries) {
        Ok(t) => t,
        Err(e) => unreachable!("a solved table is valid: {e}"),
    };
    let table = if n <= options.exact_up_to {
        let (t, p) = prove_open_entries(n, smaller, table, options.proof_budget);
        stats.proof_searched = p.searched;
        stats.proof_settled = p.settled;
        stats.proof_nodes = p.nodes;
        t
    } else {
        table
    };
    stats.entry_exact = match table.entry_exact_count() {
        Some(c) => c,
        None => unreachable!("a solved table has entry values"),
    };
    stats.elapsed = started.elapsed();
    (table, stats)
}
