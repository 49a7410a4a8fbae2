//! The [`Prover`]'s search: proof-number search over a tree of the real game.
//!
//! The question "does the side to move secure at least `t` board seeds?" is a boolean one of
//! the kind proof-number search was made for: it grows the tree where a proof or a refutation
//! looks cheapest (the "most-proving" leaf), so a forcing line many plies deep is followed
//! without searching every side line to that depth, as the depth-first search it replaced did
//! (iteratively deeper, every line of the tree again at each depth).
//!
//! The tree is a tree, not a graph: a node's history is its path (back to the last capture,
//! and before the root the game's real history), so a repetition is decided exactly as in the
//! game and nothing path-dependent is ever shared between two paths. Positions right after a
//! capture have an empty history; their settled answers go to the prover's store for later
//! proofs, as before.
//!
//! Each node stands for its own mover's question (`t`: the seeds it needs) in negamax form:
//! its proof number is the smallest disproof number of its children (one refuted child proves
//! it), its disproof number the sum of its children's proof numbers (every child must be
//! proven). A node is settled at creation wherever the old search settled it at once: a
//! threshold out of reach or already met, no legal move, a stored interval (the entry interval
//! right after a capture) that decides the question, or an answer in the store.

use super::{Known, Proof, Prover, slot_of};
use crate::repeat_rows;
use oware_engine::Position;
use oware_engine::Side;
use std::time::Instant;

/// Proof numbers saturate here: "never", for a node that cannot be settled (past the depth
/// limit, or a board the tables do not cover).
const INF: u32 = 1 << 30;

/// The most nodes a proof's tree holds (40 bytes each): a proof that would grow it further
/// stops as if out of budget.
const MAX_TREE: usize = 1 << 24;

/// No parent: the root.
const ROOT: u32 = u32::MAX;

/// One node of the proof tree.
#[derive(Clone, Copy, Debug)]
struct Node {
    pos: Position,
    /// Its parent's index, [`ROOT`] for the root.
    parent: u32,
    /// Its first child's index (children are stored together); meaningful once expanded.
    first: u32,
    /// Its number of children; 0 while a leaf.
    count: u8,
    /// The board seeds its mover needs.
    t: u8,
    /// Reached by a capture (or the root of a proof with an empty history).
    fresh: bool,
    /// Expanded (or settled: `pn` or `dn` is 0).
    expanded: bool,
    /// Plies from the root.
    depth: u16,
    /// The least and the most seeds on South's row over the positions since the last
    /// capture up to this one (before the root, the game's real history).
    rows: (u8, u8),
    /// Proof number of "its mover secures `t`".
    pn: u32,
    /// Disproof number of the same.
    dn: u32,
}

/// What a position is before any search.
enum Settled {
    /// Its mover secures the threshold.
    Yes,
    /// It does not.
    No,
    /// Its board is not in the tables: no answer can be had.
    Never,
    /// To be searched, with its first proof and disproof numbers.
    Open(u32, u32),
}

impl Prover {
    /// What can be said of `pos` (its mover needing `t`) without searching: the threshold,
    /// the end of the game, its interval after its history (the entry interval when `fresh`,
    /// else narrowed by `rows`, South's least and most row before it since the last capture:
    /// [`crate::Tables::bounds_after`]), and, when `fresh`, an answer in the store.
    fn settled(&self, pos: &Position, fresh: bool, rows: (u8, u8), t: i32) -> Settled {
        let n: i32 = pos.board().iter().map(|&x| i32::from(x)).sum();
        if t <= 0 {
            return Settled::Yes;
        }
        if t > n {
            return Settled::No;
        }
        if pos.legal_moves().is_empty() {
            // The game ends; each side takes its row.
            return if i32::from(pos.row_seeds(pos.to_move())) >= t {
                Settled::Yes
            } else {
                Settled::No
            };
        }
        let bounds = if fresh {
            self.tables.entry(pos)
        } else {
            self.tables.bounds_after(pos, Some(mover_rows(pos, rows)))
        };
        let Some(b) = bounds else {
            return Settled::Never;
        };
        if i32::from(b.lo) >= t {
            return Settled::Yes;
        }
        if i32::from(b.hi) < t {
            return Settled::No;
        }
        if fresh && let Some(Known::Proven(yes)) = self.known.get(&slot_of(pos, n, t)) {
            return if *yes { Settled::Yes } else { Settled::No };
        }
        // The first guess: how far the interval's ends are from settling the question.
        Settled::Open(
            (t - i32::from(b.lo)) as u32,
            (i32::from(b.hi) + 1 - t) as u32,
        )
    }

    /// The proof-number search behind [`Prover::secures`]: `seen` is the root's history (its
    /// own key last), `fresh` whether it is empty. Expands at most `node_limit` nodes, none
    /// deeper than `max_depth` plies, and stops at `deadline`; leaves the expansions in
    /// `self.nodes` and `self.exhausted` set when a limit stopped it.
    pub(super) fn proof_number_search(
        &mut self,
        pos: &Position,
        seen: &[u128],
        fresh: bool,
        t: i32,
        max_depth: u32,
    ) -> Proof {
        // South's rows over the root's history before it (the root's own key last), since
        // its last capture: captured totals only grow, so that stretch is a suffix.
        let before = &seen[..seen.len().saturating_sub(1)];
        let captured = pos.captured();
        let stretch = before
            .iter()
            .rposition(|&k| Position::key_captured(k) != captured)
            .map_or(0, |i| i + 1);
        let root_rows = repeat_rows(&before[stretch..], Side::South);
        let root = match (fresh, root_rows) {
            (false, Some(rows)) => self.settled(pos, false, rows, t),
            // Nothing before it since the last capture: its entry interval holds.
            _ => self.settled(pos, true, (0, 0), t),
        };
        let own = pos.row_seeds(Side::South);
        let root = match root {
            Settled::Yes => return Proof::Yes,
            Settled::No => return Proof::No,
            Settled::Never => return Proof::Unknown,
            Settled::Open(pn, dn) => Node {
                pos: *pos,
                parent: ROOT,
                first: 0,
                count: 0,
                t: t as u8,
                fresh,
                expanded: false,
                depth: 0,
                rows: root_rows.map_or((own, own), |(a, b)| (a.min(own), b.max(own))),
                pn,
                dn,
            },
        };
        if max_depth == 0 {
            return Proof::Unknown;
        }
        let mut tree: Vec<Node> = vec![root];
        let mut path: Vec<u128> = Vec::with_capacity(256);
        while tree[0].pn != 0 && tree[0].dn != 0 && tree[0].pn < INF {
            if self.nodes >= self.node_limit
                || tree.len() + 6 > MAX_TREE
                || (self.nodes & 255 == 0 && self.deadline.is_some_and(|d| Instant::now() >= d))
            {
                self.exhausted = true;
                break;
            }
            let Some(i) = most_proving(&tree) else {
                // Unreachable while the numbers are consistent; an open answer is still sound.
                break;
            };
            self.nodes += 1;
            self.expand(&mut tree, i, seen, &mut path, max_depth);
            update_ancestors(&mut tree, i);
        }
        self.remember_settled(&tree);
        let r = tree[0];
        if r.pn == 0 {
            Proof::Yes
        } else if r.dn == 0 {
            Proof::No
        } else {
            Proof::Unknown
        }
    }

    /// Expands leaf `i`: each move's child is settled at once where it can be (a repetition,
    /// its interval, the store) and added to the tree otherwise. Sets the leaf's numbers.
    fn expand(
        &self,
        tree: &mut Vec<Node>,
        i: usize,
        seen: &[u128],
        path: &mut Vec<u128>,
        max_depth: u32,
    ) {
        let node = tree[i];
        // The positions since the last capture on the way to this node.
        path.clear();
        let mut j = i;
        loop {
            let n = &tree[j];
            if n.parent == ROOT && !n.fresh {
                path.extend_from_slice(seen);
                break;
            }
            path.push(n.pos.key());
            if n.fresh {
                break;
            }
            j = n.parent as usize;
        }
        let pos = node.pos;
        let n: i32 = pos.board().iter().map(|&x| i32::from(x)).sum();
        let t = i32::from(node.t);
        let child_t = n - t + 1;
        let first = tree.len();
        let mut proven = false;
        for mv in &pos.legal_moves() {
            let mut child = pos;
            let captured = child.play_unchecked(mv).captured > 0;
            if !captured && path.contains(&child.key()) {
                // A repetition: the game ends with each side taking its row.
                if i32::from(child.row_seeds(pos.to_move())) >= t {
                    proven = true;
                    break;
                }
                continue;
            }
            let (pn, dn) = match self.settled(&child, captured, node.rows, child_t) {
                // The opponent secures its threshold here whatever follows: the move fails.
                Settled::Yes => continue,
                Settled::No => {
                    proven = true;
                    break;
                }
                Settled::Never => (INF, INF),
                Settled::Open(..) if u32::from(node.depth) + 1 >= max_depth => (INF, INF),
                Settled::Open(pn, dn) => (pn, dn),
            };
            tree.push(Node {
                pos: child,
                parent: i as u32,
                first: 0,
                count: 0,
                t: child_t as u8,
                fresh: captured,
                expanded: false,
                depth: node.depth + 1,
                rows: {
                    let r = child.row_seeds(Side::South);
                    if captured {
                        (r, r)
                    } else {
                        (node.rows.0.min(r), node.rows.1.max(r))
                    }
                },
                pn,
                dn,
            });
        }
        tree[i].expanded = true;
        if proven {
            tree.truncate(first);
            (tree[i].pn, tree[i].dn, tree[i].count) = (0, INF, 0);
            return;
        }
        let count = tree.len() - first;
        (tree[i].first, tree[i].count) = (first as u32, count as u8);
        (tree[i].pn, tree[i].dn) = if count == 0 {
            // Every move fails.
            (INF, 0)
        } else {
            numbers(&tree[first..])
        };
    }

    /// Keeps every settled node that follows a capture (an empty history) in the store.
    fn remember_settled(&mut self, tree: &[Node]) {
        for node in tree.iter().skip(1).filter(|n| n.fresh) {
            if node.pn == 0 || node.dn == 0 {
                let n: i32 = node.pos.board().iter().map(|&x| i32::from(x)).sum();
                let slot = slot_of(&node.pos, n, i32::from(node.t));
                self.remember(slot, Known::Proven(node.pn == 0));
            }
        }
    }
}

/// A node's numbers from its children's: proven by one refuted child, refuted when every
/// child is proven.
fn numbers(children: &[Node]) -> (u32, u32) {
    let pn = children.iter().map(|c| c.dn).min().unwrap_or(INF);
    let dn = children
        .iter()
        .fold(0u32, |s, c| s.saturating_add(c.pn).min(INF));
    (pn.min(INF), dn)
}

/// The most-proving leaf: from the root, at each node the child whose disproof number is the
/// node's proof number. `None` if an open node has no children (never, with consistent numbers).
fn most_proving(tree: &[Node]) -> Option<usize> {
    let mut i = 0usize;
    while tree[i].expanded {
        let node = &tree[i];
        let first = node.first as usize;
        let children = tree.get(first..first + usize::from(node.count))?;
        let (k, _) = children.iter().enumerate().min_by_key(|(_, c)| c.dn)?;
        i = first + k;
    }
    Some(i)
}

/// Recomputes the numbers of `i`'s ancestors after `i` changed, up to the root or the first
/// that does not change.
fn update_ancestors(tree: &mut [Node], mut i: usize) {
    while tree[i].parent != ROOT {
        let p = tree[i].parent as usize;
        let first = tree[p].first as usize;
        let (pn, dn) = numbers(&tree[first..first + usize::from(tree[p].count)]);
        if (pn, dn) == (tree[p].pn, tree[p].dn) {
            return;
        }
        (tree[p].pn, tree[p].dn) = (pn, dn);
        i = p;
    }
}

/// South's least and most row `rows` as the rows `pos`'s mover would take by repeating a
/// position they came from (all of a board's seeds lie on the two rows).
#[inline]
fn mover_rows(pos: &Position, (lo, hi): (u8, u8)) -> (u8, u8) {
    if pos.to_move() == Side::South {
        (lo, hi)
    } else {
        let n: u8 = pos.board().iter().sum();
        (n - hi, n - lo)
    }
}
