//! The search tree: an arena of nodes indexed by `u32`, each node's children stored next to each
//! other, the root always at index 0.
//!
//! # Value convention
//! `Node::value_sum` is the sum of the results backed up through the node, **from the point of
//! view of the side that moved into it** (the side to move at its parent). So a parent picks the
//! child with the highest `value_sum / visits` directly, and the side to move at the node itself
//! sees `-value_sum / visits`. `Node::raw_value` is the evaluator's value (or the exact value of a
//! finished game) **for the side to move at the node**. For the root, `value_sum` follows the same
//! rule (the side not to move), so the root value for the side to move is
//! `-value_sum / visits`.
//!
//! # Finished nodes
//! When a node's children are created, each child position is judged with
//! [`oware_engine::adjudicate`] against the repetition history of its own line (the game's positions
//! since the last capture, then the line's) and the game's ply limit. A finished child is
//! `Terminal` with the exact value (+1 win, 0 draw, -1 loss) for the side to move there.

use crate::evaluator::Evaluation;
use oware_engine::Move;
use oware_engine::Position;
use oware_engine::{Game, adjudicate};

/// No node (the root's parent).
pub(crate) const NONE: u32 = u32::MAX;

/// Where a node stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeState {
    /// Not evaluated, no children yet.
    Fresh,
    /// Children created; its evaluation is in flight.
    Pending,
    /// Evaluated; children have priors.
    Expanded,
    /// The game is over here; `raw_value` is exact.
    Terminal,
}

/// One node of the tree.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    /// The position at this node (settled if the game ended here).
    pub pos: Position,
    /// Parent index, [`NONE`] at the root.
    pub parent: u32,
    /// Index of the first child; the children are `first_child..first_child + num_children`.
    pub first_child: u32,
    /// Visits, simulations in flight included.
    pub visits: u32,
    /// Sum of backed-up values for the side that moved into this node.
    pub value_sum: f32,
    /// Prior probability of the move into this node.
    pub prior: f32,
    /// Evaluator or exact value for the side to move here.
    pub raw_value: f32,
    /// The move into this node as a policy index (0..6).
    pub mv: u8,
    /// Number of children (legal moves once expanded).
    pub num_children: u8,
    /// Whether the move into this node captured (which clears the repetition history).
    pub captured: bool,
    /// Where the node stands.
    pub state: NodeState,
}

impl Node {
    fn new(pos: Position, parent: u32, mv: u8, captured: bool) -> Node {
        Node {
            pos,
            parent,
            first_child: 0,
            visits: 0,
            value_sum: 0.0,
            prior: 0.0,
            raw_value: 0.0,
            mv,
            num_children: 0,
            captured,
            state: NodeState::Fresh,
        }
    }

    /// Mean value for the side that moved into this node (0 when unvisited).
    #[inline]
    pub(super) fn q(&self) -> f32 {
        if self.visits == 0 {
            0.0
        } else {
            self.value_sum / self.visits as f32
        }
    }
}

/// The arena and what it needs to judge endings: the game's repetition history and ply count.
#[derive(Clone, Debug)]
pub(crate) struct Tree {
    /// The nodes; the root is `nodes[0]`.
    pub nodes: Vec<Node>,
    /// The other arena, reused when the tree is re-rooted.
    spare: Vec<Node>,
    /// Keys since the last capture up to and including the root's (the game's history), followed
    /// during a descent by the keys of the line being descended.
    seen: Vec<u128>,
    /// Length of the game's part of `seen`.
    base_len: usize,
    /// During a descent: where the line's relevant history starts in `seen`.
    seen_from: usize,
    /// Depth of the current descent.
    depth: u32,
    /// Plies played in the game at the root.
    pub root_ply: u32,
    /// The game's ply limit.
    pub max_plies: u32,
    /// The start position of the game the root belongs to.
    game_start: Position,
    /// The moves of that game up to the root.
    game_moves: Vec<Move>,
}

impl Tree {
    /// An empty tree for the start of a default game.
    pub(super) fn new() -> Tree {
        let mut t = Tree {
            nodes: Vec::new(),
            spare: Vec::new(),
            seen: Vec::new(),
            base_len: 0,
            seen_from: 0,
            depth: 0,
            root_ply: 0,
            max_plies: 0,
            game_start: Position::start(),
            game_moves: Vec::new(),
        };
        t.reset(&Game::new());
        t
    }

    /// Forgets everything and puts `game`'s current position at the root.
    pub(super) fn reset(&mut self, game: &Game) {
        self.nodes.clear();
        let mut root = Node::new(*game.position(), NONE, 0, false);
        if let Some(result) = game.result() {
            root.state = NodeState::Terminal;
            root.raw_value = result.value_for(game.to_move());
        }
        self.nodes.push(root);
        self.sync_history(game);
    }

    /// Drops every node below the root and makes the root fresh again (after a search was
    /// abandoned with leaves in flight). The root's position and the game's history stay.
    pub(super) fn clear_below_root(&mut self) {
        if self.root().state == NodeState::Terminal {
            return;
        }
        let pos = self.nodes[0].pos;
        self.nodes.clear();
        self.nodes.push(Node::new(pos, NONE, 0, false));
        self.begin_descent();
    }

    /// Takes the game's repetition history and ply count (after a re-rooting).
    fn sync_history(&mut self, game: &Game) {
        self.seen.clear();
        self.seen.extend_from_slice(game.seen_since_capture());
        self.base_len = self.seen.len();
        self.seen_from = 0;
        self.root_ply = game.ply();
        self.max_plies = game.max_plies();
        self.game_start = *game.start();
        self.game_moves.clear();
        self.game_moves.extend_from_slice(game.moves());
    }

    /// The root node.
    #[inline]
    pub(super) fn root(&self) -> &Node {
        &self.nodes[0]
    }

    /// The index range of `node`'s children.
    #[inline]
    pub(super) fn children(&self, node: u32) -> std::ops::Range<usize> {
        let n = &self.nodes[node as usize];
        let first = n.first_child as usize;
        first..first + n.num_children as usize
    }

    /// The root child for policy index `rel`, if the root has one.
    pub(super) fn root_child(&self, rel: usize) -> Option<u32> {
        self.children(0)
            .find(|&c| self.nodes[c].mv as usize == rel)
            .map(|c| c as u32)
    }

    /// The principal variation: the root child `first` (a policy index) or else the most
    /// visited one, then at each node its most visited child, while that child has visits;
    /// at most `max_len` moves.
    pub(super) fn principal_variation(&self, first: Option<usize>, max_len: usize) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut node = 0u32;
        while pv.len() < max_len {
            let here = &self.nodes[node as usize];
            let chosen = match (pv.is_empty(), first) {
                (true, Some(rel)) => self.root_child(rel),
                _ => self
                    .children(node)
                    .filter(|&c| self.nodes[c].visits > 0)
                    .max_by_key(|&c| self.nodes[c].visits)
                    .map(|c| c as u32),
            };
            let Some(child) = chosen else { break };
            let mv = self.nodes[child as usize].mv as usize;
            pv.push(Move::from_relative(here.pos.to_move(), mv));
            node = child;
        }
        pv
    }

    /// Visits of the root's children by policy index.
    pub(super) fn root_visits(&self) -> [u32; 6] {
        let mut v = [0; 6];
        for c in self.children(0) {
            let n = &self.nodes[c];
            v[n.mv as usize] = n.visits;
        }
        v
    }

    /// Starts a descent at the root: the line's history is the game's.
    #[inline]
    pub(super) fn begin_descent(&mut self) {
        self.seen.truncate(self.base_len);
        self.seen_from = 0;
        self.depth = 0;
    }

    /// Records that the descent stepped into `child`.
    #[inline]
    pub(super) fn step(&mut self, child: u32) {
        let n = &self.nodes[child as usize];
        if n.captured {
            self.seen_from = self.seen.len();
        }
        self.seen.push(n.pos.key());
        self.depth += 1;
    }

    /// The repetition history relevant to the node the descent has reached (its key included).
    #[inline]
    pub(super) fn line_history(&self) -> &[u128] {
        &self.seen[self.seen_from..]
    }

    /// The ply count of the node the descent has reached.
    #[inline]
    pub(super) fn line_ply(&self) -> u32 {
        self.root_ply + self.depth
    }

    /// Creates the children of `node`, the node the current descent has reached, judging each
    /// for the end of the game. Priors are left at 0.
    pub(super) fn create_children(&mut self, node: u32) {
        let pos = self.nodes[node as usize].pos;
        let moves = pos.legal_moves();
        let first = self.nodes.len() as u32;
        let ply = self.root_ply + self.depth + 1;
        let history = &self.seen[self.seen_from..];
        for m in &moves {
            let mut child = pos;
            let effect = child.play_unchecked(m);
            let captured = effect.captured > 0;
            let hist: &[u128] = if captured { &[] } else { history };
            let result = adjudicate(&mut child, hist, ply, self.max_plies);
            let mut n = Node::new(child, node, m.relative() as u8, captured);
            if let Some(r) = result {
                n.state = NodeState::Terminal;
                n.raw_value = r.value_for(child.to_move());
            }
            self.nodes.push(n);
        }
        let parent = &mut self.nodes[node as usize];
        parent.first_child = first;
        parent.num_children = moves.len() as u8;
    }

    /// Sets `node`'s children's priors from `eval` (renormalised over the legal moves; uniform
    /// if the evaluator gave them no mass) and its raw value, and marks it expanded.
    pub(super) fn set_evaluation(&mut self, node: u32, eval: &Evaluation) {
        let range = self.children(node);
        let mut sum = 0.0f32;
        for c in range.clone() {
            let p = eval.policy[self.nodes[c].mv as usize];
            let p = if p.is_finite() && p > 0.0 { p } else { 0.0 };
            self.nodes[c].prior = p;
            sum += p;
        }
        let k = range.len() as f32;
        for c in range {
            let n = &mut self.nodes[c];
            n.prior = if sum > 0.0 { n.prior / sum } else { 1.0 / k };
        }
        let v = if eval.value.is_finite() {
            eval.value.clamp(-1.0, 1.0)
        } else {
            0.0
        };
        let n = &mut self.nodes[node as usize];
        n.raw_value = v;
        n.state = NodeState::Expanded;
    }

    /// Adds a simulation in flight to `node`: one visit worth `-virtual_loss` for the side that
    /// moved into it (the root's value is left alone).
    #[inline]
    pub(super) fn add_virtual(&mut self, node: u32, virtual_loss: f32) {
        let n = &mut self.nodes[node as usize];
        n.visits += 1;
        if node != 0 {
            n.value_sum -= virtual_loss;
        }
    }

    /// Backs up `value` (for the side to move at `leaf`) from `leaf` to the root, replacing the
    /// virtual loss each node on the path received when the simulation was selected.
    pub(super) fn backup(&mut self, leaf: u32, value: f32, virtual_loss: f32) {
        let mut v = -value;
        let mut node = leaf;
        while node != NONE {
            let n = &mut self.nodes[node as usize];
            let vl = if node != 0 { virtual_loss } else { 0.0 };
            n.value_sum += v + vl;
            v = -v;
            node = n.parent;
        }
    }

    /// Undoes the virtual visits of an abandoned selection ending at `leaf`.
    pub(super) fn revert(&mut self, leaf: u32, virtual_loss: f32) {
        let mut node = leaf;
        while node != NONE {
            let n = &mut self.nodes[node as usize];
            n.visits -= 1;
            if node != 0 {
                n.value_sum += virtual_loss;
            }
            node = n.parent;
        }
    }

    /// Puts `game` at the root, keeping the subtree that is already there when `game` continues
    /// the game the tree was built for (same start, same moves so far, then the moves played
    /// since) and `reuse` is set; otherwise starts afresh.
    pub(super) fn follow(&mut self, game: &Game, reuse: bool) {
        let known = self.game_moves.len();
        let continues = reuse
            && *game.start() == self.game_start
            && game.moves().len() >= known
            && game.moves()[..known] == self.game_moves[..];
        if !continues {
            self.reset(game);
            return;
        }
        for i in known..game.moves().len() {
            let rel = game.moves()[i].relative();
            if !self.reroot(rel) {
                self.reset(game);
                return;
            }
        }
        self.take_game(game);
    }

    /// Makes the root's child for policy index `rel` the new root, keeping its subtree, then
    /// takes `game`'s history; `game` must be the game after that move. Starts afresh when the
    /// child does not exist or does not match the game.
    pub(super) fn advance(&mut self, rel: usize, game: &Game) {
        if self.reroot(rel) {
            self.take_game(game);
        } else {
            self.reset(game);
        }
    }

    /// Takes `game` as the game at the root after re-rooting: its history, ply and result.
    /// Starts afresh if the root's position is not the game's.
    fn take_game(&mut self, game: &Game) {
        if self.nodes[0].pos != *game.position() {
            self.reset(game);
            return;
        }
        self.sync_history(game);
        if let Some(result) = game.result() {
            let root = &mut self.nodes[0];
            root.state = NodeState::Terminal;
            root.raw_value = result.value_for(game.to_move());
        }
    }

    /// Makes the root's child for policy index `rel` the root, copying its subtree into the
    /// spare arena in breadth-first order (O(subtree), children stay contiguous). Returns false
    /// (and changes nothing) when the root has no such child.
    fn reroot(&mut self, rel: usize) -> bool {
        let Some(child) = self.root_child(rel) else {
            return false;
        };
        self.spare.clear();
        let mut root = self.nodes[child as usize];
        root.parent = NONE;
        self.spare.push(root);
        let mut i = 0;
        while i < self.spare.len() {
            let mut n = self.spare[i];
            if n.state == NodeState::Pending {
                // Only possible if a search was abandoned mid-pass: forget the half expansion.
                n.state = NodeState::Fresh;
                n.num_children = 0;
                self.spare[i] = n;
            }
            if n.num_children > 0 {
                let new_first = self.spare.len() as u32;
                let first = n.first_child as usize;
                for c in first..first + n.num_children as usize {
                    let mut copy = self.nodes[c];
                    copy.parent = i as u32;
                    self.spare.push(copy);
                }
                self.spare[i].first_child = new_first;
            }
            i += 1;
        }
        std::mem::swap(&mut self.nodes, &mut self.spare);
        true
    }

    /// Backs up `value` (for the side to move at `leaf`) from `leaf` to the root, adding one
    /// visit to every node of the path (the rollout search, which uses no virtual loss).
    pub(super) fn backup_visit(&mut self, leaf: u32, value: f32) {
        let mut v = -value;
        let mut node = leaf;
        while node != NONE {
            let n = &mut self.nodes[node as usize];
            n.visits += 1;
            n.value_sum += v;
            v = -v;
            node = n.parent;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_as_small_as_the_simulation_bound_assumes() {
        // oware_engine::bounds::MAX_SIMS is sized for nodes of about 44 bytes, six per simulation.
        assert!(
            std::mem::size_of::<Node>() <= 48,
            "{}",
            std::mem::size_of::<Node>()
        );
    }

    #[test]
    fn nodes_stay_small() {
        assert!(
            std::mem::size_of::<Node>() <= 44,
            "{}",
            std::mem::size_of::<Node>()
        );
    }
}
