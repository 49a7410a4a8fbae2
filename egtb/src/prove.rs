//! Proofs with the real history: what the side to move can force in a table position, given
//! the positions played since the last capture.
//!
//! A table interval holds for every history, so where it is cycle-dependent it cannot say
//! what a real game's position is worth. The [`Prover`] answers the question the game asks
//! — can the side to move secure at least `t` of the board's seeds, after *this* history? —
//! by a proof-number search of the real game (`pns`): every repetition ends the game exactly
//! as [`oware_engine::adjudicate`] does (each side takes its row), a position without a move
//! likewise, and a node is not searched when its stored interval (or, right after a capture,
//! its entry interval) settles the question. The search is bounded by a depth and a number of
//! nodes expanded; what it cannot settle within them is [`Proof::Unknown`], never a guess.
//! Positions right after a capture have an empty history, so their answers hold for every path
//! that reaches them and are kept from one proof to the next.
//!
//! The answer is a number of board seeds, so it ignores the captured totals: the 25-seed
//! ending changes a final count but never a result (see the module docs of
//! [`super`]), and a question asked at a result's threshold keeps its answer. The ply limit
//! is respected by the caller bounding the depth.

use super::index::rank_from;
use super::probe::Tables;
use oware_engine::Game;
use oware_engine::Move;
use oware_engine::{Position, WINNING_CAPTURE};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

mod pns;

/// The answer of a bounded proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proof {
    /// Proven: the side to move secures at least the threshold.
    Yes,
    /// Proven: it does not.
    No,
    /// Not settled within the depth or the node budget.
    Unknown,
}

impl Proof {
    /// The answer for the other side of the same question.
    #[inline]
    pub fn negate(self) -> Proof {
        match self {
            Proof::Yes => Proof::No,
            Proof::No => Proof::Yes,
            Proof::Unknown => Proof::Unknown,
        }
    }
}

/// What bounded proofs say of one move of a game's position, for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveProof {
    /// The move.
    pub mv: Move,
    /// Whether it wins with best play.
    pub win: Proof,
    /// Whether it at least draws with best play.
    pub draw: Proof,
}

/// What one proof of a root move may spend.
#[derive(Clone, Copy, Debug)]
struct Budget {
    /// Nodes left of the root's budget.
    nodes: u64,
    /// The deepest it may go, in plies.
    depth: u32,
    /// When it must stop.
    deadline: Option<Instant>,
}

/// The deepest proof, in plies. Proof-number search follows forcing lines deep without
/// paying for the side lines, and quiet stretches of small boards can be long, so the bound is
/// the game's ply limit in practice ([`proof_depth`]).
pub const PROOF_DEPTH: u32 = 1000;

/// The deepest proof from a child of `game`'s position that stays short of the game's ply
/// limit (so that no answer depends on it): [`PROOF_DEPTH`] or less.
pub fn proof_depth(game: &Game) -> u32 {
    PROOF_DEPTH.min(game.max_plies().saturating_sub(game.ply() + 2))
}

/// The store's slot of `pos` (with `n` board seeds) and threshold `t`.
fn slot_of(pos: &Position, n: i32, t: i32) -> (u8, u64, u8) {
    (
        n as u8,
        rank_from(pos.board(), pos.to_move().row_start()),
        t.clamp(0, 255) as u8,
    )
}

/// Entries kept for positions right after a capture before the store is emptied.
const CACHE_LIMIT: usize = 1 << 20;

/// What is known of a position right after a capture, for one threshold.
#[derive(Clone, Copy, Debug)]
enum Known {
    /// Settled.
    Proven(bool),
    /// A whole proof with this node budget gave up.
    GaveUp(u64),
}

/// A bounded prover over endgame tables (see the module docs).
#[derive(Debug)]
pub struct Prover {
    tables: Arc<Tables>,
    /// The root's keys since the last capture (a buffer kept between proofs).
    keys: Vec<u128>,
    /// Nodes the current proof expanded.
    nodes: u64,
    node_limit: u64,
    deadline: Option<Instant>,
    exhausted: bool,
    known: HashMap<(u8, u64, u8), Known>,
}

impl Prover {
    /// A prover over `tables`, with nothing known yet.
    pub fn new(tables: Arc<Tables>) -> Prover {
        Prover {
            tables,
            keys: Vec::with_capacity(256),
            nodes: 0,
            node_limit: u64::MAX,
            deadline: None,
            exhausted: false,
            known: HashMap::new(),
        }
    }

    /// The tables the prover reads.
    pub fn tables(&self) -> &Arc<Tables> {
        &self.tables
    }

    /// Nodes the last proof expanded ([`Prover::secures`]).
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Whether the side to move in `pos` secures at least `t` of the board's seeds with best
    /// play of both sides, when `seen` holds the keys of the positions since the last capture
    /// (the current one included; empty or just `pos` right after a capture). Searches at
    /// most `max_depth` plies deep, expanding at most `node_limit` nodes, until `deadline`.
    /// `Unknown` also when the board is not covered by the tables.
    pub fn secures(
        &mut self,
        pos: &Position,
        seen: &[u128],
        t: i32,
        max_depth: u32,
        node_limit: u64,
        deadline: Option<Instant>,
    ) -> Proof {
        self.nodes = 0;
        self.node_limit = node_limit;
        self.deadline = deadline;
        self.exhausted = false;
        let fresh = seen.len() <= 1;
        let n: i32 = pos.board().iter().map(|&x| i32::from(x)).sum();
        let slot = slot_of(pos, n, t);
        if fresh {
            match self.known.get(&slot) {
                Some(Known::Proven(yes)) => return if *yes { Proof::Yes } else { Proof::No },
                Some(Known::GaveUp(b)) if *b >= node_limit => return Proof::Unknown,
                _ => {}
            }
        }
        self.keys.clear();
        self.keys.extend_from_slice(seen);
        if self.keys.last() != Some(&pos.key()) {
            self.keys.push(pos.key());
        }
        let history = std::mem::take(&mut self.keys);
        let p = self.proof_number_search(pos, &history, fresh, t, max_depth);
        self.keys = history;
        if p == Proof::Unknown && self.exhausted && fresh {
            self.remember(slot, Known::GaveUp(node_limit));
        }
        p
    }

    /// Every legal move of the game's position with what proofs within `node_limit` nodes in
    /// all (and before `deadline`) say of its result, using the game's real history. `None`
    /// when the game is over or its board is not in the tables. Proofs stop short of the
    /// game's ply limit, so an answer never depends on it.
    pub fn moves(
        &mut self,
        game: &Game,
        max_depth: u32,
        node_limit: u64,
        deadline: Option<Instant>,
    ) -> Option<Vec<MoveProof>> {
        if game.is_over() {
            return None;
        }
        let pos = *game.position();
        self.tables.bounds(&pos)?;
        let mine = pos.captured()[pos.to_move().index()] as i32;
        // Board seeds the mover needs: more than half of all seeds wins, half draws.
        let need_win = WINNING_CAPTURE as i32 - mine;
        let need_draw = need_win - 1;
        let max_depth = max_depth.min(proof_depth(game));
        let seen = game.seen_since_capture();
        let mut spent = 0u64;
        let mut out: Vec<MoveProof> = Vec::with_capacity(6);
        let budget = |spent: u64| Budget {
            nodes: node_limit.saturating_sub(spent),
            depth: max_depth,
            deadline,
        };
        for mv in &game.legal_moves() {
            let win = self.move_secures(&pos, seen, mv, need_win, budget(spent));
            spent += self.nodes;
            let draw = if win == Proof::Yes {
                Proof::Yes
            } else {
                Proof::Unknown
            };
            out.push(MoveProof { mv, win, draw });
        }
        // A proven win decides the move; otherwise ask whether each move at least draws.
        if !out.iter().any(|m| m.win == Proof::Yes) {
            for m in &mut out {
                m.draw = self.move_secures(&pos, seen, m.mv, need_draw, budget(spent));
                spent += self.nodes;
                if m.draw == Proof::No {
                    m.win = Proof::No;
                }
            }
        }
        Some(out)
    }

    /// Whether the mover of `pos` (whose history since the last capture is `seen`) secures
    /// `need` of its board seeds by playing `mv`: exact for a repetition, otherwise a proof of
    /// the child within `budget`. Leaves the nodes it visited in `self.nodes`.
    fn move_secures(
        &mut self,
        pos: &Position,
        seen: &[u128],
        mv: Move,
        need: i32,
        budget: Budget,
    ) -> Proof {
        self.nodes = 0;
        let mut child = *pos;
        let captured = child.play_unchecked(mv).captured > 0;
        if !captured && seen.contains(&child.key()) {
            // The move repeats: the game ends with each side taking its row.
            return if child.row_seeds(pos.to_move()) as i32 >= need {
                Proof::Yes
            } else {
                Proof::No
            };
        }
        if budget.nodes == 0 {
            return Proof::Unknown;
        }
        // After a capture the child's history is itself alone.
        let mut child_seen: Vec<u128> = if captured { Vec::new() } else { seen.to_vec() };
        child_seen.push(child.key());
        let n: i32 = pos.board().iter().map(|&x| x as i32).sum();
        self.secures(
            &child,
            &child_seen,
            n - need + 1,
            budget.depth,
            budget.nodes,
            budget.deadline,
        )
        .negate()
    }

    fn remember(&mut self, slot: (u8, u64, u8), k: Known) {
        if self.known.len() >= CACHE_LIMIT {
            self.known.clear();
        }
        self.known.insert(slot, k);
    }
}

/// The moves worth playing after proofs: those proven to win, if any; otherwise those proven
/// to draw at least, if any; otherwise those not proven to lose, if any; otherwise all.
pub fn kept_moves(proofs: &[MoveProof]) -> Vec<Move> {
    let pick = |f: &dyn Fn(&MoveProof) -> bool| -> Vec<Move> {
        proofs.iter().filter(|p| f(p)).map(|p| p.mv).collect()
    };
    for keep in [
        pick(&|p| p.win == Proof::Yes),
        pick(&|p| p.draw == Proof::Yes),
        pick(&|p| p.draw != Proof::No),
    ] {
        if !keep.is_empty() {
            return keep;
        }
    }
    pick(&|_| true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_engine::Side;

    fn proof(h: usize, win: Proof, draw: Proof) -> MoveProof {
        MoveProof {
            mv: Move::from_relative(Side::South, h),
            win,
            draw,
        }
    }

    #[test]
    fn the_best_proven_result_decides_the_moves_kept() {
        use Proof::{No, Unknown, Yes};
        let houses =
            |p: &[MoveProof]| -> Vec<usize> { kept_moves(p).iter().map(|m| m.house()).collect() };
        let mixed = [
            proof(0, No, No),
            proof(1, Unknown, Yes),
            proof(2, Yes, Yes),
            proof(3, Unknown, Unknown),
        ];
        assert_eq!(houses(&mixed), vec![2]);
        assert_eq!(houses(&mixed[..2]), vec![1]);
        assert_eq!(houses(&[mixed[0], mixed[3]]), vec![3]);
        // Every move lost: all are kept, for the search to choose the best defence.
        assert_eq!(houses(&[mixed[0], proof(4, No, No)]), vec![0, 4]);
        // Nothing settled: nothing is ruled out.
        assert_eq!(houses(&[mixed[3], proof(5, Unknown, Unknown)]), vec![3, 5]);
        assert_eq!(Yes.negate(), No);
        assert_eq!(Unknown.negate(), Unknown);
    }
}
