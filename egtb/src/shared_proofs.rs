//! The exact search of an entry value that shares proofs between lines.
//!
//! An entry's value depends on the path since the entry only through repetitions: a quiet
//! move back to a position of the path ends the game, each side taking its row. The search
//! asks one threshold at a time: does the entry's mover (*Max*) secure at least `t` seeds?
//! A repetition is then a win or a loss for Max that depends on the repeated position alone.
//!
//! A plain search of (position, path) repeats the same work for every line that reaches a
//! position, since its result may depend on the line. This one keeps each result with what it
//! depended on, and reuses it on another line that cannot change it. Take the proof behind a
//! result at `u`: Max's winning strategy for a win, or every line for a loss. It is kept with
//! two sets:
//! - `ended_at`: the positions of the path above (or at) `u` where the proof's lines ended by a
//!   repetition;
//! - `through`: the positions below `u` that the proof's lines reached without ending there:
//!   the positions they went on through, and the children settled by their all-history
//!   interval (which holds after any path that does not end the game at them).
//!
//! The result holds after another path that still holds every `ended_at` position (those lines
//! still end there, as before) and holds none of the `through` positions whose repetition
//! would be bad for the side the proof favours. A `through` position on the new path would end
//! a line there: if that ending favours the proof's side, the proof only gets stronger;
//! otherwise the result is not reused. Every other position of the new path lies outside the
//! proof and changes nothing. Exits out of the component are history-free leaves, worth their
//! entry value: no position of the path can recur there. So are captures, worth the smaller
//! table's entry value.
//!
//! Leaves known only by an interval (a capture or an exit into an entry still open) count at one
//! end of it, as in the path search of [`super::component`]: the end worse for Max proves a
//! win, the better end proves a loss.

use super::bounds::Bounds;
use super::component::{Components, NO_CAPTURE, NO_SUCCESSOR, unpack};
use super::successors::{Successor, own_row, successors};
use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;

/// Results kept per position and side to move (the oldest is dropped first).
const KEPT_PER_NODE: usize = 8;
/// Words (of 64 positions) of `through` sets one search keeps in all: 128 MiB. Past it the
/// search goes on without keeping more.
const KEPT_WORDS: usize = 1 << 24;
/// The longest path searched; a search that would go deeper gives up (a long path is a deep
/// recursion).
const MAX_PATH: usize = 1024;

/// A set of node numbers: a bit set over the words `base..base + words.len()` (the numbers a
/// subtree's search gives out are mostly consecutive, so its set is short).
#[derive(Clone, Debug, Default)]
struct NodeSet {
    base: u32,
    words: Vec<u64>,
}

impl NodeSet {
    fn contains(&self, k: u32) -> bool {
        let w = (k >> 6) as usize;
        w.checked_sub(self.base as usize)
            .and_then(|i| self.words.get(i))
            .is_some_and(|x| x & (1u64 << (k & 63)) != 0)
    }

    /// Widens the covered words to `lo..hi` (word numbers).
    fn cover(&mut self, lo: usize, hi: usize) {
        if self.words.is_empty() {
            self.base = lo as u32;
            self.words = vec![0; hi - lo];
            return;
        }
        let base = self.base as usize;
        let end = base + self.words.len();
        if lo < base {
            let mut w = vec![0; base - lo];
            w.extend_from_slice(&self.words);
            self.words = w;
            self.base = lo as u32;
        }
        let base = self.base as usize;
        if hi > end {
            self.words.resize(hi - base, 0);
        }
    }

    fn insert(&mut self, k: u32) {
        let w = (k >> 6) as usize;
        self.cover(w, w + 1);
        self.words[w - self.base as usize] |= 1u64 << (k & 63);
    }

    fn union(&mut self, other: &NodeSet) {
        if other.words.is_empty() {
            return;
        }
        let lo = other.base as usize;
        self.cover(lo, lo + other.words.len());
        let at = lo - self.base as usize;
        for (a, b) in self.words[at..].iter_mut().zip(&other.words) {
            *a |= *b;
        }
    }
}

/// A result and what it depended on (see the module docs).
#[derive(Clone, Debug)]
struct Proven {
    /// Whether Max secures at least the threshold.
    win: bool,
    /// The positions the proof went on through.
    through: NodeSet,
    /// Node numbers of path positions where the proof's lines ended by a repetition.
    ended_at: Vec<u32>,
}

impl Proven {
    fn leaf(win: bool) -> Proven {
        Proven {
            win,
            through: NodeSet::default(),
            ended_at: Vec::new(),
        }
    }
}

/// A position with its side to move, as the search numbers it.
struct Node {
    /// Index in the table.
    index: u32,
    /// Whether Max (the entry's mover) is to move.
    max_to_move: bool,
    /// Whether a repetition of this position gives Max at least the threshold.
    repeat_wins: bool,
    /// Whether it lies on the current path.
    on_path: bool,
    /// Results found here, with what they depended on.
    kept: Vec<Proven>,
}

/// What the search of one threshold found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The entry's mover secures at least the threshold.
    AtLeast,
    /// It secures less.
    Below,
    /// The budget ran out, or leaves known only by an interval leave it open.
    Open,
}

/// Figures of the searches of one entry.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Effort {
    /// Nodes visited.
    pub nodes: u64,
    /// Results reused on another line.
    pub reused: u64,
}

/// One search of one threshold from one entry of a component.
struct Search<'c, 'a> {
    comps: &'c Components<'a>,
    id: u32,
    ids: &'c [u32],
    threshold: u8,
    /// Which end of an interval a leaf known only by one counts at: the end better for Max
    /// (`true`) or worse.
    optimistic: bool,
    numbers: HashMap<(u32, bool), u32>,
    nodes: Vec<Node>,
    path: Vec<u32>,
    visited: u64,
    budget: u64,
    reused: u64,
    kept_words: usize,
    aborted: bool,
    /// Whether a leaf known only by an interval decided something.
    loose: bool,
}

/// Asks whether the mover of entry `v` (of component `id`) secures at least `threshold`
/// seeds, with at most `budget` nodes a pass (a second pass, with loose leaves at their other
/// end, where the first met them).
pub(crate) fn ask(
    comps: &Components<'_>,
    v: u32,
    id: u32,
    ids: &[u32],
    threshold: u8,
    budget: u64,
    effort: &mut Effort,
) -> Answer {
    let mut run = |optimistic: bool| {
        let mut s = Search {
            comps,
            id,
            ids,
            threshold,
            optimistic,
            numbers: HashMap::new(),
            nodes: Vec::new(),
            path: Vec::new(),
            visited: 0,
            budget,
            reused: 0,
            kept_words: 0,
            aborted: false,
            loose: false,
        };
        let root = s.number(v, true);
        s.enter(root);
        let r = s.search(root);
        effort.nodes += s.visited;
        effort.reused += s.reused;
        (r.map(|p| p.win), s.loose)
    };
    match run(false) {
        (None, _) => Answer::Open,
        (Some(true), _) => Answer::AtLeast,
        (Some(false), false) => Answer::Below,
        (Some(false), true) => match run(true) {
            (Some(false), _) => Answer::Below,
            _ => Answer::Open,
        },
    }
}

impl Search<'_, '_> {
    /// The node number of table position `index` with Max to move or not.
    fn number(&mut self, index: u32, max_to_move: bool) -> u32 {
        if let Some(&k) = self.numbers.get(&(index, max_to_move)) {
            return k;
        }
        let k = self.nodes.len() as u32;
        let row = own_row(&self.comps.board(index));
        let n = self.comps.n;
        let for_max = if max_to_move { row } else { n - row };
        self.nodes.push(Node {
            index,
            max_to_move,
            repeat_wins: for_max >= self.threshold,
            on_path: false,
            kept: Vec::new(),
        });
        self.numbers.insert((index, max_to_move), k);
        k
    }

    fn enter(&mut self, k: u32) {
        self.nodes[k as usize].on_path = true;
        self.path.push(k);
    }

    fn leave(&mut self, k: u32) {
        self.nodes[k as usize].on_path = false;
        self.path.pop();
    }

    /// Whether Max secures the threshold where the mover of a node with Max to move
    /// (`max_to_move`) or not is worth `b`; `None` when the interval straddles it.
    fn verdict(&self, b: Bounds, max_to_move: bool) -> Option<bool> {
        let b = if max_to_move { b } else { b.flip(self.comps.n) };
        if b.lo >= self.threshold {
            Some(true)
        } else if b.hi < self.threshold {
            Some(false)
        } else {
            None
        }
    }

    /// [`Search::verdict`] of a leaf: an interval that straddles the threshold counts at the
    /// end [`Search::optimistic`] picks.
    fn leaf(&mut self, b: Bounds, max_to_move: bool) -> bool {
        self.verdict(b, max_to_move).unwrap_or_else(|| {
            self.loose = true;
            self.optimistic
        })
    }

    /// The all-history interval of table position `index`, when it settles the threshold.
    fn settled(&self, index: u32, max_to_move: bool) -> Option<bool> {
        let (lo, hi) = unpack(self.comps.state[index as usize].load(Relaxed));
        self.verdict(Bounds { lo, hi }, max_to_move)
    }

    /// Whether the kept result `p` at the current node holds after the current path.
    fn holds(&self, p: &Proven) -> bool {
        if !p.ended_at.iter().all(|&k| self.nodes[k as usize].on_path) {
            return false;
        }
        self.path.iter().all(|&y| {
            let inside = p.through.contains(y);
            // A position the proof went on through ends the game there now: harmless where
            // that ending favours the proof's side.
            !inside || self.nodes[y as usize].repeat_wins == p.win
        })
    }

    fn keep(&mut self, k: u32, p: &Proven) {
        let words = p.through.words.len() + 1;
        if self.kept_words + words > KEPT_WORDS {
            return;
        }
        self.kept_words += words;
        let kept = &mut self.nodes[k as usize].kept;
        if kept.len() >= KEPT_PER_NODE {
            let old = kept.remove(0);
            self.kept_words -= old.through.words.len() + 1;
        }
        kept.push(p.clone());
    }

    /// The result at node `u`, the last of the path; `None` when the search gave up.
    fn search(&mut self, u: u32) -> Option<Proven> {
        self.visited += 1;
        if self.visited > self.budget || self.path.len() > MAX_PATH {
            self.aborted = true;
        }
        if self.aborted {
            return None;
        }
        if let Some(p) = self.nodes[u as usize]
            .kept
            .iter()
            .find(|p| self.holds(p))
            .cloned()
        {
            self.reused += 1;
            return Some(p);
        }
        let comps = self.comps;
        let (index, max_to_move) = {
            let node = &self.nodes[u as usize];
            (node.index, node.max_to_move)
        };
        // The mover wants `want`: Max a win, the other side a loss for Max.
        let want = max_to_move;
        let f = comps.fixed[index as usize];
        if let Some(b) = Bounds::from_code(f).filter(|_| f != NO_CAPTURE)
            && self.leaf(b, max_to_move) == want
        {
            return Some(Proven::leaf(want));
        }
        let board = comps.board(index);
        let mut succ = [NO_SUCCESSOR; 6];
        let k = successors(&board, comps.n, &mut succ);
        let mut ended: Vec<u32> = Vec::new();
        // Children settled by their all-history interval against the mover: the result
        // depends on them as positions its lines reach (on another path one of them could be a
        // repetition), so they join `through`.
        let mut reached = NodeSet::default();
        let mut children: [(u16, u32, u32); 6] = [(0, 0, 0); 6];
        let mut m = 0;
        for s in &succ[..k] {
            let Successor::Quiet { index: q, .. } = *s else {
                continue;
            };
            let q = q as u32;
            let child_max = !max_to_move;
            if self.ids[q as usize] != self.id {
                // Out of the component: no position of the path can recur. The child's entry
                // interval is for its mover; flipped, for this node's mover.
                let (lo, hi) = unpack(comps.entry[q as usize].load(Relaxed));
                let exit = Bounds { lo, hi }.flip(comps.n);
                if self.leaf(exit, max_to_move) == want {
                    return Some(Proven::leaf(want));
                }
                continue;
            }
            let c = self.number(q, child_max);
            if self.nodes[c as usize].on_path {
                // A repetition ends the game here, whatever the child's interval says.
                if self.nodes[c as usize].repeat_wins == want {
                    return Some(Proven {
                        win: want,
                        through: NodeSet::default(),
                        ended_at: vec![c],
                    });
                }
                if !ended.contains(&c) {
                    ended.push(c);
                }
                continue;
            }
            if let Some(r) = self.settled(q, child_max) {
                if r == want {
                    let mut through = NodeSet::default();
                    through.insert(c);
                    return Some(Proven {
                        win: want,
                        through,
                        ended_at: Vec::new(),
                    });
                }
                reached.insert(c);
                continue;
            }
            // The child's entry interval guesses its value best: the lowest for its mover
            // first, ties in table order (which settled the open entries of table 8 with a
            // hundredth of the nodes that the order of discovery took).
            let (el, eh) = unpack(comps.entry[q as usize].load(Relaxed));
            children[m] = (el as u16 + eh as u16, q, c);
            m += 1;
        }
        let children = &mut children[..m];
        children.sort_unstable();
        let mut through = reached;
        // None of them is on the path: each search below leaves it as it found it.
        for &(_, _, c) in children.iter() {
            self.enter(c);
            let r = self.search(c);
            self.leave(c);
            let mut r = r?;
            r.through.insert(c);
            r.ended_at.retain(|&x| x != c);
            if r.win == want {
                self.keep(u, &r);
                return Some(r);
            }
            through.union(&r.through);
            for x in r.ended_at {
                if !ended.contains(&x) {
                    ended.push(x);
                }
            }
        }
        let p = Proven {
            win: !want,
            through,
            ended_at: ended,
        };
        self.keep(u, &p);
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::NodeSet;

    #[test]
    fn node_sets_hold_what_was_put_in_across_words() {
        let mut a = NodeSet::default();
        assert!(!a.contains(0));
        for k in [700, 5, 64, 130] {
            a.insert(k);
        }
        for k in [5, 64, 130, 700] {
            assert!(a.contains(k), "{k}");
        }
        for k in [4, 6, 63, 65, 129, 699, 701, 10_000] {
            assert!(!a.contains(k), "{k}");
        }
        let mut b = NodeSet::default();
        b.insert(2_000);
        b.insert(1);
        b.union(&a);
        for k in [1, 5, 64, 130, 700, 2_000] {
            assert!(b.contains(k), "{k}");
        }
        assert!(!b.contains(1_999) && !b.contains(0));
        let mut c = NodeSet::default();
        c.union(&NodeSet::default());
        assert!(c.words.is_empty());
    }
}
