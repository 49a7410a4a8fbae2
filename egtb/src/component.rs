//! Solving one strongly connected component of a table's quiet-move graph, once every
//! component it reaches is solved.
//!
//! A quiet move that leaves the component cannot repeat a position (see the module docs of
//! [`super`]), so it is worth `n − value(Q)` with the child's final interval. A move inside
//! the component may repeat: it is bounded by the worse and the better of "the game ends at the
//! child, each side taking its row" and "the game goes on". A component of one position
//! without a move to itself therefore is solved in one look; a larger one starts its positions
//! at the empty interval (`lo = n`, `hi = 0`) and widens them in place, sweep after sweep,
//! until nothing changes: the tightest interval that satisfies the bounds. After the first full
//! sweeps only positions with a changed child in the component are looked at again (a bit per
//! position, parents found by un-moving), and large components share the work among threads.

use super::bits::Bits;
use super::bounds::Bounds;
use super::index::{Boards, unrank};
use super::shared_proofs::{self, Answer, Effort};
use super::successors::{Successor, own_row, successors};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering::Relaxed};

/// The capture pass's marker of a position without a legal move or with captures only.
pub(crate) const FINAL: u8 = 255;
/// The capture pass's marker of a live position without a capturing move.
pub(crate) const NO_CAPTURE: u8 = 254;

/// Components with at least this many positions are swept by all threads.
const PARALLEL: usize = 1 << 12;
/// Positions per unit of parallel work within a component.
const CHUNK: usize = 1 << 10;
/// The exact search's first round gives each open entry this share of the node budget.
const FIRST_ROUND_SHARE: u64 = 64;

/// `lo` and `hi` of a position packed in one word, so a child costs one memory access.
#[inline]
pub(crate) fn pack(lo: u8, hi: u8) -> u16 {
    lo as u16 | (hi as u16) << 8
}

/// The interval packed by [`pack`].
#[inline]
pub(crate) fn unpack(w: u16) -> (u8, u8) {
    (w as u8, (w >> 8) as u8)
}

/// The empty successor list's filler.
pub(crate) const NO_SUCCESSOR: Successor = Successor::Quiet {
    house: 0,
    index: 0,
    row: 0,
};

/// What solving the components of one table shares: the capture pass's results, the
/// intervals, and scratch bits for the sweeps.
pub(crate) struct Components<'a> {
    /// Seeds of the table.
    pub n: u8,
    /// Per position: [`FINAL`], [`NO_CAPTURE`], or the code of its best capturing move.
    pub fixed: &'a [u8],
    /// Per position: its interval, [`pack`]ed (final for solved components).
    pub state: &'a [AtomicU16],
    /// Per position: its entry interval (after an empty history), [`pack`]ed, final for
    /// solved components and for positions settled by the capture pass.
    pub entry: &'a [AtomicU16],
    /// Whether open entries of cyclic components are settled by an exact search.
    pub exact: bool,
    /// The most nodes one exact search of an entry may visit.
    pub node_budget: u64,
    /// Whether the search that shares proofs between lines runs ([`super::shared_proofs`]).
    pub shared: bool,
    /// Entries searched exactly, those the search settled, and the nodes it visited.
    pub searched: AtomicU64,
    /// Entries the exact search settled.
    pub settled: AtomicU64,
    /// Nodes the exact searches visited.
    pub search_nodes: AtomicU64,
    /// Entries settled exactly inside another entry's search (see [`Search::value`]).
    pub harvested: AtomicU64,
    /// Entries the exact search settled although their lines met entries known only by an
    /// interval (open entries of smaller tables or of components solved before).
    pub settled_past_open: AtomicU64,
    /// Searches of an entry by the search that shares proofs between lines (an entry left open
    /// by its first round and by the path search is searched twice).
    pub shared_searched: AtomicU64,
    /// Entries it settled.
    pub shared_settled: AtomicU64,
    /// Nodes it visited.
    pub shared_nodes: AtomicU64,
    /// Results it reused on another line than the one that found them.
    pub shared_reused: AtomicU64,
    /// Positions to look at again in a targeted sweep.
    pub dirty: Bits,
    /// Positions that changed in a full sweep.
    pub changed: Bits,
    /// Positions expanded so far.
    pub expanded: AtomicU64,
}

/// What solving one component took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ComponentStats {
    /// Sweeps, the last one changing nothing (0 for a position solved in one look).
    pub sweeps: u32,
    /// Whether the component has a cycle (more than one position, or a move to itself).
    pub cyclic: bool,
}

impl Components<'_> {
    /// The interval `board` (index `v`, in component `id`) gets from its moves, given the
    /// current intervals of its children: capturing moves from the capture pass, quiet moves
    /// leaving the component at their child's value, quiet moves inside it either way.
    #[inline]
    fn evaluate(&self, v: u32, board: &[u8; 12], id: u32, ids: &[u32]) -> (u8, u8) {
        let mut succ = [NO_SUCCESSOR; 6];
        let k = successors(board, self.n, &mut succ);
        self.evaluate_moves(v, &succ[..k], id, ids)
    }

    /// [`Components::evaluate`] with the moves of `v` given.
    #[inline]
    fn evaluate_moves(&self, v: u32, succ: &[Successor], id: u32, ids: &[u32]) -> (u8, u8) {
        let n = self.n;
        let f = self.fixed[v as usize];
        let (mut l, mut h) = match Bounds::from_code(f) {
            Some(b) if f != NO_CAPTURE => (b.lo, b.hi),
            _ => (0, 0),
        };
        for s in succ {
            if let Successor::Quiet { index, row, .. } = *s {
                let (cl, ch) = unpack(self.state[index as usize].load(Relaxed));
                if ids[index as usize] == id {
                    // The game may end at the child by repetition (each side takes its row)
                    // or go on with the child's value: the mover is sure only of the worse of
                    // the two, and may hope for the better.
                    l = l.max(n - row.max(ch));
                    h = h.max(n - row.min(cl));
                } else {
                    // A move out of the component: no position since the last capture can
                    // be reached again, so the child is worth its entry value.
                    let (el, eh) = unpack(self.entry[index as usize].load(Relaxed));
                    l = l.max(n - eh);
                    h = h.max(n - el);
                }
            }
        }
        (l, h)
    }

    /// The entry interval `v` gets from its moves: as [`Components::evaluate_moves`], but a
    /// quiet move inside the component only continues the game (it is never needed to
    /// repeat: see [`Components::solve_entries`]) at the child's current entry interval.
    #[inline]
    fn evaluate_entry(&self, v: u32, board: &[u8; 12], id: u32, ids: &[u32]) -> (u8, u8) {
        let n = self.n;
        let mut succ = [NO_SUCCESSOR; 6];
        let k = successors(board, n, &mut succ);
        let f = self.fixed[v as usize];
        let (mut l, mut h) = match Bounds::from_code(f) {
            Some(b) if f != NO_CAPTURE => (b.lo, b.hi),
            _ => (0, 0),
        };
        for s in &succ[..k] {
            if let Successor::Quiet { index, .. } = *s {
                let (cl, ch) = unpack(self.entry[index as usize].load(Relaxed));
                debug_assert!(ids[index as usize] == id || cl <= ch);
                l = l.max(n - ch);
                h = h.max(n - cl);
            }
        }
        (l, h)
    }

    /// Solves the component `members` (id `id`; `ids` holds every position's component id)
    /// whose children outside it are all solved.
    pub(crate) fn solve(&self, members: &mut [u32], id: u32, ids: &[u32]) -> ComponentStats {
        if let [v] = *members {
            let board = self.board(v);
            let mut succ = [NO_SUCCESSOR; 6];
            let k = successors(&board, self.n, &mut succ);
            let self_loop = succ[..k]
                .iter()
                .any(|s| matches!(*s, Successor::Quiet { index, .. } if index == v as u64));
            if !self_loop {
                self.expanded.fetch_add(1, Relaxed);
                let (l, h) = self.evaluate_moves(v, &succ[..k], id, ids);
                self.state[v as usize].store(pack(l, h), Relaxed);
                // Every move leaves the component, so no history since the last capture
                // matters: the entry interval is the same.
                self.entry[v as usize].store(pack(l, h), Relaxed);
                return ComponentStats::default();
            }
        }
        let stats = self.sweep_until_stable(members, id, ids);
        self.solve_entries(members, id, ids);
        stats
    }

    /// The entry intervals of a cyclic component whose all-history intervals are final.
    ///
    /// 1. **Fixpoints.** Each member starts at its all-history interval and is narrowed, sweep
    ///    after sweep, by its moves with quiet moves inside the component valued by the
    ///    child's entry interval as if the game went on: `lo` climbs to the least fixpoint of
    ///    the max–min recursion above the all-history `lo`, `hi` falls to the greatest one
    ///    below `hi`. Both are sound after an empty history: a side whose bound was raised at
    ///    step `k` forces, by the moves that justified it, a line whose positions were
    ///    justified at strictly earlier steps, so (for each side to move) no position of the
    ///    line repeats one before it, until a capture, an exit from the component or a
    ///    position whose all-history bound (valid after any history) carries the rest.
    /// 2. **Shared proofs.** With [`Components::exact`], every member still open is settled
    ///    threshold by threshold by the search of [`super::shared_proofs`], which reuses a
    ///    result on every line that cannot change it; it settles nearly all of them.
    /// 3. **Path search.** Every member still open is searched
    ///    from an empty history ([`Search`]) within the node budget by null-window probes
    ///    that halve its fixpoint interval, first with a small share of the budget and then,
    ///    for those still open, with all of it; every probe's answer narrows the stored
    ///    interval, and what no probe settles keeps the narrowest interval found. Inside a
    ///    search, a node whose result no repetition above it touched narrows its own entry
    ///    interval too ([`Search::value`]), and every node is cut by its entry interval
    ///    widened by what the path's repetitions could give ([`Search::history_bounds`]), so
    ///    each entry settled helps the searches after it.
    fn solve_entries(&self, members: &[u32], id: u32, ids: &[u32]) {
        let n = self.n;
        let par = members.len() >= PARALLEL;
        let init = |part: &[u32]| {
            for &v in part {
                self.entry[v as usize].store(self.state[v as usize].load(Relaxed), Relaxed);
            }
        };
        if par {
            members.par_chunks(CHUNK).for_each(init);
        } else {
            init(members);
        }
        // One full sweep, then only the members with a child that changed (their parents are
        // marked when it changes).
        let mut full = true;
        loop {
            let moved = AtomicU64::new(0);
            let looked = AtomicU64::new(0);
            let work = |part: &[u32]| {
                let (mut m, mut seen) = (0u64, 0u64);
                let mut cursor = Cursor::new(n);
                for &v in part {
                    if !full && !self.dirty.take_bit(v as u64) {
                        continue;
                    }
                    let (ol, oh) = unpack(self.entry[v as usize].load(Relaxed));
                    if ol == oh {
                        continue;
                    }
                    seen += 1;
                    let board = cursor.seek(v as u64);
                    let (nl, nh) = self.evaluate_entry(v, &board, id, ids);
                    let (l, h) = (ol.max(nl), oh.min(nh));
                    if (l, h) != (ol, oh) {
                        assert!(l <= h, "sound entry bounds cannot cross");
                        self.entry[v as usize].store(pack(l, h), Relaxed);
                        self.mark_parents(&board, id, ids);
                        m += 1;
                    }
                }
                moved.fetch_add(m, Relaxed);
                looked.fetch_add(seen, Relaxed);
            };
            if par {
                members.par_chunks(CHUNK).for_each(work);
            } else {
                work(members);
            }
            self.expanded.fetch_add(looked.into_inner(), Relaxed);
            full = false;
            if moved.into_inner() == 0 {
                break;
            }
        }
        if !self.exact {
            return;
        }
        let still_open = |v: &u32| {
            let (l, h) = unpack(self.entry[*v as usize].load(Relaxed));
            l < h
        };
        let open: Vec<u32> = members.iter().copied().filter(still_open).collect();
        // First the search that shares proofs between lines with a small budget, which
        // settles the easy entries; then the path search; then the shared-proof search again,
        // with the whole budget, for what the path search left open.
        if self.shared {
            self.share_proofs(
                &open,
                id,
                ids,
                (self.node_budget / FIRST_ROUND_SHARE).max(1),
            );
        }
        let open: Vec<u32> = open.into_iter().filter(still_open).collect();
        let settle = |v: u32, budget: u64, first_look: bool| {
            // Another root's search may have settled or narrowed it meanwhile.
            let (l, h) = unpack(self.entry[v as usize].load(Relaxed));
            if l == h {
                return;
            }
            let mut search = Search {
                comps: self,
                id,
                ids,
                path: Vec::with_capacity(64),
                rows: Vec::with_capacity(64),
                nodes: 0,
                budget,
                aborted: false,
                optimistic: false,
            };
            search.push(v, own_row(&self.board(v)));
            // Null-window probes, halving the interval: each asks only "at least t?", which
            // cuts far more of the tree than one search for the exact value, and each answer
            // narrows the stored interval even when a later probe runs out of budget.
            let (mut l, mut h) = (l as i16, h as i16);
            let mut became_exact = false;
            let mut met_open = false;
            while l < h {
                let t = (l + h + 1) / 2;
                // Leaves known only by an interval count at their end worse for the root's
                // mover: a result of at least `t` is then proven. Where such a leaf was met and
                // the answer is no, the probe is asked again with them at their better end,
                // where a no is proven; a yes there leaves `t` undecided.
                search.optimistic = false;
                let (r, _, loose) = search.value(v, t - 1, t);
                if search.aborted {
                    break;
                }
                met_open |= loose;
                if r >= t {
                    l = r.min(h);
                } else if !loose {
                    h = r.max(l);
                } else {
                    search.optimistic = true;
                    let (r, _, _) = search.value(v, t - 1, t);
                    if search.aborted || r >= t {
                        break;
                    }
                    h = r.max(l);
                }
                became_exact |= self.narrow_entry(v, l, h);
                // Other roots' searches may have narrowed it further meanwhile.
                let (sl, sh) = unpack(self.entry[v as usize].load(Relaxed));
                (l, h) = (sl as i16, sh as i16);
            }
            self.searched.fetch_add(first_look as u64, Relaxed);
            self.search_nodes.fetch_add(search.nodes, Relaxed);
            if became_exact {
                self.settled.fetch_add(1, Relaxed);
                if met_open {
                    self.settled_past_open.fetch_add(1, Relaxed);
                }
            }
        };
        // Each search cuts by the all-history intervals and by the entry intervals widened by
        // what a repetition of the path could give ([`Search::history_bounds`]), so every entry
        // settled or narrowed meanwhile helps the searches after it. A first round with a
        // small budget settles the easy roots (and what they meet inside) before the hard ones
        // get the whole budget.
        let first = (self.node_budget / FIRST_ROUND_SHARE).max(1);
        let two_rounds = first < self.node_budget;
        if two_rounds {
            open.par_iter().for_each(|&v| settle(v, first, true));
        }
        open.par_iter()
            .for_each(|&v| settle(v, self.node_budget, !two_rounds));
        if self.shared {
            let open: Vec<u32> = open.into_iter().filter(still_open).collect();
            self.share_proofs(&open, id, ids, self.node_budget);
        }
    }

    /// Settles what it can of the entries `open` of component `id` by the search that shares
    /// proofs between lines ([`super::shared_proofs`]): threshold by threshold, halving each
    /// entry's interval, each threshold within `budget` nodes a pass.
    fn share_proofs(&self, open: &[u32], id: u32, ids: &[u32], budget: u64) {
        open.par_iter().for_each(|&v| {
            let mut effort = Effort::default();
            let (mut l, mut h) = unpack(self.entry[v as usize].load(Relaxed));
            if l == h {
                return;
            }
            while l < h {
                let t = (l + h).div_ceil(2);
                match shared_proofs::ask(self, v, id, ids, t, budget, &mut effort) {
                    Answer::AtLeast => l = t,
                    Answer::Below => h = t - 1,
                    Answer::Open => break,
                }
                self.narrow_entry(v, l as i16, h as i16);
                (l, h) = unpack(self.entry[v as usize].load(Relaxed));
            }
            self.shared_searched.fetch_add(1, Relaxed);
            self.shared_settled.fetch_add((l == h) as u64, Relaxed);
            self.shared_nodes.fetch_add(effort.nodes, Relaxed);
            self.shared_reused.fetch_add(effort.reused, Relaxed);
        });
    }

    /// Narrows the entry interval of `v` to `[l, h]` (as far as it is not narrower already);
    /// whether it became exact by this call.
    fn narrow_entry(&self, v: u32, l: i16, h: i16) -> bool {
        let cell = &self.entry[v as usize];
        let mut old = cell.load(Relaxed);
        loop {
            let (ol, oh) = unpack(old);
            let (nl, nh) = ((ol as i16).max(l) as u8, (oh as i16).min(h) as u8);
            assert!(nl <= nh, "sound entry bounds cannot cross");
            if (nl, nh) == (ol, oh) {
                return false;
            }
            match cell.compare_exchange_weak(old, pack(nl, nh), Relaxed, Relaxed) {
                Ok(_) => return nl == nh && ol < oh,
                Err(now) => old = now,
            }
        }
    }

    /// The board of table position `v`.
    pub(crate) fn board(&self, v: u32) -> [u8; 12] {
        match unrank(v as u64, self.n as usize) {
            Some(b) => b,
            None => unreachable!("position {v} lies in the table of {} seeds", self.n),
        }
    }

    /// Widens every member from the empty interval until a sweep changes nothing.
    fn sweep_until_stable(&self, members: &mut [u32], id: u32, ids: &[u32]) -> ComponentStats {
        let n = self.n;
        // In index order, neighbours in the list are neighbours on the board (one step of the
        // walk instead of unranking) and in memory.
        if members.len() >= PARALLEL {
            members.par_sort_unstable();
        } else {
            members.sort_unstable();
        }
        let members = &*members;
        let many_above = members.len() as u64 / 8;
        let mut full = true;
        let mut sweeps = 0;
        loop {
            sweeps += 1;
            let moved = AtomicU64::new(0);
            let looked = AtomicU64::new(0);
            let work = |part: &[u32]| {
                let (mut m, mut l) = (0u64, 0u64);
                let mut cursor = Cursor::new(n);
                for &v in part {
                    if !full && !self.dirty.take_bit(v as u64) {
                        continue;
                    }
                    l += 1;
                    let board = cursor.seek(v as u64);
                    let (nl, nh) = self.evaluate(v, &board, id, ids);
                    let (ol, oh) = unpack(self.state[v as usize].load(Relaxed));
                    if nl < ol || nh > oh {
                        self.state[v as usize].store(pack(nl.min(ol), nh.max(oh)), Relaxed);
                        m += 1;
                        if full {
                            self.changed.set(v as u64);
                        } else {
                            self.mark_parents(&board, id, ids);
                        }
                    }
                }
                moved.fetch_add(m, Relaxed);
                looked.fetch_add(l, Relaxed);
            };
            if members.len() >= PARALLEL {
                members.par_chunks(CHUNK).for_each(work);
            } else {
                work(members);
            }
            self.expanded.fetch_add(looked.into_inner(), Relaxed);
            let moved = moved.into_inner();
            if moved == 0 {
                break;
            }
            if full {
                // Most moved: sweep all again. Otherwise mark the parents of those that moved
                // and look only at marked positions from now on.
                let many = moved > many_above;
                let clear = |part: &[u32]| {
                    for &v in part {
                        if self.changed.take_bit(v as u64) && !many {
                            self.mark_parents(&self.board(v), id, ids);
                        }
                    }
                };
                if members.len() >= PARALLEL {
                    members.par_chunks(CHUNK).for_each(clear);
                } else {
                    clear(members);
                }
                full = many;
            }
        }
        debug_assert!(members.iter().all(|&v| {
            let (l, h) = unpack(self.state[v as usize].load(Relaxed));
            l <= h && h <= n
        }));
        ComponentStats {
            sweeps,
            cyclic: true,
        }
    }

    /// Marks the members of component `id` that reach `board` by a quiet move.
    #[inline]
    fn mark_parents(&self, board: &[u8; 12], id: u32, ids: &[u32]) {
        super::unmove::quiet_parents(board, self.n, |p| {
            if ids[p as usize] == id {
                self.dirty.set(p);
            }
        });
    }
}

/// An exact search of the real game from one entry of a component, over (position, path since
/// the entry): a quiet move back to a position of the path with the same side to move ends
/// the game (each side takes its row), a move out of the component or a capture is worth the
/// child's entry value, and each node is cut short by its all-history interval, which holds
/// after the path, and by its entry interval widened by what a repetition of the path could
/// give ([`Search::history_bounds`]). Nothing is stored between nodes: scores depend on the
/// path.
struct Search<'c, 'a> {
    comps: &'c Components<'a>,
    id: u32,
    ids: &'c [u32],
    /// The positions since the entry (the entry first); the one at depth `d` has the entry's
    /// mover to move when `d` is even.
    path: Vec<u32>,
    /// Per position of the path: the least and the most seeds on its mover's row among the
    /// path's positions up to it with the same side to move (see [`Search::history_bounds`]).
    rows: Vec<(u8, u8)>,
    nodes: u64,
    /// The most nodes this search may visit.
    budget: u64,
    /// The budget ran out: the result means nothing.
    aborted: bool,
    /// Which way a leaf known only by an interval (an exit or a capture into an open entry)
    /// counts: for the root's mover, at the end better for it (`true`) or worse (`false`).
    /// See [`Search::value`].
    optimistic: bool,
}

impl Search<'_, '_> {
    /// Appends `q`, whose mover has `row` seeds on its row, to the path.
    #[inline]
    fn push(&mut self, q: u32, row: u8) {
        let d = self.path.len();
        let (lo, hi) = match d.checked_sub(2) {
            Some(i) => {
                let (l, h) = self.rows[i];
                (l.min(row), h.max(row))
            }
            None => (row, row),
        };
        self.path.push(q);
        self.rows.push((lo, hi));
    }

    /// Removes the last position of the path.
    #[inline]
    fn pop(&mut self) {
        self.path.pop();
        self.rows.pop();
    }

    /// Bounds on the value, for its mover, of the last position of the path after the path,
    /// from its entry interval `(el, eh)` (its value after an empty history).
    ///
    /// The mover can play the strategy that secures at least `el` after an empty history: the
    /// game goes as it would there until a move repeats a position played before the last one,
    /// which ends it with each side taking its row. So the value after the path is at least
    /// the smaller of `el` and the least such an ending gives the mover, and likewise at most
    /// the larger of `eh` and the most an ending gives it. A position of the path with the
    /// same side to move gives the mover its own row, one with the other side to move the
    /// rest. Both bounds hold after any shorter history too (fewer endings), which keeps the
    /// harvest of [`Search::value`] sound.
    #[inline]
    fn history_bounds(&self, el: u8, eh: u8) -> (i16, i16) {
        let n = self.comps.n;
        let d = self.path.len() - 1;
        let (mut lo, mut hi) = (el, eh);
        if let Some(i) = d.checked_sub(2) {
            // Earlier positions with this mover to move: it takes their mover's row.
            let (l, h) = self.rows[i];
            (lo, hi) = (lo.min(l), hi.max(h));
        }
        if let Some(i) = d.checked_sub(1) {
            // Positions with the other side to move: the mover takes the other row.
            let (l, h) = self.rows[i];
            (lo, hi) = (lo.min(n - h), hi.max(n - l));
        }
        (lo as i16, hi as i16)
    }

    /// The value of the last position of the path (`v`) for its mover: exact when it lies
    /// strictly between `alpha` and `beta`, an upper bound when at most `alpha`, a lower bound
    /// when at least `beta` (fail-soft alpha-beta); the shallowest index of the path that a
    /// repetition in the search of `v` went back to (`usize::MAX` when none did); and whether
    /// a leaf known only by an interval was met (`loose`).
    ///
    /// **Leaves known by an interval.** An exit, or a capture, into an entry the build left
    /// open counts at one end of its interval: at the end worse for the root's mover when
    /// [`Search::optimistic`] is false, at the better one when it is true. The value is
    /// monotone in its leaves, so at a node whose mover is favoured that way (its leaves at their
    /// better end) the result is at least the true value, and at the others at most. A loose
    /// result therefore proves only one side: at a disfavoured node `r > alpha` proves the
    /// value is at least `r`, at a favoured node `r < beta` proves it is at most `r` (and these
    /// are the only answers its parent reads from it). Where no such leaf was met, the result
    /// is the true one, as before.
    ///
    /// When the repetition index is not above `v`'s own, nothing played before `v` made a
    /// difference: every node searched had the same moves and every leaf the same score as
    /// with an empty history at `v`, so the result bounds `v`'s entry value the same way, and
    /// it narrows the stored entry interval (shared work across roots: an open entry met inside
    /// another entry's search is often settled there); the searches after it cut by it through
    /// [`Search::history_bounds`].
    fn value(&mut self, v: u32, mut alpha: i16, beta: i16) -> (i16, usize, bool) {
        const NONE: usize = usize::MAX;
        let c = self.comps;
        let n = c.n;
        self.nodes += 1;
        if self.nodes > self.budget {
            self.aborted = true;
        }
        if self.aborted {
            return (0, NONE, false);
        }
        let (lo, hi) = unpack(c.state[v as usize].load(Relaxed));
        let (el, eh) = unpack(c.entry[v as usize].load(Relaxed));
        let (pl, ph) = self.history_bounds(el, eh);
        let (lo, hi) = ((lo as i16).max(pl), (hi as i16).min(ph));
        debug_assert!(lo <= hi, "sound bounds of one value cannot cross");
        if lo >= hi || lo >= beta || hi <= alpha {
            return (if hi <= alpha { hi } else { lo }, NONE, false);
        }
        // Whether this node's mover is the one the loose leaves favour: the root's mover at
        // even depths.
        let depth = self.path.len();
        let favoured = self.optimistic == (depth % 2 == 1);
        let pick = |l: u8, h: u8| -> i16 { if favoured { h as i16 } else { l as i16 } };
        let board = c.board(v);
        let mut succ = [NO_SUCCESSOR; 6];
        let k = successors(&board, n, &mut succ);
        let f = c.fixed[v as usize];
        let mut best: i16 = lo;
        let mut loose = false;
        if let Some(b) = Bounds::from_code(f).filter(|_| f != NO_CAPTURE) {
            loose |= !b.is_exact();
            best = best.max(pick(b.lo, b.hi));
        }
        // Settled moves first (repetitions and exits), then the moves to search, the child
        // likeliest to be bad for its mover first.
        let mut reached = NONE;
        let mut open: [(u8, u32, u8); 6] = [(0, 0, 0); 6];
        let mut m = 0;
        for s in &succ[..k] {
            let Successor::Quiet { index, row, .. } = *s else {
                continue;
            };
            let q = index as u32;
            let score = if self.ids[q as usize] != self.id {
                let (el, eh) = unpack(c.entry[q as usize].load(Relaxed));
                loose |= el != eh;
                pick(n - eh, n - el)
            } else if let Some(i) = self.path[depth % 2..]
                .iter()
                .step_by(2)
                .position(|&p| p == q)
            {
                // A repetition: the mover keeps what is on its row after the move.
                reached = reached.min(depth % 2 + 2 * i);
                n as i16 - row as i16
            } else {
                // The child's entry interval guesses its value best: the lowest first.
                let (el, eh) = unpack(c.entry[q as usize].load(Relaxed));
                open[m] = (eh + el, q, row);
                m += 1;
                continue;
            };
            best = best.max(score);
        }
        let (window_lo, window_hi) = (alpha, beta);
        if best < beta {
            alpha = alpha.max(best);
            let open = &mut open[..m];
            open.sort_unstable();
            for &(_, q, row) in open.iter() {
                self.push(q, row);
                let (r, back, below) = self.value(q, n as i16 - beta, n as i16 - alpha);
                self.pop();
                if self.aborted {
                    return (0, NONE, false);
                }
                reached = reached.min(back);
                loose |= below;
                best = best.max(n as i16 - r);
                if best >= beta {
                    break;
                }
                alpha = alpha.max(best);
            }
        }
        // The root (depth 1) is stored by its caller.
        if depth > 1 && reached >= depth - 1 {
            self.harvest(v, best, window_lo, window_hi, loose.then_some(favoured));
        }
        (best, reached, loose)
    }

    /// Narrows `v`'s entry interval by the result `r` of its search with the window
    /// `(alpha, beta)`, found without any repetition of a position played before `v`. With
    /// `loose` = `Some(favoured)` the result came from leaves counted at one end of their
    /// interval and proves one side only (see [`Search::value`]).
    fn harvest(&self, v: u32, r: i16, alpha: i16, beta: i16, loose: Option<bool>) {
        let c = self.comps;
        let n = c.n as i16;
        let (l, h) = if r <= alpha {
            (0, r)
        } else if r >= beta {
            (r, n)
        } else {
            (r, r)
        };
        let (l, h) = match loose {
            None => (l, h),
            // At most the true value: only a lower bound, and only above the window's low end.
            Some(false) if r > alpha => (r, n),
            // At least the true value: only an upper bound, below the window's high end.
            Some(true) if r < beta => (0, r),
            Some(_) => return,
        };
        if c.narrow_entry(v, l, h) {
            c.harvested.fetch_add(1, Relaxed);
        }
    }
}

/// The board at an index, found by stepping from the last one when it is a little further on
/// and by unranking otherwise.
struct Cursor {
    n: u8,
    index: u64,
    board: Option<[u8; 12]>,
}

impl Cursor {
    fn new(n: u8) -> Cursor {
        Cursor {
            n,
            index: 0,
            board: None,
        }
    }

    #[inline]
    fn seek(&mut self, i: u64) -> [u8; 12] {
        match &mut self.board {
            Some(b) if i >= self.index && i - self.index <= 24 => {
                while self.index < i {
                    Boards::step(b);
                    self.index += 1;
                }
                *b
            }
            _ => {
                let b = match unrank(i, self.n as usize) {
                    Some(b) => b,
                    None => unreachable!("position {i} lies in the table of {} seeds", self.n),
                };
                self.board = Some(b);
                self.index = i;
                b
            }
        }
    }
}
